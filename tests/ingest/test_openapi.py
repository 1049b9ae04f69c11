import json

import pytest

from envfactory.errors import IngestError
from envfactory.ingest import load_apidoc
from envfactory.ingest.openapi import read_openapi

from ._corpus import CORPUS, needs_corpus

PETSTORE_30 = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1.2"},
    "servers": [{"url": "https://api.example.com/v1"}],
    "paths": {
        "/pets/{petId}": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "get": {
                "operationId": "getPet",
                "tags": ["pets"],
                "parameters": [{"name": "fields", "in": "query", "schema": {"type": "string"}}],
                "responses": {
                    "200": {"$ref": "#/components/responses/PetOk"},
                    "404": {"description": "gone"},
                },
            },
            "put": {
                "operationId": "updatePet",
                "requestBody": {"$ref": "#/components/requestBodies/PetBody"},
                "responses": {"200": {"description": "ok"}},
            },
        },
        "/pets": {
            "post": {
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/Pet"},
                            "examples": {"rex": {"$ref": "#/components/examples/Rex"}},
                        }
                    }
                },
                "responses": {
                    "201": {
                        "description": "made",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    }
                },
            }
        },
    },
    "components": {
        "parameters": {
            "PetId": {
                "name": "petId",
                "in": "path",
                "required": True,
                "schema": {"type": "integer"},
                "example": 7,
            }
        },
        "responses": {
            "PetOk": {
                "description": "a pet",
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"},
                        "example": {"id": 7, "name": "Rex"},
                    }
                },
            }
        },
        "requestBodies": {
            "PetBody": {
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"},
                        "example": {"name": "Rex"},
                    }
                }
            }
        },
        "examples": {"Rex": {"value": {"name": "Rex", "tag": "dog"}}},
        "schemas": {
            "Pet": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "owner": {"$ref": "#/components/schemas/Owner"},
                    "kind": {"$ref": "#/components/schemas/Missing"},
                },
            },
            "Owner": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}},
                    "self": {"$ref": "#/components/schemas/Owner"},
                    "remote": {"$ref": "https://example.com/common.json#/Thing"},
                },
            },
        },
    },
}

SWAGGER_2 = {
    "swagger": "2.0",
    "info": {"title": "Shop", "version": "2"},
    "host": "shop.example.com",
    "basePath": "/api",
    "schemes": ["https"],
    "parameters": {"Limit": {"name": "limit", "in": "query", "type": "integer", "maximum": 100}},
    "paths": {
        "/orders": {
            "get": {
                "parameters": [{"$ref": "#/parameters/Limit"}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "schema": {"type": "array", "items": {"$ref": "#/definitions/Order"}},
                        "examples": {"application/json": [{"id": "o1"}]},
                    }
                },
            },
            "post": {
                "parameters": [
                    {
                        "name": "body",
                        "in": "body",
                        "required": True,
                        "schema": {"$ref": "#/definitions/Order"},
                    }
                ],
                "responses": {"201": {"description": "made", "schema": {"$ref": "#/definitions/Order"}}},
            },
        },
        "/upload": {
            "post": {
                "consumes": ["multipart/form-data"],
                "parameters": [
                    {"name": "file", "in": "formData", "type": "file", "required": True},
                    {"name": "note", "in": "formData", "type": "string", "description": "a note"},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
    "definitions": {
        "Order": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "example": "o1"},
                "parent": {"$ref": "#/definitions/Order"},
            },
            "example": {"id": "o9"},
        }
    },
}


def test_openapi30_refs_path_params_and_examples():
    api = read_openapi(json.loads(json.dumps(PETSTORE_30)), "pets.json")
    assert (api.format, api.title, api.version, api.base_url) == (
        "openapi3",
        "Pets",
        "1.2",
        "https://api.example.com/v1",
    )
    ops = {op.key: op for op in api.operations}
    get = ops["GET /pets/{petId}"]
    assert [(p.name, p.location, p.required) for p in get.parameters] == [
        ("petId", "path", True),
        ("fields", "query", False),
    ]
    assert get.parameters[0].example == 7 and get.parameters[0].type == "integer"
    ok = get.success_response()
    assert ok.status == "200" and ok.example == {"id": 7, "name": "Rex"}
    assert ok.schema_["properties"]["name"] == {"type": "string"}
    put = ops["PUT /pets/{petId}"]
    assert put.request_body["required"] == ["name"] and put.request_example == {"name": "Rex"}
    post = ops["POST /pets"]
    assert post.request_example == {"name": "Rex", "tag": "dog"}  # from a $ref'd named example
    assert {p.name: p.required for p in post.parameters if p.location == "body"} == {
        "id": False,
        "name": True,
        "owner": False,
        "kind": False,
    }


