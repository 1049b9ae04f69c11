"""``envfactory bench runtime``: tool-call latency through the runtime vs raw sqlite3.

The floor is the same SQL run on raw ``sqlite3`` prepared statements, in this process, on
a copy of the same template, so the ratio says what the runtime's validation, checks,
bookkeeping and JSON conversion cost on this machine today.
"""

from __future__ import annotations

import gc
import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from ..runtime import Environment, Session

__all__ = ["RuntimeBenchReport", "run_runtime_bench", "OpFigure"]


@dataclass
class OpFigure:
    name: str
    runtime_us: tuple[float, float]  # median, p99
    floor_us: tuple[float, float]

    @property
    def ratio(self) -> float:
        return self.runtime_us[0] / self.floor_us[0] if self.floor_us[0] else float("inf")


@dataclass
class RuntimeBenchReport:
    env: str
    rows: int
    ops: list[OpFigure] = field(default_factory=list)
    new_session_us: tuple[float, float] = (0.0, 0.0)
    hash_after_write_us: tuple[float, float] = (0.0, 0.0)
    full_hash_us: float = 0.0
    session_mem_kib: float = 0.0
    sessions_opened: int = 0
    first_write_us: tuple[float, float] = (0.0, 0.0)  # open + first write: when a session copies
    read_session_mem_kib: float = 0.0  # per session after one read (still sharing)
    write_session_mem_kib: float = 0.0  # per session after one write (its own copy)
    write_sessions: int = 0
    inlist_calls: int = 0
    inlist_growth_kib: float = 0.0  # one session's RSS growth over in-lists of every allowed length


def _stats(samples: list[int]) -> tuple[float, float]:
    s = sorted(samples)
    med = statistics.median(s) / 1000
    p99 = s[min(len(s) - 1, int(len(s) * 0.99))] / 1000
    return med, p99


def _time(fn: Callable[[int], object], n: int, warmup: int = 50) -> tuple[float, float]:
    for i in range(min(warmup, n)):
        fn(i)
    samples = []
    pc = time.perf_counter_ns
    for i in range(n):
        t0 = pc()
        fn(i)
        samples.append(pc() - t0)
    return _stats(samples)


def run_runtime_bench(env: Environment, *, n: int = 2000, sessions: int = 1000) -> RuntimeBenchReport:
    """Measure the travel reference environment (``trip_desk``): needs its tools and entities."""
    rows = sum(env.row_counts().values())
    rep = RuntimeBenchReport(env=env.name, rows=rows)
    gc.collect()

    s = env.new_session()
    raw = env.new_session().conn  # same bytes, driven directly
    traveler_ids = [r[0] for r in s.query("SELECT traveler_id FROM traveler ORDER BY traveler_id")]
    rep.ops += _read_ops(env, s, raw, n)
    raw.isolation_level = None  # autocommit, as the runtime runs single-statement writes
    rep.ops += _write_ops(s, raw, traveler_ids, n)
    rep.ops.append(_action_op(env, s, raw, n))
    s.close()
    _session_figures(env, rep, traveler_ids, sessions)
    _inlist_figure(env, rep)
    return rep


def _read_ops(env: Environment, s: Session, raw: sqlite3.Connection, n: int) -> list[OpFigure]:
    """Get by id and a filtered search, against the same SELECTs on raw sqlite3."""
    flight_ids = [r[0] for r in s.query("SELECT flight_id FROM flight ORDER BY flight_id")]
    flight_cols = ", ".join(f'"{f.name}"' for f in env.spec.entity("flight").fields)
    ops = []

    # get by id
    def rt_get(i: int) -> object:
        return s.call("get_flight", {"flight_id": flight_ids[i % len(flight_ids)]})

    sql_get = f"SELECT {flight_cols} FROM flight WHERE flight_id = ?"

    def raw_get(i: int) -> object:
        return raw.execute(sql_get, (flight_ids[i % len(flight_ids)],)).fetchone()

    ops.append(OpFigure("get by id", _time(rt_get, n), _time(raw_get, n)))

    # filtered search, limit 10
    cabins = ["economy", "premium_economy", "business", "first"]

    def rt_search(i: int) -> object:
        return s.call("search_flights", {"cabin": cabins[i % 4], "max_price": 400.0 + i % 500, "limit": 10})

    sql_search = (
        f"SELECT {flight_cols} FROM flight WHERE cabin = ? AND price <= ? "
        "ORDER BY departure_time ASC, flight_id ASC LIMIT ? OFFSET ?"
    )

    def raw_search(i: int) -> object:
        return raw.execute(sql_search, (cabins[i % 4], 400.0 + i % 500, 11, 0)).fetchall()

    ops.append(OpFigure("search (filters, limit 10)", _time(rt_search, n), _time(raw_search, n)))
    return ops


