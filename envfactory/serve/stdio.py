"""stdio: one environment per process; stdout carries only the protocol."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from ..runtime import Environment
from .config import ServeConfig
from .server import build_mcp_server

__all__ = ["serve_stdio"]


def serve_stdio(env: Environment, config: ServeConfig | None = None) -> None:
    """Serve ``env`` on this process's stdin/stdout until the client closes it."""
    server = build_mcp_server(env, config=config or ServeConfig())

    async def main() -> None:
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            server.pool.close_all()

    anyio.run(main)
