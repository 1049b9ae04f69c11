"""Independent oracles built from the spec: what a list call returns, what a write changes.

Written from the EnvSpec's documented semantics with our own SQL (whole-table reads) and
Python filtering, sorting and paging, never with the runtime's prepared SQL, so that a runtime
(or a mutated spec) that disagrees with the original spec is caught.

Documented list semantics: filters combine with AND; a comparison with an empty (null) value
never matches; ``contains`` is a case-insensitive (ASCII) substring test; results are sorted by
``sort_by`` (default: the tool's default sort, or the primary key) with ties broken by the
primary key ascending; null sorts first ascending; ``limit`` (default ``page_size``) and
``offset`` page the result, ``has_more`` says whether rows follow the page.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..spec import EntitySpec, EnvSpec, FieldType, ToolKind, ToolSpec
from .args import q, row_value

__all__ = ["read_rows", "read_row", "list_oracle", "effect_oracle", "project", "creates"]

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def read_rows(session: Any, ent: EntitySpec) -> list[dict[str, Any]]:
    cols = ", ".join(q(f.name) for f in ent.fields)
    rows = session.query(f"SELECT {cols} FROM {q(ent.name)}")
    return [{f.name: row_value(f.type, v) for f, v in zip(ent.fields, r)} for r in rows]


def read_row(session: Any, ent: EntitySpec, key: Any) -> dict[str, Any] | None:
    cols = ", ".join(q(f.name) for f in ent.fields)
    rows = session.query(f"SELECT {cols} FROM {q(ent.name)} WHERE {q(ent.primary_key)} = ?", [key])
    if not rows:
        return None
    return {f.name: row_value(f.type, v) for f, v in zip(ent.fields, rows[0])}


def call_key(session: Any, ent: EntitySpec, tool: ToolSpec, args: dict[str, Any]) -> Any:
    """The key of the row a get/update/delete/action call addresses: its key argument, or, for a
    singleton's keyless tool, the key of the one stored row (None when there is none)."""
    kp = tool.key_param
    if kp is not None:
        return args.get(kp.name)
    rows = session.query(
        f"SELECT {q(ent.primary_key)} FROM {q(ent.name)} ORDER BY {q(ent.primary_key)} LIMIT 1"
    )
    return rows[0][0] if rows else None


def creates(session: Any, ent: EntitySpec, tool: ToolSpec, args: dict[str, Any]) -> bool:
    """Whether a call of ``tool`` makes a new row: a create, or an upsert whose call names no stored
    row (no key argument, or a key no row has), read from the state before the call."""
    if tool.kind == ToolKind.create:
        return True
    if not tool.upsert:
        return False
    key = call_key(session, ent, tool, args)
    return key is None or read_row(session, ent, key) is None


def key_args(tool: ToolSpec, key: Any) -> dict[str, Any]:
    """The arguments that address the row ``key`` through ``tool`` (none for a singleton's keyless tool)."""
    kp = tool.key_param
    return {kp.name: key} if kp is not None else {}


def project(tool: ToolSpec, row: dict[str, Any]) -> dict[str, Any]:
    """A row as the tool returns it (only ``returns`` fields, in that order)."""
    if tool.returns:
        return {k: row[k] for k in tool.returns}
    return dict(row)


def _matches(v: Any, op: str, arg: Any) -> bool:
    if op == "in":
        return v is not None and v in arg
    if v is None:
        return False
    if op == "contains":
        return str(arg).translate(_ASCII_LOWER) in str(v).translate(_ASCII_LOWER)
    try:
        if op == "eq":
            return v == arg
        if op == "ne":
            return v != arg
        if op == "gt":
            return v > arg
        if op == "gte":
            return v >= arg
        if op == "lt":
            return v < arg
        if op == "lte":
            return v <= arg
    except TypeError:
        return False
    raise ValueError(op)


def _sort_key(v: Any) -> tuple:
    if v is None:
        return (0, 0)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float)):
        return (1, v)
    return (2, str(v))