def _write_ops(s: Session, raw: sqlite3.Connection, traveler_ids: list[str], n: int) -> list[OpFigure]:
    """Create and update, against the statements they need on raw sqlite3 (in autocommit)."""
    ops = []

    # create
    def rt_create(i: int) -> object:
        return s.call(
            "create_traveler",
            {
                "first_name": "Ada",
                "last_name": f"Bench{i}",
                "email": f"rt{i}@bench.example",
                "date_of_birth": "1990-01-01",
            },
        )

    # Floors are the statements the operation needs on plain sqlite3: the write, plus the
    # read of the row where the API returns or checks it.
    def raw_create(i: int) -> object:
        raw.execute(
            "INSERT INTO traveler (traveler_id, first_name, last_name, email, phone, date_of_birth, "
            "loyalty_tier, loyalty_points) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (f"TX{i:06d}", "Ada", f"Bench{i}", f"raw{i}@bench.example", None, "1990-01-01", "none", 0),
        )
        return None

    ops.append(OpFigure("create", _time(rt_create, n, warmup=0), _time(raw_create, n, warmup=0)))

    # update
    def rt_update(i: int) -> object:
        return s.call(
            "update_traveler",
            {"traveler_id": traveler_ids[i % len(traveler_ids)], "phone": f"+1-555-{i:07d}"},
        )

    sql_get_traveler = "SELECT * FROM traveler WHERE traveler_id = ?"

    def raw_update(i: int) -> object:
        raw.execute(sql_get_traveler, (traveler_ids[i % len(traveler_ids)],)).fetchone()
        raw.execute(
            "UPDATE traveler SET phone = ? WHERE traveler_id = ?",
            (f"+1-555-{i:07d}", traveler_ids[i % len(traveler_ids)]),
        )
        return None

    ops.append(OpFigure("update", _time(rt_update, n), _time(raw_update, n)))
    return ops


def _action_op(env: Environment, s: Session, raw: sqlite3.Connection, n: int) -> OpFigure:
    """An action: cancel a confirmed booking (status, timestamp, seats back on the flight)."""
    eligible = [
        r[0]
        for r in s.query(
            "SELECT booking_id FROM booking WHERE status IN ('pending','confirmed') ORDER BY booking_id"
        )
    ]
    m = min(len(eligible), n)

    def rt_action(i: int) -> object:
        return s.call("cancel_booking", {"booking_id": eligible[i]})

    def raw_action(i: int) -> object:
        raw.execute("BEGIN")
        b = raw.execute(
            "SELECT status, flight_id, passengers FROM booking WHERE booking_id = ?", (eligible[i],)
        ).fetchone()
        raw.execute("SELECT seats_available FROM flight WHERE flight_id = ?", (b[1],)).fetchone()
        raw.execute(
            "UPDATE booking SET status = ?, cancelled_at = ? WHERE booking_id = ?",
            ("cancelled", env.spec.clock, eligible[i]),
        )
        raw.execute(
            "UPDATE flight SET seats_available = seats_available + ? WHERE flight_id = ?", (b[2], b[1])
        )
        raw.execute("COMMIT")
        return None

    return OpFigure("action (cancel booking)", _time(rt_action, m, warmup=0), _time(raw_action, m, warmup=0))