def test_cycles_are_cut_and_marked():
    api = read_openapi(json.loads(json.dumps(PETSTORE_30)), "pets.json")
    pet = api.schemas["Pet"]
    owner = pet["properties"]["owner"]
    assert owner["properties"]["pets"]["items"] == {"x-cycle": "#/components/schemas/Pet"}
    assert owner["properties"]["self"] == {"x-cycle": "#/components/schemas/Owner"}
    assert api.schemas["Owner"]["properties"]["self"] == {"x-cycle": "#/components/schemas/Owner"}
    json.dumps(api.model_dump())  # finite: serializes without recursion


def test_broken_and_external_refs_become_warnings_not_errors():
    api = read_openapi(json.loads(json.dumps(PETSTORE_30)), "pets.json")
    assert "broken $ref: #/components/schemas/Missing" in api.warnings
    assert "external $ref not followed: https://example.com/common.json#/Thing" in api.warnings
    assert api.schemas["Pet"]["properties"]["kind"] == {"x-broken-ref": "#/components/schemas/Missing"}
    assert len(api.warnings) == len(set(api.warnings))  # each problem reported once


def test_swagger2_body_formdata_and_shared_params():
    api = read_openapi(json.loads(json.dumps(SWAGGER_2)), "shop.json")
    assert api.format == "swagger2" and api.base_url == "https://shop.example.com/api"
    ops = {op.key: op for op in api.operations}
    get = ops["GET /orders"]
    assert get.parameters[0].name == "limit" and get.parameters[0].schema_ == {
        "type": "integer",
        "maximum": 100,
    }
    assert get.responses[0].example == [{"id": "o1"}]
    post = ops["POST /orders"]
    assert post.request_body["properties"]["parent"] == {"x-cycle": "#/definitions/Order"}
    assert post.request_example == {"id": "o9"}  # the schema's example
    upload = ops["POST /upload"]
    assert upload.request_body == {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {"type": "file"}, "note": {"type": "string", "description": "a note"}},
    }
    assert {p.name for p in upload.parameters if p.location == "body"} == {"file", "note"}


def test_openapi31_type_arrays_and_null_branches_become_nullable():
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/a": {
                "get": {
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "name": {"type": ["string", "null"]},
                                            "both": {"type": ["string", "integer"]},
                                            "ref": {
                                                "anyOf": [
                                                    {"$ref": "#/components/schemas/B"},
                                                    {"type": "null"},
                                                ]
                                            },
                                        },
                                    }
                                }
                            },
                        }
                    }
                }
            }
        },
        "components": {"schemas": {"B": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
    }
    api = read_openapi(doc, "t.json")
    props = api.operations[0].responses[0].schema_["properties"]
    assert api.format == "openapi31"
    assert props["name"] == {"type": "string", "nullable": True}
    assert props["both"] == {"type": ["string", "integer"]}
    assert props["ref"] == {"type": "object", "properties": {"x": {"type": "integer"}}, "nullable": True}


def test_deep_ref_chains_are_truncated_not_expanded():
    schemas = {
        f"S{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}}}
        for i in range(20)
    }
    schemas["S20"] = {"type": "string"}
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "D", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/d": {
                "get": {
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}},
                        }
                    }
                }
            }
        },
    }
    api = read_openapi(doc, "d.json", max_depth=6)
    node, depth = api.operations[0].responses[0].schema_, 0
    while "properties" in node:
        node, depth = node["properties"]["next"], depth + 1
    assert depth == 6 and node == {"x-truncated": "#/components/schemas/S6", "type": "object"}


