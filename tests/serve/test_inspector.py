"""The MCP Inspector CLI (Node) against the stdio server: list and call tools.

Needs Node.js >= 22 and the inspector from ``scripts/install_inspector.sh`` (cache outside the
repository). Skipped only when that install is absent and ``CI`` is not set; in CI it must run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow  # installs Node and the Inspector from the npm registry on first use

CACHE = Path(os.environ.get("ENVFACTORY_NODE_CACHE", Path.home() / ".cache" / "envfactory-node"))
NODE = CACHE / "node_modules" / "node" / "bin" / "node"
INSPECTOR = CACHE / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"


_INSTALL_TRIED: list[str] = []


def _inspector() -> list[str]:
    if not (NODE.exists() and INSPECTOR.exists()) and not _INSTALL_TRIED:
        # Install on demand (npm registry only), once per test session, so that the plain
        # test command runs this test on a fresh machine too.
        p = subprocess.run(
            ["bash", str(REPO / "scripts" / "install_inspector.sh")],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "ENVFACTORY_NODE_CACHE": str(CACHE)},
        )
        _INSTALL_TRIED.append(p.stderr[-2000:] if p.returncode else "")
    if not (NODE.exists() and INSPECTOR.exists()):
        why = (_INSTALL_TRIED or [""])[0]
        if os.environ.get("CI"):
            pytest.fail(f"MCP Inspector could not be installed under {CACHE}: {why}")
        pytest.skip(f"MCP Inspector could not be installed under {CACHE} (no npm registry?): {why}")
    return [str(NODE), str(INSPECTOR)]


def run_inspector(*args: str) -> dict:
    server = [
        sys.executable,
        "-m",
        "envfactory",
        "serve",
        "--domain",
        "travel",
        "--env",
        "trip_desk",
        "--transport",
        "stdio",
    ]
    env = {**os.environ, "ENVFACTORY_ROOT": str(REPO), "PATH": f"{NODE.parent}:{os.environ.get('PATH', '')}"}
    p = subprocess.run(
        [*_inspector(), "--cli", *server, *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:] + p.stdout[-3000:]
    return json.loads(p.stdout)


def test_inspector_lists_tools():
    out = run_inspector("--method", "tools/list")
    tools = {t["name"]: t for t in out["tools"]}
    assert "search_flights" in tools
    assert tools["get_flight"]["annotations"]["readOnlyHint"] is True
    assert tools["search_flights"]["inputSchema"]["type"] == "object"


def test_inspector_calls_a_tool():
    out = run_inspector(
        "--method", "tools/call", "--tool-name", "get_flight", "--tool-arg", "flight_id=FL00001"
    )
    assert out.get("isError") in (None, False)
    assert out["structuredContent"]["flight_id"] == "FL00001"
    bad = run_inspector("--method", "tools/call", "--tool-name", "get_flight", "--tool-arg", "flight_id=FL9")
    assert bad["isError"] is True and "not found" in bad["content"][0]["text"]
