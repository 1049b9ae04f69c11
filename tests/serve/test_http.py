"""Streamable HTTP with a real uvicorn on 127.0.0.1 and real SDK clients: security, limits, control."""

from __future__ import annotations

import base64
import json

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from envfactory.runtime import Environment
from envfactory.serve import SESSION_HEADER, ServeConfig

from .conftest import http_client, live_http

CTL = "control-secret"
TOK = "mcp-secret"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
HDRS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def run(fn, *args):
    return anyio.run(fn, *args)


def mcp(url: str, http: httpx2.AsyncClient) -> Client:
    return Client(streamable_http_client(url, http_client=http), cache=None)


@pytest.fixture(scope="module")
def live(env):
    with live_http([env], ServeConfig(control_token=CTL, max_sessions=20, max_body_bytes=64 * 1024)) as srv:
        yield srv


def test_initialize_list_and_call_over_http(live):
    async def go():
        async with http_client() as http, mcp(live.url(), http) as c:
            tools = (await c.list_tools()).tools
            assert "get_flight" in {t.name for t in tools}
            assert live.pool().open_count >= 1
            r = await c.call_tool("get_flight", {"flight_id": "FL9"})
            assert r.is_error and "not found" in r.content[0].text
            r = await c.call_tool("get_flight", {"flight_id": "FL00001"})
            return r.structured_content["flight_id"]

    assert run(go) == "FL00001"

    async def freed():  # DELETE on close frees it; the server's connection teardown may finish just after
        with anyio.fail_after(10):
            while live.pool().open_count:
                await anyio.sleep(0.02)

    run(freed)


def test_agents_tool_list_has_no_control_tools(live):
    async def go():
        async with http_client() as http, mcp(live.url(), http) as c:
            return {t.name for t in (await c.list_tools()).tools}

    names = run(go)
    assert not any("control" in n or "state" in n or "snapshot" in n or "hash" in n for n in names)


def test_control_requires_its_token(live):
    with httpx2.Client(base_url=live.base) as h:
        assert h.post("/control/trip_desk/sessions").status_code == 401
        assert (
            h.get("/control/trip_desk/sessions", headers={"Authorization": "Bearer wrong"}).status_code == 401
        )
        assert (
            h.get("/control/trip_desk/sessions", headers={"Authorization": f"Bearer {CTL}"}).status_code
            == 200
        )


def test_control_session_from_a_snapshot_attach_and_read_hash_and_diff(live, env):
    # Initial state: the template with BK00001 already cancelled (as a task's starting state would be).
    with env.new_session() as s:
        s.call("cancel_booking", {"booking_id": "BK00001"})
        start_hash = s.state_hash()
        state_b64 = base64.b64encode(s.snapshot().data).decode()
    auth = {"Authorization": f"Bearer {CTL}"}
    with httpx2.Client(base_url=live.base, headers=auth) as h:
        created = h.post("/control/trip_desk/sessions", json={"state_b64": state_b64})
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        assert created.json()["hash"] == start_hash

        async def agent():
            async with http_client(**{SESSION_HEADER: sid}) as http, mcp(live.url(), http) as c:
                seen = await c.call_tool("get_booking", {"booking_id": "BK00001"})
                assert seen.structured_content["status"] == "cancelled"
                r = await c.call_tool("cancel_booking", {"booking_id": "BK00002"})
                assert not r.is_error, r.content[0].text

        run(agent)

        st = h.get(f"/control/trip_desk/sessions/{sid}/state").json()
        assert st["hash"] != start_hash and st["calls"] == 2
        changed = st["diff"]["changed"]["booking"]
        assert [c["key"] for c in changed] == ["BK00002"]  # the diff is against the chosen start
        assert changed[0]["fields"]["status"] == {"old": "confirmed", "new": "cancelled"}
        snap = h.get(f"/control/trip_desk/sessions/{sid}/snapshot").json()
        assert snap["hash"] == st["hash"]
        assert env.snapshot_from_bytes(base64.b64decode(snap["state_b64"])).sums
        gone = h.delete(f"/control/trip_desk/sessions/{sid}").json()
        assert gone["closed"] and gone["hash"] == st["hash"]
        again = h.get(f"/control/trip_desk/sessions/{sid}/state")
        assert again.status_code == 404 and "closed on the control channel" in again.json()["message"]


