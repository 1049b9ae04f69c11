from __future__ import annotations

import re
from pathlib import Path

import pytest

from envfactory.graph import run_sampling
from envfactory.runtime import load_environment
from envfactory.synth.realize import find_selections, realize_goal
from envfactory.text import date_forms, paraphrases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def env():
    return load_environment(ROOT / "domains" / "travel" / "trip_desk")


@pytest.fixture(scope="module")
def golds(env):
    return run_sampling([env], 150, seed=2).kept


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
    g = next(
        g
        for g in golds
        if g.plan.steps[0].tool == "create_traveler" or any(s.tool == "create_traveler" for s in g.plan.steps)
    )
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
        for k in z.persona.hidden_facts:
            hid += 1
            assert k not in z.persona.known_facts
        covered = {i for sg in z.subgoals for i in sg.steps}
        assert set(g.plan.goal_steps) <= covered
        assert len(z.subgoals) == len(g.plan.goal_steps)
    assert hid > 0


def test_read_goals_carry_answer_facts_from_the_gold_output(env, golds):
    g = next(
        g
        for g in golds
        if not g.changed_state and env.spec.tool(g.plan.steps[g.plan.goal_steps[0]].tool).kind.value == "get"
    )
    z = realize_goal(env.spec, g, seed=0)
    out = g.calls[g.plan.goal_steps[0]].output
    assert z.answer_facts and all(
        any(a == str(v) or a == f"{v:g}" if isinstance(v, float) else a == str(v) for v in out.values())
        for a in z.answer_facts[:1]
    )


# --- defects seen in generated goals, each rebuilt from the plan that triggered it -----------

from envfactory.graph import Plan, Step, execute_plan  # noqa: E402
from envfactory.graph.plan import REF  # noqa: E402
from envfactory.synth.calibrate import edit_plan, pick_partner, shares_step  # noqa: E402
from envfactory.synth.phrasing import describe, label  # noqa: E402

_AMY = {
    "first_name": "Amy",
    "last_name": "Pope",
    "email": "amy.pope@example.org",
    "phone": "+1-878-110-2781",
    "date_of_birth": "1999-03-12",
}
_KENDRA = {
    "first_name": "Kendra",
    "last_name": "Green",
    "email": "kendra.green@example.org",
    "date_of_birth": "1996-12-03",
}


def _facts(tool: str, *arg_sets: dict) -> dict:
    """user_facts keyed as the sampler keys them: a second value for a param gets '#2'."""
    out: dict = {}
    for args in arg_sets:
        for p, v in args.items():
            k, n = f"{tool}.{p}", 2
            while k in out and out[k] != v:
                k, n = f"{tool}.{p}#{n}", n + 1
            out[k] = v
    return out


def _run(env, steps, facts, goals=None):
    goals = goals if goals is not None else [i for i, s in enumerate(steps) if s.role == "goal"]
    plan = Plan("trip_desk", "travel", steps, [steps[g].tool for g in goals], goals, facts, index=7)
    g = execute_plan(env, plan)
    assert g.ok, g
    return g


def _create_update_plus_create_delete(env):
    """What harder-breadth made of create+update traveler merged with create+delete traveler."""
    steps = [
        Step("create_traveler", dict(_AMY), [], "goal"),
        Step(
            "update_traveler",
            {"traveler_id": {REF: [0, "traveler_id"]}, "email": "amy.new@example.net"},
            [0],
            "goal",
        ),
        Step("create_traveler", dict(_KENDRA), [], "goal"),
        Step("delete_traveler", {"traveler_id": {REF: [2, "traveler_id"]}}, [2], "goal"),
    ]
    facts = {**_facts("create_traveler", _AMY, _KENDRA), "update_traveler.email": "amy.new@example.net"}
    return _run(env, steps, facts)


@pytest.mark.parametrize("seed", range(6))
def test_each_create_call_states_only_its_own_values(env, seed):
    g = _create_update_plus_create_delete(env)
    z = realize_goal(env.spec, g, seed=seed, hide_rate=0.0)
    for sg in z.subgoals:
        for said in ("first name", "last name", "date of birth"):
            assert sg.text.count(said) <= 1, sg.text
        assert not ("Amy" in sg.text and "Kendra" in sg.text), sg.text
        assert not ("1999" in sg.text and "1996" in sg.text), sg.text
    assert "Kendra" in z.goal and any(d in z.goal for d in date_forms("1996-12-03"))


def _sentences(text: str) -> list[str]:
    parts = re.split(r"[.?!] |, and also |, and while you're at it, |, plus |\. Also, please ", text)
    return [p.strip(" .?!") for p in parts if p.strip(" .?!")]


def test_a_repeated_request_is_said_once(env):
    tr = env.new_session().call("search_travelers", {})["items"][0]
    step = Step("get_traveler", {"traveler_id": tr["traveler_id"]}, [], "goal")
    facts = {"traveler.traveler_id": tr["traveler_id"]}
    g = _run(env, [step, Step(step.tool, dict(step.args), [], "goal")], facts)
    for seed in range(6):
        z = realize_goal(env.spec, g, seed=seed)
        sents = _sentences(z.goal)
        assert len(sents) == len(set(sents)), z.goal
        assert z.goal.count(tr["traveler_id"]) == 1, z.goal
        assert {0, 1} <= {i for sg in z.subgoals for i in sg.steps}


