"""envfactory.text: one rule set for plurals, articles, labels, counts and values."""

from __future__ import annotations

import re

import pytest

from envfactory import text
from envfactory.spec import FieldType


@pytest.mark.parametrize(
    "word, many",
    [
        ("hotel reservation", "hotel reservations"),
        ("flight_offer", "flight_offers"),
        ("category", "categories"),
        ("day", "days"),
        ("key", "keys"),
        ("guy", "guys"),
        ("box", "boxes"),
        ("status", "statuses"),
        ("address", "addresses"),
        ("church", "churches"),
        ("quiz", "quizzes"),
        ("person", "people"),
        ("child", "children"),
        ("analysis", "analyses"),
        ("criterion", "criteria"),
        ("hero", "heroes"),
        ("photo", "photos"),
        ("data", "data"),
        ("series", "series"),
        ("inventory", "inventory"),
        ("lab_result", "lab_results"),
        ("", ""),
    ],
)
def test_plural(word, many):
    assert text.plural(word) == many


@pytest.mark.parametrize(
    "word, one",
    [
        ("checked bags", "checked bag"),
        ("categories", "category"),
        ("statuses", "status"),
        ("status", "status"),
        ("addresses", "address"),
        ("people", "person"),
        ("boxes", "box"),
        ("classes", "class"),
        ("news", "news"),
        ("analyses", "analysis"),
        ("ids", "ids"),
        ("movies", "movie"),
        ("photos", "photo"),
        ("videos", "video"),
    ],
)
def test_singular(word, one):
    assert text.singular(word) == one


@pytest.mark.parametrize(
    "phrase, art",
    [
        ("order", "an"),
        ("flight", "a"),
        ("user", "a"),
        ("unit", "a"),
        ("utility bill", "a"),
        ("hour", "an"),
        ("honest answer", "an"),
        ("one-way ticket", "a"),
        ("European flight", "a"),
        ("umbrella", "an"),
        ("item", "an"),
        ("Email", "an"),
    ],
)
def test_article(phrase, art):
    assert text.article(phrase) == art


@pytest.mark.parametrize(
    "raw, human",
    [
        ("flight_id", "flight"),
        ("price_per_night", "price per night"),
        ("hotel_reservation", "hotel reservation"),
        ("booking_ref", "booking"),
        ("_id", "id"),
    ],
)
def test_humanize(raw, human):
    assert text.humanize(raw) == human


@pytest.mark.parametrize(
    "name, kind, label",
    [
        ("pickup_at", None, "pickup time"),
        ("dropoff_at", None, "drop-off time"),
        ("expires_on", None, "expiry date"),
        ("duration_minutes", "integer", "duration in minutes"),
        ("check_in_date", "date", "check-in date"),
        ("check_in", "date", "check-in date"),
        ("departure", "datetime", "departure time"),
        ("created_at", "datetime", "creation time"),
        ("is_active", "boolean", "active"),
        ("alert_threshold_pct", "integer", "alert threshold in percent"),
        ("carry_on_bags", "integer", "carry-on bags"),
        ("shipped_on", "date", "shipped date"),
        (FieldType.date.value, "date", "date"),
    ],
)
def test_field_label(name, kind, label):
    assert text.field_label(name, kind) == label


@pytest.mark.parametrize(
    "name, forms",
    [
        ("stops", ("stop", "stops", 4)),
        ("checked_bags", ("checked bag", "checked bags", 6)),
        ("carry_on_bags", ("carry-on bag", "carry-on bags", 6)),
        ("sessions_per_week", ("session a week", "sessions a week", 14)),
        ("refills_authorized", ("refill", "refills", 12)),
        ("days_supply", ("day's supply", "days' supply", 365)),
        ("quantity", ("unit", "units", 100)),
        ("stars", ("star", "stars", 5)),
        ("seats_available", None),
        ("refills_remaining", None),
        ("price", None),
        ("total_rooms", None),
        ("star", None),
        ("status", None),
    ],
)
def test_count_forms_follow_general_rules(name, forms):
    assert text.count_forms(name) == forms


@pytest.mark.parametrize(
    "name, v, said",
    [
        ("guests", 3, "3 guests"),
        ("stars", 1, "1 star"),
        ("stops", 0, "no stops"),
        ("nights", 2.0, "2 nights"),
        ("checked_bags", 1, "1 checked bag"),
        ("price", 3, None),
        ("guests", True, None),
        ("guests", "3", None),
    ],
)
def test_count_phrase(name, v, said):
    assert text.count_phrase(name, v) == said


