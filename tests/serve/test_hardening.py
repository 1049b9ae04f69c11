"""Issue 17 (serve): exact Host/Origin checks, JSON-RPC ids, the session-header path, the session budget."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from envfactory.errors import SessionLimitError
from envfactory.runtime import Environment
from envfactory.serve import SESSION_HEADER, ServeConfig, SessionBudget, SessionPool
from envfactory.serve.guard import HostRules

from .conftest import http_client, live_http

CTL = "control-secret"
HDRS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
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
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


@pytest.fixture(scope="module")
def live(env):
    with live_http([env], ServeConfig(control_token=CTL)) as srv:
        yield srv


def _rules() -> HostRules:
    return HostRules(*ServeConfig().host_patterns())


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000@evil.com",
        "localhost:evil",
        "localhost:8000.evil.com",
        "evil.com",
        "127.0.0.1.evil.com:80",
        "localhost:80/x",
        "",
        "localhost:",
        "[::1]:80@evil.com",
        "localhost:123456",
    ],
)
def test_a_host_that_only_starts_like_an_allowed_one_is_refused(host):
    assert not _rules().host_ok(host)


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8000", "localhost:1", "LOCALHOST:8000", "[::1]:8000", "127.0.0.1", "localhost"]
)
def test_loopback_hosts_are_accepted(host):
    assert _rules().host_ok(host)


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:8000.evil.com",
        "http://127.0.0.1:8000@evil.com",
        "http://localhost:evil",
        "http://localhost:8000/x",
        "null",
        "evil.com",
        "ftp://localhost:8000",
        "http://evil.com",
    ],
)
def test_an_origin_that_only_starts_like_an_allowed_one_is_refused(origin):
    assert not _rules().origin_ok(origin)


def test_allowed_host_patterns_match_name_and_port_exactly():
    rules = HostRules(["myhost:8000", "other:*"], ["https://myhost:8000"])
    assert (
        rules.host_ok("myhost:8000") and rules.host_ok("other:9") and rules.origin_ok("https://myhost:8000")
    )
    assert not rules.host_ok("myhost:80001") and not rules.host_ok("myhost:800")
    assert not rules.host_ok("other") and not rules.origin_ok("http://myhost:8000")


def test_live_server_refuses_lookalike_hosts_and_origins_on_every_route(live):
    port = live.port
    with httpx2.Client(base_url=live.base, headers=HDRS) as h:
        for host in (f"127.0.0.1:{port}@evil.com", "localhost:evil"):
            assert h.post("/mcp/trip_desk", json=INIT, headers={"Host": host}).status_code == 421
            assert h.get("/healthz", headers={"Host": host}).status_code == 421
            assert h.get("/control/trip_desk/sessions", headers={"Host": host}).status_code == 421
        r = h.post("/mcp/trip_desk", json=INIT, headers={"Origin": f"http://localhost:{port}.evil.com"})
        assert r.status_code == 403
        assert h.get("/healthz", headers={"Host": "evil.example"}).status_code == 421
        assert h.get("/healthz").json() == {"status": "ok"}
        assert (
            h.post("/mcp/trip_desk", json=INIT, headers={"Origin": f"http://localhost:{port}"}).status_code
            == 200
        )


@pytest.mark.parametrize("bad_id", [{}, 1.5, None, True, [1]])
def test_a_request_whose_id_is_not_a_string_or_integer_gets_an_invalid_request_error(live, bad_id):
    with httpx2.Client(base_url=live.base, headers=HDRS) as h:
        r = h.post("/mcp/trip_desk", json=INIT)
        sh = {"Mcp-Session-Id": r.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-06-18"}
        h.post("/mcp/trip_desk", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=sh)
        call = {
            "jsonrpc": "2.0",
            "id": bad_id,
            "method": "tools/call",
            "params": {"name": "cancel_booking", "arguments": {"booking_id": "BK00003"}},
        }
        r = h.post("/mcp/trip_desk", json=call, headers=sh)
        assert r.status_code == 400
        assert r.json()["id"] is None and r.json()["error"]["code"] == -32600
        assert "string or an integer" in r.json()["error"]["message"]
        r = h.post("/mcp/trip_desk", json=[call], headers=sh)  # a batch too
        assert r.status_code == 400
        ps = next(p for p in live.pool().sessions() if p.origin == "mcp")
        assert ps.calls == 0  # nothing ran
        h.delete("/mcp/trip_desk", headers=sh)


def _header_call(h: httpx2.Client, sid: str, booking: str) -> httpx2.Response:
    """A 2026-era tools/call with no handshake, naming a control session in the session header."""
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "cancel_booking", "arguments": {"booking_id": booking}, "_meta": META},
    }
    return h.post(
        "/mcp/trip_desk",
        json=body,
        headers={
            SESSION_HEADER: sid,
            "Mcp-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "cancel_booking",
        },
    )


def test_a_session_header_call_without_handshake_reports_the_write_it_applied(live):
    auth = {"Authorization": f"Bearer {CTL}"}
    with httpx2.Client(base_url=live.base, headers=HDRS) as h:
        sid = h.post("/control/trip_desk/sessions", headers=auth, json={}).json()["session_id"]
        r = _header_call(h, sid, "BK00002")
        assert r.status_code == 200 and "error" not in r.json(), r.text
        result = r.json()["result"]
        assert not result["isError"] and result["structuredContent"]["status"] == "cancelled"
        st = h.get(f"/control/trip_desk/sessions/{sid}/state", headers=auth).json()
        assert st["calls"] == 1 and [c["key"] for c in st["diff"]["changed"]["booking"]] == ["BK00002"]
        h.delete(f"/control/trip_desk/sessions/{sid}", headers=auth)


def test_a_session_held_by_one_mcp_connection_takes_no_header_calls_from_another(live):
    auth = {"Authorization": f"Bearer {CTL}"}
    with httpx2.Client(base_url=live.base, headers=HDRS) as h:
        sid = h.post("/control/trip_desk/sessions", headers=auth, json={}).json()["session_id"]

        async def agent_holds_it() -> None:
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            async with (
                http_client(**{SESSION_HEADER: sid}) as http,
                Client(streamable_http_client(live.url(), http_client=http), cache=None) as c,
            ):
                assert not (await c.call_tool("get_booking", {"booking_id": "BK00001"})).is_error
                other = await anyio.to_thread.run_sync(_header_call, h, sid, "BK00004")
                result = other.json()["result"]
                assert result["isError"] and "held by another MCP connection" in result["content"][0]["text"]

        anyio.run(agent_holds_it)
        st = h.get(f"/control/trip_desk/sessions/{sid}/state", headers=auth).json()
        assert st["calls"] == 1 and st["diff"]["changed"] == {}  # the second client wrote nothing
        h.delete(f"/control/trip_desk/sessions/{sid}", headers=auth)


def test_the_memory_budget_refuses_new_sessions_and_keeps_serving_open_ones(env):
    rss = [100 << 20]
    budget = SessionBudget(max_memory_bytes=200 << 20, rss=lambda: rss[0])
    pool = SessionPool(env, budget=budget)
    first = pool.open()
    rss[0] = 250 << 20
    with pytest.raises(SessionLimitError, match="server memory is 250 MiB, at its budget of 200 MiB"):
        pool.open()
    assert first.session.call("get_flight", {"flight_id": "FL00001"})["flight_id"] == "FL00001"
    rss[0] = 150 << 20
    pool.open()
    assert budget.refused == 1 and pool.open_count == 2
    pool.close_all()


def test_the_session_cap_holds_over_all_environments_of_a_server(env):
    budget = SessionBudget(max_sessions=3)
    a = SessionPool(env, budget=budget)
    b = SessionPool(
        Environment(env.spec.model_copy(update={"name": "trip_desk_b"}), env.template), budget=budget
    )
    a.open(), a.open(), b.open()
    with pytest.raises(SessionLimitError, match="limit of 3 open sessions over all its environments"):
        b.open()
    a.close_all(), b.close_all()


def test_a_server_over_its_memory_budget_answers_new_sessions_with_a_clear_error(env):
    # 16 MiB is below any Python process's resident memory: every new session is refused, cleanly.
    with live_http([env], ServeConfig(control_token=CTL, max_memory_mb=16)) as srv:
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            r = h.post("/mcp/trip_desk", json=INIT)
            assert r.status_code == 200 and "at its budget of 16 MiB" in r.json()["error"]["message"]
            r = h.post("/control/trip_desk/sessions", headers={"Authorization": f"Bearer {CTL}"}, json={})
            assert r.status_code == 503 and "at its budget of 16 MiB" in r.json()["message"]
            assert h.get("/healthz").json() == {"status": "ok"}
        assert srv.pool().open_count == 0 and srv.app.state.budget.refused == 2


@pytest.mark.slow  # starts a server process and a load generator (~25 s on a shared machine)
def test_bench_serve_memory_reports_rss_with_sessions_open_and_after_they_close():
    from envfactory.bench.serve import hostile_call, run_serve_memory_bench

    from .conftest import TRIP_DESK

    lengths = {len(hostile_call(k)[1]["status"]) for k in range(100)}
    assert len(lengths) == 100  # every call of a session a new in-list length
    m = run_serve_memory_bench(TRIP_DESK, sessions=3, calls=2, workers=2)
    assert (m.opened, m.refused, m.calls, m.call_errors) == (3, 0, 6, 0)
    assert min(m.rss_start_mib, m.rss_open_mib, m.rss_closed_mib) > 0 and m.memory_budget_mib == 4096


def test_memory_that_closed_sessions_freed_goes_back_to_the_os(env, monkeypatch):
    from envfactory.serve import pool as pool_mod

    trims: list[int] = []
    monkeypatch.setattr(pool_mod.memory_release, "_trim", trims.append)
    monkeypatch.setattr(pool_mod.memory_release, "last", -1e9)
    pool = SessionPool(env)
    a, b = pool.open(), pool.open()
    pool.release(a)  # one still open, and the last trim long ago: trimmed
    assert trims == [0]
    pool.release(b)  # the last open session ended: trimmed at once, throttle or not
    assert trims == [0, 0] and not pool_mod.memory_release.pending


def test_the_budget_trims_freed_memory_before_it_refuses(env, monkeypatch):
    from envfactory.serve import pool as pool_mod

    rss = [300 << 20]
    monkeypatch.setattr(pool_mod.memory_release, "_trim", lambda _: rss.__setitem__(0, 100 << 20))
    monkeypatch.setattr(pool_mod.memory_release, "last", -1e9)
    monkeypatch.setattr(pool_mod.memory_release, "pending", True)
    pool = SessionPool(env, budget=SessionBudget(max_memory_bytes=200 << 20, rss=lambda: rss[0]))
    pool.open()  # 300 MiB held, 200 of them free: trimmed, then let in
    assert pool.open_count == 1 and pool.budget.refused == 0
    pool.close_all()