@pytest.mark.parametrize("doc", [{"info": {}}, {"openapi": "9.0"}, [1, 2], "text"])
def test_not_an_openapi_document_is_an_ingest_error(doc):
    with pytest.raises(IngestError, match="x.json"):
        read_openapi(doc, "x.json")


def test_document_without_operations_is_an_ingest_error():
    with pytest.raises(IngestError, match="no operations"):
        read_openapi({"openapi": "3.0.0", "info": {"title": "E"}, "paths": {}}, "e.yaml")


YAML_QUIRKS = """\
openapi: 3.0.0
info: {title: Quirks, version: 2024-01-01}
x-released: 0000-00-00
paths:
  /events:
    get:
      parameters:
        - {name: since, in: query, schema: {type: string}}
        - {name: since, in: query, schema: {type: string, default: 2020-02-03T04:05:06Z}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              example: {when: 2021-05-06, weird: =}
"""


def test_yaml_quirks_dates_stay_strings_and_duplicates_are_tolerated(tmp_path):
    path = tmp_path / "quirks.yaml"
    path.write_text(
        YAML_QUIRKS
        + "      summary: dup\n      summary: dup2\n".replace("      summary", "      description")
    )
    api = load_apidoc(path)
    assert api.version == "2024-01-01"
    op = api.operations[0]
    assert op.responses[0].example == {"when": "2021-05-06", "weird": "="}
    assert op.parameters[0].schema_["default"] == "2020-02-03T04:05:06Z"
    assert len(op.parameters) == 1  # a repeated (name, in) is one parameter, the last one
    assert op.description == "dup2"  # duplicate keys: the last one wins, no error


@needs_corpus
@pytest.mark.parametrize(
    ("name", "fmt", "min_ops", "warning"),
    [
        ("banking_payments/stripe__spec3_2022-04-12.json", "openapi3", 400, None),
        ("messaging_email/slack__web_openapi_v2.json", "swagger2", 170, None),
        ("messaging_email/discord__openapi.json", "openapi31", 240, None),
        (
            "ecommerce/square__connect_api.json",
            "openapi3",
            300,
            "broken $ref: #/components/schemas/CatalogModifierToggleOverrideType",
        ),
        (
            "crm/zoho__crm_v8_notes.json",
            "openapi3",
            5,
            "broken $ref: #/components/parameters/If-Modified-Since",
        ),
        ("project_management/atlassian__jira_platform.yaml", "openapi3", 400, None),  # YAML '=' tag
        ("file_storage/exavault__2.0.yaml", "openapi3", 50, None),  # year-0 timestamp
        ("travel/amadeus__FlightCreateOrders_v1.yaml", "swagger2", 1, None),
    ],
)
def test_corpus_documents_load(name, fmt, min_ops, warning):
    api = load_apidoc(CORPUS / name)
    assert api.format == fmt
    assert len(api.operations) >= min_ops
    if warning:
        assert warning in api.warnings
    assert all(op.path.startswith("/") for op in api.operations)


def test_a_body_documented_only_by_its_example_gets_the_example_s_properties():
    # Clubhouse (corpus): POST /get_club {"type": "object"} with the example {"club_id": 1234};
    # the explorer could not see the id it reads ("get_club documents no id of the club it reads")
    doc = {
        "openapi": "3.0.0",
        "info": {"title": "Clubhouse", "version": "1"},
        "paths": {
            "/get_club": {
                "post": {
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"type": "object"},
                                "examples": {"jsonObject": {"value": {"club_id": 1234}}},
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/typed": {
                "post": {
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                                "example": {"name": "x", "extra": 1},
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    api = read_openapi(doc, "clubhouse.yaml")
    ops = {op.key: op for op in api.operations}
    club = ops["POST /get_club"]
    assert club.request_body["properties"]["club_id"]["type"] == "integer"
    assert "required" not in club.request_body  # one example says nothing about what is required
    assert [(p.name, p.location, p.required) for p in club.parameters] == [("club_id", "body", False)]
    # a documented schema is the document's word: its example adds no property
    assert list(ops["POST /typed"].request_body["properties"]) == ["name"]
