"""Issue 14 fidelity, third round: operations dropped though the document says which rows they
read, create or delete. Each fixture is cut down from a corpus document (named in the test)."""

from __future__ import annotations

from envfactory.explore import build_fidelity, explore, plan_operation

from .conftest import body, ok, openapi, path_param

GROUP = {"type": "object", "properties": {"groupId": {"type": "string"}, "name": {"type": "string"}}}
PAGE = {
    "type": "object",
    "properties": {"isLast": {"type": "boolean"}, "values": {"type": "array", "items": GROUP}},
}
ISSUE_UPDATE = {"type": "object", "properties": {"fields": {"type": "object"}, "update": {"type": "object"}}}


def _plans(paths: dict) -> dict:
    return {op.key: plan_operation(op) for op in openapi(paths).operations}


def test_bulk_word_that_lists_creates_or_deletes_rows_one_at_a_time():
    # Jira GET /rest/api/3/group/bulk "Bulk get groups" (a page of groups), POST /issue/bulk
    # "Bulk create issue" {issueUpdates: [...]}, DELETE /webhook {webhookIds} "Delete webhooks by ID"
    ids = {"type": "array", "items": {"type": "integer"}}
    plans = _plans(
        {
            "/rest/api/3/group/bulk": {
                "get": {
                    "summary": "Bulk get groups",
                    "parameters": [
                        {
                            "name": "groupId",
                            "in": "query",
                            "schema": {"type": "array", "items": {"type": "string"}},
                        }
                    ],
                    "responses": ok(PAGE),
                }
            },
            "/rest/api/3/issue/bulk": {
                "post": {
                    "summary": "Bulk create issue",
                    "requestBody": body(
                        {
                            "type": "object",
                            "properties": {"issueUpdates": {"type": "array", "items": ISSUE_UPDATE}},
                        }
                    ),
                    "responses": ok({"type": "object", "properties": {"issues": {"type": "array"}}}),
                }
            },
            "/rest/api/3/webhook": {
                "delete": {
                    "summary": "Delete webhooks by ID",
                    "requestBody": body(
                        {"type": "object", "required": ["webhookIds"], "properties": {"webhookIds": ids}}
                    ),
                    "responses": {"202": {"description": "Returned if the request is successful."}},
                }
            },
        }
    )
    got = {k: (p.reason or p.kind, p.entity, p.key_param, p.bulk) for k, p in plans.items()}
    assert got == {
        "GET /rest/api/3/group/bulk": ("list", "group", None, False),
        "POST /rest/api/3/issue/bulk": ("create", "issue", None, True),
        "DELETE /rest/api/3/webhook": ("delete", "webhook", "webhookIds", True),
    }


def test_bulk_word_that_writes_many_rows_at_once_stays_a_batch_endpoint():
    # Resend POST /suppressions/batch/add {emails: [...]}; Onsched POST /locations/bulk (no body
    # documented); Jira GET /user/email/bulk answers one object, not a list
    plans = _plans(
        {
            "/suppressions/batch/add": {
                "post": {
                    "summary": "Add up to 100 suppressions at once",
                    "requestBody": body(
                        {
                            "type": "object",
                            "properties": {"emails": {"type": "array", "items": {"type": "string"}}},
                        }
                    ),
                    "responses": ok({"type": "object"}),
                }
            },
            "/setup/v1/locations/bulk": {
                "post": {
                    "summary": "Creates new location objects.",
                    "requestBody": body({"type": "object"}),
                    "responses": ok({"type": "array", "items": GROUP}),
                }
            },
            "/user/email/bulk": {
                "get": {
                    "summary": "Get user email bulk",
                    "responses": ok({"type": "object", "properties": {"accountId": {"type": "string"}}}),
                }
            },
        }
    )
    assert all(p.reason and p.reason.startswith("batch endpoint") for p in plans.values()), plans