def _inlist_figure(env: Environment, rep: RuntimeBenchReport) -> None:
    """What a hostile client grows one session by: ``in``-lists of every allowed length (each
    length used to be a new prepared statement in the session's cache)."""
    from ..spec import MAX_IN_ITEMS, ParamSpec, ToolKind

    spec = env.spec
    tool = next(
        (t for t in spec.tools if t.kind == ToolKind.list and any(p.op == "in" for p in t.params)), None
    )
    if tool is None:  # e.g. trip_desk: the same spec with an id filter on its first list tool
        counts = env.row_counts()
        base = max((t for t in spec.tools if t.kind == ToolKind.list), key=lambda t: counts[t.entity])
        pk = spec.entity(base.entity).pk
        extra = ParamSpec(name="bench_ids", type=pk.type, field=pk.name, op="in")
        tool = base.model_copy(update={"params": [*base.params, extra]})
        spec = spec.model_copy(update={"tools": [tool if t.name == base.name else t for t in spec.tools]})
        env = Environment(spec, env.template)
    param = next(p for p in tool.params if p.op == "in")
    s = env.new_session()
    ent = spec.entity(tool.entity)
    values = [r[0] for r in s.query(f"SELECT `{param.field}` FROM `{ent.name}` LIMIT {MAX_IN_ITEMS}")]
    s.call(tool.name, {param.name: values[:1]})
    gc.collect()
    proc = psutil.Process()
    before = proc.memory_info().rss
    n = 0
    for n in range(1, min(MAX_IN_ITEMS, len(values)) + 1):
        s.call(tool.name, {param.name: values[:n], "limit": 1})
    gc.collect()
    rep.inlist_growth_kib = (proc.memory_info().rss - before) / 1024
    rep.inlist_calls = n
    s.close()


def _session_figures(
    env: Environment, rep: RuntimeBenchReport, traveler_ids: list[str], sessions: int
) -> None:
    """Opening a session, the state hash after a write and in full, and an idle session's memory."""

    # new session
    def open_close(i: int) -> object:
        x = env.new_session()
        x.close()
        return None

    rep.new_session_us = _time(open_close, 300, warmup=10)

    def open_write_close(i: int) -> object:
        x = env.new_session()
        x.call(
            "update_traveler", {"traveler_id": traveler_ids[i % len(traveler_ids)], "phone": "+1-555-0100"}
        )
        x.close()
        return None

    rep.first_write_us = _time(open_write_close, 300, warmup=10)

    # state hash after one write
    h = env.new_session()
    h.state_hash()
    samples = []
    for i in range(300):
        h.call("update_traveler", {"traveler_id": traveler_ids[i], "phone": f"+44-{i}"})
        t0 = time.perf_counter_ns()
        h.state_hash()
        samples.append(time.perf_counter_ns() - t0)
    rep.hash_after_write_us = _stats(samples)
    t0 = time.perf_counter_ns()
    env.snapshot_from_bytes(h.conn.serialize())
    rep.full_hash_us = (time.perf_counter_ns() - t0) / 1000
    h.close()

    # memory of idle sessions
    gc.collect()
    proc = psutil.Process()
    before = proc.memory_info().rss
    opened = [env.new_session() for _ in range(sessions)]
    after = proc.memory_info().rss
    rep.session_mem_kib = (after - before) / 1024 / max(1, sessions)
    rep.sessions_opened = len(opened)
    for i, x in enumerate(opened):
        x.call("get_traveler", {"traveler_id": traveler_ids[i % len(traveler_ids)]})
    rep.read_session_mem_kib = (proc.memory_info().rss - before) / 1024 / max(1, sessions)
    for x in opened:
        x.close()
    del opened
    gc.collect()
    n_write = max(1, sessions // 10)
    before = proc.memory_info().rss
    writers = [env.new_session() for _ in range(n_write)]
    for i, x in enumerate(writers):
        x.call(
            "update_traveler", {"traveler_id": traveler_ids[i % len(traveler_ids)], "phone": "+1-555-0101"}
        )
    rep.write_session_mem_kib = (proc.memory_info().rss - before) / 1024 / n_write
    rep.write_sessions = n_write
    for x in writers:
        x.close()
