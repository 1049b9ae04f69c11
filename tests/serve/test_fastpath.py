"""The tools/call fast path: the same bytes as the SDK path, the same checks, the same session bookkeeping."""

from __future__ import annotations

import json
import math

import anyio
import httpx2
import pytest
from mcp.server.streamable_http import StreamableHTTPServerTransport

from envfactory.runtime import Session
from envfactory.serve import SESSION_HEADER, ServeConfig
from envfactory.serve.fastpath import hold_sdk_session, sdk_session_transport

from .conftest import http_client, live_http

CTL = "control-secret"
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


def _call(rid, name, arguments=None) -> dict:
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


# Every class of answer a tools/call can get: success, each runtime error code, our own limits,
# a JSON-RPC params error, and a string request id.
SCRIPT = [
    _call(2, "get_flight", {"flight_id": "FL00001"}),
    _call(3, "search_flights", {"limit": 3, "offset": 2}),
    _call(4, "get_flight", {"flight_id": "FL9"}),  # not_found
    _call(5, "get_flight", {"flight_id": 123}),  # invalid_argument
    _call(6, "get_flight", {}),  # invalid_argument (missing)
    _call(7, "no_such_tool", {"x": 1}),  # unknown_tool
    _call(8, "cancel_booking", {"booking_id": "BK00001"}),
    _call(9, "cancel_booking", {"booking_id": "BK00001"}),  # precondition_failed
    _call(10, "search_flights", {"origin": "x" * 600}),  # argument_too_large
    {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"arguments": {}}},  # JSON-RPC -32602
    _call("twelve", "get_flight", {"flight_id": "FL00002"}),  # a string id
    _call(13, "get_flight", {"flight_id": "FL00003"}),
    _call(14, "get_flight", {"flight_id": "FL00004"}),  # call_limit (7 calls reached the runtime)
]


def _open(h: httpx2.Client, url: str, **extra: str) -> dict[str, str]:
    r = h.post(url, json=INIT, headers=extra)
    assert r.status_code == 200, r.text
    sh = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    assert (
        h.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=sh).status_code
        == 202
    )
    return sh


def _answers(base: str, url: str, monkeypatch) -> list[tuple[int, str, bool, bytes]]:
    """Status, content type, whether the session header came back, and the body, for each scripted call."""
    out = []
    with httpx2.Client(base_url=base, headers=HDRS) as h:
        sh = _open(h, url)
        for msg in SCRIPT:
            r = h.post(url, content=json.dumps(msg), headers=sh)
            out.append(
                (
                    r.status_code,
                    r.headers["content-type"],
                    r.headers.get("mcp-session-id") == sh["mcp-session-id"],
                    r.content,
                )
            )
        # A bug in the environment (any exception) is an "internal" tool error; the state is unchanged.
        sh = _open(h, url)

        def broken(self, name, args):
            raise RuntimeError("boom")

        with monkeypatch.context() as m:
            m.setattr(Session, "call", broken)
            r = h.post(url, content=json.dumps(_call(20, "get_flight", {"flight_id": "FL00001"})), headers=sh)
        out.append((r.status_code, r.headers["content-type"], True, r.content))
        # A session attached from the control channel and closed there: a "session" error.
        created = h.post(
            f"/control/{url.rsplit('/', 1)[1]}/sessions", json={}, headers={"Authorization": f"Bearer {CTL}"}
        ).json()
        sh = _open(h, url, **{SESSION_HEADER: created["session_id"]})
        h.delete(
            f"/control/trip_desk/sessions/{created['session_id']}", headers={"Authorization": f"Bearer {CTL}"}
        )
        r = h.post(url, content=json.dumps(_call(21, "get_flight", {"flight_id": "FL00001"})), headers=sh)
        out.append((r.status_code, r.headers["content-type"], True, r.content))
    return out


def test_fast_path_answers_byte_for_byte_like_the_sdk_path(env, monkeypatch):
    cfg = dict(control_token=CTL, max_calls_per_session=7, max_argument_bytes=256)
    with (
        live_http([env], ServeConfig(**cfg)) as fast,
        live_http([env], ServeConfig(**cfg, fast_path=False)) as sdk,
    ):
        got_fast = _answers(fast.base, fast.url(), monkeypatch)
        got_sdk = _answers(sdk.base, sdk.url(), monkeypatch)
        assert fast.app.state.fast_paths["trip_desk"].fast_calls == len(SCRIPT) + 2
        assert sdk.app.state.fast_paths == {}
    assert got_fast == got_sdk
    bodies = [json.loads(b) for *_, b in got_fast]
    codes = [
        b["result"].get("_meta", {}).get("envfactory/error") if "result" in b else b["error"]["code"]
        for b in bodies
    ]
    assert codes == [
        None,
        None,
        "not_found",
        "invalid_argument",
        "invalid_argument",
        "unknown_tool",
        None,
        "precondition_failed",
        "argument_too_large",
        -32602,
        None,
        None,
        "call_limit",
        "internal",
        "session",
    ]
    assert bodies[0]["result"]["structuredContent"]["flight_id"] == "FL00001"
    assert bodies[10]["id"] == "twelve"


