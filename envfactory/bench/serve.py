"""``envfactory bench serve``: tool calls through real MCP servers and real SDK clients.

Streamable HTTP: one server process on 127.0.0.1 (``python -m envfactory serve --transport
http``), N concurrent SDK clients in this process, each its own MCP session. stdio: N server
processes, one SDK client each. The floor is the in-process runtime on the same call mix,
measured in the same run. Every loop is bounded by a call count and a deadline.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import anyio

from ..runtime import load_environment

__all__ = ["ServeBenchReport", "ServeFigure", "run_serve_bench"]


@dataclass
class ServeFigure:
    transport: str
    sessions: int
    calls: int
    seconds: float
    p50_ms: float
    p99_ms: float

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
    out = []
    for i, fid in enumerate(flight_ids):
        out.append(("get_flight", {"flight_id": fid}))
        if i % 2:
            out.append(("search_flights", {"limit": 5, "offset": i % 50}))
    return out


def _figure(transport: str, sessions: int, lat_ns: list[int], seconds: float) -> ServeFigure:
    if not lat_ns:
        return ServeFigure(transport, sessions, 0, seconds, 0.0, 0.0)
    lat_ns.sort()
    p99 = lat_ns[min(len(lat_ns) - 1, int(len(lat_ns) * 0.99))]
    return ServeFigure(transport, sessions, len(lat_ns), seconds, statistics.median(lat_ns) / 1e6, p99 / 1e6)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _drive(clients: Sequence[Any], mix: list[tuple[str, dict[str, Any]]], calls: int, max_seconds: float,
                 transport: str) -> ServeFigure:
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
    return _figure(transport, len(clients), lat, time.perf_counter() - t0)


def _server_cmd(env_dir: Path, transport: str, port: int = 0) -> list[str]:
    cmd = [sys.executable, "-m", "envfactory", "serve", "--domain", env_dir.parent.name, "--env", env_dir.name,
           "--transport", transport, "--max-sessions", "1000", "--max-calls", "100000000"]
    if transport == "http":
        cmd += ["--port", str(port)]
    return cmd


def _bench_http(env_dir: Path, root: Path, mix, calls: int, levels: Sequence[int], max_seconds: float) -> list[ServeFigure]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    proc = subprocess.Popen(_server_cmd(env_dir, "http", port), env={**os.environ, "ENVFACTORY_ROOT": str(root)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"bench server exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("bench server did not start within 60 s")
            time.sleep(0.1)
        url = f"{base}/mcp/{env_dir.name}"

        async def level(n: int) -> ServeFigure:
            limits = httpx2.Limits(max_connections=n + 4, max_keepalive_connections=n + 4)
            async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
                from contextlib import AsyncExitStack
                async with AsyncExitStack() as stack:
                    clients = [await stack.enter_async_context(
                        Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None))
                        for _ in range(n)]
                    for c in clients:  # warm up: tools/list (output schemas) and one call each
                        await c.call_tool(*mix[0])
                    return await _drive(clients, mix, calls, max_seconds, "http")

        return [anyio.run(level, n) for n in levels]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _bench_stdio(env_dir: Path, root: Path, mix, calls: int, levels: Sequence[int], max_seconds: float) -> list[ServeFigure]:
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters

    cmd = _server_cmd(env_dir, "stdio")
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "ENVFACTORY_ROOT": str(root)})

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


def run_serve_bench(env_dir: str | Path, *, calls: int = 2000, levels: Sequence[int] = (1, 8, 32),
                    transports: Sequence[str] = ("http", "stdio"), max_seconds: float = 20.0) -> ServeBenchReport:
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
        rep.rows += _bench_http(env_dir, root, mix, calls, levels, max_seconds)
    if "stdio" in transports:
        rep.rows += _bench_stdio(env_dir, root, mix, calls, levels, max_seconds)
    rep.notes.append(f"{os.cpu_count()} CPU cores shared by the server process(es) and the clients in this process; "
                     "client-side SDK work (output-schema validation, JSON-RPC framing) is in the figures")
    return rep
