"""Issue 14 fidelity: operations the explorer used to drop although a person would keep them.

Each case is shaped after corpus documents (named in the test): deprecated operations are
still operations; webhook registrations are CRUD on a webhook entity.
"""

from __future__ import annotations

from envfactory.explore import explore, plan_operation

from .conftest import body, ok, openapi, path_param, ref

HOOK = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "address": {"type": "string"},
        "event_types": {"type": "array", "items": {"type": "string"}},
        "enabled": {"type": "boolean"},
    },
}
SUB = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "plan": {"type": "string"}, "status": {"type": "string"}},
}


def _crud(base: str, schema: str, key: str, *, deprecated: bool = False) -> dict:
    item = {
        "parameters": [path_param(key)],
        "get": {"summary": f"Get {schema}", "responses": ok(ref(schema))},
        "delete": {"summary": f"Delete {schema}", "responses": ok(ref(schema))},
        "put": {
            "summary": f"Update {schema}",
            "requestBody": body(ref(schema)),
            "responses": ok(ref(schema)),
        },
    }
    coll = {
        "get": {"summary": f"List {schema}", "responses": ok({"type": "array", "items": ref(schema)})},
        "post": {
            "summary": f"Create {schema}",
            "requestBody": body(ref(schema)),
            "responses": ok(ref(schema)),
        },
    }
    if deprecated:
        for op in [*item.values(), *coll.values()]:
            if isinstance(op, dict) and "responses" in op:
                op["deprecated"] = True
    return {base: coll, f"{base}/{{{key}}}": item}


def test_deprecated_operations_are_planned_like_any_other():
    # Spotify, Square v1, Resend /audiences: deprecated yet documented and callable
    doc = openapi(_crud("/audiences", "Audience", "id", deprecated=True), {"Audience": HOOK})
    plans = [plan_operation(op) for op in doc.operations]
    assert all(p.reason is None for p in plans), [p.reason for p in plans]
    assert sorted(p.kind for p in plans) == ["create", "delete", "get", "list", "update"]
    tools = {t.name for e in explore(doc, domain="d").envs for t in e.tools}
    assert {"list_audiences", "create_audience", "get_audience", "delete_audience"} <= tools


def test_webhook_registration_is_crud_on_a_webhook_entity():
    # Box / Resend / Asana /webhooks; Square /v2/webhooks/subscriptions next to /v2/subscriptions
    paths = {
        **_crud("/webhooks", "Webhook", "webhook_id"),
        **_crud("/v2/webhooks/subscriptions", "WebhookSubscription", "subscription_id"),
        **_crud("/v2/subscriptions", "Subscription", "subscription_id"),
    }
    doc = openapi(paths, {"Webhook": HOOK, "WebhookSubscription": HOOK, "Subscription": SUB})
    plans = {op.key: plan_operation(op) for op in doc.operations}
    assert all(p.reason is None for p in plans.values()), {k: p.reason for k, p in plans.items() if p.reason}
    assert plans["POST /webhooks"].entity == "webhook"
    assert plans["GET /v2/webhooks/subscriptions/{subscription_id}"].entity == "webhook_subscription"
    assert plans["GET /v2/subscriptions/{subscription_id}"].entity == "subscription"
    envs = explore(doc, domain="d").envs
    ents = {e.name: e for s in envs for e in s.entities}
    assert {f.name for f in ents["webhook_subscription"].fields} >= {"address", "event_types"}
    assert "address" not in {f.name for f in ents["subscription"].fields}  # not one merged entity


def test_action_body_properties_are_kept_as_fields_the_action_writes():
    # PayPal billing subscriptions: POST /subscriptions/{id}/suspend|cancel {reason}, /capture {note, amount}
    sub = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": ["ACTIVE", "SUSPENDED", "CANCELLED"]},
        },
    }
    reason = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}
    capture = {
        "type": "object",
        "properties": {"note": {"type": "string"}, "capture_type": {"type": "string"}, "expand": {}},
    }
    paths = {
        **_crud("/subscriptions", "Subscription", "id"),
        "/subscriptions/{id}/suspend": {
            "post": {"parameters": [path_param("id")], "requestBody": body(reason), "responses": ok(sub)}
        },
        "/subscriptions/{id}/capture": {
            "post": {"parameters": [path_param("id")], "requestBody": body(capture), "responses": ok(sub)}
        },
    }
    res = explore(openapi(paths, {"Subscription": sub}), domain="d")
    tools = {t.name: t for e in res.envs for t in e.tools}
    suspend = tools["suspend_subscription"]
    assert [(p.name, p.required) for p in suspend.params if not p.key] == [("reason", True)]
    assert {(e.field, e.param) for e in suspend.effects} >= {("suspension_reason", "reason")}
    capture_tool = next(t for n, t in tools.items() if n.startswith("capture"))
    assert {p.name for p in capture_tool.params} >= {"note", "capture_type"}
    assert "expand" not in {p.name for p in capture_tool.params}  # a control, not state
    fields = {
        f.name for e in res.envs for ent in e.entities if ent.name == "subscription" for f in ent.fields
    }
    assert {"suspension_reason", "capture_note", "capture_type"} <= fields