def test_everything_but_tools_call_on_a_live_session_stays_on_the_sdk_path(env):
    with live_http([env], ServeConfig(max_body_bytes=2048)) as srv:
        fp = srv.app.state.fast_paths["trip_desk"]
        url = srv.url()
        call = _call(5, "get_flight", {"flight_id": "FL00001"})
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sh = _open(h, url)
            assert (
                "tools"
                in h.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=sh).json()[
                    "result"
                ]
            )
            assert (
                h.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=sh).json()["result"]
                == {}
            )
            assert h.post(url, json=call).status_code == 400  # no session id
            assert h.post(url, json=call, headers={**sh, "mcp-session-id": "nope"}).status_code == 404
            assert h.post(url, json=call, headers={**sh, "Host": "evil.example"}).status_code == 421
            assert h.post(url, json=call, headers={**sh, "Origin": "http://evil.example"}).status_code == 403
            assert h.post(url, json=call, headers={**sh, "Accept": "text/event-stream"}).status_code == 406
            assert h.post(url, content=b"{not json", headers=sh).status_code == 400
            big = _call(6, "get_flight", {"flight_id": "x" * 4096})
            assert h.post(url, json=big, headers=sh).status_code == 413
            assert fp.fast_calls == 0
            assert (
                h.post(url, json=call, headers=sh).json()["result"]["structuredContent"]["flight_id"]
                == "FL00001"
            )
            assert fp.fast_calls == 1
            assert h.delete(url, headers=sh).status_code == 200
            assert h.post(url, json=call, headers=sh).status_code == 404  # the SDK says it is gone
            assert fp.fast_calls == 1


def test_official_sdk_client_calls_take_the_fast_path(env):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with live_http([env], ServeConfig()) as srv:

        async def go():
            async with (
                http_client() as http,
                Client(streamable_http_client(srv.url(), http_client=http), cache=None) as c,
            ):
                r = await c.call_tool(
                    "get_flight", {"flight_id": "FL00001"}
                )  # output schema validated client-side
                bad = await c.call_tool("get_flight", {"flight_id": "FL9"})
                return r.structured_content["flight_id"], bad.is_error

        assert anyio.run(go) == ("FL00001", True)
        assert srv.app.state.fast_paths["trip_desk"].fast_calls == 2


def test_fast_calls_keep_the_session_alive_and_it_still_expires_when_idle(env):
    with live_http([env], ServeConfig(idle_timeout=0.6)) as srv:
        url = srv.url()
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sh = _open(h, url)
            call = _call(5, "get_flight", {"flight_id": "FL00001"})

            async def busy():  # fast calls for ~3 idle periods: the SDK's idle timer must not fire
                for _ in range(9):
                    await anyio.sleep(0.2)
                    assert h.post(url, json=call, headers=sh).status_code == 200

            anyio.run(busy)
            assert srv.app.state.fast_paths["trip_desk"].fast_calls == 9

            async def idle():
                with anyio.fail_after(10):
                    while srv.pool().open_count:
                        await anyio.sleep(0.05)

            anyio.run(idle)
            assert h.post(url, json=call, headers=sh).status_code == 404


def test_the_sdk_internals_the_fast_path_relies_on_are_still_there(env):
    """If this fails, the mcp SDK changed: update envfactory/serve/fastpath.py (sdk_session_transport,
    hold_sdk_session) or serve with fast_path=False until it is."""
    with live_http([env], ServeConfig(idle_timeout=30)) as srv:
        fp = srv.app.state.fast_paths["trip_desk"]
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sid = _open(h, srv.url())["mcp-session-id"]
            assert isinstance(fp.manager._server_instances, dict) and isinstance(
                fp.manager._session_owners, dict
            )
            transport = sdk_session_transport(fp.manager, sid, {"type": "http"})
            assert isinstance(transport, StreamableHTTPServerTransport) and transport.mcp_session_id == sid
            assert sdk_session_transport(fp.manager, "unknown", {"type": "http"}) is None
            assert transport._idle_timeout == 30 and isinstance(transport._requests_in_flight, int)
            assert fp.server.fast_runner(sid) is not None

            assert transport.idle_scope is not None
            h.delete(srv.url(), headers={"mcp-session-id": sid})

        async def gone():
            with anyio.fail_after(10):
                while fp.server.fast_runner(sid) is not None:
                    await anyio.sleep(0.02)

        anyio.run(gone)  # the connection's exit stack unregisters it


