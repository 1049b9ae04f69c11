"""Tool writes keep field roles and entity constraints: the runtime refuses a create, update or
action whose row would break one (a one-line tool error, state unchanged), and the audit of the
rows random valid calls write finds nothing."""

from __future__ import annotations

import random

import pytest

from envfactory.errors import ArgumentError, ConstraintError
from envfactory.runtime import Environment, build_template, load_environment
from envfactory.spec import ToolKind, parse_spec
from envfactory.verify import valid_args

CLOCK = "2026-06-01T09:00:00"

ALL = [
    ("email", "string"),
    ("status", "string"),
    ("check_in", "string"),
    ("check_out", "string"),
    ("opens_at", "string"),
    ("created_at", "datetime"),
    ("date_of_birth", "date"),
    ("quantity", "integer"),
    ("unit_price", "number"),
    ("total", "number"),
    ("cancelled_at", "datetime"),
]

SPEC = {
    "name": "stays",
    "domain": "test",
    "clock": CLOCK,
    "entities": [
        {
            "name": "stay",
            "primary_key": "stay_id",
            "fields": [
                {"name": "stay_id", "type": "string", "id_prefix": "ST"},
                {"name": "email", "type": "string"},
                {"name": "status", "type": "string", "examples": ["booked", "completed", "cancelled"]},
                {"name": "check_in", "type": "string", "role": "date"},
                {"name": "check_out", "type": "string", "role": "date"},
                {"name": "opens_at", "type": "string", "role": "time"},
                {"name": "created_at", "type": "datetime"},
                {"name": "date_of_birth", "type": "date"},
                {"name": "quantity", "type": "integer"},
                {"name": "unit_price", "type": "number"},
                {"name": "total", "type": "number"},
                {"name": "cancelled_at", "type": "datetime", "nullable": True},
            ],
            "constraints": [
                {"kind": "order", "fields": ["check_in", "check_out"], "min": 24, "max": 504},
                {"kind": "clock", "fields": ["created_at"], "relation": "past"},
                {"kind": "age", "fields": ["date_of_birth"], "min": 18, "max": 90},
                {
                    "kind": "status_time",
                    "fields": ["check_in", "status"],
                    "past": ["completed"],
                    "future": ["booked"],
                },
                {"kind": "product", "fields": ["total", "quantity", "unit_price"]},
                {"kind": "set_when", "fields": ["cancelled_at", "status"], "past": ["cancelled"]},
            ],
        }
    ],
    "tools": [
        {
            "name": "create_stay",
            "kind": "create",
            "entity": "stay",
            "description": "Book a stay.",
            "params": [{"name": n, "type": t, "field": n, "required": n != "cancelled_at"} for n, t in ALL],
        },
        {
            "name": "update_stay",
            "kind": "update",
            "entity": "stay",
            "description": "Change a stay.",
            "params": [
                {"name": "stay_id", "type": "string", "field": "stay_id", "key": True, "required": True},
                *({"name": n, "type": t, "field": n} for n, t in ALL),
            ],
        },
        {
            "name": "complete_stay",
            "kind": "action",
            "entity": "stay",
            "description": "Mark a stay completed.",
            "params": [
                {"name": "stay_id", "type": "string", "field": "stay_id", "key": True, "required": True}
            ],
            "effects": [{"field": "status", "set": "completed"}],
        },
    ],
    "seed": {"seed": 3, "entities": {"stay": {"rows": 30}}},
}

GOOD = {
    "email": "ana@example.com",
    "status": "booked",
    "check_in": "2026-07-01",
    "check_out": "2026-07-04",
    "opens_at": "15:00",
    "created_at": "2026-05-20T10:00:00",
    "date_of_birth": "1980-03-02",
    "quantity": 3,
    "unit_price": 120.0,
    "total": 360.0,
}


@pytest.fixture(scope="module")
def env() -> Environment:
    spec = parse_spec(SPEC)
    return Environment(spec, build_template(spec))


