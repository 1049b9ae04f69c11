"""build_mcp_server: one environment as a low-level MCP server, one runtime session per MCP session.

Tools come from the spec at run time, so this uses the SDK's low-level ``Server`` with
``tools/list`` and ``tools/call`` handlers rather than decorated functions. A runtime error is
an ordinary tool result with ``isError`` and the runtime's message, so the agent reads what
to fix; only a bug of ours is logged and reported as an internal error.

Sessions need the initialize handshake (the 2026-07-28 protocol has no sessions), so the
server declines ``server/discover``: SDK clients in ``auto`` mode fall back to ``initialize``.
A request without a handshake connection can still reach a control-created session by
sending the ``X-Envfactory-Session`` header (see docs/serve.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner, serve_loop
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST, METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._version import __version__
from ..errors import RuntimeToolError, ServeError
from ..runtime import Environment
from .config import SESSION_HEADER, ServeConfig
from .pool import PooledSession, SessionBudget, SessionPool, memory_release
from .tools import build_tool_list

__all__ = ["EnvMCPServer", "build_budget", "build_mcp_server"]

logger = logging.getLogger(__name__)

_KEY = "envfactory.session"
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    # The one place we reach into the SDK: the per-client Connection (its ``state`` and
    # ``exit_stack`` are public; the accessor from the request context is not yet).
    return getattr(ctx.session, "_connection", None)


def _header(ctx: ServerRequestContext[Any, Any], name: str) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    return headers.get(name) if headers is not None else None


def _error_result(message: str, code: str) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": message}],
        "isError": True,
        "_meta": {"envfactory/error": code},
    }


class EnvMCPServer(Server[dict[str, Any]]):
    """A low-level MCP server for one Environment; ``pool`` holds its runtime sessions."""

    def __init__(self, env: Environment, *, config: ServeConfig, pool: SessionPool):
        self.env = env
        self.config = config
        self.pool = pool
        self._tools = build_tool_list(env.spec)
        self._input_schemas = {t["name"]: t["inputSchema"] for t in self._tools}
        # streamable-HTTP session id -> the SDK kernel of its connection (for fastpath.ToolCallFastPath)
        self._runners: dict[str, ServerRunner[Any]] = {}
        super().__init__(
            f"envfactory-{env.spec.domain}-{env.name}",
            version=__version__,
            title=f"{env.spec.domain}/{env.name}",
            description=env.spec.description or None,
            instructions=env.spec.description or None,
            lifespan=_sweeping_lifespan,
            get_tool_input_schema=self._input_schemas.get,
        )
        # Registered as the constructor's on_list_tools/on_call_tool would be; this typed entry
        # admits the plain-dict results (HandlerResult) these handlers return, the keywords do not.
        self.add_request_handler("tools/list", types.PaginatedRequestParams, self._list_tools)
        self.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        self.add_request_handler("server/discover", types.RequestParams, _decline_discover)
        # Our middleware only; the SDK's default OpenTelemetry middleware costs ~15% per call.
        self.middleware = [self._on_initialize]

    async def run(
        self, read_stream, write_stream, initialization_options, raise_exceptions: bool = False
    ) -> None:
        """Serve one stream connection in the handshake era only (per-session state needs it)."""
        async with self.lifespan(self) as state:
            try:
                await serve_loop(
                    self,
                    read_stream,
                    write_stream,
                    lifespan_state=state,
                    init_options=initialization_options,
                    raise_exceptions=raise_exceptions,
                )
            finally:
                await write_stream.aclose()

    # ---- sessions ---------------------------------------------------------------------------

    def _bind(
        self, ctx: ServerRequestContext[Any, Any], conn: Connection, attach_id: str | None
    ) -> PooledSession:
        ps = self.pool.attach(attach_id) if attach_id else self.pool.open()
        conn.state[_KEY] = ps
        conn.exit_stack.callback(self.pool.release, ps)
        sid = conn.session_id
        if sid is not None:
            # The same kernel the SDK's loop builds for this connection (serve_connection: no
            # init_options), so a fast-path call takes the very code path of a looped one.
            self._runners[sid] = ServerRunner(self, conn, ctx.lifespan_context)
            conn.exit_stack.callback(self._runners.pop, sid, None)
        return ps

    def fast_runner(self, mcp_session_id: str) -> ServerRunner[Any] | None:
        """The SDK kernel serving this streamable-HTTP session's connection, if it has a runtime session."""
        return self._runners.get(mcp_session_id)

    async def _on_initialize(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            conn = _connection(ctx)
            if (
                conn is not None
                and _KEY not in conn.state
                and conn.protocol_version not in MODERN_PROTOCOL_VERSIONS
            ):
                try:
                    self._bind(ctx, conn, _header(ctx, SESSION_HEADER))
                except ServeError as e:
                    raise MCPError(code=INVALID_REQUEST, message=str(e)) from None
        return await call_next(ctx)

    def _session_for(self, ctx: ServerRequestContext[Any, Any]) -> PooledSession:
        conn = _connection(ctx)
        ps = conn.state.get(_KEY) if conn is not None else None
        if ps is not None:
            self.pool.use(ps)
            return ps
        sid = _header(ctx, SESSION_HEADER)
        if sid:
            return self.pool.use_by_header(sid)
        if conn is not None and conn.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return self._bind(ctx, conn, None)  # a handshake connection whose initialize we did not see
        raise ServeError(
            "this server keeps a separate state per MCP session: connect with the initialize handshake "
            f"(SDK: mode='legacy'), or attach to a control-channel session with the {SESSION_HEADER} header"
        )

    # ---- handlers ---------------------------------------------------------------------------

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        return {"tools": self._tools}

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        out = self._run_call(ctx, params)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # 2026-era results must say they are complete: without it the SDK refuses the result
            # (-32603) after the call ran, and a client would be told an applied write failed.
            out["resultType"] = "complete"
        return out

    def _run_call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        name = params.name
        args = params.arguments or {}
        try:
            ps = self._session_for(ctx)
        except ServeError as e:
            return _error_result(str(e), "session")
        cfg = self.config
        if ps.session.calls >= cfg.max_calls_per_session:
            return _error_result(
                f"this session reached its limit of {cfg.max_calls_per_session} tool calls; start a new session",
                "call_limit",
            )
        if args:
            size = len(_JSON(args))
            if size > cfg.max_argument_bytes:
                return _error_result(
                    f"{name}: arguments are {size} bytes of JSON; the limit is {cfg.max_argument_bytes}",
                    "argument_too_large",
                )
        try:
            out = ps.session.call(name, args)
        except RuntimeToolError as e:
            return _error_result(str(e), e.code)
        except Exception:
            logger.exception("tool %s failed", name)
            return _error_result(
                f"{name}: internal error in the environment; the state is unchanged", "internal"
            )
        return {"content": [{"type": "text", "text": _JSON(out)}], "structuredContent": out, "isError": False}


async def _decline_discover(ctx: ServerRequestContext[Any, Any], params: Any) -> None:
    raise MCPError(
        code=METHOD_NOT_FOUND,
        message="server/discover is not served: this server keeps per-session state; use the initialize handshake",
    )


@asynccontextmanager
async def _sweeping_lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    """Free idle sessions in the background while at least one serving loop runs."""
    pool: SessionPool = server.pool  # type: ignore[attr-defined]
    if getattr(pool, "_sweeper", False):
        yield {}
        return
    interval = min(max(pool.idle_timeout / 4, 0.05), 30.0)

    async def sweep() -> None:
        while True:
            await anyio.sleep(interval)
            pool.sweep()
            memory_release.release()  # what sessions that ended since the last trim freed

    pool._sweeper = True  # type: ignore[attr-defined]
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(sweep)
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()
    finally:
        pool._sweeper = False  # type: ignore[attr-defined]


def build_budget(config: ServeConfig) -> SessionBudget:
    """The session and memory budget ``config`` sets, to share between the pools of one server."""
    mem = config.max_memory_mb
    return SessionBudget(
        max_sessions=config.max_total_sessions, max_memory_bytes=None if mem is None else mem << 20
    )


def build_mcp_server(
    env: Environment,
    *,
    config: ServeConfig | None = None,
    pool: SessionPool | None = None,
    budget: SessionBudget | None = None,
) -> EnvMCPServer:
    """A low-level MCP server for ``env``: each MCP session gets its own runtime Session.

    ``pool`` (default: a new one sized by ``config``) holds the runtime sessions; the HTTP
    app shares it with the control channel. ``budget`` (default: a new one from ``config``)
    caps sessions and memory over every environment that shares it.
    """
    config = config or ServeConfig()
    if pool is None:
        initial = None
        if config.initial_state is not None:
            from .state import load_state_file

            initial = load_state_file(env, config.initial_state)
        pool = SessionPool(
            env,
            max_sessions=config.max_sessions,
            idle_timeout=config.idle_timeout,
            initial=initial,
            budget=budget or build_budget(config),
        )
    return EnvMCPServer(env, config=config, pool=pool)
