"""Defect 1 (issue 14): nested list tools (``GET /projects/{project_gid}/sections``) and the
deletes checked through them are verified with a valid parent id, not dropped.

The fixture is shaped after Asana's document: ``gid`` keys, ``{"data": ...}`` envelopes,
sections listed only under their project.
"""

from __future__ import annotations

import json

from envfactory.explore import explore
from envfactory.ingest import load_apidoc
from envfactory.verify import verify_and_repair


def _ok(schema):
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _pp(name):
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


PROJECT = {
    "type": "object",
    "properties": {
        "gid": {"type": "string", "readOnly": True},
        "name": {"type": "string"},
        "notes": {"type": "string"},
    },
}
SECTION = {
    "type": "object",
    "properties": {
        "gid": {"type": "string", "readOnly": True},
        "name": {"type": "string"},
        "project": {"$ref": "#/components/schemas/ProjectCompact"},
    },
}


def asana_like():
    data = lambda s: {"type": "object", "properties": {"data": s}}  # noqa: E731
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Asana", "version": "1.0"},
        "components": {"schemas": {"ProjectCompact": PROJECT, "SectionCompact": SECTION}},
        "paths": {
            "/projects": {
                "get": {
                    "operationId": "getProjects",
                    "responses": _ok(data({"type": "array", "items": PROJECT})),
                },
                "post": {
                    "operationId": "createProject",
                    "requestBody": {"content": {"application/json": {"schema": data(PROJECT)}}},
                    "responses": _ok(data(PROJECT)),
                },
            },
            "/projects/{project_gid}": {
                "parameters": [_pp("project_gid")],
                "get": {"operationId": "getProject", "responses": _ok(data(PROJECT))},
            },
            "/projects/{project_gid}/sections": {
                "parameters": [_pp("project_gid")],
                "get": {
                    "operationId": "getSectionsForProject",
                    "responses": _ok(data({"type": "array", "items": SECTION})),
                },
                "post": {
                    "operationId": "createSectionForProject",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": data(
                                    {
                                        "type": "object",
                                        "required": ["name"],
                                        "properties": {"name": {"type": "string"}},
                                    }
                                )
                            }
                        }
                    },
                    "responses": _ok(data(SECTION)),
                },
            },
            "/sections/{section_gid}": {
                "parameters": [_pp("section_gid")],
                "get": {"operationId": "getSection", "responses": _ok(data(SECTION))},
                "delete": {"operationId": "deleteSection", "responses": _ok(data({"type": "object"}))},
            },
        },
    }
    return load_apidoc(json.dumps(doc).encode(), source="asana.json")


def test_nested_list_and_delete_pass_verification():
    spec = explore(asana_like(), domain="pm").envs[0]
    lists = [t for t in spec.tools if t.source == "GET /projects/{project_gid}/sections"]
    assert lists and any(p.required for p in lists[0].params), "the nested list needs its parent id"
    fixed, report = verify_and_repair(spec)
    assert fixed is not None
    kept = {t.source for t in fixed.tools}
    assert "GET /projects/{project_gid}/sections" in kept, report.excluded
    assert "DELETE /sections/{section_gid}" in kept, report.excluded
