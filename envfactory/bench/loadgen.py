"""The bench's load generator processes: ``python -m envfactory.bench.loadgen '<json args>'``.

Run in their own process (their own GIL), so a figure shows what the server sustains rather
than what the client costs: ``raw`` drives N MCP sessions with plain ``tools/call`` POSTs over
keep-alive HTTP/1.1 and prints calls and latencies; ``memory`` opens sessions of hostile calls,
reports, waits for a line on stdin, closes them and reports again.
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import sys
import time
from typing import Any
from urllib.parse import urlsplit

__all__ = ["hostile_call", "latency_ms"]


def latency_ms(lat_ns: list[int]) -> tuple[float, float]:
    """(p50, p99) in milliseconds of latencies in nanoseconds (sorted in place)."""
    lat_ns.sort()
    p99 = lat_ns[min(len(lat_ns) - 1, int(len(lat_ns) * 0.99))]
    return statistics.median(lat_ns) / 1e6, p99 / 1e6


class _RawHTTP:
    """One keep-alive HTTP/1.1 connection: POST/DELETE with a JSON body, answers with Content-Length.

    The lean client of the ``raw`` figures: a few microseconds of client CPU per request,
    so the figure shows what the server sustains rather than what a client library costs.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, path: str):
        self.reader, self.writer, self.host, self.path = reader, writer, host, path

    @classmethod
    async def connect(cls, url: str) -> _RawHTTP:
        u = urlsplit(url)
        reader, writer = await asyncio.open_connection(u.hostname, u.port)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer, u.netloc, u.path)

    async def request(
        self, method: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        head = [
            f"{method} {self.path} HTTP/1.1",
            f"Host: {self.host}",
            f"Content-Length: {len(body)}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
        ]
        head += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        hdrs = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                hdrs[k.strip().lower()] = v.strip()
        if "content-length" not in hdrs:
            raise RuntimeError(f"bench load generator: answer without Content-Length: {raw[:300]!r}")
        return status, hdrs, await self.reader.readexactly(int(hdrs["content-length"]))

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def _raw_load(
    url: str, sessions: int, mix: list[list[Any]], calls: int, max_seconds: float
) -> dict[str, Any]:
    """N MCP sessions, one connection each: initialize, initialized, then plain tools/call POSTs, each answer checked."""
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "envfactory-bench", "version": "0"},
            },
        }
    ).encode()
    conns: list[tuple[_RawHTTP, dict[str, str]]] = []
    for _ in range(sessions):
        c = await _RawHTTP.connect(url)
        status, hdrs, body = await c.request("POST", init, {})
        if status != 200:
            raise RuntimeError(f"bench initialize failed: HTTP {status} {body[:300]!r}")
        h = {
            "Mcp-Session-Id": hdrs["mcp-session-id"],
            "Mcp-Protocol-Version": json.loads(body)["result"]["protocolVersion"],
        }
        await c.request("POST", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', h)
        conns.append((c, h))
    params = [json.dumps({"name": name, "arguments": args}) for name, args in mix]
    per = max(1, calls // sessions)
    lat: list[int] = []
    deadline = time.perf_counter() + max_seconds

    async def worker(k: int, c: _RawHTTP, h: dict[str, str]) -> None:
        for i in range(-1, per):  # i == -1: one warm-up call, not counted
            if time.perf_counter() > deadline:
                return
            body = f'{{"jsonrpc":"2.0","id":{i + 2},"method":"tools/call","params":{params[(k * 7919 + i) % len(params)]}}}'
            t0 = time.perf_counter_ns()
            status, _, answer = await c.request("POST", body.encode(), h)
            took = time.perf_counter_ns() - t0
            res = json.loads(answer).get("result") if status == 200 else None
            if not res or res.get("isError") or "structuredContent" not in res:
                raise RuntimeError(f"bench call failed: HTTP {status} {answer[:300]!r}")
            if i >= 0:
                lat.append(took)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(k, c, h) for k, (c, h) in enumerate(conns)))
    seconds = time.perf_counter() - t0
    p50, p99 = latency_ms(lat) if lat else (0.0, 0.0)
    for c, h in conns:
        await c.request("DELETE", b"", h)
        await c.close()
    return {"calls": len(lat), "seconds": seconds, "p50_ms": p50, "p99_ms": p99}


def _run_raw_load(args: dict[str, Any]) -> dict[str, Any]:
    coro = _raw_load(args["url"], args["sessions"], args["mix"], args["calls"], args["max_seconds"])
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def hostile_call(k: int) -> tuple[str, dict[str, Any]]:
    """The k-th hostile call: ``search_flights`` with an ``in``-list of a length no earlier call used.

    A statement text per list length is what filled SQLite's per-connection statement cache
    (issue 17, finding 1); the lengths stay under the argument-size limit.
    """
    n = 1 + (k * 41) % 1500
    return "search_flights", {"status": ["scheduled"] * n, "limit": 1}


async def _hostile_sessions(url: str, sessions: int, calls: int, workers: int) -> dict[str, Any]:
    """Open ``sessions`` MCP sessions over ``workers`` connections, ``calls`` hostile calls in each; keep them open."""
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "envfactory-bench-memory", "version": "0"},
            },
        }
    ).encode()
    todo = list(range(sessions))
    opened: list[str] = []
    got = {"refused": 0, "calls": 0, "call_errors": 0}

    async def worker() -> None:
        c = await _RawHTTP.connect(url)
        try:
            while todo:
                todo.pop()
                status, hdrs, body = await c.request("POST", init, {})
                answer = json.loads(body) if status == 200 else {}
                if "result" not in answer or "mcp-session-id" not in hdrs:
                    got["refused"] += 1  # 503 from the transport or the budget's in-band error
                    continue
                h = {
                    "Mcp-Session-Id": hdrs["mcp-session-id"],
                    "Mcp-Protocol-Version": answer["result"]["protocolVersion"],
                }
                await c.request("POST", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', h)
                opened.append(h["Mcp-Session-Id"])
                for k in range(calls):
                    name, args = hostile_call(len(opened) * calls + k)
                    req = json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": k + 1,
                            "method": "tools/call",
                            "params": {"name": name, "arguments": args},
                        }
                    ).encode()
                    status, _, answer_raw = await c.request("POST", req, h)
                    res = json.loads(answer_raw).get("result") if status == 200 else None
                    got["calls"] += 1
                    got["call_errors"] += int(not res or bool(res.get("isError")))
        finally:
            await c.close()

    await asyncio.gather(*(worker() for _ in range(max(1, min(workers, sessions)))))
    return {**got, "opened": len(opened), "ids": opened}


async def _close_sessions(url: str, ids: list[str]) -> None:
    c = await _RawHTTP.connect(url)
    try:
        for sid in ids:
            await c.request("DELETE", b"", {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
    finally:
        await c.close()


def _memory_load(args: dict[str, Any]) -> None:
    """The memory load generator: open, report, wait for a line on stdin, close, report."""
    got = asyncio.run(_hostile_sessions(args["url"], args["sessions"], args["calls"], args["workers"]))
    ids = got.pop("ids")
    print(json.dumps(got), flush=True)
    sys.stdin.readline()
    asyncio.run(_close_sessions(args["url"], ids))
    print(json.dumps({"closed": len(ids)}), flush=True)


if __name__ == "__main__":  # python -m envfactory.bench.loadgen '<json args>'
    _args = json.loads(sys.argv[1])
    if _args.get("mode") == "memory":
        _memory_load(_args)
    else:
        print(json.dumps(_run_raw_load(_args)))
