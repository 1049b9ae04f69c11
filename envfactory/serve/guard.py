"""Request checks in front of every HTTP route: exact Host/Origin matching and JSON-RPC ids.

The SDK's ``TransportSecurityMiddleware`` matches ``name:*`` patterns by string prefix, so
``127.0.0.1:8000@evil.com``, ``localhost:evil`` and ``http://localhost:8000.evil.com`` pass
it, and it guards only the MCP and control routes. ``HostOriginGuard`` parses the header
values (a host name or bracketed IPv6 address, an optional numeric port; an Origin is
``scheme://host[:port]`` and nothing else) and compares name and port exactly, on every
route, ``/healthz`` included. The SDK's check still runs behind it.

``JsonRpcIdGuard`` answers a JSON-RPC message whose ``id`` is not a string or an integer
(an object, a float, ``null``, a boolean) with an Invalid Request error, as JSON-RPC 2.0
asks, where the SDK would take it for a notification and answer a silent 202.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import pydantic_core
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HostOriginGuard", "HostRules", "JsonRpcIdGuard"]

_NAME = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
_HOST = re.compile(_NAME + r"(?::(\d{1,5}))?")
_ORIGIN = re.compile(r"(https?)://" + _NAME + r"(?::(\d{1,5}))?")
_HOST_RULE = re.compile(_NAME + r"(?::(\d{1,5}|\*))?")
_ORIGIN_RULE = re.compile(r"(https?)://" + _NAME + r"(?::(\d{1,5}|\*))?")


@dataclass(frozen=True)
class _Rule:
    scheme: str | None  # origins only
    name: str  # lower case
    port: str | None  # digits, "*" (any port, one must be given) or None (no port)

    def matches(self, scheme: str | None, name: str, port: str | None) -> bool:
        if scheme != self.scheme or name != self.name:
            return False
        if self.port == "*":
            return port is not None
        return port == self.port


def _parse_rule(pattern: str, regex: re.Pattern[str], origin: bool) -> _Rule | None:
    m = regex.fullmatch(pattern.strip())
    if m is None:
        return None  # a pattern we cannot parse matches nothing
    if origin:
        return _Rule(m.group(1).lower(), m.group(2).lower(), m.group(3))
    return _Rule(None, m.group(1).lower(), m.group(2))


class HostRules:
    """Allowed Host and Origin values (``name``, ``name:PORT``, ``name:*``; origins with a scheme)."""

    def __init__(self, hosts: list[str], origins: list[str]):
        self._hosts = [r for p in hosts if (r := _parse_rule(p, _HOST_RULE, False)) is not None]
        self._origins = [r for p in origins if (r := _parse_rule(p, _ORIGIN_RULE, True)) is not None]

    def host_ok(self, value: str | None) -> bool:
        m = _HOST.fullmatch(value) if value else None
        if m is None:
            return False
        name, port = m.group(1).lower(), m.group(2)
        return any(r.matches(None, name, port) for r in self._hosts)

    def origin_ok(self, value: str | None) -> bool:
        if value is None:
            return True  # same-origin requests and non-browser clients send none
        m = _ORIGIN.fullmatch(value)
        if m is None:
            return False
        scheme, name, port = m.group(1).lower(), m.group(2).lower(), m.group(3)
        return any(r.matches(scheme, name, port) for r in self._origins)


class HostOriginGuard:
    """421 for a Host, 403 for an Origin that no rule names exactly, on every HTTP route."""

    def __init__(self, app: ASGIApp, rules: HostRules):
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = origin = None
            hosts = 0
            for k, v in scope["headers"]:
                if k == b"host":
                    host, hosts = v.decode("latin-1"), hosts + 1
                elif k == b"origin":
                    origin = v.decode("latin-1")
            if hosts != 1 or not self.rules.host_ok(host):
                await Response("Invalid Host header", status_code=421)(scope, receive, send)
                return
            if not self.rules.origin_ok(origin):
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _bad_id(message: object) -> str | None:
    """Why a JSON-RPC message's id is not allowed (None when it is fine or absent)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    rid = message["id"]
    if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
        return None
    kind = {dict: "an object", list: "an array", float: "a float", bool: "a boolean"}.get(type(rid), "null")
    return f"Invalid Request: a JSON-RPC id must be a string or an integer, not {kind}"


class JsonRpcIdGuard:
    """Answer POSTed JSON-RPC messages with an object/float/null/boolean id with -32600 (HTTP 400)."""

    def __init__(self, app: ASGIApp, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes or not message.get("more_body", False):
                break
        why = None
        if messages[-1]["type"] == "http.request" and not messages[-1].get("more_body", False):
            try:
                raw = pydantic_core.from_json(body)
            except ValueError:
                raw = None  # the SDK answers the parse error
            batch = raw if isinstance(raw, list) else [raw]
            why = next((w for m in batch if (w := _bad_id(m)) is not None), None)
        if why is not None:
            await JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": why}}, status_code=400
            )(scope, receive, send)
            return
        queue = deque(messages)

        async def replay() -> Message:
            return queue.popleft() if queue else await receive()

        await self.app(scope, replay, send)
