"""``envfactory bench serve``: tool calls through real MCP servers and real SDK clients.

Streamable HTTP: one server process on 127.0.0.1 (``python -m envfactory serve --transport
http``), measured twice per level: client ``sdk`` is N concurrent official-SDK clients in this
process, each its own MCP session (client-side SDK work included); client ``raw`` is N sessions
driven by a lean JSON-RPC load generator (``loadgen.py``: raw HTTP/1.1 keep-alive on asyncio) in a separate process (initialize, then
plain ``tools/call`` POSTs, every answer checked), which shows what the server itself sustains
when the clients are not the bottleneck. stdio: N server processes, one SDK client each. The
floor is the in-process runtime on the same call mix, measured in the same run. Every loop is
bounded by a call count and a deadline.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..runtime import load_environment
from .loadgen import hostile_call, latency_ms

__all__ = [
    "ServeBenchReport",
    "ServeFigure",
    "ServeMemoryFigure",
    "hostile_call",
    "run_serve_bench",
    "run_serve_memory_bench",
]


@dataclass
class ServeFigure:
    transport: str
    sessions: int
    calls: int
    seconds: float
    p50_ms: float
    p99_ms: float
    client: str = ""
    """``sdk``: official MCP SDK clients in the bench process; ``raw``: the lean load generator process."""
    server_path: str = ""
    """HTTP only: ``fast`` (the tools/call fast path, the default) or ``sdk`` (``--no-fast-path``)."""

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0


@dataclass
class ServeBenchReport:
    env: str
    inprocess: ServeFigure
    rows: list[ServeFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _mix(flight_ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for i, fid in enumerate(flight_ids):
        out.append(("get_flight", {"flight_id": fid}))
        if i % 2:
            out.append(("search_flights", {"limit": 5, "offset": i % 50}))
    return out


def _figure(transport: str, sessions: int, lat_ns: list[int], seconds: float) -> ServeFigure:
    if not lat_ns:
        return ServeFigure(transport, sessions, 0, seconds, 0.0, 0.0)
    p50, p99 = latency_ms(lat_ns)
    return ServeFigure(transport, sessions, len(lat_ns), seconds, p50, p99)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _drive(
    clients: Sequence[Any],
    mix: list[tuple[str, dict[str, Any]]],
    calls: int,
    max_seconds: float,
    transport: str,
) -> ServeFigure:
    per = max(1, calls // len(clients))
    lat: list[int] = []
    deadline = time.perf_counter() + max_seconds

    async def worker(k: int, client: Any) -> None:
        for i in range(per):
            if time.perf_counter() > deadline:
                return
            name, args = mix[(k * 7919 + i) % len(mix)]
            t0 = time.perf_counter_ns()
            r = await client.call_tool(name, args)
            lat.append(time.perf_counter_ns() - t0)
            if r.is_error:
                raise RuntimeError(f"bench call {name} failed: {r.content[0].text}")

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for k, c in enumerate(clients):
            tg.start_soon(worker, k, c)
    fig = _figure(transport, len(clients), lat, time.perf_counter() - t0)
    fig.client = "sdk"
    return fig


def _server_cmd(env_dir: Path, transport: str, port: int = 0, fast_path: bool = True) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "envfactory",
        "serve",
        "--domain",
        env_dir.parent.name,
        "--env",
        env_dir.name,
        "--transport",
        transport,
        "--max-sessions",
        "1000",
        "--max-calls",
        "100000000",
    ]
    if transport == "stdio":
        cmd += ["--quiet"]
    if transport == "http":
        cmd += ["--port", str(port)]
        if not fast_path:
            cmd += ["--no-fast-path"]
    return cmd


def _bench_http(
    env_dir: Path,
    root: Path,
    mix,
    calls: int,
    levels: Sequence[int],
    max_seconds: float,
    server_path: str = "fast",
) -> list[ServeFigure]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    # stderr to a file, not a pipe: nobody reads a pipe while the server runs, and a full one blocks it
    errlog = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        _server_cmd(env_dir, "http", port, fast_path=server_path == "fast"),
        env={**os.environ, "ENVFACTORY_ROOT": str(root)},
        stdout=subprocess.DEVNULL,
        stderr=errlog,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_until_healthy(proc, errlog, base)
        url = f"{base}/mcp/{env_dir.name}"

        async def level(n: int) -> ServeFigure:
            limits = httpx2.Limits(max_connections=n + 4, max_keepalive_connections=n + 4)
            async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
                from contextlib import AsyncExitStack

                async with AsyncExitStack() as stack:
                    clients = [
                        await stack.enter_async_context(
                            Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None)
                        )
                        for _ in range(n)
                    ]
                    for c in clients:  # warm up: tools/list (output schemas) and one call each
                        await c.call_tool(*mix[0])
                    return await _drive(clients, mix, calls, max_seconds, "http")

        rows = []
        for n in levels:
            rows.append(anyio.run(level, n))
            rows.append(_raw_level(url, n, mix, calls, max_seconds))
        for r in rows[-2 * len(levels) :]:
            r.server_path = server_path
        return rows
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errlog.close()


def _raw_level(url: str, sessions: int, mix, calls: int, max_seconds: float) -> ServeFigure:
    """One level of the lean load generator, run in its own process (so it has its own GIL)."""
    args = json.dumps(
        {"url": url, "sessions": sessions, "mix": mix, "calls": calls, "max_seconds": max_seconds}
    )
    out = subprocess.run(
        [sys.executable, "-m", "envfactory.bench.loadgen", args],
        capture_output=True,
        text=True,
        timeout=max_seconds + 60,
    )
    if out.returncode != 0:
        raise RuntimeError(f"bench load generator failed: {out.stderr[-2000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return ServeFigure(
        "http", sessions, got["calls"], got["seconds"], got["p50_ms"], got["p99_ms"], client="raw"
    )


def _bench_stdio(
    env_dir: Path, root: Path, mix, calls: int, levels: Sequence[int], max_seconds: float
) -> list[ServeFigure]:
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters

    cmd = _server_cmd(env_dir, "stdio")
    params = StdioServerParameters(
        command=cmd[0], args=cmd[1:], env={**os.environ, "ENVFACTORY_ROOT": str(root)}
    )

    async def level(n: int) -> ServeFigure:
        async with AsyncExitStack() as stack:
            clients = []
            for _ in range(n):
                clients.append(await stack.enter_async_context(Client(params, mode="legacy", cache=None)))
            for c in clients:
                await c.call_tool(*mix[0])
            return await _drive(clients, mix, calls, max_seconds, "stdio")

    with open(os.devnull, "w") as devnull:  # the servers' stderr banners
        old = sys.stderr
        try:
            sys.stderr = devnull
            return [anyio.run(level, n) for n in levels]
        finally:
            sys.stderr = old


def run_serve_bench(
    env_dir: str | Path,
    *,
    calls: int = 2000,
    levels: Sequence[int] = (1, 8, 32),
    transports: Sequence[str] = ("http", "stdio"),
    max_seconds: float = 20.0,
    server_paths: Sequence[str] = ("fast",),
) -> ServeBenchReport:
    """Measure; ``server_paths`` ("fast", "sdk") runs the HTTP rows once per server path, to compare them."""
    env_dir = Path(env_dir).resolve()
    root = env_dir.parents[2]
    env = load_environment(env_dir)
    with env.new_session() as s:
        fids = [r[0] for r in s.query("SELECT flight_id FROM flight ORDER BY flight_id LIMIT 200")]
    mix = _mix(fids)
    with env.new_session() as s:
        lat = []
        t0 = time.perf_counter()
        for i in range(calls):
            name, args = mix[i % len(mix)]
            a = time.perf_counter_ns()
            s.call(name, args)
            lat.append(time.perf_counter_ns() - a)
        inproc = _figure("in-process", 1, lat, time.perf_counter() - t0)
    rep = ServeBenchReport(env=f"{env.spec.domain}/{env.name}", inprocess=inproc, rows=[inproc])
    if "http" in transports:
        for path in server_paths:
            rep.rows += _bench_http(env_dir, root, mix, calls, levels, max_seconds, server_path=path)
    if "stdio" in transports:
        rep.rows += _bench_stdio(env_dir, root, mix, calls, levels, max_seconds)
    rep.notes.append(
        f"{os.cpu_count()} CPU cores shared by the server process(es) and the clients; "
        "client sdk: official SDK clients in this process, their SDK work (output-schema validation, "
        "JSON-RPC framing) is in the figures; client raw: a lean JSON-RPC load generator (raw HTTP/1.1 "
        "keep-alive, one connection per session) in a separate process, the same server and call mix"
    )
    return rep


# ---- memory: server RSS under many sessions of hostile calls -------------------------------------


@dataclass
class ServeMemoryFigure:
    """Server resident memory before, with ``sessions`` open after ``calls`` hostile calls each, and after they close."""

    sessions: int
    calls_per_session: int
    opened: int
    refused: int
    calls: int
    call_errors: int
    rss_start_mib: float
    rss_open_mib: float
    rss_closed_mib: float
    memory_budget_mib: int | None
    seconds: float


def _rss_mib(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def _wait_mcp_sessions(base: str, env_name: str, token: str, want: int, seconds: float) -> None:
    import httpx2

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = httpx2.get(
            f"{base}/control/{env_name}/sessions", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        if r.status_code == 200 and r.json()["mcp_sessions"] <= want:
            return
        time.sleep(0.1)


def run_serve_memory_bench(
    env_dir: str | Path,
    *,
    sessions: int = 1000,
    calls: int = 100,
    workers: int = 8,
    max_memory_mb: int | None = None,
    max_seconds: float = 900.0,
) -> ServeMemoryFigure:
    """Server RSS after ``sessions`` sessions x ``calls`` hostile calls (all on 127.0.0.1), and after they close.

    The server runs as ``envfactory serve --transport http`` with its default memory budget
    (or ``max_memory_mb``); sessions it refuses are counted, not failures.
    """

    env_dir = Path(env_dir).resolve()
    root = env_dir.parents[2]
    port, token = _free_port(), "bench-memory-control"
    cmd = _server_cmd(env_dir, "http", port) + [
        "--max-sessions",
        str(max(sessions, 1)),
        "--control-token",
        token,
    ]
    if max_memory_mb is not None:
        cmd += ["--max-memory-mb", str(max_memory_mb)]
    errlog = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        cmd, env={**os.environ, "ENVFACTORY_ROOT": str(root)}, stdout=subprocess.DEVNULL, stderr=errlog
    )
    base, url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/mcp/{env_dir.name}"
    load = None
    try:
        _wait_until_healthy(proc, errlog, base)
        start = _rss_mib(proc.pid)
        t0 = time.perf_counter()
        args = json.dumps(
            {"mode": "memory", "url": url, "sessions": sessions, "calls": calls, "workers": workers}
        )
        load = subprocess.Popen(
            [sys.executable, "-m", "envfactory.bench.loadgen", args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert load.stdin is not None and load.stdout is not None
        line = load.stdout.readline()
        if not line:
            raise RuntimeError("bench memory load generator failed")
        got = json.loads(line)
        seconds = time.perf_counter() - t0
        open_rss = _rss_mib(proc.pid)
        load.stdin.write("close\n")
        load.stdin.flush()
        load.stdout.readline()
        load.wait(max_seconds)
        _wait_mcp_sessions(base, env_dir.name, token, 0, 60)
        closed = _rss_mib(proc.pid)
        budget = 4096 if max_memory_mb is None else (max_memory_mb or None)
        return ServeMemoryFigure(
            sessions,
            calls,
            got["opened"],
            got["refused"],
            got["calls"],
            got["call_errors"],
            start,
            open_rss,
            closed,
            budget,
            seconds,
        )
    finally:
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errlog.close()


def _wait_until_healthy(proc: Any, errlog: Any, base: str, timeout_s: float = 60) -> None:
    """Wait (bounded) until the bench server at ``base`` answers /healthz; its log tail if it exits."""
    import httpx2

    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            errlog.seek(0)
            raise RuntimeError(f"bench server exited: {errlog.read().decode(errors='replace')[-2000:]}")
        try:
            if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"bench server did not start within {timeout_s:.0f} s")
        time.sleep(0.1)
