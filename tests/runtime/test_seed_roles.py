"""The seeder satisfies field roles and every constraint kind, deterministically."""

from __future__ import annotations

import copy
import datetime as dt

import pytest

from envfactory.audit import audit_rows
from envfactory.runtime import Environment, build_seed_rows, build_template
from envfactory.spec import parse_spec

CLOCK = "2026-06-01T09:00:00"

SPEC = {
    "name": "stays",
    "domain": "test",
    "clock": CLOCK,
    "entities": [
        {
            "name": "guest",
            "primary_key": "guest_id",
            "fields": [
                {"name": "guest_id", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "email", "type": "string", "unique": True},
                {"name": "birth_date", "type": "date"},
                {"name": "home_airport", "type": "string", "role": "airport_code"},
                {"name": "created_at", "type": "datetime"},
                {"name": "updated_at", "type": "datetime"},
            ],
        },
        {
            "name": "hotel",
            "primary_key": "hotel_id",
            "fields": [
                {"name": "hotel_id", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "category", "type": "string"},
                {"name": "description", "type": "string"},
                {"name": "address", "type": "object"},
                {"name": "tags", "type": "array"},
                {"name": "chain_code", "type": "string", "role": "code", "pattern": "??-###"},
            ],
        },
        {
            "name": "stay",
            "primary_key": "stay_id",
            "fields": [
                {"name": "stay_id", "type": "string"},
                {"name": "guest_id", "type": "string", "ref": "guest"},
                {"name": "hotel_id", "type": "string", "ref": "hotel"},
                {"name": "check_in", "type": "datetime"},
                {"name": "check_out", "type": "datetime"},
                {"name": "status", "type": "enum", "enum": ["booked", "completed", "cancelled"]},
                {"name": "guests", "type": "integer"},
                {"name": "quantity", "type": "integer"},
                {"name": "unit_price", "type": "number"},
                {"name": "line_total", "type": "number"},
                {"name": "total", "type": "string"},
                {"name": "payment_date", "type": "string"},
                {"name": "merchant_id", "type": "string"},
                {"name": "note", "type": "string"},
                {"name": "cancelled_at", "type": "datetime", "nullable": True},
            ],
        },
    ],
    "tools": [
        {
            "name": "get_stay",
            "kind": "get",
            "entity": "stay",
            "description": "Get a stay.",
            "params": [
                {"name": "stay_id", "type": "string", "required": True, "key": True, "field": "stay_id"}
            ],
        }
    ],
    "seed": {
        "seed": 3,
        "entities": {
            "guest": {"rows": 300},
            "hotel": {"rows": 80},
            "stay": {
                "rows": 600,
                "fields": {
                    # explicit generators that break the constraints: the seeder still keeps them
                    "check_out": {
                        "kind": "datetime",
                        "start": "2026-01-01T00:00:00",
                        "end": "2026-12-31T00:00:00",
                    },
                    "guests": {"kind": "int", "min": 1, "max": 999},
                },
            },
        },
    },
}


def _rows(spec):
    out = {}
    for name, (cols, rows) in build_seed_rows(spec).items():
        out[name] = [dict(zip(cols, r)) for r in rows]
    return out


def _decoded(spec, rows):
    import json

    ent_rows = {}
    for ent in spec.entities:
        objs = {f.name for f in ent.fields if f.type.value in ("object", "array")}
        ent_rows[ent.name] = [
            {k: (json.loads(v) if k in objs and isinstance(v, str) else v) for k, v in r.items()}
            for r in rows[ent.name]
        ]
    return ent_rows


@pytest.fixture(scope="module")
def seeded():
    spec = parse_spec(SPEC)
    return spec, _decoded(spec, _rows(spec))


def test_seeded_rows_pass_every_audit_check(seeded):
    spec, rows = seeded
    clock = dt.datetime.fromisoformat(CLOCK)
    for ent in spec.entities:
        found = audit_rows(ent, rows[ent.name], clock)
        assert {k: c.examples for k, c in found.items() if c.violations and k != "empty"} == {}, ent.name
        assert found["empty"].rate <= 0.05
        assert found["constraint"].checked > 0 or ent.name == "hotel"


