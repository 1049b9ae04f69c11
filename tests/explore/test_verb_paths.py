"""Path words that are verbs on rows the request names (explore/verb_paths.py). Each fixture
is cut down from a real document: Square Connect (corpus), Sinao 1.1.0 (resources/finance)."""

from __future__ import annotations

import pytest

from envfactory.explore import explore, plan_operation

from .conftest import body, ok, openapi, path_param, ref

CUSTOMER = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "given_name": {"type": "string"},
        "email_address": {"type": "string"},
    },
}


def _ids_body(name: str) -> dict:
    return body(
        {
            "type": "object",
            "required": [name],
            "properties": {name: {"type": "array", "items": {"type": "string"}}},
        }
    )


def _square() -> dict:
    listing = {"type": "object", "properties": {"customers": {"type": "array", "items": ref("Customer")}}}
    return {
        "/v2/customers": {
            "get": {"summary": "ListCustomers", "responses": ok(listing)},
            "post": {
                "summary": "CreateCustomer",
                "requestBody": body(ref("Customer")),
                "responses": ok(ref("Customer")),
            },
        },
        "/v2/customers/{customer_id}": {
            "parameters": [path_param("customer_id")],
            "get": {"summary": "RetrieveCustomer", "responses": ok(ref("Customer"))},
        },
        "/v2/customers/bulk-retrieve": {
            "post": {
                "summary": "BulkRetrieveCustomers",
                "description": "Retrieves multiple customer profiles.",
                "requestBody": _ids_body("customer_ids"),
                "responses": ok({"type": "object", "properties": {"responses": {"type": "object"}}}),
            }
        },
        "/v2/customers/bulk-delete": {
            "post": {
                "summary": "BulkDeleteCustomers",
                "description": "Deletes multiple customer profiles.",
                "requestBody": _ids_body("customer_ids"),
                "responses": ok({"type": "object", "properties": {"responses": {"type": "object"}}}),
            }
        },
        "/v2/customers/bulk-create": {
            "post": {
                "summary": "BulkCreateCustomers",
                "requestBody": body(
                    {
                        "type": "object",
                        "required": ["customers"],
                        "properties": {"customers": {"type": "object"}},
                    }
                ),
                "responses": ok({"type": "object", "properties": {"responses": {"type": "object"}}}),
            }
        },
    }


def test_glued_bulk_verbs_read_and_delete_the_rows_their_ids_name():
    # Square: POST /v2/customers/bulk-retrieve and /bulk-delete {customer_ids} used to be creates
    # of invented ``bulk_retrieve`` and ``bulk_delete`` rows; bulk-create writes many rows at once
    doc = openapi(_square(), {"Customer": CUSTOMER})
    plans = {op.key: plan_operation(op) for op in doc.operations}
    got = {k: (p.kind, p.entity, p.key_param, p.reason) for k, p in plans.items() if "bulk" in k}
    assert got == {
        "POST /v2/customers/bulk-retrieve": ("list", "customer", None, None),
        "POST /v2/customers/bulk-delete": ("delete", "customer", "customer_ids", None),
        "POST /v2/customers/bulk-create": (
            None,
            "bulk_create",
            None,
            "batch endpoint (the single-item operations cover it)",
        ),
    }
    res = explore(doc, domain="d")
    tools = {t.source: t for e in res.envs for t in e.tools}
    read = tools["POST /v2/customers/bulk-retrieve"]
    assert [(p.name, p.field, p.op) for p in read.params] == [("customer_ids", "id", "in")]
    assert tools["POST /v2/customers/bulk-delete"].kind.value == "delete"


