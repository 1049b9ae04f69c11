"""A fast path for ``tools/call`` POSTs on established streamable-HTTP sessions.

The SDK's stateful transport carries every request through two memory streams, a router
task, a dispatcher task and back (about 1.5 ms of CPU per call, against 0.02 ms for the
runtime). For the one request an agent makes over and over, ``tools/call`` on a session
it already initialized, this ASGI layer answers directly: it checks what the transport
checks (Host/Origin, Accept, Content-Type, body size, the session's owner, that it is
neither terminated nor expired), validates the envelope with the SDK's own
``jsonrpc_message_adapter``, and runs the request through the SDK's own ``ServerRunner``
kernel for that session's ``Connection`` (surface validation, the init gate, params
validation, our middleware and handler, result validation and serialization). The answer
is the same ``JSONRPCResponse``/``JSONRPCError`` the transport would send, byte for byte,
with the same headers.

Anything else (initialize, tools/list, notifications, GET streams, DELETE, a session the
server does not know, a body that is not a single ``tools/call`` request, any failed
check) goes to the SDK unchanged, with the body replayed when it was already read.

The SDK internals this reads are private, so they are feature-detected (``MANAGER_STATE``,
``TRANSPORT_STATE``, ``RUNNER_API``): when an SDK release no longer has one, the fast path
logs it once and sends every request through the SDK; it never fails a request for it.
``pyproject.toml`` pins ``mcp`` to the minor version these were read from.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import (
    CONTENT_TYPE_JSON,
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from .server import EnvMCPServer

__all__ = ["ToolCallFastPath", "sdk_session_transport", "hold_sdk_session"]

logger = logging.getLogger(__name__)

_SESSION = MCP_SESSION_ID_HEADER.encode()
_VERSION = b"mcp-protocol-version"
_LENGTH = b"content-length"
_CTYPE = b"content-type"
# What the loop dispatcher builds for a JSON-response POST (``_default_transport_builder``).
_TRANSPORT = TransportContext(kind="jsonrpc", can_send_request=False)


# ---- the SDK internals we depend on (one place; tests/serve/test_fastpath.py guards them) ----------

# What the fast path reads or writes, on whom (mcp 2.3). A name missing turns the fast path off.
MANAGER_STATE = ("_server_instances", "_session_owners", "json_response")
TRANSPORT_STATE = ("_idle_timeout", "_requests_in_flight", "idle_scope", "is_terminated")
RUNNER_API = ("on_request",)
_reported: set[str] = set()


def missing_sdk_state(obj: object, names: tuple[str, ...]) -> list[str]:
    """The names in ``names`` that ``obj`` lacks (an SDK release renamed or dropped them)."""
    return [n for n in names if not hasattr(obj, n)]


def _report_once(reason: str) -> None:
    if reason not in _reported:
        _reported.add(reason)
        logger.warning(
            "serve fast path off: %s; tools/call goes through the SDK (same answers, more CPU)", reason
        )


def sdk_session_transport(
    manager: StreamableHTTPSessionManager, session_id: str, scope: Scope
) -> StreamableHTTPServerTransport | None:
    """The transport of a live stateful session that this request's credential may use, else None.

    Private SDK state (mcp 2.3 ``StreamableHTTPSessionManager._server_instances`` and
    ``_session_owners``): the manager exposes no lookup. ``_handle_stateful_request`` makes the
    same two checks.
    """
    transport = manager._server_instances.get(session_id)
    if transport is None:
        return None
    user = scope.get("user")
    requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
    if requestor != manager._session_owners.get(session_id):
        return None
    return transport


@contextmanager
def hold_sdk_session(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """Count a request in flight on ``transport`` exactly as its ``handle_request`` does.

    Private SDK state (mcp 2.3 ``_requests_in_flight``, ``_idle_timeout``): while any request is
    in flight the idle countdown is suspended; it restarts when the last one completes.
    """
    idle = transport.idle_scope
    timeout = transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


# ---- the fast path --------------------------------------------------------------------------------


@dataclass
class _DispatchContext:
    """The per-request ``DispatchContext`` of a JSON-response POST.

    A JSON body carries only the response: the SDK's message router drops notifications and
    progress scoped to the request, and a server-initiated request raises NoBackChannelError.
    """

    request_id: RequestId
    message_metadata: ServerMessageMetadata
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        logger.debug("dropped %s related to request %r: JSON response mode", method, self.request_id)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    queue = deque(messages)

    async def replay() -> Message:
        if queue:
            return queue.popleft()
        return await receive()

    return replay


def _content_type_is_json(value: str) -> bool:
    # As StreamableHTTPServerTransport._check_content_type.
    return any(part.strip() == CONTENT_TYPE_JSON for part in value.split(";")[0].split(","))


class ToolCallFastPath:
    """ASGI app in front of the SDK's streamable-HTTP app of one environment (see the module doc)."""

    def __init__(
        self,
        sdk_app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        server: EnvMCPServer,
        security: TransportSecuritySettings,
        max_body_bytes: int,
    ):
        self.sdk_app = sdk_app
        self.manager = manager
        self.server = server
        self.max_body_bytes = max_body_bytes
        self._security = TransportSecurityMiddleware(security)
        self.fast_calls = 0  # requests answered here (tests and the benchmark read it)
        gaps = [f"StreamableHTTPSessionManager.{n}" for n in missing_sdk_state(manager, MANAGER_STATE)] + [
            f"ServerRunner.{n}" for n in missing_sdk_state(ServerRunner, RUNNER_API)
        ]
        # why the fast path is off (None: on); every request then goes to the SDK
        self.disabled: str | None = None
        if gaps:
            self._disable(f"this mcp SDK has no {', '.join(gaps)}")

    def _disable(self, reason: str) -> None:
        self.disabled = reason
        _report_once(reason)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.disabled is not None
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or not self.manager.json_response
        ):
            await self.sdk_app(scope, receive, send)
            return
        sid = version = length = ctype = None
        for k, v in scope["headers"]:
            if k == _SESSION:
                sid = v
            elif k == _VERSION:
                version = v
            elif k == _LENGTH:
                length = v
            elif k == _CTYPE:
                ctype = v
        if sid is None or ctype is None or not _content_type_is_json(ctype.decode("latin-1")):
            await self.sdk_app(scope, receive, send)
            return
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.sdk_app(scope, receive, send)  # the 2026-era entry
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            await self.sdk_app(scope, receive, send)  # the SDK answers 413
            return
        session_id = sid.decode("latin-1")
        runner = self.server.fast_runner(session_id)
        transport = sdk_session_transport(self.manager, session_id, scope) if runner is not None else None
        if transport is not None:
            gaps = missing_sdk_state(transport, TRANSPORT_STATE)
            if gaps:
                self._disable(f"this mcp SDK's StreamableHTTPServerTransport has no {', '.join(gaps)}")
                await self.sdk_app(scope, receive, send)
                return
        if (
            runner is None
            or transport is None
            or transport.is_terminated
            or (transport.idle_scope is not None and transport.idle_scope.cancel_called)
        ):
            await self.sdk_app(scope, receive, send)
            return
        request = Request(scope, receive)
        if await self._security.validate_request(request, is_post=True) is not None:
            await self.sdk_app(scope, receive, send)  # the SDK answers 421/403/400
            return
        if not check_accept_headers(request)[0]:
            await self.sdk_app(scope, receive, send)  # the SDK answers 406
            return
        with hold_sdk_session(transport):
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
            if (
                messages[-1]["type"] != "http.request"
                or messages[-1].get("more_body", False)
                or len(body) > self.max_body_bytes
                or transport.is_terminated
            ):
                await self.sdk_app(scope, _replaying(messages, receive), send)
                return
            req = self._tool_call(body)
            if req is None:
                await self.sdk_app(scope, _replaying(messages, receive), send)
                return
            self.fast_calls += 1
            answer = await self._run(runner, req, Request(scope, _replaying(messages, receive)))
            response = Response(
                answer.model_dump_json(by_alias=True, exclude_unset=True),
                status_code=200,
                headers={"Content-Type": CONTENT_TYPE_JSON, MCP_SESSION_ID_HEADER: session_id},
            )
            await response(scope, receive, send)

    @staticmethod
    def _tool_call(body: bytes) -> JSONRPCRequest | None:
        """The body as a ``tools/call`` JSONRPCRequest, or None (the SDK answers it, errors included)."""
        try:
            raw = pydantic_core.from_json(body)
        except ValueError:
            return None
        if not isinstance(raw, dict) or raw.get("method") != "tools/call":
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError:
            return None
        return message if isinstance(message, JSONRPCRequest) else None

    async def _run(
        self, runner: ServerRunner[Any], req: JSONRPCRequest, request: Request
    ) -> JSONRPCResponse | JSONRPCError:
        """What the SDK's dispatcher (``JSONRPCDispatcher._handle_request``) writes for this request."""
        dctx = _DispatchContext(
            req.id, ServerMessageMetadata(request_context=request, can_send_request=False)
        )
        try:
            result = await runner.on_request(dctx, req.method, req.params)  # type: ignore[arg-type]
        except Exception as e:
            error = handler_exception_to_error_data(e)
            if error is None:
                logger.exception("handler for %r raised", req.method)
                error = ErrorData(code=0, message=str(e))
            return JSONRPCError(jsonrpc="2.0", id=req.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=req.id, result=result)