def test_a_bulk_delete_keeps_its_documented_id_list_as_its_key():
    # Jira DELETE /rest/api/3/webhook {webhookIds (required)}: the tool deletes one webhook per
    # call by webhook_id; the fidelity report counts the documented list as kept, required as written
    webhook = {"type": "object", "properties": {"id": {"type": "integer"}, "jqlFilter": {"type": "string"}}}
    doc = openapi(
        {
            "/rest/api/3/webhook": {
                "get": {
                    "responses": ok(
                        {"type": "object", "properties": {"values": {"type": "array", "items": webhook}}}
                    )
                },
                "post": {
                    "requestBody": body({"type": "object", "properties": {"jqlFilter": {"type": "string"}}}),
                    "responses": ok(webhook),
                },
                "delete": {
                    "summary": "Delete webhooks by ID",
                    "requestBody": body(
                        {
                            "type": "object",
                            "required": ["webhookIds"],
                            "properties": {"webhookIds": {"type": "array", "items": {"type": "integer"}}},
                        }
                    ),
                    "responses": {"202": {"description": "Returned if the request is successful."}},
                },
            }
        }
    )
    res = explore(doc, domain="t")
    d = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert d.verified == d.operations == 3
    assert not [x for x in d.disagreements if "webhookIds" in x], d.disagreements
    assert (d.body_documented, d.body_kept, d.required_agree) == (2, 2, 2)


def test_bulk_delete_names_its_rows_by_a_list_named_for_them():
    # Discord POST /channels/{channel_id}/messages/bulk-delete {messages: [snowflake, ...]}: the
    # messages those ids name, one per call; a list of e-mail addresses names no rows
    snowflakes = {"type": "array", "items": {"type": "string", "format": "snowflake"}}
    emails = {"type": "array", "items": {"type": "string"}}
    chan = {"name": "channel_id", "in": "path", "required": True, "schema": {"type": "string"}}
    plans = _plans(
        {
            "/channels/{channel_id}/messages/bulk-delete": {
                "post": {
                    "parameters": [chan],
                    "requestBody": body(
                        {"type": "object", "required": ["messages"], "properties": {"messages": snowflakes}}
                    ),
                    "responses": {"204": {"description": "No Content"}},
                }
            },
            "/suppressions/bulk-delete": {
                "post": {
                    "requestBody": body(
                        {
                            "type": "object",
                            "required": ["suppressions"],
                            "properties": {"suppressions": emails},
                        }
                    ),
                    "responses": {"204": {"description": "No Content"}},
                }
            },
        }
    )
    got = {k: (p.reason or p.kind, p.entity, p.key_param, p.bulk) for k, p in plans.items()}
    assert got["POST /channels/{channel_id}/messages/bulk-delete"] == ("delete", "message", "messages", True)
    assert got["POST /suppressions/bulk-delete"][0].startswith("batch endpoint")


def test_fidelity_counts_a_bulk_delete_list_named_for_its_rows_as_kept():
    msg = {"type": "object", "properties": {"id": {"type": "string"}, "content": {"type": "string"}}}
    chan = {"name": "channel_id", "in": "path", "required": True, "schema": {"type": "string"}}
    snowflakes = {"type": "array", "items": {"type": "string", "format": "snowflake"}}
    doc = openapi(
        {
            "/channels/{channel_id}/messages": {
                "parameters": [chan],
                "get": {"responses": ok({"type": "array", "items": msg})},
                "post": {
                    "requestBody": body({"type": "object", "properties": {"content": {"type": "string"}}}),
                    "responses": ok(msg),
                },
            },
            "/channels/{channel_id}/messages/bulk-delete": {
                "parameters": [chan],
                "post": {
                    "requestBody": body(
                        {"type": "object", "required": ["messages"], "properties": {"messages": snowflakes}}
                    ),
                    "responses": {"204": {"description": "No Content"}},
                },
            },
        }
    )
    res = explore(doc, domain="t")
    d = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert d.verified == d.operations == 3
    assert (d.body_documented, d.body_kept, d.required_agree) == (2, 2, 2), d.disagreements


EVENT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "summary": {"type": "string"},
        "start": {"type": "object", "properties": {"dateTime": {"type": "string"}}},
        "end": {"type": "object", "properties": {"dateTime": {"type": "string"}}},
        "iCalUID": {"type": "string"},
    },
}
IMPORT_JOB = {
    "type": "object",
    "properties": {
        "object": {"type": "string"},
        "id": {"type": "string", "format": "uuid"},
        "status": {"type": "string", "enum": ["queued", "in_progress", "completed", "failed"]},
    },
}


