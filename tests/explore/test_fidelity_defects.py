"""Defects 3, 4, 5 and 7 (issue 14) on small documents shaped after real ones, and the
fidelity report that measures them."""

from __future__ import annotations

from envfactory.explore import build_fidelity, explore

from .conftest import body, ok, openapi, path_param, query


def _wide_customer():
    # 30 documented properties; the required ``name`` comes after 24 others (a cap kept document order)
    props = {f"attr_{i:02d}": {"type": "string"} for i in range(25)}
    props |= {
        "name": {"type": "string"},
        "sort_direction": {"type": "string"},
        "email": {"type": "string"},
        "tier": {"type": "string", "enum": ["GOLD", "SILVER"]},
        "notes": {"type": "string"},
    }
    return {"type": "object", "required": ["name", "email"], "properties": props}


CUSTOMER = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}


def test_create_keeps_every_documented_body_property_with_its_required_flag():
    doc = openapi(
        {
            "/customers": {
                "get": {"responses": ok({"type": "array", "items": CUSTOMER})},
                "post": {"requestBody": body(_wide_customer()), "responses": ok(CUSTOMER)},
            },
            "/customers/{id}": {"get": {"parameters": [path_param("id")], "responses": ok(CUSTOMER)}},
        }
    )
    spec = explore(doc, domain="t").envs[0]
    create = next(t for t in spec.tools if t.kind.value == "create")
    names = {p.name: p for p in create.params}
    assert set(_wide_customer()["properties"]) <= set(names)
    assert names["name"].required and names["email"].required and not names["sort_direction"].required
    assert names["tier"].enum == ["GOLD", "SILVER"]


def test_wrapper_and_jsonapi_bodies_are_unwrapped():
    txn = {
        "type": "object",
        "required": ["amount"],
        "properties": {"amount": {"type": "number"}, "memo": {"type": "string"}},
    }
    jsonapi = {
        "type": "object",
        "properties": {
            "data": {
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "attributes": {
                        "type": "object",
                        "required": ["title"],
                        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
                    },
                },
            }
        },
    }
    doc = openapi(
        {
            "/transactions": {
                "post": {
                    "requestBody": body({"type": "object", "properties": {"transaction": txn}}),
                    "responses": ok({"type": "object", "properties": {"id": {"type": "string"}}}),
                }
            },
            "/articles": {
                "post": {
                    "requestBody": body(jsonapi),
                    "responses": ok({"type": "object", "properties": {"id": {"type": "string"}}}),
                }
            },
        }
    )
    tools = {t.source: t for e in explore(doc, domain="t").envs for t in e.tools}
    t = {p.name: p.required for p in tools["POST /transactions"].params}
    assert t == {"amount": True, "memo": False}
    a = {p.name: p.required for p in tools["POST /articles"].params}
    assert a == {"title": True, "body": False}


def test_envelopes_and_controls_are_not_fields_and_id_lists_filter_by_id():
    order = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string"},
            "CustomerIDFK": {"type": "string"},
        },
    }
    page = {
        "type": "object",
        "properties": {
            "data": {"type": "array", "items": order},
            "total_items": {"type": "integer"},
            "total_pages": {"type": "integer"},
            "links": {"type": "object"},
        },
    }
    doc = openapi(
        {
            "/orders": {
                "get": {
                    "parameters": [
                        query("orderby", {"type": "string"}),
                        query("fields", {"type": "string"}),
                        query("page", {"type": "integer"}),
                        query("order_ids", {"type": "array", "items": {"type": "string"}}),
                    ],
                    "responses": ok(page),
                }
            },
            "/orders/{id}": {"get": {"parameters": [path_param("id")], "responses": ok(order)}},
            "/customers": {"get": {"responses": ok({"type": "array", "items": CUSTOMER})}},
            "/customers/{id}": {"get": {"parameters": [path_param("id")], "responses": ok(CUSTOMER)}},
        }
    )
    spec = next(e for e in explore(doc, domain="t").envs if any(x.name == "order" for x in e.entities))
    fields = {f.name: f for f in spec.entity("order").fields}
    assert not {"total_items", "total_pages", "links", "orderby", "fields", "page", "data"} & set(fields)
    lister = next(t for t in spec.tools if t.kind.value == "list" and t.entity == "order")
    ids = next(p for p in lister.params if p.name == "order_ids")
    assert ids.field == "id" and ids.op == "in"
    fk = fields["customer_idfk"]
    assert fk.ref == "customer"  # *IDFK names a foreign key


