"""Write tool kinds of a session: create, update, delete, action, with their preconditions,
effects and reference checks; and the row lookups the reads share.

``Session`` (``session``) inherits these from ``WriteKinds``; nothing here is public API.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..errors import (
    ArgumentError,
    ConstraintError,
    NotFoundError,
    PreconditionError,
    RuntimeToolError,
)
from ..spec import FieldType, ToolKind
from ..spec import compare as _compare
from .environment import Environment, _Entity, _q, _Tool
from .validate import to_db, write_guard

__all__ = ["WriteKinds"]


def _members(current: Any, value: Any, key: str | None, add: bool) -> list[Any]:
    """An array field after adding (or taking out) ``value``'s elements, each once; with ``key``,
    an element is the object whose ``key`` holds the value, and an added one is ``{key: value}``."""
    items = list(current) if isinstance(current, list) else []
    values = value if isinstance(value, list) else ([] if value is None else [value])

    def names(item: Any, v: Any) -> bool:
        return item == v or (key is not None and isinstance(item, dict) and item.get(key) == v)

    if not add:
        return [i for i in items if not any(names(i, v) for v in values)]
    for v in values:
        if not any(names(i, v) for i in items):
            items.append({key: v} if key is not None else v)
    return items


class WriteKinds:
    """The write half of ``Session``: one method per tool kind, run inside the call's transaction."""

    env: Environment
    _seq: dict[str, int]
    _seq_pending: dict[str, int]
    _call_touched: list[tuple[str, Any, tuple | None]]

    @property
    def _c(self) -> sqlite3.Connection:  # the session's reader or its own copy (``Session._c``)
        raise NotImplementedError

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
        if t.key is None:  # a singleton's tools take no key: it is the one row
            row = self._c.execute(e.sql_one).fetchone()
            if row is None:
                raise NotFoundError(f"{t.name}: no {e.name} is stored", tool=t.name)
            return row
        key = a.get(t.key_arg)
        if key is None:  # a key the document marks optional: no row is selected, none is touched
            what = e.name.replace("_", " ")
            raise ArgumentError(
                f"{t.name}: no {what} selected: give '{t.key_arg}'{self._finder_hint(e.name)}",
                tool=t.name,
                argument=t.key_arg,
            )
        row = self._c.execute(e.sql_get, (key,)).fetchone()
        if row is None:
            raise self._not_found(t, e, key, t.key_arg)
        return row

    def _names_stored_row(self, t: _Tool, a: dict[str, Any]) -> bool:
        """Whether an upsert's call names a stored row (its key given, and a row has it)."""
        key = a.get(t.key_arg)
        return key is not None and self._c.execute(t.ent.sql_exists, (key,)).fetchone() is not None

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
        if ef.append_param is not None or ef.remove_param is not None:
            add = ef.append_param is not None
            return _members(current, a.get(ef.append_param if add else ef.remove_param), ef.match_key, add)
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
            sql = (
                f"INSERT INTO {_q(e.name)} ({', '.join(_q(c) for c in cols)}) VALUES ({', '.join('?' * len(cols))})"
                if cols
                else f"INSERT INTO {_q(e.name)} DEFAULT VALUES"  # an entity that is only its integer key
            )
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
        if t.spec.upsert and not self._names_stored_row(t, a):
            return self._create(t, a)  # an upsert that names no stored row creates it
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
        self._write_update(e, old[e.idx[e.pk]], vals, old)
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
        for name in e.owned:  # a per-parent singleton (the file's watermark) goes with its parent
            oe = self.env._entities[name]
            own_old = self._c.execute(oe.sql_get, (key,)).fetchone()
            if own_old is not None:
                self._c.execute(oe.sql_delete, (key,))
                self._call_touched.append((oe.name, key, own_old))
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
            self._write_update(e, old[e.idx[e.pk]], vals, old)
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
