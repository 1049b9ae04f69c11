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


def test_a_singleton_named_like_a_parent_field_prefix_does_not_clash():
    # Discord: guild.widget_channel_id beside GET /guilds/{guild_id}/widget {"channel_id": ...}; the
    # template would name the indexes of guild_widget.channel_id and guild.widget_channel_id alike
    guild = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "widget_channel_id": {"type": "string"},
        },
    }
    channel = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    widget = {
        "type": "object",
        "properties": {"enabled": {"type": "boolean"}, "channel_id": {"type": "string"}},
    }
    pg, pc = [path_param("guild_id")], [path_param("channel_id")]
    doc = openapi(
        {
            "/guilds/{guild_id}": {"parameters": pg, "get": {"responses": ok(guild)}},
            "/channels/{channel_id}": {"parameters": pc, "get": {"responses": ok(channel)}},
            "/guilds/{guild_id}/widget": {
                "parameters": pg,
                "get": {"responses": ok(widget)},
                "patch": {"requestBody": body(widget), "responses": ok(widget)},
            },
        },
        title="Discord",
    )
    res = explore(doc, domain="chat")
    made = {t.source for e in res.envs for t in e.tools}
    assert {
        "GET /guilds/{guild_id}",
        "GET /channels/{channel_id}",
        "GET /guilds/{guild_id}/widget",
    } <= made, [str(x) for x in res.excluded]
    assert "PATCH /guilds/{guild_id}/widget" in made, [str(x) for x in res.excluded]


def test_the_callers_own_object_beside_a_collection_is_current_x():
    # Stripe: GET /v1/account (the caller's account) beside GET /v1/accounts/{account}; and
    # DELETE /v1/customers/{customer}/discount, whose answer documents the discount it clears
    account = {"type": "object", "properties": {"id": {"type": "string"}, "email": {"type": "string"}}}
    customer = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    discount = {
        "type": "object",
        "properties": {
            "coupon": {"type": "string"},
            "end": {"type": "integer"},
            "deleted": {"type": "boolean"},
        },
    }
    doc = openapi(
        {
            "/v1/account": {"get": {"summary": "Retrieve account", "responses": ok(account)}},
            "/v1/accounts": {
                "get": {
                    "responses": ok(
                        {"type": "object", "properties": {"data": {"type": "array", "items": account}}}
                    )
                }
            },
            "/v1/accounts/{account}": {
                "parameters": [path_param("account")],
                "get": {"responses": ok(account)},
            },
            "/v1/customers/{customer}": {
                "parameters": [path_param("customer")],
                "get": {"responses": ok(customer)},
            },
            "/v1/customers/{customer}/discount": {
                "parameters": [path_param("customer")],
                "delete": {"summary": "Delete a customer discount", "responses": ok(discount)},
            },
        },
        title="Stripe",
    )
    res = explore(doc, domain="pay")
    tools = {t.source: (e, t) for e in res.envs for t in e.tools}
    assert "GET /v1/account" in tools, [str(x) for x in res.excluded]
    env, t = tools["GET /v1/account"]
    assert t.entity == "current_account" and env.entity("current_account").singleton and t.params == []
    env, t = tools["DELETE /v1/customers/{customer}/discount"]
    assert t.kind == ToolKind.action and {e.field for e in t.effects} >= {"coupon", "end"}


def test_events_verbs_and_sub_collections_are_not_singletons():
    service = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    location = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    pid = [path_param("id")]
    event = {"type": "object", "properties": {"OrderId": {"type": "string"}, "Reason": {"type": "string"}}}
    doc = openapi(
        {
            "/setup/v1/services": {"get": {"responses": ok({"type": "array", "items": service})}},
            "/setup/v1/locations/{id}": {"parameters": pid, "get": {"responses": ok(location)}},
            "/setup/v1/locations/{id}/services": {
                "parameters": pid,
                "delete": {"summary": "Deletes all location services", "responses": ok(location)},
            },
            "/setup/v1/locations/{id}/deleteimage": {
                "parameters": pid,
                "delete": {"summary": "Removes a location image", "responses": ok(location)},
            },
            "/delivery-failed": {
                "put": {
                    "summary": "Delivery Attempt Failed",
                    "requestBody": body(event),
                    "responses": NO_CONTENT,
                }
            },
        },
        title="OnSched",
    )
    res = explore(doc, domain="s")
    why = {x.operation: x.reason for x in res.excluded}
    assert "many rows of a collection" in why["DELETE /setup/v1/locations/{id}/services"], why
    assert "verb" in why["DELETE /setup/v1/locations/{id}/deleteimage"], why
    assert "reports on the row its body names (OrderId)" in why["PUT /delivery-failed"], why
