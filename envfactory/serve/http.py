"""Streamable HTTP: every environment of a domain at /mcp/<env> in one process, plus /control.

Security: binds loopback by default; exact Host/Origin checks against DNS rebinding on every
route (``guard.HostOriginGuard``, then the SDK's TransportSecuritySettings); an optional bearer token on /mcp; a body
size limit (413); the session cap answers 503 at the transport and a JSON-RPC error in-band.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ServeError
from ..runtime import Environment
from .config import ServeConfig
from .control import build_control_routes
from .guard import HostOriginGuard, HostRules, JsonRpcIdGuard
from .pool import SessionPool
from .server import EnvMCPServer, build_budget, build_mcp_server

if TYPE_CHECKING:
    from .fastpath import ToolCallFastPath

__all__ = ["build_http_app", "serve_http", "mcp_path", "bind_listener"]

logger = logging.getLogger(__name__)


def mcp_path(env_name: str) -> str:
    return f"/mcp/{env_name}"


class _BearerGuard:
    """Refuse /mcp requests without ``Authorization: Bearer <token>`` (401, before any parsing)."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            given = b""
            for k, v in scope["headers"]:
                if k == b"authorization":
                    given = v
                    break
            scheme, _, tok = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(tok.strip(), self._token):
                resp = JSONResponse(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32001,
                            "message": "unauthorized: send 'Authorization: Bearer <token>'",
                        },
                    },
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="envfactory-mcp"'},
                )
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


_ANY_METHOD = ["GET", "POST", "DELETE", "PUT", "PATCH"]


_fast_path_import_error: list[str] = []  # reported once per process


def _fast_path_class() -> Any:
    """``ToolCallFastPath``, or None when this mcp SDK lacks a module it imports (then the SDK serves all)."""
    try:
        from .fastpath import ToolCallFastPath
    except ImportError as e:
        if not _fast_path_import_error:
            _fast_path_import_error.append(str(e))
            logger.warning(
                "serve fast path off: this mcp SDK lacks what it imports (%s); tools/call goes "
                "through the SDK (same answers, more CPU)",
                e,
            )
        return None
    return ToolCallFastPath


def _endpoint_list(paths: list[str]) -> Callable[[Request], Any]:
    """A 404 whose body (JSON-RPC error shaped, for MCP clients) lists the environment endpoints."""

    async def answer(request: Request) -> Response:
        if request.url.path.rstrip("/") in paths:  # a trailing slash: where Starlette would redirect
            return RedirectResponse(request.url.replace(path=request.url.path.rstrip("/")), status_code=307)
        message = (
            f"no MCP endpoint at {request.url.path}: each environment is served at its own path; "
            f"use one of {', '.join(paths)}"
        )
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32601, "message": message, "data": {"endpoints": paths}},
            },
            status_code=404,
        )

    return answer


def build_http_app(envs: Sequence[Environment], config: ServeConfig | None = None) -> Starlette:
    """One ASGI app serving each environment at /mcp/<env> (and /control when a control token is set).

    ``app.state.servers`` maps env name to its EnvMCPServer (``.pool`` holds its sessions);
    ``app.state.fast_paths`` to the ToolCallFastPath answering its ``tools/call`` POSTs (JSON mode).
    """
    config = config or ServeConfig()
    if not envs:
        raise ServeError("no environments to serve")
    names = [e.name for e in envs]
    if len(set(names)) != len(names):
        raise ServeError(f"environment names must be unique to share one server: {names}")
    hosts, origins = config.host_patterns()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    servers: dict[str, EnvMCPServer] = {}
    fast_paths: dict[str, ToolCallFastPath] = {}
    managers: list[StreamableHTTPSessionManager] = []
    routes: list[Route] = []
    budget = build_budget(config)  # one for the process: sessions and memory over every environment
    for env in envs:
        server = build_mcp_server(env, config=config, budget=budget)
        manager = StreamableHTTPSessionManager(
            app=server,
            json_response=config.json_response,
            security_settings=security,
            max_request_body_size=config.max_body_bytes,
            session_idle_timeout=config.idle_timeout,
            max_sessions=config.max_sessions,
        )
        servers[env.name] = server
        managers.append(manager)
        endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
        fast_path_cls = _fast_path_class() if config.fast_path and config.json_response else None
        if fast_path_cls is not None:  # the fast path answers plain JSON only
            endpoint = fast_paths[env.name] = fast_path_cls(
                endpoint, manager, server, security, config.max_body_bytes
            )
        endpoint = JsonRpcIdGuard(endpoint, config.max_body_bytes)
        routes.append(Route(mcp_path(env.name), endpoint=endpoint))
    pools: dict[str, SessionPool] = {n: s.pool for n, s in servers.items()}
    routes += build_control_routes(pools, config, security)

    async def healthz(request: Any) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    routes.append(Route("/healthz", healthz, methods=["GET"]))
    # A client pointed at /mcp (or a misspelt environment) learns where the endpoints are.
    no_env = _endpoint_list([mcp_path(n) for n in names])
    routes += [
        Route("/mcp", no_env, methods=_ANY_METHOD),
        Route("/mcp/{rest:path}", no_env, methods=_ANY_METHOD),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for m in managers:
                await stack.enter_async_context(m.run())
            try:
                yield
            finally:
                for s in servers.values():
                    s.pool.close_all()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.servers = servers
    app.state.fast_paths = fast_paths
    app.state.budget = budget
    if config.token:
        app.add_middleware(_BearerGuard, token=config.token)
    app.add_middleware(HostOriginGuard, rules=HostRules(hosts, origins))  # outermost: every route
    return app


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one; read it from ``getsockname()``).

    Listening already, so a client told the port connects at once: its request waits in the
    backlog until the server's loop accepts it.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog
    except OSError as e:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
    sock.set_inheritable(True)
    return sock


def serve_http(
    envs: Sequence[Environment],
    config: ServeConfig | None = None,
    *,
    log_level: str = "warning",
    on_listening: Callable[[str, int], None] | None = None,
) -> None:
    """Run the HTTP server until interrupted (uvicorn on ``config.host:config.port``).

    The socket listens before the server starts, so ``on_listening(host, port)`` is told the
    real port (``config.port`` 0 picks a free one) and the caller may connect right away.
    """
    import uvicorn

    config = config or ServeConfig()
    app = build_http_app(envs, config)
    sock = bind_listener(config.host, config.port)
    if on_listening is not None:
        on_listening(config.host, sock.getsockname()[1])
    # uvicorn's "auto" picks uvloop and httptools when they are installed (the `uvicorn[standard]`
    # extras), else asyncio and h11; with them the server spends about a third less CPU per call.
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=config.host,
            port=config.port,
            log_level=log_level,
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=2,
            loop="auto",
            http="auto",
        )
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
