"""envfactory audit catches each kind of unbelievable seed value, and passes believable ones."""

from __future__ import annotations

import datetime as dt

import pytest

from envfactory.audit import audit_environment, audit_rows, is_lorem_word, looks_like_person
from envfactory.runtime import Environment
from envfactory.spec import EntitySpec, parse_spec

CLOCK = dt.datetime(2026, 6, 1, 9, 0)

ENT = EntitySpec(
    name="booking",
    primary_key="booking_id",
    fields=[
        {"name": "booking_id", "type": "string"},
        {"name": "check_in", "type": "date"},
        {"name": "check_out", "type": "date"},
        {"name": "departure_time", "type": "datetime"},
        {"name": "arrival_time", "type": "datetime"},
        {"name": "status", "type": "enum", "enum": ["booked", "completed"]},
        {"name": "payment_status", "type": "string"},
        {"name": "payment_date", "type": "string"},
        {"name": "merchant_id", "type": "string"},
        {"name": "hotel_name", "type": "string"},
        {"name": "notes", "type": "string"},
        {"name": "extras", "type": "object"},
        {"name": "guests", "type": "integer"},
        {"name": "quantity", "type": "integer"},
        {"name": "unit_price", "type": "number"},
        {"name": "line_total", "type": "number"},
        {"name": "currency", "type": "string"},
        {"name": "created_at", "type": "datetime"},
        {"name": "updated_at", "type": "datetime"},
    ],
)
TRAVELER = EntitySpec(
    name="traveler",
    primary_key="traveler_id",
    fields=[
        {"name": "traveler_id", "type": "string"},
        {"name": "name", "type": "string"},
        {"name": "birth_date", "type": "date"},
    ],
)

GOOD = {
    "booking_id": "BK1",
    "check_in": "2026-07-01",
    "check_out": "2026-07-04",
    "departure_time": "2026-07-01T08:00:00",
    "arrival_time": "2026-07-01T11:30:00",
    "status": "booked",
    "payment_status": "paid",
    "payment_date": "2026-05-20",
    "merchant_id": "MR0042",
    "hotel_name": "Harbor Inn",
    "notes": "Late arrival, keep the room.",
    "extras": {"breakfast": True},
    "guests": 2,
    "quantity": 2,
    "unit_price": 120.0,
    "line_total": 240.0,
    "currency": "EUR",
    "created_at": "2026-05-20T10:00:00",
    "updated_at": "2026-05-21T10:00:00",
}


def _check(ent, row):
    return {k: c.violations for k, c in audit_rows(ent, [row], CLOCK).items() if c.violations}


def test_a_believable_row_has_no_finding():
    assert _check(ENT, GOOD) == {}
    assert _check(TRAVELER, {"traveler_id": "TR1", "name": "Ana Lopez", "birth_date": "1980-03-02"}) == {}


@pytest.mark.parametrize(
    "change, check",
    [
        ({"check_out": "2026-06-28"}, "constraint"),  # inverted pair
        ({"arrival_time": "2026-09-30T11:30:00"}, "constraint"),  # arrival three months later
        ({"status": "completed"}, "constraint"),  # completed but in the future
        ({"updated_at": "2026-05-01T10:00:00"}, "constraint"),  # updated before created
        ({"updated_at": "2026-08-02T10:00:00"}, "constraint"),  # after the clock
        ({"line_total": 999.0}, "constraint"),  # total != quantity x price
        ({"guests": 995}, "constraint"),  # 995 hotel guests
        ({"payment_date": "lose"}, "non_date"),
        ({"payment_status": "happy"}, "status_word"),
        ({"merchant_id": "table"}, "id_word"),
        ({"currency": "dollars"}, "shape"),
        ({"hotel_name": "Scott Sharp"}, "person_name"),
        ({"notes": "threat"}, "lorem"),
        ({"extras": {}}, "empty"),
    ],
)
def test_each_check_catches_its_case(change, check):
    assert _check(ENT, {**GOOD, **change}) == {check: 1}


def test_future_birth_dates_and_impossible_ages_are_caught():
    assert _check(TRAVELER, {"traveler_id": "T", "name": "Ana Lopez", "birth_date": "2030-01-01"}) == {
        "constraint": 1
    }
    assert _check(TRAVELER, {"traveler_id": "T", "name": "Ana Lopez", "birth_date": "1900-01-01"}) == {
        "constraint": 1
    }