def test_an_import_of_one_row_is_a_create_and_import_jobs_are_rows():
    # Google Calendar POST /calendars/{calendarId}/events/import "Imports an event" (an Event in,
    # the Event out); Resend GET /contacts/imports and /contacts/imports/{id} (import jobs, with a status)
    cal = {"name": "calendarId", "in": "path", "required": True, "schema": {"type": "string"}}
    plans = _plans(
        {
            "/calendars/{calendarId}/events/import": {
                "post": {
                    "parameters": [cal],
                    "description": "Imports an event.",
                    "requestBody": body(EVENT),
                    "responses": ok(EVENT),
                }
            },
            "/contacts/imports": {
                "get": {
                    "responses": ok(
                        {"type": "object", "properties": {"data": {"type": "array", "items": IMPORT_JOB}}}
                    )
                }
            },
            "/contacts/imports/{id}": {
                "get": {
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": ok(IMPORT_JOB),
                }
            },
        }
    )
    got = {k: (p.reason or p.kind, p.entity) for k, p in plans.items()}
    assert got == {
        "POST /calendars/{calendarId}/events/import": ("create", "event"),
        "GET /contacts/imports": ("list", "import"),
        "GET /contacts/imports/{id}": ("get", "import"),
    }


def test_an_import_that_trades_credentials_or_a_file_stays_a_bulk_import():
    # Plaid POST /item/import {products, user_auth} -> {access_token}; Resend POST /contacts/imports {file: binary}
    plans = _plans(
        {
            "/item/import": {
                "post": {
                    "requestBody": body(
                        {
                            "type": "object",
                            "properties": {
                                "products": {"type": "array"},
                                "user_auth": {"type": "object"},
                                "options": {"type": "object"},
                            },
                        }
                    ),
                    "responses": ok({"type": "object", "properties": {"access_token": {"type": "string"}}}),
                }
            },
            "/contacts/imports": {
                "post": {
                    "requestBody": body(
                        {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}
                    ),
                    "responses": ok(IMPORT_JOB),
                }
            },
        }
    )
    assert {k: p.reason for k, p in plans.items()} == {
        "POST /item/import": "bulk import",
        "POST /contacts/imports": "bulk import",
    }


WEBHOOK = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "token": {"type": "string"}},
}


def test_a_row_path_ending_in_its_own_token_reads_and_writes_the_row():
    # Discord GET/PATCH/DELETE /webhooks/{webhook_id}/{webhook_token} ("get_webhook_by_token"): the
    # webhook the id names; POST there executes the webhook (posts a message) and stays dropped
    pair = [
        {"name": "webhook_id", "in": "path", "required": True, "schema": {"type": "string"}},
        {"name": "webhook_token", "in": "path", "required": True, "schema": {"type": "string"}},
    ]
    named = {"type": "object", "properties": {"name": {"type": "string"}}}
    plans = _plans(
        {
            "/webhooks/{webhook_id}/{webhook_token}": {
                "parameters": pair,
                "get": {"operationId": "get_webhook_by_token", "responses": ok(WEBHOOK)},
                "patch": {"requestBody": body(named), "responses": ok(WEBHOOK)},
                "delete": {"responses": {"204": {"description": "No Content"}}},
                "post": {
                    "requestBody": body({"type": "object", "properties": {"content": {"type": "string"}}}),
                    "responses": ok({"type": "object"}),
                },
            }
        }
    )
    got = {k: (p.kind, p.entity, p.key_param) for k, p in plans.items() if not p.reason}
    assert got == {
        "GET /webhooks/{webhook_id}/{webhook_token}": ("get", "webhook", "webhook_id"),
        "PATCH /webhooks/{webhook_id}/{webhook_token}": ("update", "webhook", "webhook_id"),
        "DELETE /webhooks/{webhook_id}/{webhook_token}": ("delete", "webhook", "webhook_id"),
    }
    assert plans["POST /webhooks/{webhook_id}/{webhook_token}"].reason


