"""Serve environments over MCP (stdio and streamable HTTP), with a control channel for harnesses."""

from .client_config import build_client_config
from .config import SESSION_HEADER, ServeConfig
from .http import build_http_app, mcp_path, serve_http
from .pool import PooledSession, SessionBudget, SessionGoneError, SessionLimitError, SessionPool
from .server import EnvMCPServer, build_mcp_server
from .state import StateError, load_state_bytes, load_state_file
from .stdio import serve_stdio
from .tools import build_tool_list, is_idempotent, tool_annotations

__all__ = [
    "SESSION_HEADER",
    "EnvMCPServer",
    "PooledSession",
    "ServeConfig",
    "SessionBudget",
    "SessionGoneError",
    "SessionLimitError",
    "SessionPool",
    "StateError",
    "build_client_config",
    "build_http_app",
    "build_mcp_server",
    "build_tool_list",
    "is_idempotent",
    "load_state_bytes",
    "load_state_file",
    "mcp_path",
    "serve_http",
    "serve_stdio",
    "tool_annotations",
]