def test_constraints_hold_row_by_row(seeded):
    _, rows = seeded
    now = dt.datetime.fromisoformat(CLOCK)
    for r in rows["stay"]:
        a, b = dt.datetime.fromisoformat(r["check_in"]), dt.datetime.fromisoformat(r["check_out"])
        assert dt.timedelta(hours=24) <= b - a <= dt.timedelta(days=21)
        if r["status"] == "completed":
            assert a <= now
        if r["status"] == "booked":
            assert a > now
        assert r["line_total"] == round(r["quantity"] * r["unit_price"], 2)
        assert (r["cancelled_at"] is None) == (r["status"] != "cancelled")
        assert 1 <= r["guests"] <= 12
        dt.date.fromisoformat(r["payment_date"][:10])  # a date, not a word
        float(r["total"])  # money written as text is a number
        assert any(c.isdigit() for c in r["merchant_id"])
    for g in rows["guest"]:
        age = (now - dt.datetime.fromisoformat(g["birth_date"])).days / 365.25
        assert 18 <= age <= 90
        assert g["created_at"] <= g["updated_at"] <= CLOCK
        assert g["email"].count("@") == 1 and not g["email"].endswith(tuple("0123456789"))


def test_roles_shape_values(seeded):
    _, rows = seeded
    h = rows["hotel"][0]
    assert set(h["address"]) >= {"line1", "city"} and h["tags"]
    assert h["name"].endswith("Grand Hotel")
    assert len(h["chain_code"]) == 6 and h["chain_code"][2] == "-"
    assert all(len(g["home_airport"]) == 3 and g["home_airport"].isupper() for g in rows["guest"])
    assert all(" " in r["description"] for r in rows["hotel"])


def test_examples_become_seed_values():
    spec = copy.deepcopy(SPEC)
    spec["entities"][1]["fields"][2]["examples"] = ["Boutique", "Resort"]
    rows = _rows(parse_spec(spec))
    assert {r["category"] for r in rows["hotel"]} == {"Boutique", "Resort"}


def test_same_seed_same_bytes_and_another_seed_differs():
    a, b = build_template(parse_spec(SPEC)), build_template(parse_spec(SPEC))
    assert a == b
    other = copy.deepcopy(SPEC)
    other["seed"]["seed"] = 4
    assert build_template(parse_spec(other)) != a


def test_stated_empty_constraints_are_not_inferred():
    spec = copy.deepcopy(SPEC)
    spec["entities"][2]["constraints"] = []
    rows = _rows(parse_spec(spec))
    # with no constraints stated, the explicit check_out generator is kept as written: some inverted
    assert any(r["check_out"] < r["check_in"] for r in rows["stay"])


def test_environment_builds_from_the_spec():
    env = Environment.from_spec(parse_spec(SPEC))
    assert env.row_counts()["stay"] == 600


def test_a_documented_minimum_alone_keeps_the_believable_maximum():
    spec = copy.deepcopy(SPEC)
    spec["entities"][2]["fields"].append({"name": "stops", "type": "integer", "minimum": 0})
    rows = _rows(parse_spec(spec))
    assert max(r["stops"] for r in rows["stay"]) <= 4


def test_a_past_date_after_a_late_timestamp_on_the_clock_day_moves_the_stamp_back():
    from envfactory.runtime.constraints import apply_constraints
    from envfactory.spec import EntitySpec

    ent = EntitySpec(
        name="transaction",
        primary_key="id",
        fields=[
            {"name": "id", "type": "string"},
            {"name": "created_at", "type": "datetime"},
            {"name": "posted_date", "type": "date"},
        ],
    )
    row = {"id": "T1", "created_at": "2026-06-01T08:00:00", "posted_date": "2026-05-01"}
    clock = dt.datetime.fromisoformat(CLOCK)
    apply_constraints(ent, [row], clock, 0)
    assert row["posted_date"] <= "2026-06-01" and row["created_at"] <= row["posted_date"] + "T00:00:00"
    assert audit_rows(ent, [row], clock)["constraint"].violations == 0


