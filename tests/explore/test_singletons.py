"""Singletons (issue 14, defect 2): one object a path names with no id of its own.

Fixtures are shaped after corpus documents: Box's ``/files/{file_id}/watermark`` (GET, PUT,
DELETE; a per-parent singleton keyed by the file's id), Jira's ``/rest/api/3/mypreferences/locale``
(GET, PUT, DELETE; one object of the API) and VTEX's ``/api/orders/feed/config``; the
bulk paths that must stay out are Spotify's ``DELETE /me/albums?ids=``.
"""

from __future__ import annotations

from envfactory.explore import explore, plan_operation
from envfactory.runtime import Environment
from envfactory.spec import ToolKind
from envfactory.verify import mutants, verify_and_repair

from .conftest import body, ok, openapi, path_param, query

FILE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "size": {"type": "integer"},
    },
}
WATERMARK = {
    "type": "object",
    "properties": {
        "watermark": {
            "type": "object",
            "properties": {
                "created_at": {"type": "string", "format": "date-time"},
                "modified_at": {"type": "string", "format": "date-time"},
            },
        }
    },
}
WATERMARK_BODY = {
    "type": "object",
    "required": ["watermark"],
    "properties": {
        "watermark": {
            "type": "object",
            "required": ["imprint"],
            "properties": {"imprint": {"type": "string", "enum": ["default"]}},
        }
    },
}
LOCALE = {"type": "object", "properties": {"locale": {"type": "string", "example": "en_US"}}}
NO_CONTENT = {"204": {"description": "Returned if the request is successful."}}


def box_like():
    pp = [path_param("file_id")]
    return openapi(
        {
            "/files": {
                "get": {
                    "summary": "List files",
                    "responses": ok(
                        {"type": "object", "properties": {"entries": {"type": "array", "items": FILE}}}
                    ),
                }
            },
            "/files/{file_id}": {
                "parameters": pp,
                "get": {"summary": "Get file information", "responses": ok(FILE)},
                "delete": {"summary": "Delete file", "responses": NO_CONTENT},
            },
            "/files/{file_id}/watermark": {
                "parameters": pp,
                "get": {"summary": "Get watermark on file", "responses": ok(WATERMARK)},
                "put": {
                    "summary": "Apply watermark to file",
                    "requestBody": body(WATERMARK_BODY),
                    "responses": ok(WATERMARK),
                },
                "delete": {"summary": "Remove watermark from file", "responses": NO_CONTENT},
            },
            "/rest/api/3/mypreferences/locale": {
                "get": {"summary": "Get locale", "responses": ok(LOCALE)},
                "put": {
                    "summary": "Set locale",
                    "requestBody": body(LOCALE),
                    "responses": ok({"type": "object"}),
                },
                "delete": {"summary": "Delete locale", "responses": NO_CONTENT},
            },
        },
        title="Box",
    )


def _by_source(spec):
    return {t.source: t for t in spec.tools}


def test_singleton_paths_are_planned_as_singletons_not_dropped():
    doc = box_like()
    plans = {op.key: plan_operation(op) for op in doc.operations}
    for key in ("GET", "DELETE"):
        p = plans[f"{key} /files/{{file_id}}/watermark"]
        assert p.reason is None, p.reason
        assert (p.singleton, p.entity, p.key_param) == ("parent", "file_watermark", "file_id")
    for key, kind in (("GET", "get"), ("PUT", "update"), ("DELETE", "delete")):
        p = plans[f"{key} /rest/api/3/mypreferences/locale"]
        assert p.reason is None, p.reason
        assert (p.singleton, p.kind, p.entity, p.key_param) == ("global", kind, "mypreference_locale", None)


def test_per_parent_and_global_singletons_verify_and_run():
    spec = explore(box_like(), domain="files").envs[0]
    wm = spec.entity("file_watermark")
    assert wm.singleton and wm.primary_key == "file_id" and wm.pk.ref == "file" and wm.parent == "file"
    loc = spec.entity("mypreference_locale")
    assert loc.singleton and loc.parent is None
    fixed, report = verify_and_repair(spec)
    assert fixed is not None
    tools = _by_source(fixed)
    for source in (
        "GET /files/{file_id}/watermark",
        "PUT /files/{file_id}/watermark",
        "DELETE /files/{file_id}/watermark",
        "GET /rest/api/3/mypreferences/locale",
        "PUT /rest/api/3/mypreferences/locale",
        "DELETE /rest/api/3/mypreferences/locale",
        "DELETE /files/{file_id}",
    ):
        assert source in tools, (source, report.excluded)
    get_loc = tools["GET /rest/api/3/mypreferences/locale"]
    assert get_loc.params == [] and get_loc.kind == ToolKind.get
    clear = tools["DELETE /rest/api/3/mypreferences/locale"]
    assert clear.kind == ToolKind.action and clear.name.startswith("clear_")
    assert [p.name for p in tools["GET /files/{file_id}/watermark"].params] == ["file_id"]

    env = Environment.from_spec(fixed)
    rows = env.row_counts()
    assert rows["mypreference_locale"] == 1
    assert rows["file_watermark"] == rows["file"]  # one watermark per file
    s = env.new_session()
    assert s.call(get_loc.name, {})["locale"] is not None
    assert (
        s.call(tools["PUT /rest/api/3/mypreferences/locale"].name, {"locale": "de_DE"})["locale"] == "de_DE"
    )
    s.call(clear.name, {})
    assert s.call(get_loc.name, {})["locale"] is None  # cleared: the object stays, back to its default
    fid = s.query("SELECT id FROM file ORDER BY id LIMIT 1")[0][0]
    s.call(tools["DELETE /files/{file_id}"].name, {"file_id": fid})  # its watermark goes with it
    assert s.query("SELECT COUNT(*) FROM file_watermark WHERE file_id = ?", [fid])[0][0] == 0


def test_mutants_of_singleton_tools_are_caught():
    spec = explore(box_like(), domain="files").envs[0]
    fixed, _ = verify_and_repair(spec)
    assert fixed is not None
    singles = {t.name for t in fixed.tools if fixed.entity(t.entity).singleton}
    report = mutants.run_mutants(fixed)
    on_singles = [r for r in report.results if set(r.tools) & singles]
    assert on_singles, "no mutant touches a singleton tool"
    assert all(r.killed for r in on_singles), [(r.name, r.detail) for r in on_singles if not r.killed]


def test_bulk_paths_stay_dropped_with_a_reason():
    ids = query("ids", {"type": "string"})
    doc = openapi(
        {
            "/me/albums": {
                "delete": {
                    "summary": "Remove Users' Saved Albums",
                    "parameters": [ids],
                    "responses": NO_CONTENT,
                }
            },
            "/lobbies": {
                "put": {
                    "summary": "Create or join a lobby",
                    "requestBody": body(LOCALE),
                    "responses": ok(LOCALE),
                }
            },
        }
    )
    for op in doc.operations:
        p = plan_operation(op)
        assert p.reason is not None and "many rows" in p.reason, (op.key, p.kind, p.entity, p.reason)