def list_oracle(
    spec: EnvSpec, tool: ToolSpec, rows: list[dict[str, Any]], args: dict[str, Any], cache: dict | None = None
) -> dict[str, Any]:
    """The documented result of list ``tool`` with ``args`` over all ``rows`` of its entity.

    ``cache`` (a dict kept by the caller for one state) reuses the filtered, sorted rows
    across pages of the same query.
    """
    a = dict(args)
    paging = {k: a.pop(k) for k in ("limit", "offset") if k in a}
    ckey = json.dumps(a, sort_keys=True, default=str)
    out = cache.get(ckey) if cache is not None else None
    if out is None:
        out = _ordered(spec, tool, rows, a)
        if cache is not None:
            cache[ckey] = out
    limit = paging.get("limit", tool.page_size)
    offset = paging.get("offset", 0)
    page = out[offset : offset + limit]
    return {
        "items": [project(tool, r) for r in page],
        "count": len(page),
        "offset": offset,
        "has_more": len(out) > offset + limit,
    }


def _ordered(
    spec: EnvSpec, tool: ToolSpec, rows: list[dict[str, Any]], args: dict[str, Any]
) -> list[dict[str, Any]]:
    ent = spec.entity(tool.entity)
    a = dict(args)
    for p in tool.params:
        if p.default is not None and p.name not in a:
            a[p.name] = p.default
    out = rows
    for p in tool.params:
        v = a.get(p.name)
        if v is None or p.field is None:
            continue
        out = [r for r in out if _matches(r.get(p.field), p.op, v)]
    out = sorted(out, key=lambda r: _sort_key(r[ent.primary_key]))
    default = tool.sort.default if tool.sort and tool.sort.default else ent.primary_key
    sort_by = a.get("sort_by", default)
    order = a.get("sort_order")
    desc = (
        (order == "desc")
        if order
        else (bool(tool.sort and tool.sort.descending) if "sort_by" not in a else False)
    )
    if sort_by != ent.primary_key:
        out = sorted(out, key=lambda r: _sort_key(r[sort_by]), reverse=desc)
    elif desc:
        out = list(reversed(out))
    return out


class _Predict:
    """Predicts the rows a write call leaves, from the pre-call state and the original spec."""

    def __init__(self, spec: EnvSpec, tool: ToolSpec, session: Any):
        self.spec = spec
        self.tool = tool
        self.ent = spec.entity(tool.entity)
        self.session = session
        self.clock = dt.datetime.fromisoformat(spec.clock)

    def ref_ent(self, fk: str) -> EntitySpec:
        return self.spec.entity(self.ent.field(fk).ref)  # type: ignore[arg-type]

    def path(self, row: dict[str, Any], path: str) -> Any:
        if "." not in path:
            return row.get(path)
        fk, fname = path.split(".", 1)
        key = row.get(fk)
        if key is None:
            return None
        r = read_row(self.session, self.ref_ent(fk), key)
        return None if r is None else r.get(fname)

    def value(self, ef: Any, row: dict[str, Any], a: dict[str, Any], current: Any, ftype: FieldType) -> Any:
        if ef.uses_set:
            return ef.set
        if ef.param is not None:
            return a.get(ef.param, current)
        if ef.append_param is not None or ef.remove_param is not None:
            return _membership(ef, current, a)
        if ef.now:
            if ftype == FieldType.date:
                return self.clock.date().isoformat()
            return self.clock.isoformat(timespec="seconds")
        if ef.copy_from is not None:
            v = self.path(row, ef.copy_from)
            if ef.scale_param and v is not None and a.get(ef.scale_param) is not None:
                v = round(v * a[ef.scale_param], 2)
            return v
        if ef.increment is not None:
            return (current or 0) + ef.increment
        if ef.increment_from is not None:
            inc = self.path(row, ef.increment_from) or 0
        else:
            inc = a.get(ef.increment_param, 0) or 0
        return (current or 0) + (-inc if ef.negate_param else inc)

    def effects(self, row: dict[str, Any], a: dict[str, Any]) -> dict[tuple[str, Any], dict[str, Any]]:
        """Apply effects: own fields into ``row``; returns the predicted remote rows."""
        remote: dict[tuple[str, Any], dict[str, Any]] = {}
        for ef in self.tool.effects:
            if "." not in ef.field:
                row[ef.field] = self.value(ef, row, a, row.get(ef.field), self.ent.field(ef.field).type)
                continue
            fk, fname = ef.field.split(".", 1)
            key = row.get(fk)
            if key is None:
                continue
            te = self.ref_ent(fk)
            if (te.name, key) not in remote:
                r = read_row(self.session, te, key)
                if r is None:
                    continue
                remote[(te.name, key)] = r
            r = remote[(te.name, key)]
            r[fname] = self.value(ef, row, a, r.get(fname), te.field(fname).type)
        return remote


