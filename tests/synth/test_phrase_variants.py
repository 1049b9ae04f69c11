"""Many ways to say one thing, none that says another: every variant the realizer picks for a date,
a row's descriptors or a rename states the same facts, in forms the checkers read back."""

from __future__ import annotations

import random
import re

import pytest

from envfactory.runtime import load_environment
from envfactory.spec import FieldType
from envfactory.synth.invariants import canon, has_value, value_forms
from envfactory.synth.phrasing import describe, event_phrase, event_verb, value_phrase
from envfactory.text import DATE_STYLES, date_forms, format_date

from ._fixtures import REPO

TODOS = REPO / "domains" / "office" / "basecamp"
REFERRALS = REPO / "domains" / "healthcare" / "booking_and_referral"
WHEN = ["2025-06-03T17:05:00", "2026-01-21T09:30:00", "2025-11-12T00:00:00", "2026-02-02"]


@pytest.mark.parametrize("v", WHEN)
def test_every_date_style_is_read_back_as_that_date_and_no_other(v):
    ft = FieldType.datetime if "T" in v else FieldType.date
    other = v[:8] + f"{int(v[8:10]) % 28 + 1:02d}" + v[10:]  # the next day, same time
    for style in DATE_STYLES:
        for year in (None, int(v[:4])):
            for timed in (False, True):
                said = format_date(v, with_time=timed, this_year=year, style=style)
                assert said in date_forms(v)
                text = canon(f"Please find the order from {said}, thanks.")
                assert has_value(text, value_forms(v, ft, "created_at")), said
                assert not has_value(text, value_forms(other, ft, "created_at")), (said, other)


@pytest.mark.parametrize(
    ("day", "said"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"),
                      (21, "21st"), (22, "22nd"), (23, "23rd"), (30, "30th")],
)  # fmt: skip
def test_ordinal_days(day, said):
    assert format_date(f"2026-03-{day:02d}", style="ordinal") == f"March {said}, 2026"


def test_a_time_said_first_or_on_a_12_hour_clock_keeps_its_hour():
    assert format_date("2025-06-03T17:05:00", with_time=True, style="time_first") == "17:05 on June 3, 2025"
    assert format_date("2025-06-03T00:30:00", with_time=True, style="clock12") == "June 3, 2025 at 12:30 am"
    assert format_date("2025-06-03T12:30:00", with_time=True, style="clock12") == "June 3, 2025 at 12:30 pm"
    assert (
        format_date("2026-06-03T17:05:00", with_time=True, this_year=2026, style="dmy") == "3 June at 17:05"
    )


@pytest.mark.parametrize(
    ("fname", "ft", "verb"),
    [
        ("created_at", FieldType.datetime, "created"),
        ("creation_date", FieldType.date, "created"),
        ("created", FieldType.datetime, "created"),
        ("paid_at", FieldType.datetime, "paid"),
        ("used_at", FieldType.datetime, "used"),
        ("due_on", FieldType.date, None),  # a due date is no event that happened
        ("check_in", FieldType.date, None),
        ("sepa_direct_debit_exported_at", FieldType.datetime, None),  # says more than a participle
        ("created_at", FieldType.string, None),  # not a date
    ],
)
def test_a_date_field_named_for_what_happened_is_said_as_that(fname, ft, verb):
    assert event_verb(fname, ft) == verb


def test_an_event_time_said_first_takes_at_not_on():
    for seed in range(30):
        said = event_phrase("created", "17:05 on June 3", random.Random(seed))
        assert " on 17:05" not in said and said.endswith("17:05 on June 3"), said


def test_every_variant_of_a_row_s_description_states_each_of_its_facts():
    spec = load_environment(TODOS).spec
    facts = [
        ("status", "active"),
        ("created_at", "2025-06-13T01:42:00"),
        ("title", "Book the board deck"),
        ("comments_count", 3),
    ]
    seen = set()
    for seed in range(300):
        said = describe(spec, "todo", facts, "the", "", random.Random(seed), doc_words=True)
        seen.add(said)
        text = canon(said)
        for f, v in facts:
            assert has_value(text, value_forms(v, spec.entity("todo").field(f).type, f)), (f, said)
        assert not re.search(r"\bwith (created|made|added|from|entered)\b", said), (
            said
        )  # no 'with created on'
    assert len(seen) > 50  # the variants are many


def test_a_patient_named_without_the_word_name_is_still_said_by_name():
    spec = load_environment(REFERRALS).spec
    forms = {
        value_phrase(spec, "service_request", "patient_name", "Ann Lee", rng=random.Random(s))
        for s in range(40)
    }
    assert "patient Ann Lee" in forms and any("patient name" in f for f in forms)
    assert all(f.endswith("Ann Lee") or "Ann Lee" in f for f in forms)


def test_an_update_that_only_renames_a_row_says_rename_and_the_new_name():
    from envfactory.graph import run_sampling
    from envfactory.synth.realize import realize_goal

    env = load_environment(REPO / "domains" / "academia" / "google_classroom_course_work_materials")
    golds = [
        g
        for g in run_sampling([env], 200, seed=1).kept
        if [g.plan.steps[i].tool for i in g.plan.goal_steps] == ["update_topic"]
        and set(g.plan.steps[g.plan.goal_steps[0]].args) == {"topic_id", "name"}
    ]
    assert golds
    new = golds[0].plan.steps[golds[0].plan.goal_steps[0]].args["name"]
    goals = [realize_goal(env.spec, golds[0], seed=s).goal for s in range(12)]
    assert all(new in g for g in goals), goals
    assert any(re.search(rf"\brename .+ to {re.escape(new)}\b", g) for g in goals), goals
    assert any("rename" not in g for g in goals), goals  # also said as an update ('the name to X')