def test_get_verb_paths_by_id_and_for_a_parent():
    # Plaid POST /institutions/get_by_id {institution_id}; Clubhouse GET /get_users_for_topic?topic_id=
    # "looks up users by topic" and POST /get_clubs_for_topic {topic_id}; get_suggested_follows_all
    # (no id of anything) stays dropped
    def post(props: dict, required: list[str] | None = None) -> dict:
        schema = {"type": "object", "required": required or [], "properties": props}
        return {"post": {"requestBody": body(schema), "responses": ok({"type": "object"})}}

    topic = {"name": "topic_id", "in": "query", "schema": {"type": "integer"}}
    plans = _plans(
        {
            "/institutions/get_by_id": post({"institution_id": {"type": "string"}}, ["institution_id"]),
            "/get_clubs_for_topic": post({"topic_id": {"type": "integer"}}),
            "/get_users_for_topic": {"get": {"parameters": [topic], "responses": ok({"type": "object"})}},
            "/get_suggested_follows_all": {"get": {"responses": ok({"type": "object"})}},
        }
    )
    got = {k: (p.reason and "dropped") or (p.kind, p.entity, p.key_param) for k, p in plans.items()}
    assert got == {
        "POST /institutions/get_by_id": ("get", "institution", "institution_id"),
        "POST /get_clubs_for_topic": ("list", "club", None),
        "GET /get_users_for_topic": ("list", "user", None),
        "GET /get_suggested_follows_all": "dropped",
    }


def _asana(schema: dict) -> dict:
    return {"type": "object", "properties": {"data": schema}}


TEAM = {"type": "object", "properties": {"gid": {"type": "string"}, "name": {"type": "string"}}}
USER = {
    "type": "object",
    "properties": {"gid": {"type": "string"}, "name": {"type": "string"}, "email": {"type": "string"}},
}
MEMBERSHIP = {
    "type": "object",
    "properties": {
        "gid": {"type": "string"},
        "team": TEAM,
        "user": USER,
        "is_guest": {"type": "boolean"},
        "is_admin": {"type": "boolean"},
    },
}


SETTING = {
    "type": "object",
    "properties": {
        "gid": {"type": "string"},
        "project": TEAM,
        "custom_field": TEAM,
        "is_important": {"type": "boolean"},
    },
}


def test_an_add_that_answers_the_items_join_row_creates_that_row():
    # Asana POST /teams/{team_gid}/addUser "Returns the complete team membership record": a create
    # of team_membership under the team; POST /projects/{project_gid}/addCustomFieldSetting answers
    # a custom field setting that names its project; POST /workspaces/{workspace_gid}/addUser
    # answers the user it adds (no user is created) and stays dropped
    user_in = body(_asana({"type": "object", "properties": {"user": {"type": "string"}}}))
    field_in = body(_asana({"type": "object", "properties": {"custom_field": {"type": "string"}}}))

    def item(name: str, schema: dict) -> dict:
        return {"parameters": [path_param(name)], "get": {"responses": ok(_asana(schema))}}

    def add(name: str, sent: dict, answer: dict) -> dict:
        return {
            "parameters": [path_param(name)],
            "post": {"requestBody": sent, "responses": ok(_asana(answer))},
        }

    doc = openapi(
        {
            "/teams/{team_gid}": item("team_gid", TEAM),
            "/workspaces/{workspace_gid}": item("workspace_gid", TEAM),
            "/projects/{project_gid}": item("project_gid", TEAM),
            "/users/{user_gid}": item("user_gid", USER),
            "/team_memberships": {"get": {"responses": ok(_asana({"type": "array", "items": MEMBERSHIP}))}},
            "/team_memberships/{team_membership_gid}": item("team_membership_gid", MEMBERSHIP),
            "/projects/{project_gid}/custom_field_settings": {
                "parameters": [path_param("project_gid")],
                "get": {"responses": ok(_asana({"type": "array", "items": SETTING}))},
            },
            "/teams/{team_gid}/addUser": add("team_gid", user_in, MEMBERSHIP),
            "/projects/{project_gid}/addCustomFieldSetting": add("project_gid", field_in, SETTING),
            "/workspaces/{workspace_gid}/addUser": add("workspace_gid", user_in, USER),
        }
    )
    res = explore(doc, domain="t")
    tools = {t.source: t for e in res.envs for t in e.tools}
    got = {k: (t.kind.value, t.entity) for k, t in tools.items() if "/add" in k}
    assert got == {
        "POST /teams/{team_gid}/addUser": ("create", "team_membership"),
        "POST /projects/{project_gid}/addCustomFieldSetting": ("create", "custom_field_settings"),
    }


