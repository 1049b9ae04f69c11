"""Untrusted states: SQLite bytes from a client, a state file, a task or a cached template.

A database file is code as much as data: a trigger in it runs on the next write (one
deleted 2,500 payments on an ``assign_seat`` call while the hash saw one change), a view or
a recursive trigger can hold a thread forever, and with double-quoted string literals a
dropped column reads back as its own name. So every state passes ``open_state`` first, the
one gate every entry point uses (``Environment.snapshot_from_bytes``, the template cache),
following SQLite's advice for untrusted database files:

- the schema is exactly the spec's: the same tables, columns, types and indexes, compared
  with ``sqlite_master`` of a database built from the spec (no triggers, views, extra objects);
- ``PRAGMA integrity_check`` and ``PRAGMA foreign_key_check`` pass;
- values are ones the runtime can return as JSON (no blobs, no infinities, valid JSON in
  object and array fields);
- the work is bounded: a progress handler stops a check that passes ``STATE_CHECK_SECONDS``,
  connections carry ``sqlite3_limit``s (``harden``), ``trusted_schema`` is off;
- the state hash is recomputed from the rows by the caller; a stored one is never read.

Python 3.11's ``sqlite3`` cannot reach ``SQLITE_DBCONFIG_DQS_DML`` (``setconfig`` is 3.12),
so the runtime quotes every identifier with backticks, which SQLite never reads as a string:
a column that is missing is an error, not its own name.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time

from ..errors import StateError
from ..spec import EnvSpec, FieldType
from .template import SEQ_TABLE, _template_key, expected_schema

__all__ = ["open_state", "check_state", "harden", "MAX_STATE_BYTES", "STATE_CHECK_SECONDS"]

MAX_STATE_BYTES = 512 << 20
STATE_CHECK_SECONDS = 20.0
_SQLITE_MAGIC = b"SQLite format 3\x00"

# Per-connection limits for sessions and state checks: what the runtime's own statements
# need, with room for verifier oracles, and nothing an attached file or a trigger could use.
_LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: 64 << 20,  # one string, blob or row
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1 << 20,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 1,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 32_766,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}


_PASSED: dict[tuple[str, bytes], None] = {}  # (spec key, sha256 of the bytes) that passed: checked once
_PASSED_MAX = 256


def harden(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Apply the runtime's ``sqlite3_limit``s to a connection; returns it."""
    for k, v in _LIMITS.items():
        conn.setlimit(k, v)
    return conn


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _bad_values_sql(spec: EnvSpec) -> list[tuple[str, str]]:
    """(entity, SELECT) pairs: each finds a row holding a value the runtime cannot return."""
    out = []
    for e in spec.entities:
        bad = []
        for f in e.fields:
            c = _q(f.name)
            bad.append(f"typeof({c}) = 'blob'")
            if f.type in (FieldType.object, FieldType.array):
                bad.append(f"({c} IS NOT NULL AND (typeof({c}) != 'text' OR NOT json_valid({c})))")
            if f.type in (FieldType.number, FieldType.integer):
                bad.append(f"(typeof({c}) = 'real' AND abs({c}) > 1.7976931348623157e308)")
        out.append((e.name, f"SELECT 1 FROM {_q(e.name)} WHERE {' OR '.join(bad)} LIMIT 1"))
    return out


def _check(spec: EnvSpec, conn: sqlite3.Connection, source: str) -> None:
    what = f"{source}: not a state of environment '{spec.name}'"
    schema = frozenset(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
    want = expected_schema(spec)
    if schema != want:
        extra = sorted(f"{t} {n}" for t, n, _, _ in schema - want)
        missing = sorted(f"{t} {n}" for t, n, _, _ in want - schema)
        parts = ([f"unexpected or changed: {', '.join(extra[:5])}"] if extra else []) + (
            [f"missing or changed: {', '.join(missing[:5])}"] if missing else []
        )
        raise StateError(f"{what}: its schema differs from the spec's ({'; '.join(parts)})")
    problems = [r[0] for r in conn.execute("PRAGMA integrity_check(5)").fetchall()]
    if problems != ["ok"]:
        raise StateError(f"{what}: the database is damaged ({'; '.join(map(str, problems))[:300]})")
    if conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
        raise StateError(f"{what}: some rows reference rows that do not exist")
    for entity, sql in _bad_values_sql(spec):
        if conn.execute(sql).fetchone() is not None:
            raise StateError(
                f"{what}: table {entity} holds values the runtime cannot return "
                "(a blob, an infinite number, or invalid JSON)"
            )
    names = [e.name for e in spec.entities]
    marks = ", ".join("?" * len(names))
    bad_seq = conn.execute(
        f"SELECT 1 FROM {SEQ_TABLE} WHERE typeof(next) != 'integer' OR next < 1 "
        f"OR next > 9223372036854775000 OR entity NOT IN ({marks}) LIMIT 1",
        names,
    ).fetchone()
    if bad_seq is not None:
        raise StateError(f"{what}: its id counters ({SEQ_TABLE}) are not the spec's")


def open_state(
    spec: EnvSpec, data: bytes, *, source: str = "state", timeout_s: float | None = None
) -> sqlite3.Connection:
    """An in-memory, hardened connection over ``data`` once it passes every check above
    (the caller closes it); else a one-line ``StateError``. ``timeout_s`` bounds the checks
    and what the caller then runs on the connection (default: ``STATE_CHECK_SECONDS`` plus
    a second per 4 MiB)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StateError(f"{source}: a state is SQLite database bytes, got {type(data).__name__}")
    if len(data) > MAX_STATE_BYTES:
        raise StateError(f"{source}: {len(data):,} bytes; a state may be at most {MAX_STATE_BYTES:,}")
    if not bytes(data[:16]) == _SQLITE_MAGIC:
        raise StateError(f"{source}: not an SQLite database (the bytes do not start with the SQLite header)")
    if timeout_s is None:
        timeout_s = STATE_CHECK_SECONDS + len(data) / (4 << 20)
    conn = harden(sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None))
    deadline = time.monotonic() + timeout_s
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.deserialize(bytes(data))
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        conn.execute("PRAGMA cell_size_check = ON")
        # the same bytes for the same spec pass again (a cached template read, then scanned)
        key = (_template_key(spec), hashlib.sha256(data).digest())
        if key not in _PASSED:
            _check(spec, conn, source)
            if len(_PASSED) >= _PASSED_MAX:
                _PASSED.clear()
            _PASSED[key] = None
    except sqlite3.OperationalError as e:
        conn.close()
        if "interrupted" in str(e):
            raise StateError(
                f"{source}: checking the state took longer than {timeout_s:g} s; refused"
            ) from None
        raise StateError(f"{source}: not a usable state of environment '{spec.name}': {e}") from None
    except (sqlite3.Error, OverflowError, ValueError) as e:
        conn.close()
        raise StateError(f"{source}: not a usable state of environment '{spec.name}': {e}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def check_state(spec: EnvSpec, data: bytes, *, source: str = "state") -> None:
    """Raise a ``StateError`` unless ``data`` is a state of ``spec`` (see ``open_state``)."""
    open_state(spec, data, source=source).close()