def _membership(ef: Any, current: Any, a: dict[str, Any]) -> list[Any]:
    """The documented meaning of append/remove: each value of the argument is an element once
    (``{match_key: value}`` in an array of objects); removing takes out every element it names."""
    arg = a.get(ef.append_param) if ef.append_param is not None else a.get(ef.remove_param)
    wanted = [] if arg is None else (arg if isinstance(arg, list) else [arg])
    key = ef.match_key
    out = list(current or [])

    def ident(x: Any) -> Any:
        return x.get(key) if key is not None and isinstance(x, dict) else x

    if ef.remove_param is not None:
        return [x for x in out if ident(x) not in wanted and x not in wanted]
    have = [ident(x) for x in out]
    for v in wanted:
        if v not in have and v not in out:
            out.append({key: v} if key is not None else v)
            have.append(v)
    return out


def _norm(ftype: FieldType, v: Any) -> Any:
    if v is None:
        return None
    if ftype == FieldType.number and isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if ftype == FieldType.boolean:
        return bool(v)
    return v


def normalize_row(ent: EntitySpec, row: dict[str, Any]) -> dict[str, Any]:
    return {f.name: _norm(f.type, row.get(f.name)) for f in ent.fields}


def effect_oracle(
    spec: EnvSpec, tool: ToolSpec, session: Any, args: dict[str, Any]
) -> dict[tuple[str, Any], dict[str, Any] | None]:
    """Predicted rows after ``tool(args)`` succeeds, read from the pre-call state of ``session``.

    Maps (entity, key) to the row's expected values (None: the row is deleted). For a create
    (or an upsert's call that names no stored row) the new row's key is unknown until the call,
    unless the call chose it: it is keyed ``(entity, None)``.
    """
    pred = _Predict(spec, tool, session)
    ent = pred.ent
    a = dict(args)
    for p in tool.params:
        if p.default is not None and p.name not in a:
            a[p.name] = p.default
    out: dict[tuple[str, Any], dict[str, Any] | None] = {}
    if creates(session, ent, tool, a):
        row: dict[str, Any] = {f.name: f.default for f in ent.fields}
        for p in tool.params:
            if p.field and p.name in a:
                row[p.field] = a[p.name]
        remote = pred.effects(row, a)
        out.update(remote)
        out[(ent.name, row.get(ent.primary_key))] = row
        return out
    key = call_key(session, ent, tool, a)
    cur = read_row(session, ent, key)
    if cur is None:
        return {}
    row = dict(cur)
    if tool.kind == ToolKind.delete:
        out.update(pred.effects(row, a))
        out[(ent.name, key)] = None
        for other in spec.entities:  # per-parent singletons go with their parent row
            if other.parent == ent.name and read_row(session, other, key) is not None:
                out[(other.name, key)] = None
        return out
    for p in tool.params:
        if p.field and not p.key and p.name in a:
            row[p.field] = a[p.name]
    out.update(pred.effects(row, a))
    out[(ent.name, key)] = row
    return out
