"""Defect 9 (issue 14): verification keeps valid writes.

- the delete of a parent that every seeded child references: verification creates a row
  nothing references (through the entity's create tool) and deletes that;
- an update whose object parameter the smoke check used to fill with ``{}`` (which writes
  what the seed stored, so "the state did not change" and the tool was dropped).
"""

from __future__ import annotations

import json

from envfactory.explore import explore
from envfactory.ingest import load_apidoc
from envfactory.runtime import Environment
from envfactory.verify import smoke_check, verify_and_repair


def _ok(schema):
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _pp(name):
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _body(schema):
    return {"content": {"application/json": {"schema": schema}}}


TEAM = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "settings": {"type": "object", "properties": {"visibility": {"type": "string"}}},
    },
}
MEMBER = {
    "type": "object",
    "required": ["id", "team_id", "email"],
    "properties": {"id": {"type": "string"}, "team_id": {"type": "string"}, "email": {"type": "string"}},
}


def team_doc():
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Teams", "version": "1"},
        "paths": {
            "/teams": {
                "get": {"responses": _ok({"type": "array", "items": TEAM})},
                "post": {
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "settings": TEAM["properties"]["settings"],
                            },
                        }
                    ),
                    "responses": _ok(TEAM),
                },
            },
            "/teams/{team_id}": {
                "parameters": [_pp("team_id")],
                "get": {"responses": _ok(TEAM)},
                "put": {
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["settings"],
                            "properties": {"settings": TEAM["properties"]["settings"]},
                        }
                    ),
                    "responses": _ok(TEAM),
                },
                "delete": {"responses": {"204": {"description": "deleted"}}},
            },
            "/teams/{team_id}/members": {
                "parameters": [_pp("team_id")],
                "get": {"responses": _ok({"type": "array", "items": MEMBER})},
                "post": {
                    "requestBody": _body(
                        {"type": "object", "required": ["email"], "properties": {"email": {"type": "string"}}}
                    ),
                    "responses": _ok(MEMBER),
                },
            },
        },
    }
    return load_apidoc(json.dumps(doc).encode(), source="teams.json")


def _all_teams_referenced(spec) -> bool:
    env = Environment.from_spec(spec)
    with env.new_session() as s:
        free = s.query(
            "SELECT COUNT(*) FROM team t WHERE NOT EXISTS (SELECT 1 FROM member m WHERE m.team_id = t.id)"
        )
    return free[0][0] == 0


def test_delete_of_a_parent_every_row_references_is_verified():
    spec = explore(team_doc(), domain="t").envs[0]
    spec.seed.entities["team"].rows, spec.seed.entities["member"].rows = 3, 60  # every team has members
    spec.seed.entities[
        "team"
    ].spare = 0  # (the explorer keeps some unreferenced: here the create must make one)
    assert _all_teams_referenced(spec), "the fixture must seed a child for every team"
    checks = {c.tool: c for c in smoke_check(Environment.from_spec(spec))}
    assert checks["delete_team"].ok, checks["delete_team"].message
    fixed, report = verify_and_repair(spec)
    assert fixed is not None and "delete_team" in {t.name for t in fixed.tools}, report.excluded


def test_update_with_an_object_parameter_changes_the_state():
    spec = explore(team_doc(), domain="t").envs[0]
    upd = next(t for t in spec.tools if t.kind.value == "update")
    assert any(p.type.value == "object" for p in upd.params)
    checks = {c.tool: c for c in smoke_check(Environment.from_spec(spec))}
    assert checks[upd.name].ok, checks[upd.name].message
