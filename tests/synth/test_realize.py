from __future__ import annotations

import re
from pathlib import Path

import pytest

from envfactory.graph import run_sampling
from envfactory.runtime import load_environment
from envfactory.spec import FieldType
from envfactory.synth.realize import find_selections, format_value, humanize, realize_goal

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def env():
    return load_environment(ROOT / "domains" / "travel" / "trip_desk")


@pytest.fixture(scope="module")
def golds(env):
    return run_sampling([env], 150, seed=2).kept


@pytest.mark.parametrize("raw, human", [("flight_id", "flight"), ("price_per_night", "price per night"),
                                        ("hotel_reservation", "hotel reservation")])
def test_humanize(raw, human):
    assert humanize(raw) == human


def test_values_read_as_a_person_says_them():
    assert format_value(FieldType.datetime, "departure_time", "2026-06-03T17:15:00") == "June 3, 2026 at 17:15"
    assert format_value(FieldType.date, "check_in", "2026-06-19") == "June 19, 2026"
    assert format_value(FieldType.enum, "cabin", "premium_economy") == "premium economy"
    assert format_value(FieldType.number, "price", 1739.69) == "$1739.69"


def test_goals_never_name_tools_or_undiscoverable_ids(env, golds):
    tool_names = {t.name for t in env.spec.tools}
    for g in golds:
        z = realize_goal(env.spec, g, seed=0)
        words = set(re.findall(r"[a-z_]+", z.goal.lower()))
        assert not (words & tool_names), z.goal
        known = {str(v) for v in z.persona.known_facts.values()}
        for c in g.calls:
            out = c.output if isinstance(c.output, dict) else {}
            for row in out.get("items", [out]):
                for k, v in row.items():
                    if k.endswith("_id") and isinstance(v, str) and v not in known:
                        assert v not in z.goal, (v, z.goal)


def test_same_seed_same_goal_other_seed_other_phrasing(env, golds):
    a = [realize_goal(env.spec, g, seed=4).goal for g in golds[:30]]
    b = [realize_goal(env.spec, g, seed=4).goal for g in golds[:30]]
    c = [realize_goal(env.spec, g, seed=5).goal for g in golds[:30]]
    assert a == b and a != c


def test_persona_comes_from_the_person_the_plan_is_about(env, golds):
    g = next(g for g in golds if g.plan.steps[0].tool == "create_traveler" or
             any(s.tool == "create_traveler" for s in g.plan.steps))
    i = next(i for i, s in enumerate(g.plan.steps) if s.tool == "create_traveler")
    z = realize_goal(env.spec, g, seed=0)
    out = g.calls[i].output
    assert z.persona.name == f"{out['first_name']} {out['last_name']}"


def test_implicit_constraint_picks_the_unique_gold_row(env, golds):
    seen = 0
    for g in golds:
        for s in find_selections(env.spec, g, {}, prefer_constraints=True):
            if s.how != "constraint":
                continue
            seen += 1
            items = g.calls[s.source].output["items"]
            field = s.fact_key.split(".")[-1]
            vals = [it[field] for it in items]
            ext = min(vals) if s.fact_value == "lowest" else max(vals)
            assert vals.count(ext) == 1 and items[s.index][field] == ext
            assert not g.calls[s.source].output.get("has_more")
    assert seen > 0


def test_hidden_facts_are_not_in_the_goal_and_subgoals_cover_goal_steps(env, golds):
    hid = 0
    for g in golds:
        z = realize_goal(env.spec, g, seed=0)
        for k, v in z.persona.hidden_facts.items():
            hid += 1
            assert k not in z.persona.known_facts
        covered = {i for sg in z.subgoals for i in sg.steps}
        assert set(g.plan.goal_steps) <= covered
        assert len(z.subgoals) == len(g.plan.goal_steps)
    assert hid > 0


def test_read_goals_carry_answer_facts_from_the_gold_output(env, golds):
    g = next(g for g in golds if not g.changed_state and env.spec.tool(g.plan.steps[g.plan.goal_steps[0]].tool).kind.value == "get")
    z = realize_goal(env.spec, g, seed=0)
    out = g.calls[g.plan.goal_steps[0]].output
    assert z.answer_facts and all(any(a == str(v) or a == f"{v:g}" if isinstance(v, float) else a == str(v)
                                      for v in out.values()) for a in z.answer_facts[:1])