def test_an_explicit_empty_object_or_array_is_seeded_with_parts():
    spec = copy.deepcopy(SPEC)
    spec["seed"]["entities"]["hotel"]["fields"] = {
        "tags": {"kind": "const", "value": []},
        "address": {"kind": "const", "value": {}},
    }
    rows = _decoded(parse_spec(spec), _rows(parse_spec(spec)))
    assert all(r["tags"] and r["address"] for r in rows["hotel"])


def test_a_code_pattern_on_a_date_status_or_id_field_yields_to_the_role():
    # the explorer once turned documented examples into patterns: '####-##-##' made '5430-18-92',
    # '??' a status 'IB', '???' an id 'PYD' (corpus: apideck crm, vtex orders, amadeus offers)
    spec = copy.deepcopy(SPEC)
    spec["entities"].append(
        {
            "name": "activity",
            "primary_key": "activity_id",
            "fields": [
                {"name": "activity_id", "type": "string"},
                {"name": "activity_date", "type": "string"},
                {"name": "status", "type": "string"},
                {"name": "affiliate_id", "type": "string"},
                {"name": "seller_id", "type": "string"},
                {"name": "ticket_code", "type": "string"},
            ],
        }
    )
    spec["seed"]["entities"]["activity"] = {
        "rows": 40,
        "fields": {
            "activity_date": {
                "kind": "null_or",
                "p_null": 0.1,
                "inner": {"kind": "pattern", "pattern": "####-##-##"},
            },
            "status": {"kind": "pattern", "pattern": "??"},
            "affiliate_id": {"kind": "pattern", "pattern": "???"},
            "seller_id": {"kind": "pattern", "pattern": "???", "value": "upper"},
            "ticket_code": {"kind": "pattern", "pattern": "??-###"},
        },
    }
    parsed = parse_spec(spec)
    rows = _decoded(parsed, _rows(parsed))["activity"]
    found = audit_rows(parsed.entity("activity"), rows, dt.datetime.fromisoformat(CLOCK))
    assert {k: v.violations for k, v in found.items() if v.violations} == {}
    assert all(dt.date.fromisoformat(r["activity_date"]) for r in rows if r["activity_date"])
    # a code keeps its documented pattern, and so does an id documented as three capitals ('GHB')
    assert all(len(r["seller_id"]) == 3 and r["seller_id"].isupper() for r in rows)
    assert all(len(r["ticket_code"]) == 6 and r["ticket_code"][2] == "-" for r in rows)


def test_a_row_that_reaches_one_parent_two_ways_reaches_the_same_one():
    # a course work points at a course and at a topic; the topic points at a course: the same one
    spec = {
        "name": "classes",
        "domain": "test",
        "clock": CLOCK,
        "entities": [
            {"name": "course", "primary_key": "id", "fields": [{"name": "id", "type": "string"}]},
            {
                "name": "topic",
                "primary_key": "id",
                "fields": [
                    {"name": "id", "type": "string"},
                    {"name": "course_id", "type": "string", "ref": "course"},
                ],
            },
            {
                "name": "course_work",
                "primary_key": "id",
                "fields": [
                    {"name": "id", "type": "string"},
                    {"name": "course_id", "type": "string", "ref": "course"},
                    {"name": "topic_id", "type": "string", "ref": "topic", "nullable": True},
                ],
            },
        ],
        "tools": [],
        "seed": {"entities": {"course": {"rows": 30}, "topic": {"rows": 60}, "course_work": {"rows": 200}}},
    }
    rows = _rows(parse_spec(spec))
    course_of = {t["id"]: t["course_id"] for t in rows["topic"]}
    linked = [w for w in rows["course_work"] if w["topic_id"] is not None]
    assert len(linked) > 100
    assert all(course_of[w["topic_id"]] == w["course_id"] for w in linked)
