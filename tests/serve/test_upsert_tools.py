"""An upsert over MCP: its key is optional in the input schema, a call without it creates the row,
a call naming a stored row changes it (the environment of tests/verify/test_upsert.py)."""

from __future__ import annotations

import anyio
from mcp import Client

from envfactory.serve import ServeConfig, build_mcp_server
from envfactory.serve.tools import tool_annotations

from ..verify.test_upsert import _env


def test_an_upsert_is_served_with_an_optional_key():
    env = _env()
    tool = env.spec.tool("upsert_attribute_value")
    assert tool_annotations(tool)["idempotentHint"] is False  # without a key, each call makes a row

    async def run():
        server = build_mcp_server(env, config=ServeConfig())
        async with Client(server, mode="legacy", cache=None) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            schema = tools["upsert_attribute_value"].input_schema
            assert "id" in schema["properties"] and "id" not in schema["required"]
            made = await c.call_tool(
                "upsert_attribute_value", {"customer_id": 1, "attribute_id": 4, "value": "blue"}
            )
            assert made.is_error is False
            key = made.structured_content["id"]
            changed = await c.call_tool(
                "upsert_attribute_value", {"id": key, "customer_id": 1, "attribute_id": 4, "value": "red"}
            )
            assert changed.structured_content == {
                "id": key,
                "customer_id": 1,
                "attribute_id": 4,
                "value": "red",
            }
            got = await c.call_tool("get_attribute_value", {"id": key})
            assert got.structured_content["value"] == "red"

    anyio.run(run)
