"""Upserts read from the document (explore/shapes.py ``upserts``): a write whose key the document
makes optional and that creates the row it names none of. Cut down from BigCommerce Customers v3
and Discord (corpus), whose optional ``id`` was the last disagreement of required flags."""

from __future__ import annotations

from envfactory.explore import build_fidelity, explore

from .conftest import body, ok, openapi, path_param

VALUE = {
    "type": "object",
    "required": ["attribute_id", "value", "customer_id"],
    "properties": {
        "id": {"type": "integer", "description": "Attribute value ID."},
        "attribute_id": {"type": "integer"},
        "value": {"type": "string"},
        "customer_id": {"type": "integer"},
    },
}


def _bigcommerce():
    listing = {"type": "object", "properties": {"data": {"type": "array", "items": VALUE}}}
    return openapi(
        {
            "/customers/attribute-values": {
                "get": {"summary": "Get Customer Attribute Values", "responses": ok(listing)},
                "put": {
                    "summary": "Upsert Customer Attribute Values",
                    "description": "Upserts Customer Attribute Values. Upsert checks for an existing record. "
                    "If there is none, it creates the record, if there is a matching record, it updates that record.",
                    "operationId": "upsertCustomersAttributeValues",
                    "requestBody": body({"type": "array", "items": VALUE}),
                    "responses": ok(listing),
                },
            }
        }
    )


def test_a_documented_upsert_is_an_update_whose_optional_key_creates():
    doc = _bigcommerce()
    res = explore(doc, domain="commerce")
    tool = next(t for e in res.envs for t in e.tools if t.source == "PUT /customers/attribute-values")
    assert (tool.name, tool.kind.value, tool.upsert) == ("upsert_attribute_value", "update", True)
    assert [(p.name, p.required, p.key) for p in tool.params] == [
        ("attribute_value_id", False, True),
        ("attribute_id", True, False),
        ("value", True, False),
        ("customer_id", True, False),
    ]
    assert tool.description.startswith("Create an attribute value, or change an existing one")
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert fid.required_checked == fid.required_agree == 4, fid.disagreements


def test_a_bulk_set_whose_items_can_be_made_without_an_id_is_an_upsert():
    # Discord PUT /applications/{application_id}/commands (bulk_set_application_commands): items
    # {id?, name (required), description}; PATCH /guilds/{guild_id}/roles (positions): items
    # {id?, position} make no role, so that is a plain update by id
    command = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "description": {"type": "string"},
        },
    }
    role = {"type": "object", "properties": {"id": {"type": "string"}, "position": {"type": "integer"}}}
    app, guild = [path_param("application_id")], [path_param("guild_id")]
    doc = openapi(
        {
            "/applications/{application_id}/commands": {
                "parameters": app,
                "get": {
                    "operationId": "list_application_commands",
                    "responses": ok({"type": "array", "items": command}),
                },
                "put": {
                    "operationId": "bulk_set_application_commands",
                    "requestBody": body({"type": "array", "items": command}),
                    "responses": ok({"type": "array", "items": command}),
                },
            },
            "/guilds/{guild_id}/roles": {
                "parameters": guild,
                "get": {"operationId": "list_guild_roles", "responses": ok({"type": "array", "items": role})},
                "patch": {
                    "operationId": "bulk_update_guild_roles",
                    "requestBody": body({"type": "array", "items": role}),
                    "responses": ok({"type": "array", "items": role}),
                },
            },
        }
    )
    res = explore(doc, domain="messaging")
    tools = {t.source: t for e in res.envs for t in e.tools}
    put = tools["PUT /applications/{application_id}/commands"]
    assert put.upsert and not put.key_param.required
    patch = tools["PATCH /guilds/{guild_id}/roles"]
    assert (
        not patch.upsert and not patch.key_param.required
    )  # optional as documented: it selects, never creates