def test_a_write_that_keeps_every_role_and_constraint_is_accepted(env):
    with env.new_session() as s:
        out = s.call("create_stay", GOOD)
        assert out["check_out"] == "2026-07-04"
        s.call("update_stay", {"stay_id": out["stay_id"], "check_out": "2026-07-10"})
        assert s.get_row("stay", out["stay_id"])["check_out"] == "2026-07-10"


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("check_in", "Check In 12345", "must be a date"),
        ("opens_at", "afternoon", "must be a time of day"),
        ("status", "happy", "must be a status"),
        ("email", "Email 4411", "must be an email"),
    ],
)
def test_a_value_its_role_refuses_is_an_argument_error_naming_the_argument(env, field, value, says):
    with env.new_session() as s:
        h0 = s.state_hash()
        with pytest.raises(ArgumentError) as err:
            s.call("create_stay", {**GOOD, field: value})
        assert err.value.argument == field and says in str(err.value)
        assert s.state_hash() == h0


@pytest.mark.parametrize(
    "change, says",
    [
        ({"check_out": "2026-06-30"}, "check_out (2026-06-30) must be at least 24 hours after check_in"),
        ({"check_out": "2026-09-30"}, "check_out (2026-09-30) must be at most 21 days after check_in"),
        ({"created_at": "2026-06-02T08:00:00"}, "created_at (2026-06-02T08:00:00) must not be after now"),
        ({"date_of_birth": "2020-01-01"}, "gives an age of 6"),
        ({"status": "completed"}, "status cannot be 'completed' while check_in (2026-07-01) is ahead"),
        ({"total": 100.0}, "total must be quantity x unit_price = 360, got 100"),
        (
            {"cancelled_at": "2026-05-30T10:00:00"},
            "cancelled_at is set only when status is one of [cancelled]",
        ),
    ],
)
def test_each_constraint_kind_refuses_a_create_that_breaks_it(env, change, says):
    with env.new_session() as s:
        h0 = s.state_hash()
        with pytest.raises(ConstraintError) as err:
            s.call("create_stay", {**GOOD, **change})
        assert says in str(err.value)
        assert s.state_hash() == h0


def test_updates_and_actions_are_judged_on_the_row_as_it_will_be_stored(env):
    with env.new_session() as s:
        key = s.call("create_stay", GOOD)["stay_id"]
        h0 = s.state_hash()
        # the stored check_in is 2026-07-01: an update of check_out alone is judged against it
        with pytest.raises(ConstraintError, match="check_out"):
            s.call("update_stay", {"stay_id": key, "check_out": "2026-07-01"})
        with pytest.raises(ConstraintError, match="total must be quantity x unit_price = 480"):
            s.call("update_stay", {"stay_id": key, "quantity": 4})
        # the action's effect sets status completed while the stay is ahead of the clock
        with pytest.raises(ConstraintError, match="status cannot be 'completed'"):
            s.call("complete_stay", {"stay_id": key})
        assert s.state_hash() == h0
        # once the stay lies in the past, completing it is fine
        s.call(
            "update_stay",
            {"stay_id": key, "status": "cancelled", "check_in": "2026-05-01", "check_out": "2026-05-03"},
        )
        assert s.call("complete_stay", {"stay_id": key})["status"] == "completed"


def test_a_constraint_the_write_does_not_touch_is_not_judged(env):
    with env.new_session() as s:
        key = s.call("create_stay", GOOD)["stay_id"]
        # a stored row that breaks a rule (written behind the runtime's back) can still be edited
        s.conn.execute("UPDATE stay SET total = 1 WHERE stay_id = ?", (key,))
        s.call("update_stay", {"stay_id": key, "email": "bo@example.com"})
        assert s.get_row("stay", key)["email"] == "bo@example.com"


def test_valid_args_draw_values_the_guard_accepts(env):
    rng = random.Random(7)
    with env.new_session() as s:
        made = 0
        for _ in range(20):
            for tool in ("create_stay", "update_stay"):
                args = valid_args(s, env, env.spec.tool(tool), rng)
                assert args is not None
                s.call(tool, args)  # raises if the guard refuses it
                made += 1
        assert made == 40


