"""Wording a person would not say, caught on real environments: seeder filler in role-less date and
identifier fields, entities with no sayable name, a corrected boolean said as 'no' while the call
sends false, and a closing note that reports a status nobody asked for."""

from __future__ import annotations

from envfactory.graph import GoldResult, Plan, Step, execute_plan
from envfactory.graph.plan import REF
from envfactory.runtime import load_environment
from envfactory.synth.oracle_script import _sent, _summary
from envfactory.synth.phrasing import misfit_value, sayable_noun

from ._fixtures import REPO, TRIP_DESK

SECRETS = REPO / "domains" / "utilities" / "barbican"
TODOS = REPO / "domains" / "office" / "google_tasks"
FILLER = "Synergized empowering open architecture"


# Shaped after Barbican as an earlier explorer read it: a secret with role-less 'created'/'updated'
# strings and an 'alg' nothing describes, and an entity 'x' from a path segment it could not name.
VAULT = {
    "name": "vault",
    "domain": "test",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {"name": "container", "primary_key": "id", "fields": [{"name": "id", "type": "string"}]},
        {
            "name": "secret",
            "primary_key": "id",
            "fields": [
                {"name": "id", "type": "string"},
                {"name": "created", "type": "string"},
                {"name": "updated", "type": "string"},
                {"name": "alg", "type": "string"},
            ],
        },
        {
            "name": "x",
            "primary_key": "id",
            "fields": [
                {"name": "id", "type": "string"},
                {"name": "container_id", "type": "string", "ref": "container"},
            ],
        },
    ],
    "tools": [
        {"name": "list_containers", "kind": "list", "entity": "container", "description": "List containers."},
        {
            "name": "list_xes",
            "kind": "list",
            "entity": "x",
            "description": "List the xes of a container.",
            "params": [{"name": "container_id", "type": "string", "field": "container_id", "required": True}],
        },
    ],
    "seed": {"entities": {"container": {"rows": 5}, "secret": {"rows": 5}, "x": {"rows": 20}}},
}


def _vault():
    from envfactory.runtime import Environment
    from envfactory.spec import parse_spec

    return Environment.from_spec(parse_spec(VAULT))


def test_filler_in_a_role_less_date_or_identifier_field_is_not_said():
    secrets, todos = _vault().spec, load_environment(TODOS).spec
    assert misfit_value(secrets, "secret", "created", FILLER)  # 'created', no role
    assert misfit_value(secrets, "secret", "updated", FILLER)
    assert misfit_value(todos, "task", "parent", FILLER)  # "Parent task identifier."
    assert not misfit_value(secrets, "secret", "created", "2026-03-19T00:30:00")  # a date is a date
    assert not misfit_value(secrets, "secret", "alg", FILLER)  # nothing says what 'alg' holds
    assert not misfit_value(todos, "task", "title", FILLER)  # a role: a title may be any words


def test_an_entity_with_no_sayable_name_gives_no_task():
    from envfactory.synth.builder import _Builder
    from envfactory.synth.config import TaskConfig
    from envfactory.synth.tasks import TaskReport

    env = _vault()
    assert not sayable_noun("x") and sayable_noun("zone") and sayable_noun("tsigkey")
    steps = [
        Step("list_containers", {}, [], "discover"),
        Step("list_xes", {"container_id": {REF: [0, "items", 0, "id"]}}, [0], "goal"),
    ]
    gold = execute_plan(env, Plan(env.spec.name, env.spec.domain, steps, ["list_xes"], [1], {}, index=1))
    assert isinstance(gold, GoldResult) and gold.ok, gold
    report = TaskReport(requested=1)
    b = _Builder({env.spec.name: env}, 0, None, None, report, TaskConfig())
    assert b.make(gold, task_id="x-1") is None
    assert report.checks["complete"]["dropped"] == 1


def test_a_corrected_boolean_is_said_as_the_literal_sent():
    assert _sent(False) == "false" and _sent(True) == "true" and _sent("confirmed") == "confirmed"


def test_closing_reports_a_status_only_when_the_call_set_it():
    env = load_environment(TRIP_DESK)
    row = {"booking_id": "BK00012", "status": "confirmed", "seat": "14C"}
    assert "confirmed" not in _summary(env, "get_booking", row, {"booking_id": "BK00012"})
    cancelled = {**row, "status": "cancelled"}
    assert "is now cancelled" in _summary(env, "cancel_booking", cancelled, {"booking_id": "BK00012"})


