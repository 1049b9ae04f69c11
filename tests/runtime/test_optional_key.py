"""A row's key that the document marks optional (a body or query id: Intercom ``PUT /visitors
{id?, user_id?}``, Gmail ``batchDelete {ids?}``, Slack ``files.comments.delete {id?}``) stays
optional in the tool, as documented. A call without it selects no row: every kind that selects
one (get, update, delete, action) refuses it with a one-line tool error and changes nothing."""

from __future__ import annotations

import pytest

from envfactory.errors import ArgumentError
from envfactory.runtime import Environment
from envfactory.spec import EnvSpec, tool_input_schema

KEY = {
    "name": "visitor_id",
    "type": "string",
    "key": True,
    "field": "id",
    "description": "A unique identified for the visitor which is given by Intercom; without it no visitor is selected.",
}
SPEC = {
    "name": "visitors",
    "domain": "messaging",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "visitor",
            "primary_key": "id",
            "fields": [
                {"name": "id", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "status", "type": "enum", "enum": ["active", "archived"]},
            ],
        }
    ],
    "tools": [
        {
            "name": "list_visitors",
            "kind": "list",
            "entity": "visitor",
            "description": "List visitors.",
            "params": [{"name": "name", "type": "string", "field": "name"}],
        },
        {
            "name": "get_visitor",
            "kind": "get",
            "entity": "visitor",
            "description": "Get a visitor.",
            "params": [KEY],
        },
        {
            "name": "update_visitor",
            "kind": "update",
            "entity": "visitor",
            "description": "Change a visitor.",
            "params": [KEY, {"name": "name", "type": "string", "field": "name"}],
        },
        {
            "name": "delete_visitor",
            "kind": "delete",
            "entity": "visitor",
            "description": "Delete a visitor.",
            "params": [KEY],
        },
        {
            "name": "archive_visitor",
            "kind": "action",
            "entity": "visitor",
            "description": "Archive a visitor.",
            "params": [KEY],
            "effects": [{"field": "status", "set": "archived"}],
        },
    ],
    "seed": {"seed": 3, "entities": {"visitor": {"rows": 6}}},
}


def _env() -> Environment:
    return Environment.from_spec(EnvSpec.model_validate(SPEC))


def test_an_optional_key_stays_optional_in_the_input_schema():
    env = _env()
    for name in ("get_visitor", "update_visitor", "delete_visitor", "archive_visitor"):
        schema = tool_input_schema(env.spec.tool(name))
        assert "visitor_id" in schema["properties"] and "visitor_id" not in schema.get("required", []), name


@pytest.mark.parametrize(
    "tool, args",
    [
        ("get_visitor", {}),
        ("update_visitor", {"name": "Gareth Bale"}),
        ("delete_visitor", {}),
        ("archive_visitor", {}),
        ("update_visitor", {"visitor_id": None, "name": "Gareth Bale"}),
    ],
)
def test_a_call_without_the_key_selects_no_row_and_changes_nothing(tool, args):
    env = _env()
    with env.new_session() as s:
        before = s.state_hash()
        with pytest.raises(ArgumentError) as e:
            s.call(tool, args)
        msg = str(e.value)
        assert msg.startswith(f"{tool}: no visitor selected: give 'visitor_id'"), msg
        assert "\n" not in msg and e.value.argument == "visitor_id"
        assert s.state_hash() == before and not s.diff().changed and not s.diff().removed
        out = s.try_call(tool, args)
        assert out["ok"] is False and out["error"] == "invalid_argument", out


def test_a_call_with_the_key_selects_its_row():
    env = _env()
    with env.new_session() as s:
        a, b = (r["id"] for r in s.call("list_visitors", {"limit": 2})["items"])
        assert s.call("get_visitor", {"visitor_id": a})["id"] == a
        assert s.call("update_visitor", {"visitor_id": a, "name": "Gareth Bale"})["name"] == "Gareth Bale"
        assert s.call("archive_visitor", {"visitor_id": a})["status"] == "archived"
        assert s.call("delete_visitor", {"visitor_id": b}) == {"deleted": True, "id": b}
        d = s.diff()
        assert [c["key"] for c in d.changed["visitor"]] == [a] and [
            r["id"] for r in d.removed["visitor"]
        ] == [b]


def test_the_verifier_passes_each_tool_and_checks_the_call_without_its_key():
    from envfactory.verify import verify_environment

    env = _env()
    report = verify_environment(env, seed=0)
    for name in ("get_visitor", "update_visitor", "delete_visitor", "archive_visitor"):
        tr = report.tools[name]
        assert tr.ok and tr.status["L1"] == "pass", (name, tr.first_failure())
