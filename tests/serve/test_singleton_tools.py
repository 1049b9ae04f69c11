"""A singleton's tools over MCP: a global one's take no arguments, a per-parent one's only the
parent's id (fixture shaped after Box's watermark and Jira's locale, tests/explore/test_singletons.py)."""

from __future__ import annotations

import anyio
from mcp import Client

from envfactory.explore import explore
from envfactory.runtime import Environment
from envfactory.serve import ServeConfig, build_mcp_server
from envfactory.verify import verify_and_repair

from ..explore.test_singletons import box_like


def test_singleton_tools_are_served_like_others():
    spec, _ = verify_and_repair(explore(box_like(), domain="files").envs[0])
    assert spec is not None
    env = Environment.from_spec(spec)
    by_source = {t.source: t.name for t in spec.tools}
    get_locale = by_source["GET /rest/api/3/mypreferences/locale"]
    set_locale = by_source["PUT /rest/api/3/mypreferences/locale"]
    get_wm = by_source["GET /files/{file_id}/watermark"]

    async def run():
        server = build_mcp_server(env, config=ServeConfig())
        async with Client(server, mode="legacy", cache=None) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools[get_locale].input_schema["properties"] == {}
            assert tools[get_wm].input_schema["required"] == ["file_id"]
            r = await c.call_tool(set_locale, {"locale": "fr_FR"})
            assert r.is_error is False
            again = await c.call_tool(get_locale, {})
            assert again.structured_content["locale"] == "fr_FR"
            bad = await c.call_tool(get_locale, {"id": "X"})
            assert bad.is_error is True and "id" in bad.content[0].text

    anyio.run(run)