def test_harder_breadth_rejects_a_partner_that_repeats_a_call(env):
    g = _create_update_plus_create_delete(env)
    same = Plan(
        "trip_desk",
        "travel",
        [Step("create_traveler", dict(_KENDRA), [], "goal")],
        ["create_traveler"],
        [0],
        _facts("create_traveler", _KENDRA),
    )
    other = Plan(
        "trip_desk",
        "travel",
        [Step("search_airports", {"country": "France"}, [], "goal")],
        ["search_airports"],
        [0],
        {"airport.country": "France"},
    )
    assert shares_step(g.plan, same) and not shares_step(g.plan, other)
    assert edit_plan("harder-breadth", g.plan, g.calls, env.spec, partner=same) is None
    assert edit_plan("harder-breadth", g.plan, g.calls, env.spec, partner=other) is not None
    assert pick_partner(g.plan, [g.plan, same, other], 0) is other
    assert pick_partner(g.plan, [g.plan, same], 1) is None


@pytest.mark.parametrize(
    "entity, fname, said",
    [
        ("hotel_reservation", "check_in", "check-in date"),
        ("hotel_reservation", "check_out", "check-out date"),
        ("booking", "created_at", "creation time"),
        ("traveler", "date_of_birth", "date of birth"),
        ("flight", "departure_time", "departure time"),
        ("booking", "flight_id", "flight"),
        ("room", "price_per_night", "price per night"),
    ],
)
def test_field_labels_read_naturally(env, entity, fname, said):
    assert label(env.spec, entity, fname) == said


def test_field_labels_strip_suffixes_without_a_spec():
    assert label(None, "car_rental", "pickup_at") == "pickup time"
    assert label(None, "car_rental", "dropoff_at") == "drop-off time"
    assert label(None, "member", "expires_on") == "expiry date"
    assert label(None, "workout", "duration_minutes") == "duration in minutes"
    assert label(None, "hotel_booking", "check_in_date") == "check-in date"


def test_counts_carry_units_and_implausible_ones_are_left_out(env):
    assert "3 guests" in describe(env.spec, "hotel_reservation", [("guests", 3)])
    assert "1 star" in describe(env.spec, "hotel", [("stars", 1)])
    d = describe(env.spec, "booking", [("passengers", 330), ("total_price", 120.5)])
    assert "330" not in d and "$120.5" in d
    assert "with created at on" not in describe(env.spec, "booking", [("created_at", "2026-05-07T10:00:00")])


def test_list_goal_does_not_ask_for_what_the_user_said(env):
    rows = env.new_session().call("search_travelers", {"limit": 100})["items"]
    by_last: dict = {}
    for r in rows:
        by_last.setdefault(r["last_name"], []).append(r)
    last = next(k for k, v in sorted(by_last.items()) if 1 <= len(v) <= 3)
    g = _run(env, [Step("search_travelers", {"last_name": last}, [], "goal")], {"traveler.last_name": last})
    for seed in range(8):
        z = realize_goal(env.spec, g, seed=seed)
        assert "their last name" not in z.goal, z.goal
        assert last not in z.answer_facts


def test_update_always_states_the_new_value(env):
    tr = env.new_session().call("search_travelers", {})["items"][0]
    steps = [
        Step("search_travelers", {"email": tr["email"]}, [], "discover"),
        Step(
            "update_traveler",
            {"traveler_id": {REF: [0, "items", 0, "traveler_id"]}, "phone": "+1-555-010-0199"},
            [0],
            "goal",
        ),
    ]
    g = _run(env, steps, {"traveler.email": tr["email"], "update_traveler.phone": "+1-555-010-0199"})
    for seed in range(8):
        z = realize_goal(env.spec, g, seed=seed, hide_rate=1.0)
        # the label as a person says it ('phone', 'phone number', 'telephone'), then the new value
        assert re.search(r"\b(phone|phone number|telephone) to \+1-555-010-0199", z.goal), z.goal
        assert "update_traveler.phone" not in z.persona.hidden_facts


def test_create_goal_names_the_new_row_not_its_parent(env):
    s = env.new_session()
    tr = s.call("search_travelers", {})["items"][0]
    room = s.call("list_rooms", {"available": True})["items"][0]
    steps = [
        Step("search_travelers", {"email": tr["email"]}, [], "discover"),
        Step("get_room", {"room_id": room["room_id"]}, [], "discover"),
        Step(
            "reserve_room",
            {
                "traveler_id": {REF: [0, "items", 0, "traveler_id"]},
                "room_id": {REF: [1, "room_id"]},
                "check_in": "2026-07-08",
                "check_out": "2026-07-09",
                "guests": 1,
            },
            [0, 1],
            "goal",
        ),
    ]
    facts = {
        "traveler.email": tr["email"],
        "room.room_id": room["room_id"],
        "reserve_room.check_in": "2026-07-08",
        "reserve_room.check_out": "2026-07-09",
        "reserve_room.guests": 1,
    }
    g = _run(env, steps, facts)
    for seed in range(8):
        z = realize_goal(env.spec, g, seed=seed, hide_rate=0.0)
        assert any(
            f"hotel reservation{link}{a} " in z.goal
            for link in paraphrases("links")
            for a in ("the", "my", "our")
        ), z.goal
        assert not re.search(r"\b(book|reserve|make) the\b", z.goal), z.goal
        # the value and its label (or the documentation's 'Arrival date.'), in either order
        # this year's date without its year, in any of the ways a date is written
        forms = date_forms("2026-07-08")
        assert any(f in z.goal for f in forms if "2026" not in f), z.goal
        assert not any(f in z.goal for f in forms if "2026" in f) and "1 guest" in z.goal, z.goal
        assert "check-in date" in z.goal or "arrival date" in z.goal, z.goal