def test_hold_counts_a_request_in_flight_like_the_transport_does():
    async def go():
        t = StreamableHTTPServerTransport("abc", is_json_response_enabled=True, idle_timeout=5)
        async with t.connect():
            idle = t.idle_scope
            with hold_sdk_session(t):
                with hold_sdk_session(t):
                    assert t._requests_in_flight == 2 and idle.deadline == math.inf
                assert t._requests_in_flight == 1 and idle.deadline == math.inf
            assert t._requests_in_flight == 0 and anyio.current_time() < idle.deadline < math.inf
            await t.terminate()

    anyio.run(go)


@pytest.mark.parametrize("json_response", [False])
def test_no_fast_path_for_sse_responses(env, json_response):
    with live_http([env], ServeConfig(json_response=json_response)) as srv:
        assert srv.app.state.fast_paths == {}


def test_a_chunked_body_over_the_limit_is_refused_by_the_sdk(env):
    with live_http([env], ServeConfig(max_body_bytes=2048)) as srv:
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sh = _open(h, srv.url())
            body = json.dumps(_call(5, "get_flight", {"flight_id": "x" * 4096})).encode()
            r = h.post(srv.url(), content=iter([body[:1000], body[1000:]]), headers=sh)  # no Content-Length
            assert r.status_code == 413
            assert srv.app.state.fast_paths["trip_desk"].fast_calls == 0


class _Without:
    """An SDK object as a later release might have it: everything forwarded except ``missing``."""

    def __init__(
        self, obj, missing: str, wrap_values_of: str | None = None, value_missing: str | None = None
    ):
        self._obj, self._missing = obj, missing
        self._wrap_values_of, self._value_missing = wrap_values_of, value_missing

    def __getattr__(self, name):
        if name == self._missing:
            raise AttributeError(name)
        value = getattr(self._obj, name)
        if name == self._wrap_values_of:  # a dict of transports, each lacking ``value_missing``
            return {k: _Without(v, self._value_missing) for k, v in value.items()}
        return value


@pytest.mark.parametrize(
    "where, name", [("manager", "_session_owners"), ("transport", "_requests_in_flight")]
)
def test_fast_path_falls_back_to_the_sdk_when_the_sdk_state_it_reads_is_gone(
    env, monkeypatch, caplog, where, name
):
    import logging

    from envfactory.serve import fastpath, http

    real = fastpath.ToolCallFastPath

    def with_changed_sdk(sdk_app, manager, *args):
        changed = (
            _Without(manager, name)
            if where == "manager"
            else _Without(manager, "", wrap_values_of="_server_instances", value_missing=name)
        )
        return real(sdk_app, changed, *args)

    monkeypatch.setattr(fastpath, "ToolCallFastPath", with_changed_sdk)
    monkeypatch.setattr(fastpath, "_reported", set())
    caplog.set_level(logging.WARNING, logger=fastpath.__name__)
    assert http._fast_path_class() is with_changed_sdk
    with live_http([env], ServeConfig()) as srv:
        fp = srv.app.state.fast_paths["trip_desk"]
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sh = _open(h, srv.url())
            for i in range(3):
                r = h.post(
                    srv.url(),
                    content=json.dumps(_call(10 + i, "get_flight", {"flight_id": "FL00001"})),
                    headers=sh,
                )
                assert (
                    r.status_code == 200 and r.json()["result"]["structuredContent"]["flight_id"] == "FL00001"
                )
    assert fp.fast_calls == 0
    assert fp.disabled is not None and name in fp.disabled
    warnings = [rec.getMessage() for rec in caplog.records if "fast path off" in rec.getMessage()]
    assert len(warnings) == 1 and name in warnings[0]


def test_the_fast_path_is_on_with_the_sdk_it_was_written_for(env):
    from mcp.server.runner import ServerRunner

    from envfactory.serve.fastpath import MANAGER_STATE, RUNNER_API, TRANSPORT_STATE, missing_sdk_state

    assert missing_sdk_state(ServerRunner, RUNNER_API) == []
    with live_http([env], ServeConfig()) as srv:
        fp = srv.app.state.fast_paths["trip_desk"]
        assert fp.disabled is None and missing_sdk_state(fp.manager, MANAGER_STATE) == []
        with httpx2.Client(base_url=srv.base, headers=HDRS) as h:
            sid = _open(h, srv.url())["mcp-session-id"]
            assert missing_sdk_state(fp.manager._server_instances[sid], TRANSPORT_STATE) == []