def test_a_body_property_repeating_the_path_key_agrees_with_the_required_path_parameter():
    # Google Calendar PUT /calendars/{calendarId} {"id", "summary"}: the id the tool requires is the path's
    from envfactory.explore import build_fidelity

    cal = {"type": "object", "properties": {"id": {"type": "string"}, "summary": {"type": "string"}}}
    for key in ("calendarId", "id"):  # Traccar PUT /calendars/{id}: the tool names its key calendar_id
        doc = openapi(_crud("/calendars", "Calendar", key), {"Calendar": cal})
        res = explore(doc, domain="d")
        fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).totals
        assert fid.body_kept == fid.body_documented
        assert fid.required_agree == fid.required_checked, fid.disagreements


def test_bulk_writes_on_a_collection_are_one_row_updates_and_deletes():
    # BigCommerce v3 /customers has no item path: PUT [{"id", ...}] and DELETE ?id:in=4,5,6 only;
    # Zoho PUT /crm/v8/Notes {"data": [{"id", ...}]}
    cust = {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "integer"}, "email": {"type": "string"}, "notes": {"type": "string"}},
    }
    ids = {"name": "id:in", "in": "query", "schema": {"type": "array", "items": {"type": "integer"}}}
    note = {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}
    paths = {
        "/customers": {
            "get": {
                "responses": ok({"type": "object", "properties": {"data": {"type": "array", "items": cust}}})
            },
            "post": {"requestBody": body({"type": "array", "items": cust}), "responses": ok(cust)},
            "put": {"requestBody": body({"type": "array", "items": cust}), "responses": ok(cust)},
            "delete": {"parameters": [ids], "responses": {"204": {"description": "deleted"}}},
        },
        "/notes": {
            "get": {"responses": ok({"type": "array", "items": note})},
            "put": {
                "requestBody": body(
                    {"type": "object", "properties": {"data": {"type": "array", "items": note}}}
                ),
                "responses": ok(note),
            },
        },
    }
    doc = openapi(paths)
    plans = {op.key: plan_operation(op) for op in doc.operations}
    assert (plans["PUT /customers"].kind, plans["PUT /customers"].key_param) == ("update", "id")
    assert (plans["DELETE /customers"].kind, plans["DELETE /customers"].key_param) == ("delete", "id:in")
    assert (plans["PUT /notes"].kind, plans["PUT /notes"].key_param) == ("update", "id")
    tools = {t.source: t for e in explore(doc, domain="d").envs for t in e.tools}
    update = tools["PUT /customers"]
    assert {p.name for p in update.params} == {"customer_id", "email", "notes"}
    assert update.key_param is not None and update.key_param.field == "id"
    assert tools["DELETE /customers"].kind.value == "delete"
    assert {p.name for p in tools["PUT /notes"].params if not p.key} == {"title"}


def test_an_action_under_an_item_group_acts_on_the_item():
    # BigCommerce POST /orders/{order_id}/payment_actions/capture | /void
    order = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "status": {"type": "string", "enum": ["pending", "captured"]},
        },
    }
    paths = {
        **_crud("/orders", "Order", "order_id"),
        "/orders/{order_id}/payment_actions/capture": {
            "post": {"parameters": [path_param("order_id")], "responses": ok(order)}
        },
    }
    doc = openapi(paths, {"Order": order})
    plan = plan_operation(next(op for op in doc.operations if op.path.endswith("/capture")))
    assert (plan.kind, plan.entity, plan.key_param, plan.verb) == ("action", "order", "order_id", "capture")
    tools = {t.source: t for e in explore(doc, domain="d").envs for t in e.tools}
    assert tools["POST /orders/{order_id}/payment_actions/capture"].name == "capture_order"


def test_a_payment_session_is_a_resource_and_a_sign_in_session_is_not():
    # Adyen POST /sessions {amount, merchantAccount, returnUrl} -> a checkout session; a login is still excluded
    checkout = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "amount": {"type": "integer"},
            "returnUrl": {"type": "string"},
        },
    }
    login = {"type": "object", "properties": {"username": {"type": "string"}, "password": {"type": "string"}}}
    token = {"type": "object", "properties": {"access_token": {"type": "string"}}}
    pay = openapi({"/sessions": {"post": {"requestBody": body(checkout), "responses": ok(checkout)}}})
    auth = openapi({"/sessions": {"post": {"requestBody": body(login), "responses": ok(token)}}})
    assert plan_operation(pay.operations[0]).kind == "create"
    assert "authentication" in (plan_operation(auth.operations[0]).reason or "")


