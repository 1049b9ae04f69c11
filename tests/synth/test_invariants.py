"""The task invariants (argument provenance, needed calls, the independent resolver, internal ids)
on hand-made gold views over the trip_desk environment, and on the tasks the builder keeps."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from envfactory.graph.state import StateIndex
from envfactory.reward import fact_in_text
from envfactory.runtime import load_environment
from envfactory.synth.checks import run_checks, user_words
from envfactory.synth.decontam import NgramIndex
from envfactory.synth.invariants import GoldView, goal_mismatches, internal_ids, invented_args, unused_calls
from envfactory.synth.tasks import build_tasks

TRIP_DESK = Path(__file__).resolve().parents[2] / "domains" / "travel" / "trip_desk"


@lru_cache(maxsize=1)
def _env():
    return load_environment(TRIP_DESK)


@pytest.fixture(scope="module")
def env():
    return _env()


@pytest.fixture(scope="module")
def state(env):
    with env.new_session() as s:
        return StateIndex(env.spec, s)


def _view(env, calls, facts=None, required=None):
    outs = []
    with env.new_session() as s:
        for c in calls:
            outs.append(s.try_call(c["tool"], c["args"])["result"])
    return GoldView(calls, outs, facts or {}, required or [])


def test_facts_are_matched_as_values_not_substrings():
    assert fact_in_text("12", "The total is 12.") and not fact_in_text("12", "The total is 120.")
    assert not fact_in_text("TR1", "traveler TR10") and fact_in_text("ann@x.org", "email: ann@x.org.")
    assert fact_in_text("1,869.63", "fee 1869.63;") and not fact_in_text("3", "room 35")


def test_an_argument_nobody_said_or_saw_is_invented(env, state):
    t = state.rows["traveler"][0]
    calls = [
        {"tool": "search_travelers", "args": {"email": t["email"]}, "refs": {}},
        {
            "tool": "list_bookings",
            "args": {"traveler_id": t["traveler_id"]},
            "refs": {"traveler_id": [0, "items", 0, "traveler_id"]},
        },
    ]
    view = _view(env, calls)
    assert invented_args(env.spec, view, f"my email is {t['email']}") == []
    assert invented_args(env.spec, view, "find my bookings") == [f"search_travelers.email={t['email']!r}"]
    # the same id, not fed by a reference but seen in the earlier result: still has a provenance
    calls[1]["refs"] = {}
    assert invented_args(env.spec, _view(env, calls), f"my email is {t['email']}") == []


def test_a_read_whose_output_nobody_uses_is_unused(env, state):
    t = state.rows["traveler"][0]
    calls = [{"tool": "search_travelers", "args": {"email": t["email"]}, "refs": {}}]
    assert unused_calls(env.spec, _view(env, calls)) == ["search_travelers"]
    assert unused_calls(env.spec, _view(env, calls, required=[t["last_name"]])) == []


def test_the_resolver_needs_the_goal_to_pick_exactly_the_gold_row(env, state):
    t = state.rows["traveler"][0]
    calls = [{"tool": "get_traveler", "args": {"traveler_id": t["traveler_id"]}, "refs": {}}]
    assert goal_mismatches(env.spec, state, _view(env, calls, {"traveler.email": t["email"]})) == []
    nothing = goal_mismatches(env.spec, state, _view(env, calls, {}))
    assert nothing and "nothing in the goal" in nothing[0]
    other = state.rows["traveler"][1]
    assert goal_mismatches(env.spec, state, _view(env, calls, {"traveler.email": other["email"]}))
    assert internal_ids(env.spec, _view(env, calls), f"please look up {t['traveler_id']}") == [
        t["traveler_id"]
    ]


def test_the_resolver_checks_the_parent_rows_a_create_links_to(env, state):
    t, f = state.rows["traveler"][0], state.rows["flight"][0]
    calls = [
        {"tool": "search_travelers", "args": {"email": t["email"]}, "refs": {}},
        {"tool": "search_flights", "args": {"flight_number": f["flight_number"]}, "refs": {}},
        {
            "tool": "create_booking",
            "args": {"traveler_id": t["traveler_id"], "flight_id": f["flight_id"], "passengers": 1},
            "refs": {
                "traveler_id": [0, "items", 0, "traveler_id"],
                "flight_id": [1, "items", 0, "flight_id"],
            },
        },
    ]

    def view(facts):  # outputs do not matter here: the new booking's parents are what is checked
        return GoldView(calls, [None, None, {"booking_id": "BK-new"}], facts, [])

    both = {"traveler.email": t["email"], "flight.flight_number": f["flight_number"]}
    assert goal_mismatches(env.spec, state, view(both)) == []
    # the goal names the traveler but not which flight: the new booking's flight is not picked
    bad = goal_mismatches(env.spec, state, view({"traveler.email": t["email"]}))
    assert bad and "flight" in bad[0] and "new booking" in bad[0]
    other = next(x for x in state.rows["flight"] if x["flight_number"] != f["flight_number"])
    wrong = {"traveler.email": t["email"], "flight.flight_number": other["flight_number"]}
    assert goal_mismatches(env.spec, state, view(wrong))


def test_a_row_reached_from_a_named_row_needs_no_words_of_its_own(env, state):
    # 'my confirmed booking on flight X ... and the traveller of that booking': the traveller is
    # that booking's own traveller, not a pick among listed rows, so the goal need not describe them
    flights = {f["flight_id"]: f for f in state.rows["flight"]}
    b = next(
        b
        for b in state.rows["booking"]
        if sum(x["flight_id"] == b["flight_id"] and x["status"] == b["status"] for x in state.rows["booking"])
        == 1
    )
    facts = {"booking.status": b["status"], "flight.flight_number": flights[b["flight_id"]]["flight_number"]}
    calls = [
        {"tool": "get_booking", "args": {"booking_id": b["booking_id"]}, "refs": {}},
        {
            "tool": "get_traveler",
            "args": {"traveler_id": b["traveler_id"]},
            "refs": {"traveler_id": [0, "traveler_id"]},
        },
    ]
    assert goal_mismatches(env.spec, state, _view(env, calls, facts)) == []
    # picked from a list instead, the traveller is one of many: the goal must say which
    calls[1]["refs"] = {"traveler_id": [0, "items", 0, "traveler_id"]}
    bad = goal_mismatches(env.spec, state, _view(env, calls, facts))
    assert bad and bad[0].startswith("get_traveler")


def test_facts_no_person_says_are_found():
    import yaml

    from envfactory.spec import parse_spec
    from envfactory.synth.invariants import unsayable_facts

    spec = parse_spec(
        yaml.safe_load(
            """
