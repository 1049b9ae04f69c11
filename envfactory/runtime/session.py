"""Sessions: isolated copies of an environment's state, one transaction per tool call.

``Session`` is an in-memory copy of the template (``sqlite3.deserialize``); it executes tool
calls one transaction each and reports a state hash and a diff (see ``environment`` for the
hash). The write tool kinds (create, update, delete, action) live in ``writes``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from ..errors import (
    ArgumentError,
    RuntimeToolError,
    UnknownToolError,
)
from ..spec import ToolKind
from .environment import _MOD, Environment, Snapshot, StateDiff, _q, _row_digest, _Tool
from .state import harden
from .template import SEQ_TABLE
from .validate import to_db
from .writes import WriteKinds

__all__ = ["Session", "STATEMENT_CACHE", "INLINE_IN_ITEMS"]

STATEMENT_CACHE = 64
"""Prepared statements each session's connection keeps (sqlite3's default is 128). The
runtime's statements per tool are few and constant, so this is room, not a working set."""

INLINE_IN_ITEMS = 16
"""An ``in`` filter with up to this many values binds them as ``?`` marks, padded to a power
of two (so at most five statement texts); a longer one binds one JSON array
(``IN (SELECT value FROM json_each(?))``), so a client sending lists of 512 different lengths
does not make 512 statements."""

_SQL_CACHE_MAX = 512  # statement texts kept per list tool (shapes are combinations of filters)