CUSTOMER_IN = {
    "type": "object",
    "properties": {"given_name": {"type": "string"}, "email_address": {"type": "string"}},
}


def _map_of(name: str, description: str) -> dict:
    return {
        "type": "object",
        "required": [name],
        "properties": {
            name: {"type": "object", "description": description, "additionalProperties": CUSTOMER_IN}
        },
    }


def test_a_bulk_write_of_a_map_of_rows_writes_one_row_per_call():
    # Square POST /v2/customers/bulk-create {customers: {<idempotency key>: {...}}} and bulk-update
    # {customers: {<customer ID>: {...}}}: a create and an update of the row each key names; a map
    # whose keys the document does not call ids names no row to update
    def post(schema: dict) -> dict:
        return {"post": {"requestBody": body(schema), "responses": ok({"type": "object"})}}

    plans = _plans(
        {
            "/v2/customers/bulk-create": post(
                _map_of(
                    "customers",
                    "A map of 1 to 100 individual create requests, `idempotency key: { customer data }`",
                )
            ),
            "/v2/customers/bulk-update": post(
                _map_of(
                    "customers",
                    "A map of 1 to 100 individual update requests, `customer ID: { customer data }`",
                )
            ),
            "/v2/labels/bulk-update": post(_map_of("labels", "Labels by their names.")),
        }
    )
    got = {k: (p.reason and "dropped") or (p.kind, p.entity, p.key_param, p.bulk) for k, p in plans.items()}
    assert got == {
        "POST /v2/customers/bulk-create": ("create", "customer", None, True),
        "POST /v2/customers/bulk-update": ("update", "customer", "customers", True),
        "POST /v2/labels/bulk-update": "dropped",
    }
    res = explore(
        openapi(
            {
                "/v2/customers": {"get": {"responses": ok({"type": "array", "items": CUSTOMER_IN})}},
                "/v2/customers/bulk-create": post(
                    _map_of("customers", "`idempotency key: { customer data }`")
                ),
            }
        ),
        domain="t",
    )
    made = next(t for e in res.envs for t in e.tools if t.source == "POST /v2/customers/bulk-create")
    assert {p.name for p in made.params} == {"given_name", "email_address"}


CONTEXT = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}


def test_a_bulk_put_whose_items_name_the_owner_row_updates_that_row():
    # Jira PUT /app/field/{fieldIdOrKey}/context/configuration {configurations: [{contextId (required),
    # configuration, schema}]}: the configuration of each context named, one context per call;
    # .../context/defaultValue (items of several kinds, oneOf) stays dropped
    field = {"name": "fieldId", "in": "path", "required": True, "schema": {"type": "string"}}
    item = {
        "type": "object",
        "required": ["contextId"],
        "properties": {
            "contextId": {"type": "integer", "format": "int64"},
            "configuration": {"type": "string"},
            "schema": {"type": "string"},
        },
    }
    kinds = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"contextId": {"type": "string"}, "optionId": {"type": "string"}},
            }
        ]
    }

    def put(key: str, items: dict) -> dict:
        return {
            "parameters": [field],
            "put": {
                "requestBody": body(
                    {"type": "object", "properties": {key: {"type": "array", "items": items}}}
                ),
                "responses": {"204": {"description": "Returned if the request is successful."}},
            },
        }

    doc = openapi(
        {
            "/field/{fieldId}/context": {
                "parameters": [field],
                "get": {
                    "responses": ok(
                        {"type": "object", "properties": {"values": {"type": "array", "items": CONTEXT}}}
                    )
                },
                "post": {
                    "requestBody": body({"type": "object", "properties": {"name": {"type": "string"}}}),
                    "responses": ok(CONTEXT),
                },
            },
            "/field/{fieldId}/context/configuration": put("configurations", item),
            "/field/{fieldId}/context/defaultValue": put("defaultValues", kinds),
        }
    )
    plans = {op.key: plan_operation(op) for op in doc.operations}
    conf, default = (
        plans["PUT /field/{fieldId}/context/configuration"],
        plans["PUT /field/{fieldId}/context/defaultValue"],
    )
    assert (conf.kind, conf.entity, conf.key_param, conf.bulk) == ("update", "context", "contextId", True)
    assert default.reason
    res = explore(doc, domain="t")
    tool = next(
        t for e in res.envs for t in e.tools if t.source == "PUT /field/{fieldId}/context/configuration"
    )
    # the items' contextId is the key (no second context_id field to write)
    assert [(p.name, p.key, p.required) for p in tool.params] == [
        ("id", True, True),
        ("configuration", False, False),
        ("schema", False, False),
    ]
    d = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert not [x for x in d.disagreements if "configuration:" in x and "contextId" in x], d.disagreements


