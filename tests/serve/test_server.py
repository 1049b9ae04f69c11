"""The MCP server over the SDK's in-memory transport: tools, errors, sessions, limits."""

from __future__ import annotations

import ctypes
import gc
import json

import anyio
import psutil
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from envfactory.serve import ServeConfig, SessionPool, build_mcp_server, is_idempotent, tool_annotations
from envfactory.spec import tool_input_schema, tool_output_schema

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in leaves(sub)]
    return [e]


def client(server) -> Client:
    # In-process, 'auto' dispatches per request without a handshake (no session); serve needs one.
    return Client(server, mode="legacy", cache=None)


async def test_list_tools_has_schemas_and_annotations_from_the_spec(env):
    server = build_mcp_server(env, config=ServeConfig())
    async with client(server) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == set(env.tool_names)
    spec_tool = env.spec.tool("search_flights")
    assert tools["search_flights"].input_schema == tool_input_schema(spec_tool)
    out = tool_output_schema(env.spec, spec_tool)
    assert tools["search_flights"].output_schema["properties"].keys() == out["properties"].keys()
    dep = tools["search_flights"].output_schema["properties"]["items"]["items"]["properties"][
        "departure_time"
    ]
    assert "format" not in dep and dep["pattern"]  # naive local datetimes pass strict validators
    assert tools["get_flight"].annotations.read_only_hint is True
    assert tools["search_flights"].annotations.read_only_hint is True
    assert tools["cancel_booking"].annotations.destructive_hint is True
    assert tools["delete_traveler"].annotations.destructive_hint is True
    assert tools["update_traveler"].annotations.destructive_hint is True
    assert tools["update_traveler"].annotations.idempotent_hint is True
    assert tools["create_booking"].annotations.read_only_hint is False
    assert tools["create_booking"].annotations.destructive_hint is False
    assert tools["create_booking"].annotations.idempotent_hint is False


def test_actions_with_increments_are_idempotent_only_when_guarded(env):
    # cancel_booking puts seats back (increment) but sets status cancelled, which its precondition refuses.
    assert is_idempotent(env.spec.tool("cancel_booking"))
    assert tool_annotations(env.spec.tool("get_flight"))["readOnlyHint"] is True
    unguarded = env.spec.tool("cancel_booking").model_copy(update={"preconditions": []})
    assert not is_idempotent(unguarded)


async def test_call_returns_structured_content_and_json_text(env):
    server = build_mcp_server(env, config=ServeConfig())
    async with client(server) as c:
        r = await c.call_tool("get_flight", {"flight_id": "FL00001"})
    assert r.is_error is False
    assert r.structured_content["flight_id"] == "FL00001"
    assert json.loads(r.content[0].text) == r.structured_content


@pytest.mark.parametrize(
    "tool,args,code,needle",
    [
        ("book_spaceship", {}, "unknown_tool", "unknown tool 'book_spaceship'; available tools:"),
        ("get_flight", {"flight_id": 5}, "invalid_argument", "argument 'flight_id' must be a string"),
        ("get_flight", {"flight_id": "FL9"}, "not_found", 'flight "FL9" not found'),
        ("cancel_booking", {"booking_id": "BK00004"}, "precondition_failed", 'status is "cancelled"'),
    ],
)
async def test_runtime_errors_come_back_as_tool_errors_with_the_runtime_message(
    env, tool, args, code, needle
):
    server = build_mcp_server(env, config=ServeConfig())
    async with client(server) as c:
        r = await c.call_tool(tool, args)
        assert r.is_error is True
        assert needle in r.content[0].text
        assert r.meta["envfactory/error"] == code
        ok = await c.call_tool("get_flight", {"flight_id": "FL00001"})  # the session survives errors
        assert ok.is_error is False


async def test_two_concurrent_sessions_never_see_each_others_writes(env):
    server = build_mcp_server(env, config=ServeConfig())
    async with client(server) as a, client(server) as b:
        assert server.pool.open_count == 2
        r = await a.call_tool("cancel_booking", {"booking_id": "BK00001"})
        assert r.is_error is False and r.structured_content["status"] == "cancelled"
        seen_b = await b.call_tool("get_booking", {"booking_id": "BK00001"})
        assert seen_b.structured_content["status"] == "confirmed"
        seen_a = await a.call_tool("get_booking", {"booking_id": "BK00001"})
        assert seen_a.structured_content["status"] == "cancelled"
        hashes = {ps.session.state_hash() for ps in server.pool.sessions()}
        assert len(hashes) == 2
    assert server.pool.open_count == 0