@pytest.mark.parametrize(
    "name, v, odd",
    [
        ("stops", 330, True),
        ("stops", 2, False),
        ("passengers", -1, True),
        ("price", 10_000, False),
        ("stops", True, False),
    ],
)
def test_implausible_count(name, v, odd):
    assert text.implausible_count(name, v) is odd


@pytest.mark.parametrize(
    "kind, name, v, said",
    [
        ("datetime", "departure_time", "2026-06-03T17:15:00", "June 3, 2026 at 17:15"),
        ("datetime", "created_at", "2026-06-03T00:00:00", "June 3, 2026"),
        ("date", "check_in", "2026-06-19", "June 19, 2026"),
        ("date", "note", "soon", "soon"),
        ("enum", "cabin", "premium_economy", "premium economy"),
        ("number", "price", 1739.69, "$1739.69"),
        ("number", "total_amount", 12.0, "$12"),
        ("integer", "rows", 12, "12"),
        (None, "x", None, "none"),
        (None, "x", [], "none"),
        ("boolean", "paid", True, "yes"),
        (None, "tags", ["a", "b", "c"], "a, b and c"),
        (None, "code", "AB_CD", "AB_CD"),
        (None, "mode", "one_way", "one way"),
    ],
)
def test_format_value(kind, name, v, said):
    assert text.format_value(kind, name, v) == said


@pytest.mark.parametrize(
    "kind, v, said",
    [
        # a date of the clock's year is said without it, as people say dates of this year
        ("datetime", "2026-06-03T17:15:00", "June 3 at 17:15"),
        ("date", "2026-06-19", "June 19"),
        ("date", "2025-12-04", "December 4, 2025"),
        # a time the document types as a plain string is still said as a time
        ("string", "2026-04-17T05:06:00", "April 17 at 05:06"),
        (None, "2024-04-17", "April 17, 2024"),
        ("string", "2026-04-17 is a code", "2026-04-17 is a code"),
    ],
)
def test_format_value_leaves_out_this_year_and_reads_iso_strings(kind, v, said):
    assert text.format_value(kind, "when", v, this_year=2026) == said


@pytest.mark.parametrize(
    "v, answer, plain",
    [
        (True, "yes", "yes"),
        (12.0, "12", "12"),
        (3.456, "3.46", "3.456"),
        (7, "7", "7"),
        ("Paris", "Paris", "Paris"),
        ([1.0, "x"], "[1.0, 'x']", "1, x"),
        (
            {"first_name": "Ann", "vip": False},
            "{'first_name': 'Ann', 'vip': False}",
            "first name Ann, vip no",
        ),
    ],
)
def test_format_answer_and_plain(v, answer, plain):
    assert text.format_answer(v) == answer and text.format_plain(v) == plain


@pytest.mark.parametrize(
    "parts, said",
    [([], ""), (["a"], "a"), (["a", "b"], "a and b"), (["a", "b", "a", "c"], "a, b and c"), (["", "x"], "x")],
)
def test_join_phrases_says_each_part_once(parts, said):
    assert text.join_phrases(parts) == said


def test_the_data_file_loads_and_phrase_tables_are_well_formed():
    e = text.english()
    assert len(e.months) == 12
    styles = text.phrases("styles")
    for table in ("openers", "user_open", "user_next", "user_reveal", "user_confirm"):
        assert set(text.phrases(table)) == set(styles), table
    assert set(text.paraphrases("asks")) == set(styles)
    assert {"list", "get", "create", "update", "delete", "action"} == set(text.phrases("oracle_before"))
    assert all("{req}" in a for style in styles for a in text.paraphrases("asks")[style])
    assert all(
        {"{verb}", "{vals}", "{obj}"} <= set(re.findall(r"\{\w+\}", f))
        # the row before its new values ('change the price to 5 of the plan X' misreads)
        and f.index("{obj}") < f.index("{vals}")
        for f in text.paraphrases("update_forms")
    )
    # nothing in the word lists is a YAML surprise (an unquoted "no" read as False)
    assert all(
        isinstance(w, str) for w in [*e.nouns.uncountable, *e.fields.null_words, *e.questions.stop_words]
    )


def test_text_imports_nothing_from_envfactory():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(text.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("envfactory"), ast.dump(node)
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("envfactory") for a in node.names)


def test_a_bare_stamp_is_said_as_what_it_stamps():
    from envfactory.text import field_label

    # 'tell me their created' is no sentence a person says
    assert field_label("created", "integer") == "creation time"
    assert field_label("updated") == "last update"