name: g
domain: test
entities:
  - name: gadget
    primary_key: gadget_id
    fields:
      - {name: gadget_id, type: string}
      - {name: title, type: string}
      - {name: code_word, type: string}
      - {name: self_link, type: string}
      - {name: note, type: string}
tools:
  - name: list_gadgets
    kind: list
    entity: gadget
    description: List gadgets.
    params:
      - {name: note, type: string, field: note}
  - name: create_gadget
    kind: create
    entity: gadget
    description: Create a gadget.
    params:
      - {name: note, type: string, field: note}
"""
        )
    )
    facts = {
        "gadget.title": "Spring plan",
        "gadget.code_word": "Synergized open architecture",  # seeded filler
        "gadget.self_link": "https://x.example/g/1",  # a link to the record itself
        "create_gadget.note": "Call first.",  # a note is stated when creating a row ...
        "list_gadgets.note": "Call first.",  # ... but no one finds a row by it
    }
    bad = unsayable_facts(spec, facts)
    assert sorted(k.split("=")[0] for k in bad) == [
        "gadget.code_word",
        "gadget.self_link",
        "list_gadgets.note",
    ]


def test_a_stock_phrase_that_says_an_answer_is_caught_as_the_audit_finds_it():
    from envfactory.spec import Difficulty, Persona, RewardSpec, SubGoal, Task
    from envfactory.synth.checks import check_not_handed_over
    from envfactory.synth.invariants import says_answer

    task = Task(
        task_id="t",
        domain="d",
        env="e",
        persona=Persona(name="Ann Lee"),
        goal="Look up the review and tell me its rating.",
        reward=RewardSpec(gold_state_hash="h", initial_state_hash="h", required_facts=["great"]),
        gold=[],
        difficulty=Difficulty(predicted_pass_rate=0.5),
    )
    assert says_answer(task, "Great, thanks. Next one.") == ["great"]
    assert check_not_handed_over(task).ok
    # the user simulator's stock phrases avoid it ('Great, thanks.' is never picked for this task)
    from envfactory.synth.user_sim import UserSimulator

    two = task.model_copy(
        update={"subgoals": [SubGoal(text="Look up the review."), SubGoal(text="And its rating?")]}
    )
    for seed in range(12):
        two_p = two.model_copy(update={"persona": Persona(name="Ann Lee", style="polite")})
        u = UserSimulator(two_p, seed=seed)
        u.opening()
        assert not says_answer(task, u.reply("Done: the review is open.") or "")
    said = task.model_copy(update={"goal": "Look up the review, it was great, and tell me its rating."})
    assert not check_not_handed_over(said).ok


@pytest.fixture(scope="module")
def built():
    return build_tasks([_env()], n=30, seed=3, index=None)


def test_kept_tasks_hold_every_invariant_and_list_only_checks_that_ran(built, state):
    env = _env()
    assert len(built.tasks) >= 25
    for t in built.tasks:
        view = GoldView.of_task(t)
        assert invented_args(env.spec, view, user_words(t)) == [], t.task_id
        assert unused_calls(env.spec, view) == [], t.task_id
        assert goal_mismatches(env.spec, state, view) == [], t.task_id
        assert internal_ids(env.spec, view, t.goal) == [], t.task_id
        # no decontamination index was given: that check did not run, so no task claims it
        assert "decontaminated" not in t.checks_passed and "provenance" in t.checks_passed
        assert t.intent


def test_refusals_are_requests_no_tool_serves(env):
    import random
    import re

    from envfactory.synth.realize import out_of_scope_request
    from envfactory.text import phrases

    words = set(
        re.findall(
            r"[a-z]+",
            " ".join(t.name.replace("_", " ") + " " + (t.description or "") for t in env.spec.tools).lower(),
        )
    )
    table = phrases("out_of_scope")
    seen = set()
    for i in range(40):
        ask, decline = out_of_scope_request(env.spec, random.Random(i))
        key = next(k for k, v in table.items() if v == f"{ask}|{decline}")
        assert not set(key.split()) & words  # none of its key words names something a tool does
        seen.add(key)
    assert len(seen) > 3


def test_a_skipped_check_is_reported_as_not_run(env, built):
    findings = run_checks(built.tasks[0], env, NgramIndex(), None)
    assert {f.check for f in findings if not f.ran} == {"resolves", "decontaminated"}


def test_a_count_over_rows_the_words_do_not_describe_is_a_mismatch(env, state):
    # 'how many bookings with status X does this traveller have' answered by counting every booking
    t = next(
        t
        for t in state.rows["traveler"]
        if len({b["status"] for b in state.rows["booking"] if b["traveler_id"] == t["traveler_id"]}) > 1
    )
    mine = [b for b in state.rows["booking"] if b["traveler_id"] == t["traveler_id"]]
    calls = [
        {"tool": "search_travelers", "args": {"email": t["email"]}, "refs": {}},
        {
            "tool": "list_bookings",
            "args": {"traveler_id": t["traveler_id"]},
            "refs": {"traveler_id": [0, "items", 0, "traveler_id"]},
        },
    ]
    facts = {"traveler.email": t["email"], "booking.status": mine[0]["status"]}
    bad = goal_mismatches(env.spec, state, _view(env, calls, facts, required=[str(len(mine))]))
    assert bad and "counts booking rows" in bad[0]
    # the same count without a detail some of the counted rows lack is fine
    assert (
        goal_mismatches(env.spec, state, _view(env, calls, {"traveler.email": t["email"]}, [str(len(mine))]))
        == []
    )
