"""A body or query key the document marks optional stays optional in the tool (issue 14:
required flags as documented), and still says it selects the row. Fixtures cut down from the
corpus: Intercom ``PUT /visitors`` (``{id?, user_id?, name, ...}``, "anyOf required id or
user_id"), Gmail ``POST .../messages/batchDelete {ids?}``, Slack ``files.comments.delete``
(form fields ``file?``, ``id?``)."""

from __future__ import annotations

import pytest

from envfactory.errors import ArgumentError
from envfactory.explore import build_fidelity, explore
from envfactory.ingest import load_apidoc
from envfactory.runtime import Environment
from envfactory.spec import tool_input_schema

from .conftest import body, ok, openapi, path_param

VISITOR = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "example": "visitor"},
        "id": {"type": "string", "description": "The Intercom defined id representing the Visitor."},
        "user_id": {"type": "string", "description": "Automatically generated identifier for the Visitor."},
        "name": {"type": "string", "description": "The name of the visitor."},
        "email": {"type": "string", "description": "The email of the visitor."},
    },
}
UPDATE_VISITOR = {
    "description": "Update an existing visitor.",
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "description": "A unique identified for the visitor which is given by Intercom.",
        },
        "user_id": {
            "type": "string",
            "description": "A unique identified for the visitor which is given by you.",
        },
        "name": {"type": "string", "description": "The visitor's name."},
        "custom_attributes": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "anyOf": [{"required": ["id"]}, {"required": ["user_id"]}],
}


def _intercom():
    return openapi(
        {
            "/visitors": {
                "put": {
                    "summary": "Update a visitor",
                    "operationId": "updateVisitor",
                    "requestBody": body(UPDATE_VISITOR),
                    "responses": ok(VISITOR),
                },
                "get": {
                    "summary": "Retrieve a visitor with User ID",
                    "operationId": "retrieveVisitorWithUserId",
                    "parameters": [
                        {"name": "user_id", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": ok(VISITOR),
                },
            }
        },
        title="Intercom",
    )


def _tool(res, source):
    return next(t for e in res.envs for t in e.tools if t.source == source)


def _agree(doc, res):
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    return fid.required_checked, fid.required_agree, fid.disagreements


def test_an_optional_body_id_stays_optional_and_says_it_selects_the_row():
    doc = _intercom()
    res = explore(doc, domain="messaging")
    tool = _tool(res, "PUT /visitors")
    key = tool.key_param
    assert tool.kind.value == "update" and not tool.upsert and key is not None
    assert not key.required and key.name not in tool_input_schema(tool).get("required", [])
    assert key.description.endswith("without it no visitor is selected.")
    assert f"Give {key.name} to select the visitor" in tool.description
    checked, agree, why = _agree(doc, res)
    assert checked == agree > 0, why


def test_the_explored_update_refuses_a_call_without_its_key_and_works_with_it():
    res = explore(_intercom(), domain="messaging")
    tool = _tool(res, "PUT /visitors")
    spec = next(e for e in res.envs if tool in e.tools)
    env = Environment.from_spec(spec)
    key = tool.key_param.name
    with env.new_session() as s:
        before = s.state_hash()
        with pytest.raises(ArgumentError, match=rf"^{tool.name}: no visitor selected: give '{key}'"):
            s.call(tool.name, {"name": "Gareth Bale"})
        assert s.state_hash() == before
        pk = spec.entity(tool.entity).primary_key
        row = s.query(f'SELECT "{pk}" FROM "{tool.entity}" LIMIT 1')[0][0]
        assert s.call(tool.name, {key: row, "name": "Gareth Bale"})["name"] == "Gareth Bale"
        assert s.state_hash() != before


def test_a_bulk_delete_whose_ids_are_optional_keeps_its_key_optional():
    message = {"type": "object", "properties": {"id": {"type": "string"}, "threadId": {"type": "string"}}}
    user = [path_param("userId")]
    doc = openapi(
        {
            "/gmail/v1/users/{userId}/messages": {
                "parameters": user,
                "get": {
                    "operationId": "gmail.users.messages.list",
                    "responses": ok(
                        {"type": "object", "properties": {"messages": {"type": "array", "items": message}}}
                    ),
                },
            },
            "/gmail/v1/users/{userId}/messages/batchDelete": {
                "parameters": user,
                "post": {
                    "description": "Deletes many messages by message ID.",
                    "operationId": "gmail.users.messages.batchDelete",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "ids": {
                                            "description": "The IDs of the messages to delete.",
                                            "type": "array",
                                            "items": {"type": "string"},
                                        }
                                    },
                                }
                            }
                        }
                    },
                    "responses": {"200": {"description": "Successful response"}},
                },
            },
        },
        title="Gmail",
    )
    res = explore(doc, domain="messaging")
    tool = _tool(res, "POST /gmail/v1/users/{userId}/messages/batchDelete")
    assert tool.kind.value == "delete" and not tool.key_param.required
    checked, agree, why = _agree(doc, res)
    assert checked == agree > 0, why


def test_an_optional_form_field_id_of_an_rpc_delete_stays_optional():
    doc = load_apidoc(
        b"""{"swagger": "2.0", "info": {"title": "Slack Web API", "version": "1"},
        "paths": {
          "/files.comments.delete": {"post": {
            "description": "Deletes an existing comment on a file.", "operationId": "files_comments_delete",
            "consumes": ["application/x-www-form-urlencoded"],
            "parameters": [
              {"description": "Authentication token. Requires scope: `files:write:user`", "in": "header", "name": "token", "type": "string"},
              {"description": "File to delete a comment from.", "in": "formData", "name": "file", "type": "string"},
              {"description": "The comment to delete.", "in": "formData", "name": "id", "type": "string"}],
            "responses": {"200": {"description": "ok", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}}},
          "/files.comments.list": {"get": {
            "operationId": "files_comments_list",
            "parameters": [{"in": "query", "name": "file", "type": "string", "required": true}],
            "responses": {"200": {"description": "ok", "schema": {"type": "object", "properties": {"comments": {"type": "array",
              "items": {"type": "object", "properties": {"id": {"type": "string"}, "comment": {"type": "string"}}}}}}}}}}}}""",
        source="slack.json",
    )
    res = explore(doc, domain="messaging")
    tool = _tool(res, "POST /files.comments.delete")
    assert tool.kind.value == "delete" and not tool.key_param.required
    assert tool.key_param.description == "The comment to delete; without it no comment is selected."
    checked, agree, why = _agree(doc, res)
    assert checked == agree > 0, why