class Session(WriteKinds):
    """An isolated copy of an environment's state. One transaction per tool call.

    Copy on write: until its first write a session reads its starting state (the template or
    a snapshot) through a read-only connection its environment shares per thread, so an idle
    or read-only session costs a few KiB; the first write (or ``conn``) makes its own copy,
    identical to the start, and from then on everything runs on that copy.
    """

    def __init__(self, env: Environment, snapshot: Snapshot | None = None):
        self.env = env
        self._base = snapshot.data if snapshot else env.template
        self._conn: sqlite3.Connection | None = None
        self._sums = dict(snapshot.sums if snapshot else env._template_sums)
        self._dirty: dict[tuple[str, Any], tuple | None] = {}
        self._original: dict[tuple[str, Any], tuple | None] = {}
        self._call_touched: list[tuple[str, Any, tuple | None]] = []
        self._seq = dict(snapshot.seq if snapshot and snapshot.seq else env._template_seq)
        self._seq_pending: dict[str, int] = {}
        self.calls = 0
        self.closed = False

    @property
    def conn(self) -> sqlite3.Connection:
        """The session's own connection, made from its starting state on first use."""
        conn = self._conn
        if conn is None:
            if self.closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            conn = harden(
                sqlite3.connect(
                    ":memory:",
                    check_same_thread=False,
                    isolation_level=None,
                    cached_statements=STATEMENT_CACHE,
                )
            )
            conn.deserialize(self._base)
            conn.execute("PRAGMA foreign_keys = ON")
            self._conn = conn
        return conn

    @property
    def _c(self) -> sqlite3.Connection:
        """Where reads go: the session's own copy once it has one, else the shared reader."""
        conn = self._conn
        if conn is not None:
            return conn
        if self.closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return self.env._reader(self._base)

    @property
    def copied(self) -> bool:
        """Whether the session holds its own copy of the state (after its first write)."""
        return self._conn is not None

    # ---- public API -------------------------------------------------------------------------

    def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one tool call; return its JSON result or raise a RuntimeToolError (state unchanged)."""
        if self.closed:
            raise RuntimeToolError("this session is closed", tool=tool)
        t = self.env._tools.get(tool)
        if t is None:
            names = ", ".join(sorted(self.env._tools))
            raise UnknownToolError(f"unknown tool '{tool}'; available tools: {names}", tool=tool)
        a = t.validate(args)
        self.calls += 1
        if t.kind == ToolKind.get:
            return self._get(t, a)
        if t.kind == ToolKind.list:
            return self._list(t, a)
        self._call_touched = []
        self._seq_pending = {}
        conn = self.conn
        # A write that is one statement is atomic on its own; only multi-statement writes
        # (effects on referenced rows) need an explicit transaction.
        multi = t.multi_statement
        if multi:
            conn.execute("BEGIN")
        try:
            if t.kind == ToolKind.create:
                out = self._create(t, a)
            elif t.kind == ToolKind.update:
                out = self._update(t, a)
            elif t.kind == ToolKind.delete:
                out = self._delete(t, a)
            else:
                out = self._action(t, a)
            if multi:
                conn.execute("COMMIT")
        except sqlite3.IntegrityError as e:
            if multi:
                conn.execute("ROLLBACK")
            raise self._integrity(t, e) from None
        except sqlite3.DataError as e:  # a row past the session's length limit ('string or blob too big')
            if multi:
                conn.execute("ROLLBACK")
            raise ArgumentError(f"{t.name}: the values are too large to store ({e})", tool=t.name) from None
        except BaseException:
            if multi:
                conn.execute("ROLLBACK")
            raise
        if self._seq_pending:
            self._seq.update(self._seq_pending)
        for table, pk, old in self._call_touched:
            key = (table, pk)
            if key not in self._dirty:
                self._dirty[key] = old
            if key not in self._original:
                self._original[key] = old
        return out

    def try_call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Like ``call`` but returns ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ..., "message": ...}``."""
        try:
            return {"ok": True, "result": self.call(tool, args)}
        except RuntimeToolError as e:
            return {"ok": False, **e.to_dict()}

    def state_hash(self) -> str:
        """A hex digest of the whole state: equal states have equal hashes."""
        if self._dirty:
            for (table, pk), old in self._dirty.items():
                e = self.env._entities[table]
                s = self._sums[table]
                if old is not None:
                    s -= _row_digest(old)
                cur = self._c.execute(e.sql_get, (pk,)).fetchone()
                if cur is not None:
                    s += _row_digest(cur)
                self._sums[table] = s % _MOD
            self._dirty.clear()
        h = hashlib.sha256()
        for name in sorted(self._sums):
            h.update(f"{name}:{self._sums[name]:032x};".encode())
        return h.hexdigest()

    def diff(self) -> StateDiff:
        """Rows added, changed (old and new values) and removed since the session started."""
        d = StateDiff()
        for (table, pk), old in sorted(self._original.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
            e = self.env._entities[table]
            cur = self._c.execute(e.sql_get, (pk,)).fetchone()
            if old is None and cur is not None:
                d.added.setdefault(table, []).append(e.to_json(cur))
            elif old is not None and cur is None:
                d.removed.setdefault(table, []).append(e.to_json(old))
            elif old is not None and cur is not None and old != cur:
                o, n = e.to_json(old), e.to_json(cur)
                fields = {k: {"old": o[k], "new": n[k]} for k in e.cols if o[k] != n[k]}
                d.changed.setdefault(table, []).append({"key": pk, "fields": fields})
        return d

    def snapshot(self) -> Snapshot:
        """The current state, to start other sessions from (task initial states)."""
        self.state_hash()
        self.conn.executemany(
            f"UPDATE {SEQ_TABLE} SET next = ? WHERE entity = ?",
            [(v, k) for k, v in sorted(self._seq.items())],
        )
        return Snapshot(self.conn.serialize(), dict(self._sums), dict(self._seq))

    def get_row(self, entity: str, key: Any) -> dict[str, Any] | None:
        """Read a row directly (for harnesses and checks; agents use tools)."""
        e = self.env._entities[entity]
        row = self._c.execute(e.sql_get, (key,)).fetchone()
        return e.to_json(row) if row else None

    def query(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """Read-only SQL for verifiers and oracles."""
        if not sql.lstrip().lower().startswith(("select", "with")):
            raise ValueError("query() is read-only")
        if self._conn is None:  # the shared reader is query_only for good
            try:
                return self._c.execute(sql, params).fetchall()
            except sqlite3.OperationalError as e:
                if "readonly" in str(e) or "read-only" in str(e):
                    raise ValueError("query() is read-only") from e
                raise
        # enforced by SQLite too: 'WITH ... DELETE' passes the prefix test but not query_only
        self.conn.execute("PRAGMA query_only = ON")
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as e:
            if "readonly" in str(e) or "read-only" in str(e):
                raise ValueError("query() is read-only") from e
            raise
        finally:
            self.conn.execute("PRAGMA query_only = OFF")

    def foreign_key_violations(self) -> list[tuple]:
        """Rows whose foreign keys point nowhere (``PRAGMA foreign_key_check``); empty when intact."""
        return self._c.execute("PRAGMA foreign_key_check").fetchall()

    def close(self) -> None:
        if not self.closed:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.closed = True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- read tool kinds (the writes are in ``writes``) -----------------------------------

    def _get(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        return t.ent.to_json(self._fetch(t, a), t.returns)

    def _list(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        e = t.ent
        where: list[str] = []
        params: list[Any] = []
        shape: list[Any] = []
        for pname, fname, op in t.filters:
            v = a.get(pname)
            if v is None:
                continue
            ftype = e.types[fname]
            col = _q(fname)
            if op == "in":
                vals = [to_db(ftype, x) for x in v]
                if len(vals) > INLINE_IN_ITEMS:
                    where.append(f"{col} IN (SELECT value FROM json_each(?))")
                    params.append(json.dumps(vals))
                    shape.append((pname, 0))
                else:
                    width = 1 << (len(vals) - 1).bit_length()  # 1, 2, 4, 8, 16: repeats change nothing
                    where.append(f"{col} IN ({', '.join('?' * width)})")
                    params.extend(vals + vals[-1:] * (width - len(vals)))
                    shape.append((pname, width))
                continue
            if op == "contains":
                where.append(f"instr(lower({col}), lower(?)) > 0")
            else:
                sym = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
                where.append(f"{col} {sym} ?")
            params.append(to_db(ftype, v) if op != "contains" else str(v))
            shape.append(pname)
        sort_by = a.get("sort_by", t.sort_default)
        order = a.get("sort_order")
        desc = (order == "desc") if order else (t.sort_desc if "sort_by" not in a else False)
        key = (tuple(shape), sort_by, desc)
        sql = t._sql_cache.get(key)
        if sql is None:
            w = (" WHERE " + " AND ".join(where)) if where else ""
            direction = "DESC" if desc else "ASC"
            tiebreak = f", {_q(e.pk)} ASC" if sort_by != e.pk else ""
            sql = (
                f"SELECT {e.collist} FROM {_q(e.name)}{w} "
                f"ORDER BY {_q(sort_by)} {direction}{tiebreak} LIMIT ? OFFSET ?"
            )
            if len(t._sql_cache) >= _SQL_CACHE_MAX:
                t._sql_cache.clear()
            t._sql_cache[key] = sql
        limit = a.get("limit", t.spec.page_size)
        offset = a.get("offset", 0)
        rows = self._c.execute(sql, (*params, limit + 1, offset)).fetchall()
        has_more = len(rows) > limit
        items = [e.to_json(r, t.returns) for r in rows[:limit]]
        return {"items": items, "count": len(items), "offset": offset, "has_more": has_more}