def test_a_noun_after_bulk_is_a_resource():
    # BigCommerce: /catalog/products/{product_id}/bulk-pricing-rules (volume discount rules)
    doc = openapi(
        {
            "/catalog/products/{product_id}/bulk-pricing-rules": {
                "parameters": [path_param("product_id")],
                "get": {
                    "responses": ok(
                        {
                            "type": "array",
                            "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                        }
                    )
                },
            }
        }
    )
    p = plan_operation(doc.operations[0])
    assert (p.kind, p.entity, p.reason) == ("list", "bulk_pricing_rule", None)


def _sinao(path: str, summary: str, params: list[dict]) -> dict:
    return {
        path: {
            "post": {"summary": summary, "parameters": params, "responses": {"200": {"description": "ok"}}}
        }
    }


def _q(name: str, required: bool = True) -> dict:
    return {"name": name, "in": "query", "required": required, "schema": {"type": "string"}}


SINAO_EXCLUDED = [
    # (id, path, summary, parameters, words of the reason)
    (
        "fresh-regenerates-named-invoices",
        "/apps/{appId}/invoices/fresh",
        "Regenerate pdf and recalcul amounts of invoice",
        [path_param("appId"), _q("ids")],
        "acts on the rows its 'ids' names",
    ),
    ("sendpassword", "/sendpassword", "Password recover by email", [_q("email")], "authentication"),
    (
        "changepassword",
        "/changepassword",
        "Change password",
        [_q("forgotten_password_token"), _q("password")],
        "authentication",
    ),
    (
        "register-by-invitation",
        "/apps/access/invite/{accessToken}/register",
        "Create an User by invitation",
        [path_param("accessToken"), _q("password"), _q("cgu")],
        "authentication",
    ),
]


@pytest.mark.parametrize(
    "path,summary,params,why", [c[1:] for c in SINAO_EXCLUDED], ids=[c[0] for c in SINAO_EXCLUDED]
)
def test_sinao_verbs_are_no_stored_rows(path, summary, params, why):
    p = plan_operation(openapi(_sinao(path, summary, params)).operations[0])
    assert p.reason is not None and why in p.reason, (p.kind, p.entity, p.reason)


def test_a_password_of_a_named_row_is_still_a_write():
    # PUT /users/{id}/password sets a user's password: a row the path names (issue 14, defect 6)
    doc = openapi(
        {
            "/users/{id}/password": {
                "parameters": [path_param("id")],
                "put": {
                    "requestBody": body({"type": "object", "properties": {"password": {"type": "string"}}}),
                    "responses": ok(CUSTOMER),
                },
            }
        }
    )
    p = plan_operation(doc.operations[0])
    assert (p.kind, p.entity, p.reason) == ("update", "user", None)


def test_calendar_quick_add_and_free_busy_are_no_creates():
    # Google Calendar v3: quickAdd used to be an entity of its own and freeBusy a create
    event = {"type": "object", "properties": {"id": {"type": "string"}, "summary": {"type": "string"}}}
    text = {"name": "text", "in": "query", "required": True, "schema": {"type": "string"}}
    doc = openapi(
        {
            "/calendars/{calendarId}/events/quickAdd": {
                "post": {
                    "description": "Creates an event based on a simple text string.",
                    "parameters": [path_param("calendarId"), text],
                    "responses": ok(event),
                }
            },
            "/freeBusy": {
                "post": {
                    "description": "Returns free/busy information for a set of calendars.",
                    "requestBody": body(
                        {
                            "type": "object",
                            "properties": {"timeMin": {"type": "string"}, "items": {"type": "array"}},
                        }
                    ),
                    "responses": ok(
                        {
                            "type": "object",
                            "properties": {"timeMin": {"type": "string"}, "calendars": {"type": "object"}},
                        }
                    ),
                }
            },
        }
    )
    got = {op.key: plan_operation(op).reason or "" for op in doc.operations}
    assert "works out the event's fields" in got["POST /calendars/{calendarId}/events/quickAdd"]
    assert "computed from its arguments" in got["POST /freeBusy"]


def test_path_values_that_name_no_row_filter_a_list():
    # Lufthansa: GET /operations/flightstatus/{flightNumber}/{date} reads the status of a flight on
    # a date; GET /operations/schedules/{origin}/{destination}/{fromDateTime} the schedules between
    # two airports (each was dropped as "item path without a collection")
    status = {
        "type": "object",
        "properties": {"flight_number": {"type": "string"}, "status": {"type": "string"}},
    }
    schedule = {
        "type": "object",
        "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
    }
    doc = openapi(
        {
            "/operations/flightstatus/{flightNumber}/{date}": {
                "get": {
                    "parameters": [path_param("flightNumber"), path_param("date")],
                    "responses": ok({"type": "array", "items": status}),
                }
            },
            "/operations/schedules/{origin}/{destination}/{fromDateTime}": {
                "get": {
                    "parameters": [
                        path_param("origin"),
                        path_param("destination"),
                        path_param("fromDateTime"),
                    ],
                    "responses": ok({"type": "array", "items": schedule}),
                }
            },
            "/references/airports/nearest/{latitude},{longitude}": {
                "get": {
                    "parameters": [path_param("latitude"), path_param("longitude")],
                    "responses": ok(schedule),
                }
            },
        }
    )
    res = explore(doc, domain="travel")
    tools = {t.source: t for e in res.envs for t in e.tools}
    flight = tools["GET /operations/flightstatus/{flightNumber}/{date}"]
    assert flight.kind.value == "list"
    assert [(p.name, p.field, p.op, p.required) for p in flight.params] == [
        ("flight_number", "flight_number", "eq", True),
        ("date", "date", "eq", True),
    ]
    sched = tools["GET /operations/schedules/{origin}/{destination}/{fromDateTime}"]
    assert [(p.name, p.op) for p in sched.params] == [
        ("origin", "eq"),
        ("destination", "eq"),
        ("from_date_time", "gte"),
    ]
    why = {x.operation: x.reason for x in res.excluded}
    assert "path values in a row" in why["GET /references/airports/nearest/{latitude},{longitude}"]


def test_a_collection_named_by_a_parameter_holds_records():
    # Zoho CRM v8 record API: /crm/v8/{module_api_name}/{id} ("Get Record"): the module (Leads,
    # Contacts ...) names the collection; its rows were an entity called 'v8', and the item
    # operations were dropped as "item path without a collection"
    record = {"type": "object", "properties": {"id": {"type": "string"}, "Last_Name": {"type": "string"}}}
    listing = {"type": "object", "properties": {"data": {"type": "array", "items": record}}}
    module = path_param("module_api_name")
    doc = openapi(
        {
            "/crm/v8/{module_api_name}": {
                "parameters": [module],
                "get": {"operationId": "Get Records", "responses": ok(listing)},
                "post": {
                    "operationId": "Create Records",
                    "requestBody": body(listing),
                    "responses": ok(listing),
                },
            },
            "/crm/v8/{module_api_name}/{id}": {
                "parameters": [module, path_param("id")],
                "get": {"operationId": "Get Record", "responses": ok(listing)},
                "delete": {"operationId": "Delete Record", "responses": ok(listing)},
            },
            "/crm/v8/{module_api_name}/{external_field_value}": {
                "parameters": [module, path_param("external_field_value")],
                "get": {"operationId": "Get Record Using External ID", "responses": ok(listing)},
            },
        }
    )
    got = {op.key: plan_operation(op) for op in doc.operations}
    assert {k: (p.kind, p.entity, p.key_param) for k, p in got.items() if p.reason is None} == {
        "GET /crm/v8/{module_api_name}": ("list", "record", None),
        "POST /crm/v8/{module_api_name}": ("create", "record", None),
        "GET /crm/v8/{module_api_name}/{id}": ("get", "record", "id"),
        "DELETE /crm/v8/{module_api_name}/{id}": ("delete", "record", "id"),
    }
    assert "path values in a row" in got["GET /crm/v8/{module_api_name}/{external_field_value}"].reason


def _plaid(props: dict, required: list[str], summary: str) -> dict:
    creds = {"client_id": {"type": "string", "description": "Your Plaid API `client_id`."}}
    schema = {"type": "object", "required": required, "properties": {**creds, **props}}
    return {"post": {"summary": summary, "requestBody": body(schema), "responses": ok({"type": "object"})}}


def test_a_slash_verb_on_an_attribute_or_a_list_of_ids_names_its_rows():
    # Plaid: POST /item/webhook/update {access_token, webhook} changes the Item's webhook;
    # POST /user/items/remove {item_ids} removes those Items ("equivalent to calling /item/remove
    # on each Item"); both were dropped as "names no id of the row it changes"
    token = {"type": "string", "description": "The access token associated with the Item."}
    doc = openapi(
        {
            "/item/webhook/update": _plaid(
                {"access_token": token, "webhook": {"type": "string"}}, ["access_token"], "Update Webhook URL"
            ),
            "/user/items/remove": _plaid(
                {"item_ids": {"type": "array", "items": {"type": "string"}}},
                ["item_ids"],
                "Remove Items from a User",
            ),
            "/item/application/scopes/update": _plaid(
                {
                    "access_token": token,
                    "application_id": {"type": "string"},
                    "scopes": {"type": "object"},
                    "context": {"type": "string"},
                },
                ["access_token", "application_id", "scopes"],
                "Update the scopes of access for a particular application",
            ),
        }
    )
    got = {op.key: plan_operation(op) for op in doc.operations}
    webhook = got["POST /item/webhook/update"]
    assert (webhook.kind, webhook.entity, webhook.key_param, webhook.qualifier) == (
        "update",
        "item",
        "access_token",
        "webhook",
    )
    remove = got["POST /user/items/remove"]
    assert (remove.kind, remove.entity, remove.key_param, remove.bulk) == ("delete", "item", "item_ids", True)
    # more than the attribute and the row's key in the body: not an attribute of the Item
    assert got["POST /item/application/scopes/update"].reason is not None