def test_a_wide_row_keeps_its_documented_status_for_its_actions():
    # Stripe's Invoice: ~80 properties, 24 of them kept; ``status`` (not required) was cut and the
    # actions invented one (draft, finalized, sent, voided ...): mark_uncollectible found no
    # 'uncollectible' to set and was dropped
    props = {f"amount_{i:02d}": {"type": "integer"} for i in range(30)}
    props |= {
        "id": {"type": "string"},
        "status": {
            "type": "string",
            "nullable": True,
            "enum": ["draft", "open", "paid", "uncollectible", "void"],
        },
    }
    invoice = {
        "type": "object",
        "required": ["id", *[k for k in props if k.startswith("amount")]],
        "properties": props,
    }
    inv = {"name": "invoice", "in": "path", "required": True, "schema": {"type": "string"}}
    doc = openapi(
        {
            "/v1/invoices": {"get": {"responses": ok({"type": "array", "items": invoice})}},
            "/v1/invoices/{invoice}": {"parameters": [inv], "get": {"responses": ok(invoice)}},
            "/v1/invoices/{invoice}/mark_uncollectible": {
                "parameters": [inv],
                "post": {"responses": ok(invoice)},
            },
        }
    )
    spec = explore(doc, domain="t").envs[0]
    status = next(f for e in spec.entities if e.name == "invoice" for f in e.fields if f.name == "status")
    assert status.enum == ["draft", "open", "paid", "uncollectible", "void"]
    action = next(t for t in spec.tools if t.source.endswith("/mark_uncollectible"))
    assert [(e.field, e.set) for e in action.effects] == [("status", "uncollectible")]


def test_detach_from_a_row_clears_the_reference_to_it():
    # Stripe POST /v1/payment_methods/{payment_method}/detach "Detaches a PaymentMethod object from a
    # Customer": the payment method's customer is cleared (attach sets it); a detach naming no
    # reference field stays dropped
    customer = {"type": "object", "properties": {"id": {"type": "string"}, "email": {"type": "string"}}}
    pm = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "type": {"type": "string"},
            "customer": {"type": "string", "nullable": True, "description": "The ID of the Customer."},
        },
    }
    pmp = {"name": "payment_method", "in": "path", "required": True, "schema": {"type": "string"}}
    doc = openapi(
        {
            "/v1/customers": {"get": {"responses": ok({"type": "array", "items": customer})}},
            "/v1/customers/{customer}": {
                "parameters": [path_param("customer")],
                "get": {"responses": ok(customer)},
            },
            "/v1/payment_methods": {"get": {"responses": ok({"type": "array", "items": pm})}},
            "/v1/payment_methods/{payment_method}": {"parameters": [pmp], "get": {"responses": ok(pm)}},
            "/v1/payment_methods/{payment_method}/detach": {
                "parameters": [pmp],
                "post": {
                    "description": "Detaches a PaymentMethod object from a Customer.",
                    "responses": ok(pm),
                },
            },
            "/v1/payment_methods/{payment_method}/unlink": {
                "parameters": [pmp],
                "post": {"description": "Unlinks the payment method.", "responses": ok(pm)},
            },
        }
    )
    res = explore(doc, domain="t")
    tools = {t.source: t for e in res.envs for t in e.tools}
    detach = tools["POST /v1/payment_methods/{payment_method}/detach"]
    assert [(e.field, e.set) for e in detach.effects] == [("customer", None)]
    assert [(c.field, c.op) for c in detach.preconditions] == [("customer", "not_null")]
    assert "POST /v1/payment_methods/{payment_method}/unlink" not in tools


CHANNEL = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "description": "A UUID or similar unique string that identifies this channel.",
        },
        "address": {"type": "string", "description": "The address where notifications are delivered."},
        "type": {"type": "string"},
        "token": {"type": "string"},
        "expiration": {"type": "string", "format": "int64"},
    },
}