def test_enum_case_is_kept_for_actions():
    inv = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "number": {"type": "string"},
            "status": {"type": "string", "enum": ["DRAFT", "SENT", "PAID", "VOID"]},
        },
    }
    doc = openapi(
        {
            "/invoices": {"get": {"responses": ok({"type": "array", "items": inv})}},
            "/invoices/{id}": {"get": {"parameters": [path_param("id")], "responses": ok(inv)}},
            "/invoices/{id}/send": {"post": {"parameters": [path_param("id")], "responses": ok(inv)}},
        }
    )
    spec = explore(doc, domain="t").envs[0]
    assert spec.entity("invoice").field("status").enum == ["DRAFT", "SENT", "PAID", "VOID"]
    send = next(t for t in spec.tools if t.kind.value == "action")
    assert [e.set for e in send.effects if e.field == "status"] == ["SENT"]


def test_fidelity_report_counts_operations_drops_and_body():
    doc = openapi(
        {
            "/customers": {
                "get": {"responses": ok({"type": "array", "items": CUSTOMER})},
                "post": {"requestBody": body(_wide_customer()), "responses": ok(CUSTOMER)},
            },
            "/customers/{id}": {"get": {"parameters": [path_param("id")], "responses": ok(CUSTOMER)}},
            "/oauth/token": {
                "post": {
                    "requestBody": body({"type": "object", "properties": {"url": {"type": "string"}}}),
                    "responses": ok(CUSTOMER),
                }
            },
        }
    )
    res = explore(doc, domain="t")
    dropped_tool = res.envs[0].tools[0]
    shipped = [res.envs[0].model_copy(update={"tools": res.envs[0].tools[1:]})]
    rep = build_fidelity(
        [doc],
        res.excluded,
        res.envs,
        shipped,
        {(res.envs[0].name, dropped_tool.name): "L2: failed"},
        {},
        res.origins,
    )
    d = rep.documents[0]
    assert (d.operations, d.tools_made, d.verified) == (4, 3, 2)
    stages = {x.operation: x.stage for x in d.dropped}
    assert stages == {"POST /oauth/token": "explore", dropped_tool.source: "verify"}
    if dropped_tool.source != "POST /customers":
        assert (d.body_documented, d.body_kept, d.required_agree) == (30, 30, 30)
        assert (d.enums_documented, d.enums_kept) == (1, 1)


def test_a_list_answer_with_page_fields_beside_its_rows_is_no_row():
    # Google Calendar's ``Events``: the calendar's summary, time zone and access role, paging tokens and
    # ``items`` (the events, a reference the reader truncated) answer GET /calendars/{id}/events
    event = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "summary": {"type": "string"},
            "location": {"type": "string"},
        },
    }
    events = {
        "type": "object",
        "properties": {
            "accessRole": {"type": "string"},
            "summary": {"type": "string"},
            "timeZone": {"type": "string"},
            "defaultReminders": {"type": "array", "items": {"type": "object", "properties": {"minutes": {}}}},
            "nextPageToken": {"type": "string"},
            "items": {
                "type": "array",
                "items": {"x-truncated": "#/components/schemas/Event", "type": "object"},
            },
        },
    }
    doc = openapi(
        {
            "/calendars/{calendarId}/events": {
                "get": {"parameters": [path_param("calendarId")], "responses": ok(events)},
                "post": {
                    "parameters": [path_param("calendarId")],
                    "requestBody": body(event),
                    "responses": ok(event),
                },
            },
            "/calendars/{calendarId}/events/{eventId}": {
                "get": {
                    "parameters": [path_param("calendarId"), path_param("eventId")],
                    "responses": ok(event),
                }
            },
        }
    )
    spec = next(e for e in explore(doc, domain="t").envs if any(x.name == "event" for x in e.entities))
    fields = {f.name for f in spec.entity("event").fields}
    assert {"summary", "location"} <= fields
    assert not {"items", "access_role", "time_zone", "default_reminders", "next_page_token"} & fields