def test_rows_and_fields_are_also_named_in_the_documentation_s_words():
    import random

    from envfactory.synth.phrasing import doc_noun, spoken_label

    secrets, trip = load_environment(SECRETS).spec, load_environment(TRIP_DESK).spec
    pdns = load_environment(REPO / "domains" / "utilities" / "power_dns_authoritative").spec
    assert doc_noun(pdns, "zone") == "authoritative DNS zone"  # "This represents an authoritative DNS Zone."
    assert doc_noun(secrets, "container") is None  # "A container of the barbican." says nothing more
    said = {spoken_label(trip, "hotel_reservation", "check_in", random.Random(s)) for s in range(40)}
    assert said == {"check-in date", "arrival date"}  # the label, or the field's own "Arrival date."
    assert spoken_label(trip, "booking", "booking_id", random.Random(0)) == "booking"  # an id keeps its label


def test_a_row_named_in_the_documentation_s_words_keeps_its_adjectives_apart():
    import random

    from envfactory.synth.phrasing import describe

    trip = load_environment(TRIP_DESK).spec
    said = {
        describe(trip, "flight", [("status", "scheduled")], "the", "", random.Random(s), doc_words=True)
        for s in range(30)
    }
    assert not any("scheduled scheduled" in d for d in said), said
    plain = {
        describe(trip, "flight", [("airline", "Northstar")], "the", "", random.Random(s), doc_words=True)
        for s in range(30)
    }
    assert any("scheduled flight" in d for d in plain) and any(
        " flight " in d and "scheduled" not in d for d in plain
    )


def test_a_value_found_is_labelled_by_the_field_that_holds_it_not_by_an_id_that_happens_to_match():
    from types import SimpleNamespace

    from envfactory.synth.oracle_script import _state_fact

    gold = [SimpleNamespace(output={"items": [{"id": 1, "quantity": 1, "amount": 310}]})]
    assert _state_fact("1", gold) == "1 in all"  # one row found: a count
    gold = [SimpleNamespace(output={"id": 1, "quantity": 1, "amount": 310})]
    assert _state_fact("1", gold) == "the quantity is 1"
    assert _state_fact("310", gold) == "the amount is 310"


def test_an_answer_after_a_look_up_opens_with_words_for_a_look_up():
    from envfactory.text import phrases

    reads = {p.split("{")[0].strip() for p in phrases("oracle_done_read")}
    writes = {p.split("{")[0].strip() for p in phrases("oracle_done")}
    # 'That went through' reports a change; 'I looked it up' a look-up
    assert "That went through:" in writes and "That went through:" not in reads
    assert "I looked it up:" in reads and "I looked it up:" not in writes


def test_a_row_reached_through_another_row_s_foreign_key_says_the_hop_even_in_an_earlier_step():
    """'my quote belonging to my customer Makayla Sanchez' named a quote of the customer's test clock,
    whose own customer was someone else: the hop is said ('the test clock of my customer ...')."""
    from envfactory.synth import build_tasks
    from envfactory.synth.invariants import GoldView

    env = load_environment(REPO / "domains" / "commerce" / "stripe_quotes")
    seen = 0
    tasks = [t for seed in range(4) for t in build_tasks([env], n=80, seed=seed, index=False).tasks]
    for t in tasks:
        calls = GoldView.of_task(t).calls
        for c in calls:
            for arg, r in (c.get("refs") or {}).items():
                src = calls[r[0]]["tool"] if r and isinstance(r[0], int) else ""
                if c["tool"] == "list_quotes" and arg == "test_clock" and src.endswith("_customers"):
                    seen += 1
                    assert "test clock" in t.goal, t.goal
    assert seen >= 1


def test_a_test_clock_is_no_lab_test():
    from envfactory.spec.seed_vocab import titles_for

    assert "Lipid Panel" not in titles_for("test_clock", "name")
    assert "Lipid Panel" in titles_for("lab_test", "name")


def test_a_wrapper_does_not_repeat_what_the_request_ends_with():
    from envfactory.synth.realize import _tidy

    assert _tidy("create a geofence and jot the reference down for me for me.") == (
        "Create a geofence and jot the reference down for me."
    )
    assert _tidy("send it to the team for media for me.") == "Send it to the team for media for me."