async def test_idle_session_expires_and_says_so(env):
    now = [0.0]
    config = ServeConfig(idle_timeout=60)
    pool = SessionPool(env, max_sessions=10, idle_timeout=60, clock=lambda: now[0])
    server = build_mcp_server(env, config=config, pool=pool)
    async with client(server) as c:
        assert (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error is False
        now[0] += 61
        assert pool.sweep() == 1
        assert pool.open_count == 0
        r = await c.call_tool("get_flight", {"flight_id": "FL00001"})
        assert r.is_error and "expired after 60 s" in r.content[0].text and "reconnect" in r.content[0].text


async def test_session_cap_refuses_a_new_session_clearly(env):
    server = build_mcp_server(env, config=ServeConfig(max_sessions=2))
    async with client(server), client(server):
        with pytest.raises(BaseException) as ei:
            async with client(server):
                pass
        errors = leaves(ei.value)
        assert any(isinstance(e, MCPError) and "limit of 2 open sessions" in e.message for e in errors), (
            errors
        )
        assert server.pool.open_count == 2
    assert server.pool.open_count == 0
    async with client(server) as c:  # room again
        assert (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error is False


async def test_argument_size_and_calls_per_session_limits(env):
    server = build_mcp_server(env, config=ServeConfig(max_argument_bytes=200, max_calls_per_session=2))
    async with client(server) as c:
        r = await c.call_tool("search_airports", {"city": "x" * 500})
        assert r.is_error and "the limit is 200" in r.content[0].text
        for _ in range(2):
            assert (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error is False
        r = await c.call_tool("get_flight", {"flight_id": "FL00001"})
        assert r.is_error and "limit of 2 tool calls" in r.content[0].text


async def test_unknown_method_is_an_error_not_a_crash(env):
    server = build_mcp_server(env, config=ServeConfig())
    async with client(server) as c:
        with pytest.raises(MCPError):
            await c.list_prompts()
        assert (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error is False


def _rss_after_gc() -> int:
    gc.collect()
    try:  # hand freed arenas back to the OS so RSS reflects live memory
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return psutil.Process().memory_info().rss


@pytest.mark.slow  # a memory benchmark: 1050 sessions, RSS measured
async def test_opening_and_dropping_1000_sessions_frees_them_all(env):
    server = build_mcp_server(env, config=ServeConfig(max_sessions=2000))

    async def one(i: int) -> None:
        async with client(server) as c:
            if i % 2:  # half make a write, half drop right after initialize
                await c.call_tool("cancel_booking", {"booking_id": "BK00001"})

    async def wave(n: int) -> None:
        for start in range(0, n, 50):
            async with anyio.create_task_group() as tg:
                for i in range(start, start + 50):
                    tg.start_soon(one, i)

    await wave(50)  # warm up allocators and caches
    base = _rss_after_gc()
    await wave(500)
    mid = _rss_after_gc()
    await wave(500)
    end = _rss_after_gc()
    assert server.pool.open_count == 0
    assert server.pool.opened_total == 1050
    # A leak of the session (a copy of the template) would grow RSS by that much per session.
    per_session = len(env.template)
    assert end - mid < 100 * per_session, f"RSS grew {(end - mid) / 2**20:.1f} MiB over 500 dropped sessions"
    assert end - base < 200 * per_session, (
        f"RSS grew {(end - base) / 2**20:.1f} MiB over 1000 dropped sessions"
    )


@pytest.mark.parametrize("levels, needle", [("1,x", "comma-separated"), ("0,8", "at least 1")])
def test_bench_serve_refuses_bad_concurrency_levels_with_one_line(levels, needle):
    from typer.testing import CliRunner

    from envfactory.cli import app

    result = CliRunner().invoke(app, ["bench", "serve", "--concurrency", levels])
    assert result.exit_code == 2 and needle in " ".join(result.output.split())
