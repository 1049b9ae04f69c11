"""Sessions: isolated copies of an environment's state, one transaction per tool call.

``Session`` is an in-memory copy of the template (``sqlite3.deserialize``); it executes tool
calls one transaction each and reports a state hash and a diff (see ``environment`` for the
hash).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from ..errors import (
    ArgumentError,
    ConstraintError,
    NotFoundError,
    PreconditionError,
    RuntimeToolError,
    UnknownToolError,
)
from ..spec import FieldType, ToolKind
from ..spec import compare as _compare
from .environment import _MOD, Environment, Snapshot, StateDiff, _Entity, _q, _row_digest, _Tool
from .state import harden
from .template import SEQ_TABLE
from .validate import to_db, write_guard

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


class Session:
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

    # ---- tool kinds ------------------------------------------------------------------------

    def _not_found(self, t: _Tool, e: _Entity, value: Any, arg: str | None) -> NotFoundError:
        hint = self._finder_hint(e.name)
        return NotFoundError(
            f"{t.name}: {e.name} {json.dumps(value)} not found (argument '{arg or e.pk}'){hint}",
            tool=t.name,
            argument=arg,
        )

    def _finder_hint(self, entity: str) -> str:
        for name, tt in self.env._tools.items():
            if tt.kind == ToolKind.list and tt.ent.name == entity:
                return f"; use {name} to find valid ids"
        return ""

    def _fetch(self, t: _Tool, a: dict[str, Any]) -> tuple:
        e = t.ent
        row = self._c.execute(e.sql_get, (a[t.key_arg],)).fetchone()
        if row is None:
            raise self._not_found(t, e, a[t.key_arg], t.key_arg)
        return row

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

    def _check_refs(self, t: _Tool, values: dict[str, Any], argmap: dict[str, str]) -> None:
        e = t.ent
        for col, target in e.refs.items():
            v = values.get(col)
            if v is None:
                continue
            te = self.env._entities[target]
            if self._c.execute(te.sql_exists, (v,)).fetchone() is None:
                arg = argmap.get(col, col)
                raise NotFoundError(
                    f"{t.name}: {target} {json.dumps(v)} not found (argument '{arg}'){self._finder_hint(target)}",
                    tool=t.name,
                    argument=arg,
                )

    def _path_value(self, t: _Tool, row: dict[str, Any], path: str) -> Any:
        if "." not in path:
            return row.get(path)
        fk, fname = path.split(".", 1)
        target = t.ent.refs[fk]
        key = row.get(fk)
        if key is None:
            return None
        te = self.env._entities[target]
        r = self._c.execute(te.sql_get, (key,)).fetchone()
        if r is None:
            return None
        return te.db_to_py(fname, r[te.idx[fname]])

    def _check_conditions(self, t: _Tool, row: dict[str, Any], a: dict[str, Any]) -> None:
        for c in t.spec.preconditions:
            actual = self._path_value(t, row, c.field)
            expected = a.get(c.value_param) if c.value_param else c.value
            if c.value_param and expected is None:
                continue
            if not _compare(actual, c.op, expected):
                key = row.get(t.ent.pk)
                if c.message:
                    msg = c.message
                else:
                    want = {
                        "eq": "be",
                        "ne": "not be",
                        "in": "be one of",
                        "not_in": "not be one of",
                        "gt": "be >",
                        "gte": "be >=",
                        "lt": "be <",
                        "lte": "be <=",
                        "is_null": "be empty",
                        "not_null": "be set",
                    }[c.op]
                    exp = "" if c.op in ("is_null", "not_null") else f" {json.dumps(expected)}"
                    msg = f"{c.field} is {json.dumps(actual)} but must {want}{exp}"
                if key is not None:
                    what = f"{t.ent.name} {json.dumps(key)}"
                elif "." in c.field:  # a row being created has no key yet: name the row the check is on
                    fk = c.field.split(".", 1)[0]
                    what = f"{t.ent.name} with {fk} {json.dumps(row.get(fk))}"
                else:
                    what = t.ent.name
                raise PreconditionError(f"{t.name}: cannot {t.verb} {what}: {msg}", tool=t.name)

    def _effect_value(
        self, t: _Tool, ef, row: dict[str, Any], a: dict[str, Any], current: Any, ftype: FieldType
    ) -> Any:
        if ef.uses_set:
            return ef.set
        if ef.param is not None:
            return a.get(ef.param, current)
        if ef.now:
            return self.env.clock_date if ftype == FieldType.date else self.env.clock_iso
        if ef.copy_from is not None:
            v = self._path_value(t, row, ef.copy_from)
            if ef.scale_param and v is not None and a.get(ef.scale_param) is not None:
                v = round(v * a[ef.scale_param], 2)
            return v
        if ef.increment is not None:
            return (current or 0) + ef.increment
        if ef.increment_from is not None:
            inc = self._path_value(t, row, ef.increment_from) or 0
        else:
            inc = a.get(ef.increment_param, 0) or 0
        return (current or 0) + (-inc if ef.negate_param else inc)

    def _apply_effects(self, t: _Tool, row: dict[str, Any], a: dict[str, Any], own: dict[str, Any]) -> None:
        """Apply effects: own-row effects into ``own`` (written by caller); referenced rows here."""
        remote: dict[tuple[str, Any], tuple[tuple, dict[str, Any], dict[str, Any]]] = {}
        for ef in t.spec.effects:
            if "." not in ef.field:
                ftype = t.ent.types[ef.field]
                own[ef.field] = self._effect_value(t, ef, row, a, row.get(ef.field), ftype)
                row[ef.field] = own[ef.field]
                continue
            fk, fname = ef.field.split(".", 1)
            target = t.ent.refs[fk]
            key = row.get(fk)
            if key is None:
                continue
            te = self.env._entities[target]
            slot = remote.get((target, key))
            if slot is None:
                old = self._c.execute(te.sql_get, (key,)).fetchone()
                if old is None:
                    continue
                slot = remote[(target, key)] = (old, te.to_json(old), {})
            _, cur_row, vals = slot
            vals[fname] = self._effect_value(t, ef, row, a, cur_row[fname], te.types[fname])
            cur_row[fname] = vals[fname]
        write_guard(self.env, t.spec).check(row, a, own)  # roles and constraints of the written row
        for (target, key), (old, _, vals) in remote.items():
            self._write_update(self.env._entities[target], key, vals, old)

    def _write_update(self, e: _Entity, key: Any, vals: dict[str, Any], old: tuple) -> None:
        cols = tuple(vals)
        sql = e.update_sql.get(cols)
        if sql is None:
            sql = f"UPDATE {_q(e.name)} SET {', '.join(_q(c) + ' = ?' for c in cols)} WHERE {_q(e.pk)} = ?"
            e.update_sql[cols] = sql
        types = e.types
        self._c.execute(sql, (*(to_db(types[c], vals[c]) for c in cols), key))
        self._call_touched.append((e.name, key, old))

    def _next_id(self, e: _Entity) -> Any:
        if e.pk_type == FieldType.integer:
            return None  # SQLite assigns the rowid
        n = self._seq.get(e.name, 1)
        while True:  # skip ids a caller chose explicitly
            candidate = f"{e.prefix}{n:05d}"
            n += 1
            if self._c.execute(e.sql_exists, (candidate,)).fetchone() is None:
                break
        self._seq_pending[e.name] = n
        return candidate

    def _create(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        e = t.ent
        row: dict[str, Any] = {c: None for c in e.cols}
        row.update(e.defaults)
        argmap: dict[str, str] = {}
        for pname, fname in t.field_params:
            if pname in a:
                row[fname] = a[pname]
                argmap[fname] = pname
        key_param = t.spec.key_param
        if key_param is not None and key_param.name in a:
            row[e.pk] = a[key_param.name]
        self._check_refs(t, row, argmap)
        self._check_conditions(t, row, a)
        own: dict[str, Any] = {}
        if row.get(e.pk) is None:
            row[e.pk] = self._next_id(e)
        elif self._c.execute(e.sql_exists, (row[e.pk],)).fetchone() is not None:
            raise ConstraintError(f"{t.name}: {e.name} {json.dumps(row[e.pk])} already exists", tool=t.name)
        self._apply_effects(t, row, a, own)
        row.update(own)
        for c in e.cols:
            if row[c] is None and c not in e.nullable and c != e.pk:
                raise ArgumentError(
                    f"{t.name}: {e.name}.{c} must be set; pass it as an argument", tool=t.name, argument=c
                )
        vals = e.db_row(row)
        auto_pk = row[e.pk] is None
        key = ("auto",) if auto_pk else ("all",)
        sql = e.insert_sql.get(key)
        if sql is None:
            cols = [c for c in e.cols if not (auto_pk and c == e.pk)]
            sql = f"INSERT INTO {_q(e.name)} ({', '.join(_q(c) for c in cols)}) VALUES ({', '.join('?' * len(cols))})"
            e.insert_sql[key] = sql
        pk_i = e.idx[e.pk]
        cur = self._c.execute(
            sql, [v for i, v in enumerate(vals) if not (auto_pk and i == pk_i)] if auto_pk else vals
        )
        if auto_pk:
            vals[pk_i] = cur.lastrowid
        self._call_touched.append((e.name, vals[pk_i], None))
        return e.to_json(tuple(vals), t.returns)

    def _updated_out(self, t: _Tool, e: _Entity, old: tuple, vals: dict[str, Any]) -> dict[str, Any]:
        new = list(old)
        idx, types = e.idx, e.types
        for c, v in vals.items():
            new[idx[c]] = to_db(types[c], v)
        return e.to_json(tuple(new), t.returns)

    def _update(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        e = t.ent
        old = self._fetch(t, a)
        row = e.to_json(old)
        vals: dict[str, Any] = {}
        argmap: dict[str, str] = {}
        for pname, fname in t.field_params:
            if pname in a:
                vals[fname] = a[pname]
                argmap[fname] = pname
        if not vals:
            names = ", ".join(p for p, _ in t.field_params)
            raise ArgumentError(f"{t.name}: nothing to update; pass at least one of: {names}", tool=t.name)
        self._check_conditions(t, row, a)
        row.update(vals)
        self._check_refs(t, vals, argmap)
        own: dict[str, Any] = {}
        self._apply_effects(t, row, a, own)
        vals.update(own)
        self._write_update(e, a[t.key_arg], vals, old)
        return self._updated_out(t, e, old, vals)

    def _delete(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        e = t.ent
        old = self._fetch(t, a)
        row = e.to_json(old)
        self._check_conditions(t, row, a)
        key = a[t.key_arg]
        for table, col in e.referenced_by:
            if table == e.name:
                # a row that references itself (parent_id = own id) does not block its own delete
                hit = self._c.execute(
                    f"SELECT 1 FROM {_q(table)} WHERE {_q(col)} = ? AND {_q(e.pk)} != ? LIMIT 1", (key, key)
                ).fetchone()
            else:
                hit = self._c.execute(
                    f"SELECT 1 FROM {_q(table)} WHERE {_q(col)} = ? LIMIT 1", (key,)
                ).fetchone()
            if hit is not None:
                raise ConstraintError(
                    f"{t.name}: cannot delete {e.name} {json.dumps(key)}: it is still referenced by a {table} ({col})",
                    tool=t.name,
                )
        self._apply_effects(t, row, a, {})
        self._c.execute(e.sql_delete, (key,))
        self._call_touched.append((e.name, key, old))
        return {"deleted": True, e.pk: key}

    def _action(self, t: _Tool, a: dict[str, Any]) -> dict[str, Any]:
        e = t.ent
        old = self._fetch(t, a)
        row = e.to_json(old)
        self._check_conditions(t, row, a)
        vals: dict[str, Any] = {}
        argmap: dict[str, str] = {}
        for pname, fname in t.field_params:
            if pname in a:
                vals[fname] = a[pname]
                argmap[fname] = pname
        row.update(vals)
        own: dict[str, Any] = {}
        self._apply_effects(t, row, a, own)
        vals.update(own)
        # references the action writes must exist (effects may write ids from arguments)
        self._check_refs(t, vals, {**argmap, **{ef.field: ef.param for ef in t.spec.effects if ef.param}})
        if vals:
            self._write_update(e, a[t.key_arg], vals, old)
        return self._updated_out(t, e, old, vals)

    def _integrity(self, t: _Tool, err: sqlite3.IntegrityError) -> RuntimeToolError:
        msg = str(err)
        if msg.startswith("UNIQUE constraint failed"):
            cols = msg.split(":", 1)[1].strip()
            col = cols.split(".")[-1]
            arg = next((p for p, f in t.field_params if f == col), col)
            return ConstraintError(
                f"{t.name}: another {t.ent.name} already has this {col}; choose a different '{arg}'",
                tool=t.name,
                argument=arg,
            )
        if msg.startswith("NOT NULL constraint failed"):
            col = msg.split(":", 1)[1].strip().split(".")[-1]
            return ArgumentError(f"{t.name}: {col} must be set", tool=t.name, argument=col)
        if "FOREIGN KEY" in msg:
            return ConstraintError(
                f"{t.name}: the change would break a reference between records", tool=t.name
            )
        return ConstraintError(f"{t.name}: {msg}", tool=t.name)
