"""stdio: a real ``python -m envfactory serve`` process and the SDK's stdio client; the CLI's config output."""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from envfactory.cli import app

from .conftest import REPO


def server_params(*extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "envfactory",
            "serve",
            "--domain",
            "travel",
            "--env",
            "trip_desk",
            "--transport",
            "stdio",
            *extra,
        ],
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
        cwd=str(REPO),
    )


def test_stdio_server_lists_and_calls_tools_with_isolated_state():
    async def go():
        with anyio.fail_after(60):
            await scenario()

    async def scenario():
        # 'auto' mode: the server declines server/discover, so the client falls back to initialize.
        async with Client(server_params(), cache=None) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["get_flight"].annotations.read_only_hint is True
            r = await c.call_tool("cancel_booking", {"booking_id": "BK00001"})
            assert not r.is_error and r.structured_content["status"] == "cancelled"
            r = await c.call_tool("cancel_booking", {"booking_id": "BK00001"})
            assert r.is_error and 'status is "cancelled"' in r.content[0].text
            r = await c.call_tool("get_flight", {"flight_id": 3})
            assert r.is_error and "must be a string" in r.content[0].text
        async with Client(server_params(), mode="legacy", cache=None) as c:  # a new process, a fresh state
            r = await c.call_tool("get_booking", {"booking_id": "BK00001"})
            assert r.structured_content["status"] == "confirmed"

    anyio.run(go)


def test_print_config_gives_stdio_command_mcp_json_and_urls():
    res = CliRunner().invoke(
        app, ["serve", "--domain", "travel", "--print-config", "--port", "8123", "--token", "t0k"]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "serve --domain travel --env trip_desk --transport stdio" in out
    assert "http://127.0.0.1:8123/mcp/trip_desk" in out
    start = out.index("{")
    end = out.index("\n}\n", start) + 2
    cfg = json.loads(out[start:end])
    entry = cfg["mcpServers"]["travel-trip_desk"]
    assert entry["args"][-2:] == ["--transport", "stdio"]
    assert cfg["mcpServers"]["travel-trip_desk-http"]["headers"]["Authorization"] == "Bearer t0k"


def test_serve_refuses_equal_tokens_and_bad_transport():
    r = CliRunner().invoke(
        app, ["serve", "--transport", "http", "--token", "same", "--control-token", "same"]
    )
    assert r.exit_code == 2 and "control_token must differ" in r.output
    r = CliRunner().invoke(app, ["serve", "--transport", "carrier-pigeon"])
    assert r.exit_code == 2


def test_quiet_stdio_server_writes_nothing_to_stderr():
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "envfactory", "serve", "--domain", "travel", "--env", "trip_desk", "--quiet"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
    )
    assert "serving" not in p.stderr
    loud = subprocess.run(
        [sys.executable, "-m", "envfactory", "serve", "--domain", "travel", "--env", "trip_desk"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
    )
    assert "serving travel/trip_desk on stdio" in loud.stderr


def test_stdio_without_env_on_a_multi_env_domain_fails_before_the_handshake_naming_the_choices(tmp_path):
    """What a user of an MCP client sees: the connection closes, and the server's stderr says why."""
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envfactory", "serve", "--domain", "travel"],
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
        cwd=str(tmp_path),
    )
    errors: list[BaseException] = []
    with (tmp_path / "stderr.txt").open("w+") as errlog:

        async def go():
            with anyio.fail_after(60):
                try:
                    async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as c:
                        await c.list_tools()
                except Exception as e:  # the SDK's "connection closed" (its type varies between releases)
                    errors.append(e)

        anyio.run(go)
        errlog.seek(0)
        stderr = " ".join(errlog.read().split())
    assert errors, "the client connected to a server that should have refused to start"
    names = sorted(p.parent.name for p in (REPO / "domains" / "travel").glob("*/env.yaml"))
    assert len(names) > 1 and "trip_desk" in names
    assert f"domain 'travel' has {len(names)} environments" in stderr
    for name in names:
        assert name in stderr
    assert "--env" in stderr and "Traceback" not in stderr
    assert not list(p for p in tmp_path.iterdir() if p.name != "stderr.txt")  # nothing written to the cwd


def test_stdio_refusal_exits_2_before_reading_stdin():
    import subprocess

    p = subprocess.run(
        [sys.executable, "-m", "envfactory", "serve", "--domain", "travel"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
    )
    assert p.returncode == 2 and p.stdout == ""  # stdout is the protocol channel: nothing on it
    assert "pass --env with one of" in " ".join(p.stderr.split())