def test_control_rejects_bad_states_and_paths_clearly(live):
    auth = {"Authorization": f"Bearer {CTL}"}
    with httpx2.Client(base_url=live.base, headers=auth) as h:
        r = h.post("/control/trip_desk/sessions", json={"state_b64": base64.b64encode(b"hello").decode()})
        assert r.status_code == 400 and "not an SQLite database" in r.json()["message"]
        r = h.post("/control/trip_desk/sessions", json={"state_path": "/etc/passwd"})
        assert r.status_code == 400 and "outside the folders" in r.json()["message"]
        r = h.post("/control/trip_desk/sessions", json={"state_path": "tasks/a\u0000.db"})
        assert r.status_code == 400 and "not a usable path" in r.json()["message"]
        r = h.post("/control/trip_desk/sessions", content=b"[" * 100_000)
        assert r.status_code == 400 and r.json()["error"] == "bad_json"
        r = h.post("/control/trip_desk/sessions", json={"state_path": "template.db"})
        assert r.status_code == 201, r.text
        h.delete(f"/control/trip_desk/sessions/{r.json()['session_id']}")
        r = h.post("/control/nowhere/sessions", json={})
        assert r.status_code == 404


def test_control_is_off_without_a_control_token(env):
    with live_http([env], ServeConfig()) as srv, httpx2.Client(base_url=srv.base) as h:
        assert h.post("/control/trip_desk/sessions", headers={"Authorization": "Bearer x"}).status_code == 404