def test_person_and_lorem_detectors():
    assert looks_like_person("Candice Stone") and looks_like_person("Dr. Eric Brown")
    assert not looks_like_person("Harbor Inn") and not looks_like_person("Classic Desk Lamp")
    assert is_lorem_word("threat") and not is_lorem_word("Late arrival, keep the room.")
    assert is_lorem_word("he") and not is_lorem_word("HE")  # a code in capitals is no placeholder


def test_examples_name_the_row_and_value():
    found = audit_rows(ENT, [{**GOOD, "payment_date": "lose"}], CLOCK)
    assert found["non_date"].examples == ["booking.payment_date [booking_id=BK1] = 'lose'"]


BAD_SPEC = {
    "name": "bad",
    "domain": "test",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "category",
            "primary_key": "category_id",
            "constraints": [],
            "fields": [
                {"name": "category_id", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "start_date", "type": "date"},
                {"name": "end_date", "type": "date"},
                {"name": "meta", "type": "object"},
            ],
        }
    ],
    "tools": [
        {
            "name": "create_category",
            "kind": "create",
            "entity": "category",
            "description": "Add one.",
            "params": [{"name": "name", "type": "string", "required": True, "field": "name"}],
        }
    ],
    "seed": {
        "entities": {
            "category": {
                "rows": 50,
                "fields": {
                    "name": {"kind": "faker", "provider": "name"},
                    "meta": {"kind": "choice", "values": [{}]},
                    "end_date": {"kind": "date", "start": "2026-01-01", "end": "2026-12-31"},
                },
            }
        }
    },
}


def test_audit_environment_reports_seed_and_after_calls():
    rep = audit_environment(Environment.from_spec(parse_spec(BAD_SPEC)), calls_per_tool=2)
    assert not rep.ok
    assert rep.seed["person_name"].violations > 40 and rep.seed["empty"].rate == 1.0
    assert rep.seed["constraint"].violations > 0  # the audit infers start < end though the spec states none
    assert rep.calls >= 1 and rep.rows == 50
    figures = rep.figures()
    assert figures["person_name"] == rep.seed["person_name"].violations and figures["empty_rate"] == 1.0


def test_audit_command_exits_1_on_findings_and_0_when_clean(tmp_path):
    from typer.testing import CliRunner

    from envfactory.cli import app
    from envfactory.spec import save_spec

    bad = tmp_path / "bad"
    save_spec(parse_spec(BAD_SPEC), bad)
    res = CliRunner().invoke(app, ["audit", str(bad), "--calls", "0"])
    assert res.exit_code == 1, res.output
    assert "person_name=" in res.output and "FINDINGS" in res.output
    good = dict(BAD_SPEC, seed={"entities": {"category": {"rows": 50}}})
    good["entities"] = [dict(BAD_SPEC["entities"][0], constraints=None)]
    save_spec(parse_spec(good), tmp_path / "good")
    res = CliRunner().invoke(app, ["audit", str(tmp_path / "good"), "--calls", "0"])
    assert res.exit_code == 0, res.output


def test_a_cancellation_stamp_on_a_row_that_is_not_cancelled_is_caught():
    ent = EntitySpec(
        name="order",
        primary_key="order_id",
        fields=[
            {"name": "order_id", "type": "string"},
            {"name": "status", "type": "enum", "enum": ["placed", "cancelled"]},
            {"name": "cancelled_at", "type": "datetime", "nullable": True},
        ],
    )
    row = {"order_id": "O1", "status": "placed", "cancelled_at": "2026-05-01T10:00:00"}
    assert _check(ent, row) == {"constraint": 1}
    assert _check(ent, {**row, "status": "cancelled"}) == {}


def test_a_documented_minimum_alone_does_not_make_any_count_believable():
    ent = EntitySpec(
        name="flight",
        primary_key="flight_id",
        fields=[{"name": "flight_id", "type": "string"}, {"name": "stops", "type": "integer", "minimum": 0}],
    )
    assert _check(ent, {"flight_id": "F1", "stops": 93}) == {"constraint": 1}
    assert _check(ent, {"flight_id": "F1", "stops": 1}) == {}