def test_library_removals_and_overwrites_are_not_bulk_row_writes():
    # Spotify DELETE /me/tracks?ids= unsaves tracks (deletes none); Discord PUT .../commands "Bulk overwrite"
    ids = {"name": "ids", "in": "query", "schema": {"type": "string"}}
    cmd = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    doc = openapi(
        {
            "/me/tracks": {"delete": {"parameters": [ids], "responses": {"200": {"description": "ok"}}}},
            "/commands": {
                "put": {
                    "summary": "Bulk overwrite global application commands",
                    "requestBody": body({"type": "array", "items": cmd}),
                    "responses": ok({"type": "array", "items": cmd}),
                }
            },
        }
    )
    plans = [plan_operation(op) for op in doc.operations]
    assert [p.kind for p in plans] == [None, None]
    assert all("no id of one row" in (p.reason or "") for p in plans)


def test_a_body_id_of_the_item_a_sub_path_names_agrees_with_the_path():
    # Traccar PUT /devices/{id}/accumulators {deviceId, totalDistance, hours}: the tool's key is the
    # path's {id}; the body's optional deviceId only repeats it
    from envfactory.explore import build_fidelity

    device = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    acc = {
        "type": "object",
        "properties": {
            "deviceId": {"type": "integer"},
            "totalDistance": {"type": "number"},
            "hours": {"type": "integer"},
        },
    }
    paths = {
        **_crud("/devices", "Device", "id"),
        "/devices/{id}/accumulators": {
            "put": {
                "parameters": [path_param("id")],
                "requestBody": body(acc),
                "responses": {"204": {"description": "ok"}},
            }
        },
    }
    doc = openapi(paths, {"Device": device})
    res = explore(doc, domain="d")
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).totals
    assert fid.required_agree == fid.required_checked, fid.disagreements


def test_a_put_of_rows_documented_as_creating_them_is_a_create_one_row_per_call():
    # BigCommerce PUT /catalog/products/channel-assignments [{product_id, channel_id}] "Create
    # Products Channel Assignments" was dropped as "a bulk update of many rows"
    row = {
        "type": "object",
        "properties": {"product_id": {"type": "integer"}, "channel_id": {"type": "integer"}},
    }
    listing = {"type": "object", "properties": {"data": {"type": "array", "items": row}}}
    paths = {
        "/catalog/products/channel-assignments": {
            "get": {"summary": "Get Products Channel Assignments", "responses": ok(listing)},
            "put": {
                "summary": "Create Products Channel Assignments",
                "requestBody": body({"type": "array", "items": row}),
                "responses": {"204": {"description": "ok"}},
            },
        },
        "/metadata_templates/enterprise/classification/schema#add": {
            "put": {
                "summary": "Add classification",
                "requestBody": body(
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"op": {"type": "string"}, "data": {"type": "object"}},
                        },
                    }
                ),
                "responses": ok({"type": "object"}),
            }
        },
    }
    res = explore(openapi(paths), domain="d")
    tools = {t.source: t for e in res.envs for t in e.tools}
    made = tools["PUT /catalog/products/channel-assignments"]
    assert made.kind.value == "create" and [p.name for p in made.params] == ["product_id", "channel_id"]
    assert "PUT /metadata_templates/enterprise/classification/schema#add" not in tools  # patch operations


def test_a_body_key_under_a_parent_s_path_is_no_repeat_of_the_path():
    # Discord PATCH /guilds/{guild_id}/channels [{id, position}] (channel positions): the tool's key
    # is a channel's id, from the body, which the document marks optional; the tool keeps it optional,
    # and the count does not excuse a required one as a repeat of the path
    from envfactory.explore import build_fidelity

    channel = {"type": "object", "properties": {"id": {"type": "string"}, "position": {"type": "integer"}}}
    guild = [path_param("guild_id")]
    paths = {
        "/guilds/{guild_id}/channels": {
            "parameters": guild,
            "get": {"responses": ok({"type": "array", "items": channel})},
            "patch": {
                "requestBody": body({"type": "array", "items": channel}),
                "responses": {"204": {"description": "ok"}},
            },
        }
    }
    doc = openapi(paths)
    res = explore(doc, domain="d")
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    tool = next(t for e in res.envs for t in e.tools if t.name == "update_channel")
    assert not tool.key_param.required and fid.required_checked == fid.required_agree, fid.disagreements
    tool.key_param.required = True
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert fid.disagreements == [
        "PATCH /guilds/{guild_id}/channels: 'id' is optional in the document, required in update_channel"
    ]
