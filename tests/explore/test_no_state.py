"""Operations that document nothing to store or read back (explore/no_state.py), shaped after
Sinao 1.1.0 (resources/finance): they used to become tables such as ``nextnumber``, ``ping``
and ``pay_all`` whose rows hold only an id."""

from __future__ import annotations

from envfactory.explore import explore

from .conftest import ok, openapi, path_param

APP = {"type": "object", "properties": {"id": {"type": "integer"}, "hostname_alias": {"type": "string"}}}
INVOICE = {"type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}}
NOTHING = {"200": {"description": "Successful operation"}}


def _doc():
    app = [path_param("appId")]
    return openapi(
        {
            "/apps": {"get": {"summary": "List apps", "responses": ok({"type": "array", "items": APP})}},
            "/apps/{appId}": {"parameters": app, "get": {"summary": "Get an app", "responses": ok(APP)}},
            "/apps/{appId}/invoices": {
                "parameters": app,
                "get": {"summary": "List invoices", "responses": ok({"type": "array", "items": INVOICE})},
            },
            "/apps/{appId}/invoices/nextnumber": {
                "parameters": app,
                "get": {"summary": "Get the next invoice number for preview", "responses": NOTHING},
            },
            "/apps/{appId}/ping": {
                "parameters": app,
                "get": {"summary": "Ping app web hostname", "responses": NOTHING},
            },
            "/apps/{appId}/subscription/pay_all": {
                "parameters": app,
                "post": {"summary": "Pay all due invoices", "responses": NOTHING},
            },
            "/apps/{appId}/templates": {
                "parameters": app,
                "post": {"summary": "Create a template", "responses": NOTHING},
            },
        }
    )


def test_operations_that_document_nothing_are_excluded_with_a_reason():
    res = explore(_doc(), domain="finance")
    tools = {t.source for e in res.envs for t in e.tools}
    why = {x.operation: x.reason for x in res.excluded}
    assert "documents no answer" in why["GET /apps/{appId}/invoices/nextnumber"]
    assert why["GET /apps/{appId}/ping"] == "health check"
    assert "sends nothing and answers nothing" in why["POST /apps/{appId}/subscription/pay_all"]
    entities = {x.name for e in res.envs for x in e.entities}
    assert not entities & {"nextnumber", "ping", "pay_all"}
    # the documented resources stay, and so does a POST the document says creates one
    assert {"GET /apps", "GET /apps/{appId}/invoices", "POST /apps/{appId}/templates"} <= tools