def test_a_watch_that_answers_the_channel_it_was_given_registers_a_watch_row():
    # Google Calendar POST /calendars/{calendarId}/events/watch (a Channel in, the Channel out): a
    # watch of the calendar's events, registered as a row (as a webhook registration is); Gmail
    # POST /users/{userId}/watch {topicName} -> {historyId, expiration} stays a push channel
    cal = {"name": "calendarId", "in": "path", "required": True, "schema": {"type": "string"}}
    plans = _plans(
        {
            "/calendars/{calendarId}/events/watch": {
                "parameters": [cal],
                "post": {"requestBody": body(CHANNEL), "responses": ok(CHANNEL)},
            },
            "/users/{userId}/watch": {
                "parameters": [
                    {"name": "userId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "post": {
                    "requestBody": body({"type": "object", "properties": {"topicName": {"type": "string"}}}),
                    "responses": ok({"type": "object", "properties": {"historyId": {"type": "string"}}}),
                },
            },
        }
    )
    events, gmail = plans["POST /calendars/{calendarId}/events/watch"], plans["POST /users/{userId}/watch"]
    assert (events.kind, events.entity, events.parents) == (
        "create",
        "event_watch",
        [("calendarId", "calendar")],
    )
    assert gmail.reason == "push-notification channel"


def test_an_rpc_convert_to_a_state_sets_its_flag():
    # Slack POST /admin.conversations.convertToPrivate {channel_id} "Convert a public channel to a
    # private channel": sets the conversation's documented is_private
    conv = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "is_private": {"type": "boolean"},
        },
    }
    doc = openapi(
        {
            "/conversations.list": {
                "get": {
                    "responses": ok(
                        {"type": "object", "properties": {"channels": {"type": "array", "items": conv}}}
                    )
                }
            },
            "/conversations.info": {
                "get": {
                    "parameters": [
                        {"name": "channel", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": ok({"type": "object", "properties": {"channel": conv}}),
                }
            },
            "/admin.conversations.convertToPrivate": {
                "post": {
                    "description": "Convert a public channel to a private channel.",
                    "requestBody": body(
                        {
                            "type": "object",
                            "required": ["channel_id"],
                            "properties": {"channel_id": {"type": "string"}},
                        }
                    ),
                    "responses": ok({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                }
            },
        }
    )
    res = explore(doc, domain="t")
    tool = next(
        t for e in res.envs for t in e.tools if t.source == "POST /admin.conversations.convertToPrivate"
    )
    assert (tool.kind.value, tool.entity) == ("action", "conversation")
    assert [(e.field, e.set) for e in tool.effects] == [("is_private", True)]


def test_a_batch_post_answering_the_new_rows_ids_is_a_bulk_create():
    # Resend POST /emails/batch [{from, to, subject, ...}] "Trigger up to 100 batch emails at once"
    # -> {data: [{id}]}: one email per call; Discord POST /lobbies/{lobby_id}/members/bulk answers
    # whole members (an upsert of many) and stays a batch endpoint
    email = {
        "type": "object",
        "required": ["from", "to"],
        "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
    }
    ids = {
        "type": "object",
        "properties": {
            "data": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
        },
    }
    member = {"type": "object", "properties": {"id": {"type": "string"}, "flags": {"type": "integer"}}}
    lobby = {"name": "lobby_id", "in": "path", "required": True, "schema": {"type": "string"}}
    plans = _plans(
        {
            "/emails/batch": {
                "post": {
                    "summary": "Trigger up to 100 batch emails at once.",
                    "requestBody": body({"type": "array", "items": email}),
                    "responses": ok(ids),
                }
            },
            "/lobbies/{lobby_id}/members/bulk": {
                "parameters": [lobby],
                "post": {
                    "requestBody": body({"type": "array", "items": member}),
                    "responses": ok({"type": "array", "items": member}),
                },
            },
        }
    )
    emails, members = plans["POST /emails/batch"], plans["POST /lobbies/{lobby_id}/members/bulk"]
    assert (emails.kind, emails.entity, emails.bulk) == ("create", "email", True)
    assert members.reason and members.reason.startswith("batch endpoint")