def test_bearer_token_and_host_checks(env):
    with live_http([env], ServeConfig(token=TOK)) as srv:
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            r = h.post("/mcp/trip_desk", json=INIT)
            assert r.status_code == 401 and "Bearer" in r.headers["www-authenticate"]
            r = h.post("/mcp/trip_desk", json=INIT, headers={"Authorization": "Bearer nope"})
            assert r.status_code == 401
            ok = {"Authorization": f"Bearer {TOK}"}
            r = h.post("/mcp/trip_desk", json=INIT, headers={**ok, "Host": "evil.example:80"})
            assert r.status_code == 421
            r = h.post("/mcp/trip_desk", json=INIT, headers={**ok, "Origin": "http://evil.example"})
            assert r.status_code == 403
            assert srv.pool().open_count == 0

        async def go():
            async with http_client(TOK) as http, mcp(srv.url(), http) as c:
                return (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error

        assert run(go) is False


def test_malformed_oversized_unknown_and_abrupt_requests_never_crash_or_leak(live):
    pool = live.pool()
    with httpx2.Client(base_url=live.base, headers=HDRS) as h:
        assert h.post("/mcp/trip_desk", content=b"{not json").status_code == 400
        assert h.post("/mcp/trip_desk", json={"jsonrpc": "2.0", "id": 1}).status_code in (400, 404)
        big = {**INIT, "params": {**INIT["params"], "pad": "x" * (70 * 1024)}}
        assert h.post("/mcp/trip_desk", json=big).status_code == 413
        # A session that initializes, then asks for an unknown method and vanishes without DELETE.
        r = h.post("/mcp/trip_desk", json=INIT)
        assert r.status_code == 200
        sid = r.headers["mcp-session-id"]
        sh = {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
        h.post("/mcp/trip_desk", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=sh)
        r = h.post("/mcp/trip_desk", json={"jsonrpc": "2.0", "id": 2, "method": "no/such"}, headers=sh)
        assert r.json()["error"]["code"] == -32601
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_flight", "arguments": {"flight_id": "FL00001"}},
        }
        r = h.post("/mcp/trip_desk", json=call, headers=sh)
        assert r.json()["result"]["structuredContent"]["flight_id"] == "FL00001"
        assert h.delete("/mcp/trip_desk", headers=sh).status_code == 200

    async def settled():  # the DELETE frees it (its teardown finishes just after the answer)
        with anyio.fail_after(10):
            while pool.open_count:
                await anyio.sleep(0.01)

    run(settled)

    async def still_serves():
        async with http_client() as http, mcp(live.url(), http) as c:
            return (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error

    assert run(still_serves) is False


def test_http_session_cap_and_idle_expiry(env):
    with live_http([env], ServeConfig(max_sessions=2, idle_timeout=0.3)) as srv:
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            assert h.post("/mcp/trip_desk", json=INIT).status_code == 200
            assert h.post("/mcp/trip_desk", json=INIT).status_code == 200
            r = h.post("/mcp/trip_desk", json=INIT)
            assert r.status_code == 503 and "Too many open sessions" in r.text

            async def expired():
                with anyio.fail_after(10):
                    while srv.pool().open_count:
                        await anyio.sleep(0.05)

            run(expired)
            assert h.post("/mcp/trip_desk", json=INIT).status_code == 200


def test_each_environment_of_a_domain_at_its_own_path(env):
    spec_b = env.spec.model_copy(update={"name": "trip_desk_b"})
    env_b = Environment(spec_b, env.template)
    with live_http([env, env_b], ServeConfig()) as srv:

        async def go():
            async with http_client() as http:
                async with mcp(srv.url("trip_desk"), http) as a, mcp(srv.url("trip_desk_b"), http) as b:
                    await a.call_tool("cancel_booking", {"booking_id": "BK00001"})
                    r = await b.call_tool("get_booking", {"booking_id": "BK00001"})
                    return (
                        r.structured_content["status"],
                        srv.pool("trip_desk").open_count,
                        srv.pool("trip_desk_b").open_count,
                    )

        assert run(go) == ("confirmed", 1, 1)


def test_abrupt_disconnects_are_freed_by_idle_expiry(env):
    with live_http([env], ServeConfig(idle_timeout=0.5)) as srv:
        for _ in range(5):  # send initialize and hang up before the answer
            try:
                httpx2.post(srv.url(), content=json.dumps(INIT), headers=HDRS, timeout=0.0005)
            except httpx2.HTTPError:
                pass

        async def go():
            async with http_client() as http, mcp(srv.url(), http) as c:
                assert not (await c.call_tool("get_flight", {"flight_id": "FL00001"})).is_error
            with anyio.fail_after(10):
                while srv.pool().open_count:
                    await anyio.sleep(0.05)

        run(go)


def test_mcp_without_an_environment_answers_with_the_endpoint_list(env):
    spec_b = env.spec.model_copy(update={"name": "trip_desk_b"})
    with live_http([env, Environment(spec_b, env.template)], ServeConfig(token=TOK)) as srv:
        auth = {**HDRS, "Authorization": f"Bearer {TOK}"}
        for path in ("/mcp", "/mcp/", "/mcp/no_such_env"):
            r = httpx2.post(srv.base + path, content=json.dumps(INIT), headers=auth)
            assert r.status_code == 404, (path, r.text)
            body = r.json()
            assert body["error"]["data"]["endpoints"] == ["/mcp/trip_desk", "/mcp/trip_desk_b"]
            assert "use one of /mcp/trip_desk, /mcp/trip_desk_b" in body["error"]["message"]
        # the listing is behind the token like every /mcp path
        assert httpx2.post(srv.base + "/mcp", content=json.dumps(INIT), headers=HDRS).status_code == 401
        # a trailing slash on a real endpoint still reaches it
        r = httpx2.post(srv.url() + "/", content=json.dumps(INIT), headers=auth, follow_redirects=True)
        assert r.status_code == 200 and r.json()["result"]["serverInfo"]["name"].endswith("trip_desk")


def test_serve_port_0_prints_the_port_it_bound(tmp_path):
    """The banner is how a caller of 'serve --port 0' learns the port: it must be the real one."""
    import os
    import queue
    import re
    import subprocess
    import sys
    import threading

    from .conftest import REPO

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envfactory",
            "serve",
            "--domain",
            "travel",
            "--env",
            "trip_desk",
            "--transport",
            "http",
            "--port",
            "0",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ENVFACTORY_ROOT": str(REPO)},
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    try:
        seen = []
        while True:
            line = lines.get(timeout=60)
            seen.append(line)
            m = re.search(r"serving travel/trip_desk at http://127\.0\.0\.1:(\d+)/mcp/trip_desk", line)
            if m:
                break
        port = int(m.group(1))
        assert port != 0, seen
        assert httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=30).json() == {"status": "ok"}
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_port_in_use_is_a_serve_error_naming_it():
    import socket

    from envfactory.errors import ServeError
    from envfactory.serve.http import bind_listener

    first = bind_listener("127.0.0.1", 0)
    port = first.getsockname()[1]
    try:
        with pytest.raises(ServeError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use"):
            bind_listener("127.0.0.1", port)
        with socket.create_connection(("127.0.0.1", port), timeout=5):  # listening before any server runs
            pass
    finally:
        first.close()