def _random_calls_audit(env_dir: str, monkeypatch: pytest.MonkeyPatch | None = None):
    from envfactory.audit import audit_environment

    env = load_environment(env_dir)
    if monkeypatch is not None:  # the runtime before issue 15: no guard, arguments as drawn
        import envfactory.runtime.writes as session_mod
        import envfactory.verify.args as args_mod

        class _Off:
            def check(self, *a: object) -> None:
                return None

        monkeypatch.setattr(session_mod, "write_guard", lambda env, tool: _Off())
        monkeypatch.setattr(args_mod, "fit_write", lambda *a: True)
    return audit_environment(env, seed=0, calls_per_tool=3)


@pytest.mark.parametrize(
    "env_dir", ["domains/travel/trip_desk", "domains/academia/google_classroom_announcements"]
)
def test_the_audit_finds_nothing_in_rows_random_valid_calls_wrote(env_dir, monkeypatch):
    rep = _random_calls_audit(env_dir)
    kinds = (ToolKind.create, ToolKind.update, ToolKind.action)
    writes = [t for t in load_environment(env_dir).spec.tools if t.kind in kinds]
    assert rep.calls >= len(writes)  # every write tool was called
    found = {k: v.violations for k, v in rep.after_calls.items() if k != "empty" and v.violations}
    assert found == {}, {k: rep.after_calls[k].examples for k in found}
    # the same calls on the runtime without the guard (and arguments as drawn) leave findings
    before = _random_calls_audit(env_dir, monkeypatch)
    assert sum(v.violations for k, v in before.after_calls.items() if k != "empty") > 0


def test_a_date_stamped_on_the_day_of_a_date_time_is_not_before_it():
    spec = {
        "name": "notes",
        "domain": "test",
        "clock": CLOCK,
        "entities": [
            {
                "name": "project",
                "primary_key": "project_id",
                "fields": [
                    {"name": "project_id", "type": "string", "id_prefix": "PR"},
                    {"name": "name", "type": "string"},
                    {"name": "created_at", "type": "datetime", "nullable": True},
                    {"name": "created_on", "type": "date", "nullable": True},
                ],
                "constraints": [{"kind": "order", "fields": ["created_at", "created_on"], "min": 0}],
            }
        ],
        "tools": [
            {
                "name": "create_project",
                "kind": "create",
                "entity": "project",
                "description": "Make a project.",
                "params": [{"name": "name", "type": "string", "field": "name", "required": True}],
                "effects": [{"field": "created_at", "now": True}, {"field": "created_on", "now": True}],
            }
        ],
        "seed": {"entities": {"project": {"rows": 3}}},
    }
    parsed = parse_spec(spec)
    env = Environment(parsed, build_template(parsed))
    with env.new_session() as s:  # created_at 09:00 and created_on that day: a day holds its moments
        out = s.call("create_project", {"name": "Kitchen remodel"})
        assert (out["created_at"], out["created_on"]) == ("2026-06-01T09:00:00", "2026-06-01")


def test_a_number_outside_its_believable_range_is_refused_and_valid_args_keep_inside_it(env):
    # the corpus audit found Stripe cards written with exp_year 4 and tax rates of 213.8 %: the guard
    # judged roles and constraints but not the ranges the audit holds numbers to
    with env.new_session() as s:
        h0 = s.state_hash()
        with pytest.raises(ArgumentError) as err:
            s.call("create_stay", {**GOOD, "quantity": 100000, "total": 100000 * GOOD["unit_price"]})
        assert err.value.argument == "quantity" and "must be between 1 and 500" in str(err.value)
        assert s.state_hash() == h0
    from envfactory.runtime.validate import fit_write

    tool = env.spec.tool("create_stay")
    args = {**GOOD, "quantity": 100000}
    own = {"quantity": 100000, "total": GOOD["total"]}
    assert fit_write(env.spec.entity("stay"), tool, {}, args, own, env.clock, random.Random(1))
    assert 1 <= args["quantity"] <= 500
