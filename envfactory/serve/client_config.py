"""Ready-to-paste client configuration: stdio command lines, mcp.json entries, HTTP URLs."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config import ServeConfig

__all__ = ["build_client_config"]


def build_client_config(
    domain: str, envs: Sequence[str], config: ServeConfig, *, command: Sequence[str], root: Path
) -> dict[str, Any]:
    """What an MCP client needs to reach each environment.

    ``command`` launches envfactory (e.g. ``[".venv/bin/envfactory"]``); ``root`` is the
    project folder (passed as ENVFACTORY_ROOT so the server finds ``domains/``).
    """
    host = config.host if config.host not in ("0.0.0.0", "::") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    base = f"http://{host}:{config.port}"
    servers: dict[str, Any] = {}
    stdio: dict[str, str] = {}
    http: dict[str, str] = {}
    for name in envs:
        args = [*command[1:], "serve", "--domain", domain, "--env", name, "--transport", "stdio"]
        key = f"{domain}-{name}"
        servers[key] = {"command": command[0], "args": args, "env": {"ENVFACTORY_ROOT": str(root)}}
        stdio[name] = f"ENVFACTORY_ROOT={shlex.quote(str(root))} " + shlex.join([command[0], *args])
        http[name] = f"{base}/mcp/{name}"
        servers[f"{key}-http"] = {"type": "http", "url": http[name]}
        if config.token:
            servers[f"{key}-http"]["headers"] = {"Authorization": f"Bearer {config.token}"}
    out: dict[str, Any] = {"stdio": stdio, "mcp.json": {"mcpServers": servers}, "http": http}
    if config.control_token:
        out["control"] = {n: f"{base}/control/{n}/sessions" for n in envs}
    return out
