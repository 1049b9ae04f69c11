"""Arguments that should succeed: drawn from the session's current rows and the tool's spec.

``valid_args`` reads the state with read-only SQL (``Session.query``) and the spec, never the
runtime's own SQL, so a verifier built on it checks the runtime rather than agreeing with it:
keys and foreign keys come from existing rows that satisfy the tool's preconditions (also
conditions through a foreign key, ``flight_id.status``), numbers stay within bounds, unique
fields get fresh values, and arguments compared by a precondition (``seats_available >=
passengers``) are chosen to satisfy it.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

from ..errors import RuntimeToolError
from ..runtime.validate import fit_write
from ..spec import Condition, EntitySpec, EnvSpec, FieldSpec, FieldType, ParamSpec, ToolKind, ToolSpec
from .values import compare, condition_sql, db_value, q, row_value

__all__ = ["valid_args", "filter_args", "row_value", "compare", "condition_sql", "q"]

_TRIES = 12


class _Ctx:
    def __init__(self, session: Any, spec: EnvSpec, tool: ToolSpec, rng: random.Random):
        self.last_row: dict[str, Any] = {}  # the row the last attempt addressed, before the call
        self.last_own: dict[str, Any] = {}  # field -> value the last attempt writes
        self.last_args: dict[str, Any] = {}
        self.creating = tool.kind == ToolKind.create  # the call makes a new row (an upsert's may)
        self.session = session
        self.spec = spec
        self.tool = tool
        self.rng = rng
        self.ent = spec.entity(tool.entity)
        self.clock = dt.datetime.fromisoformat(spec.clock)

    def path_type(self, path: str) -> FieldType | None:
        parts = path.split(".")
        f = self.ent.field(parts[0])
        if len(parts) == 2:
            return self.spec.entity(f.ref).field(parts[1]).type  # type: ignore[arg-type]
        return f.type

    def pick_rows(
        self, ent: EntitySpec, conds: list[tuple[str, Condition]], k: int, extra: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Up to ``k`` random rows of ``ent`` meeting the literal conditions (paths relative to ``ent``)."""
        joins: dict[str, str] = {}
        where: list[str] = list(extra or [])
        params: list[Any] = []
        for path, c in conds:
            parts = path.split(".")
            if len(parts) == 2:
                fk = ent.field(parts[0])
                target = self.spec.entity(fk.ref)  # type: ignore[arg-type]
                alias = f"j_{parts[0]}"
                joins[alias] = (
                    f" LEFT JOIN {q(target.name)} AS {alias} "
                    f"ON {alias}.{q(target.primary_key)} = t.{q(parts[0])}"
                )
                col, ftype = f"{alias}.{q(parts[1])}", target.field(parts[1]).type
            else:
                col, ftype = f"t.{q(path)}", ent.field(path).type
            sql = condition_sql(col, c, ftype)
            if sql is not None:
                where.append(sql[0])
                params.extend(sql[1])
        base = f"FROM {q(ent.name)} AS t" + "".join(joins.values())
        if where:
            base += " WHERE " + " AND ".join(where)
        n = self.session.query(f"SELECT COUNT(*) {base}", params)[0][0]
        if n == 0:
            return []
        cols = ", ".join(f"t.{q(f.name)}" for f in ent.fields)
        offsets = sorted(self.rng.sample(range(n), min(k, n)))
        out = []
        for off in offsets:
            r = self.session.query(
                f"SELECT {cols} {base} ORDER BY t.{q(ent.primary_key)} LIMIT 1 OFFSET ?", [*params, off]
            )
            if r:
                out.append({f.name: row_value(f.type, v) for f, v in zip(ent.fields, r[0])})
        self.rng.shuffle(out)
        return out

    def path_value(self, row: dict[str, Any], path: str) -> Any:
        parts = path.split(".")
        if len(parts) == 1:
            return row.get(path)
        key = row.get(parts[0])
        if key is None:
            return None
        target = self.spec.entity(self.ent.field(parts[0]).ref)  # type: ignore[arg-type]
        f = target.field(parts[1])
        r = self.session.query(
            f"SELECT {q(f.name)} FROM {q(target.name)} WHERE {q(target.primary_key)} = ?", [key]
        )
        return row_value(f.type, r[0][0]) if r else None

    def fresh(self, ent: EntitySpec, f: FieldSpec, p: ParamSpec) -> Any:
        for _ in range(20):
            v = self.gen_value(p, f, unique=True)
            if not self.session.query(
                f"SELECT 1 FROM {q(ent.name)} WHERE {q(f.name)} = ? LIMIT 1", [db_value(f.type, v)]
            ):
                return v
        return v

    def gen_value(self, p: ParamSpec, f: FieldSpec | None, unique: bool = False) -> Any:
        rng = self.rng
        t = p.type
        enum = p.enum or (f.enum if f is not None else None)
        if enum:
            return rng.choice(enum) if t in (FieldType.enum, FieldType.string) else enum[0]
        lo, hi = p.minimum, p.maximum
        if t == FieldType.integer:
            a = int(lo) if lo is not None else (1 if hi is None or hi >= 1 else int(hi) - 5)
            b = int(hi) if hi is not None else max(a, 1) + (100000 if unique else 4)
            return rng.randint(a, max(a, b))
        if t == FieldType.number:
            low = lo if lo is not None else (1.0 if hi is None or hi >= 1 else hi - 10)
            high = hi if hi is not None else low + 500
            return round(rng.uniform(low, high), 2) if high - low > 0.02 else low
        if t == FieldType.boolean:
            return rng.random() < 0.5
        if t == FieldType.date:
            return (self.clock.date() + dt.timedelta(days=rng.randint(1, 90))).isoformat()
        if t == FieldType.datetime:
            return (self.clock + dt.timedelta(days=rng.randint(1, 90), hours=rng.randint(0, 23))).isoformat(
                timespec="seconds"
            )
        if t in (FieldType.object, FieldType.array):
            return self._json_value(p, f)
        name = f.name if f is not None else p.name
        n = rng.randint(10000, 99999)
        if "email" in name:
            return f"verify.{n}@example.com"
        if unique:
            return f"V{n}{rng.randint(100, 999)}"
        return f"{name.replace('_', ' ').title()} {n}"

    def _json_value(self, p: ParamSpec, f: FieldSpec | None) -> Any:
        """A non-empty object/array: a stored row's value of the field (shaped as the seed made
        it from the document), else a small one of the right JSON type. An empty ``{}`` would
        write what is often already there, and a write that changes nothing fails its check."""
        empty = "{}" if p.type == FieldType.object else "[]"
        if f is not None and any(x is f for x in self.ent.fields):
            col = q(f.name)
            rows = self.session.query(
                f"SELECT {col} FROM {q(self.ent.name)} WHERE {col} IS NOT NULL "
                f"AND {col} NOT IN ('{{}}', '[]', 'null') ORDER BY {col} LIMIT 20"
            )
            vals = []
            for (raw,) in rows:
                try:
                    v = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    continue
                if isinstance(v, dict if p.type == FieldType.object else list) and json.dumps(v) != empty:
                    vals.append(v)
            if vals:
                v = _with_new_leaf(self.rng.choice(vals), f"V{self.rng.randint(10000, 99999)}")
                if v is not None:
                    return v
        n = self.rng.randint(10000, 99999)
        return {"note": f"V{n}"} if p.type == FieldType.object else [f"V{n}"]

    def row_param_value(self, p: ParamSpec, f: FieldSpec, v: Any) -> Any:
        """A row value as an argument of ``p`` (None when it does not fit the parameter)."""
        if v is None:
            return None
        if p.enum and v not in p.enum:
            return None
        if (
            p.type in (FieldType.integer, FieldType.number)
            and isinstance(v, (int, float))
            and not isinstance(v, bool)
        ):
            if p.type == FieldType.integer and not float(v).is_integer():
                return None
            if (p.minimum is not None and v < p.minimum) or (p.maximum is not None and v > p.maximum):
                return None
            return int(v) if p.type == FieldType.integer else v
        if p.type in (FieldType.string, FieldType.enum) and isinstance(v, str):
            return v
        if p.type == FieldType.date and isinstance(v, str) and len(v) >= 10:
            return v[:10]
        if p.type == FieldType.datetime and isinstance(v, str) and len(v) >= 16:
            return v if "T" in v else None
        if p.type == FieldType.boolean and isinstance(v, bool):
            return v
        return None


def _with_new_leaf(v: Any, mark: str) -> Any:
    """A copy of a stored JSON value with its first string leaf changed (same shape, a new
    value); None when it holds no string."""
    if isinstance(v, str):
        return f"{v} {mark}"
    if isinstance(v, dict):
        for k, x in v.items():
            y = _with_new_leaf(x, mark)
            if y is not None:
                return {**v, k: y}
    if isinstance(v, list):
        for i, x in enumerate(v):
            y = _with_new_leaf(x, mark)
            if y is not None:
                return [*v[:i], y, *v[i + 1 :]]
    return None


def _shift(v: Any, ftype: FieldType | None, delta: int) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return v + delta
    if isinstance(v, str):
        try:
            if len(v) == 10:
                return (dt.date.fromisoformat(v) + dt.timedelta(days=delta)).isoformat()
            return (dt.datetime.fromisoformat(v) + dt.timedelta(days=delta)).isoformat(timespec="seconds")
        except ValueError:
            return v
    return v


def _solve_param(ctx: _Ctx, p: ParamSpec, op: str, actual: Any) -> Any:
    """A value of parameter ``p`` such that ``actual <op> value`` holds (None: give up)."""
    if actual is None:
        return None
    if p.type in (FieldType.integer, FieldType.number) and isinstance(actual, (int, float)):
        lo = p.minimum if p.minimum is not None else (1 if p.type == FieldType.integer else 0.01)
        hi = p.maximum if p.maximum is not None else max(lo, actual) + 10
        step = 1 if p.type == FieldType.integer else 0.01
        if op in ("gte", "gt"):
            hi = min(hi, actual - (step if op == "gt" else 0))
        elif op in ("lte", "lt"):
            lo = max(lo, actual + (step if op == "lt" else 0))
        elif op == "eq":
            lo = hi = actual
        if lo > hi:
            return None
        if p.type == FieldType.integer:
            import math

            a, b = math.ceil(lo), math.floor(hi)
            if a > b:
                return None
            # small values keep later calls possible (seats, stock)
            return ctx.rng.randint(a, min(b, a + 2))
        return round(ctx.rng.uniform(lo, hi), 2)
    if op in ("eq", "gte", "lte", "in"):
        return actual
    if op in ("gt",):
        return _shift(actual, None, -1)
    if op in ("lt",):
        return _shift(actual, None, 1)
    return None


def _field(ent: EntitySpec, name: str | None) -> FieldSpec | None:
    if name is None or not ent.has_field(name):
        return None
    return ent.field(name)


def valid_args(session: Any, env: Any, tool: ToolSpec, rng: random.Random) -> dict[str, Any] | None:
    """Arguments for ``tool`` that should succeed on the session's current state, or None.

    ``env`` is the Environment (or its EnvSpec). Deterministic for a state and ``rng`` state.
    """
    spec: EnvSpec = env if isinstance(env, EnvSpec) else env.spec
    ctx = _Ctx(session, spec, tool, rng)
    fallback = None
    for _ in range(_TRIES):
        try:
            args = _attempt(ctx)
        except _NoCall:
            return fallback
        if args is not None and (
            tool.kind not in (ToolKind.update, ToolKind.action) or ctx.creating or _changes(ctx)
        ):
            return args
        fallback = fallback or args  # a write of what is stored already: keep looking for a change
    return fallback


def _changes(ctx: _Ctx) -> bool:
    """The last attempt writes a value (an argument, or an action's literal) the row does not hold."""
    writes = dict(ctx.last_own)
    for ef in ctx.tool.effects:
        if "." in ef.field or not (ef.uses_set or ef.param is not None):
            return True  # a computed or remote effect (a clock, an increment): it moves the state
        if ef.uses_set:
            writes.setdefault(ef.field, ef.set)
        elif ef.param in ctx.last_args:
            writes[ef.field] = ctx.last_args[ef.param]
    return any(ctx.last_row.get(f) != v for f, v in writes.items())


class _NoCall(Exception):
    pass


def _key_row(ctx: _Ctx, literal: list[tuple[str, Condition]]) -> dict[str, Any]:
    """The row a get/update/delete/action call addresses: one satisfying the literal
    preconditions (a delete: one nothing references). _NoCall when there is none."""
    tool, ent = ctx.tool, ctx.ent
    extra = []
    if tool.kind == ToolKind.delete:
        for other in ctx.spec.entities:
            for f in other.fields:
                if f.ref == ent.name and not (other.singleton and f.name == other.primary_key):
                    extra.append(
                        f"NOT EXISTS (SELECT 1 FROM {q(other.name)} AS c "
                        f"WHERE c.{q(f.name)} = t.{q(ent.primary_key)})"
                    )
    conds = literal if tool.kind != ToolKind.get else []
    rows = ctx.pick_rows(ent, conds, 1, extra)
    if not rows and (extra or conds):
        rows = _fresh_row(ctx, conds, extra)
    if not rows:
        raise _NoCall
    return rows[0]


def _fresh_row(ctx: _Ctx, conds: list[tuple[str, Condition]], extra: list[str]) -> list[dict[str, Any]]:
    """No seeded row is in the state the call needs (a delete: every row is referenced; Resend's
    verify_domain: no domain is 'pending'): create one through the entity's own create tool, as
    an agent would, and address it when it is in that state (nothing references a new row yet;
    a create may set the status an action starts from)."""
    ent = ctx.ent
    for t in ctx.spec.tools:
        if t.kind != ToolKind.create or t.entity != ent.name:
            continue
        cargs = valid_args(ctx.session, ctx.spec, t, ctx.rng)
        if cargs is None:
            continue
        try:
            out = ctx.session.call(t.name, cargs)
        except RuntimeToolError:
            continue
        key = out.get(ent.primary_key) if isinstance(out, dict) else None
        if key is None:
            continue
        rows = ctx.pick_rows(ent, conds, 1, [*extra, f"t.{q(ent.primary_key)} = {_literal(key)}"])
        if rows:
            return rows
    return []


def _literal(v: Any) -> str:
    text = isinstance(v, bool) or not isinstance(v, (int, float))
    return "'" + str(v).replace("'", "''") + "'" if text else repr(v)


def _chosen_params(ctx: _Ctx) -> list[ParamSpec]:
    """The non-key parameters a call sets: every required one, and optional ones at random."""
    tool, rng = ctx.tool, ctx.rng
    field_params = [p for p in tool.params if not p.key or ctx.creating]
    joins = {ef.append_param for ef in tool.effects if ef.append_param}  # what a membership call adds
    chosen: list[ParamSpec] = []
    for p in field_params:
        if p.key and not ctx.creating:
            continue
        if p.required or p.name in joins:
            chosen.append(p)
        elif tool.kind in (ToolKind.get, ToolKind.delete):
            continue
        elif rng.random() < 0.5:
            chosen.append(p)
    if tool.kind == ToolKind.update and not ctx.creating and not any(p.field and not p.key for p in chosen):
        opts = [p for p in tool.params if p.field and not p.key]
        if not opts:
            raise _NoCall
        chosen.append(rng.choice(opts))
    return chosen


def _param_value(ctx: _Ctx, p: ParamSpec, literal: list[tuple[str, Condition]]) -> Any:
    """A value for one parameter: an existing row's key for a reference, a fresh value for a
    unique field, else a generated one that meets a create's literal preconditions."""
    ent, rng = ctx.ent, ctx.rng
    f = _field(ent, p.field)
    if f is not None and f.ref:
        target = ctx.spec.entity(f.ref)
        conds = [
            (path.split(".", 1)[1], c)
            for path, c in literal
            if ctx.creating and path.startswith(f.name + ".")
        ]
        rows = ctx.pick_rows(target, conds, 1)
        if not rows:
            raise _NoCall
        return rows[0][target.primary_key]
    if f is not None and (f.unique or (p.key and ctx.creating)):
        return ctx.fresh(ent, f, p)
    v = ctx.gen_value(p, f)
    if f is not None and ctx.creating:
        for c in [c for path, c in literal if path == f.name]:
            if c.op == "eq":
                v = c.value
            elif c.op == "in" and c.value:
                v = rng.choice(list(c.value))
            elif c.op in ("ne", "not_in") and (p.enum or f.enum):
                ok = [x for x in (p.enum or f.enum or []) if compare(x, c.op, c.value)]
                if ok:
                    v = rng.choice(ok)
    return v


def _solve_compared(ctx: _Ctx, args: dict[str, Any], row: dict[str, Any], own: dict[str, Any]) -> bool:
    """Set the arguments a precondition compares a field with; False when none satisfies it."""
    tool, ent = ctx.tool, ctx.ent
    by_name = {p.name: p for p in tool.params}
    for c in tool.preconditions:
        if not c.value_param:
            continue
        p = by_name[c.value_param]
        if c.value_param not in args and not p.required:
            continue  # the runtime skips a comparison with an absent argument
        actual = ctx.path_value(row, c.field)
        if ctx.creating and "." not in c.field and c.field in own:
            # both sides are arguments: keep the earlier, move the compared one
            fp = next((x for x in tool.params if x.field == c.field and x.name in args), None)
            if fp is not None and fp.name != c.value_param:
                delta = {"gt": 1, "gte": 0, "lt": -1, "lte": 0, "eq": 0, "ne": 1}.get(c.op)
                if delta is None:
                    continue
                nv = _shift(args[c.value_param], ctx.path_type(c.field), delta if delta else 0)
                if delta == 0 and c.op in ("gte", "lte"):
                    nv = _shift(args[c.value_param], None, 2 if c.op == "gte" else -2)
                args[fp.name] = nv
                row[c.field] = nv
                continue
        v = _solve_param(ctx, p, c.op, actual)
        if v is None:
            return False
        args[c.value_param] = v
        f = _field(ent, p.field)
        if f is not None:
            row[f.name] = v
    return True


def _attempt(ctx: _Ctx) -> dict[str, Any] | None:
    tool, ent = ctx.tool, ctx.ent
    if tool.kind == ToolKind.list:
        return _list_args(ctx)
    args: dict[str, Any] = {}
    row: dict[str, Any] = {}
    literal = [(c.field, c) for c in tool.preconditions if not c.value_param]
    # an upsert's call creates a row (no key, or a new one) or changes a stored one, at random
    ctx.creating = tool.kind == ToolKind.create or (tool.upsert and ctx.rng.random() < 0.5)
    if tool.kind in (ToolKind.get, ToolKind.update, ToolKind.delete, ToolKind.action) and not ctx.creating:
        key = tool.key_param
        row = _key_row(ctx, literal)
        ctx.last_row = dict(row)
        if key is not None:  # a singleton's keyless tools address its one row
            args[key.name] = row[ent.primary_key]
    own: dict[str, Any] = {}  # field -> value the call writes (create: the new row)
    for p in _chosen_params(ctx):
        v = args[p.name] = _param_value(ctx, p, literal)
        f = _field(ent, p.field)
        if f is not None:
            own[f.name] = v
    if (
        tool.kind == ToolKind.update
        and not ctx.creating
        and own
        and all(row.get(k) == v for k, v in own.items())
    ):
        return None  # writing the values the row holds tests nothing
    if not _members_to_remove(tool, row, args):
        return None  # a removal needs an element the row holds
    if ctx.creating:
        row = {**{f.name: f.default for f in ent.fields}, **own}
    if not _solve_compared(ctx, args, row, own):
        return None
    # check every precondition as the call would see the row
    if tool.kind != ToolKind.get:
        for c in tool.preconditions:
            if c.value_param and args.get(c.value_param) is None:
                continue
            expected = args.get(c.value_param) if c.value_param else c.value
            if not compare(ctx.path_value(row, c.field), c.op, expected):
                return None
    if tool.writes and not fit_write(ent, tool, row, args, own, ctx.clock, ctx.rng):  # roles, constraints
        return None
    ctx.last_own, ctx.last_args = own, args
    return args


def _members_to_remove(tool: ToolSpec, row: dict[str, Any], args: dict[str, Any]) -> bool:
    """Point each ``remove_param`` at an element the row's array holds (its ``match_key`` value for
    an array of objects); False when the array is empty (another row is tried)."""
    for ef in tool.effects:
        if ef.remove_param is None:
            continue
        items = row.get(ef.field) if isinstance(row.get(ef.field), list) else []
        if not items:
            return False
        first = items[0]
        value = first.get(ef.match_key) if ef.match_key and isinstance(first, dict) else first
        if value is None:
            return False
        p = tool.param(ef.remove_param)
        args[p.name] = [value] if p.type == FieldType.array else value
    return True


def filter_args(
    session: Any, env: Any, tool: ToolSpec, rng: random.Random, params: list[ParamSpec]
) -> dict[str, Any]:
    """Filter arguments of list ``tool`` for ``params``, with values taken from one random row."""
    spec: EnvSpec = env if isinstance(env, EnvSpec) else env.spec
    ctx = _Ctx(session, spec, tool, rng)
    return _filters(ctx, params)


def _filters(ctx: _Ctx, params: list[ParamSpec]) -> dict[str, Any]:
    rng, ent = ctx.rng, ctx.ent
    args: dict[str, Any] = {}
    rows = ctx.pick_rows(ent, [], 1)
    if not rows:
        return args
    row = rows[0]
    for p in params:
        f = ent.field(p.field)  # type: ignore[arg-type]
        v = ctx.row_param_value(p, f, row.get(f.name))
        if v is None:
            continue
        if p.op == "contains" and isinstance(v, str) and len(v) > 3:
            i = rng.randrange(0, len(v) - 2)
            v = v[i : i + rng.randint(2, 3)]
        elif p.op == "in":
            v = [v]
        args[p.name] = v
    return args


def _list_args(ctx: _Ctx) -> dict[str, Any]:
    tool, rng = ctx.tool, ctx.rng
    filters = [p for p in tool.params if p.field]
    args = _filters(ctx, rng.sample(filters, min(len(filters), rng.choice([0, 1, 1, 2]))))
    for p in tool.params:
        if p.required and p.name not in args:
            f = _field(ctx.ent, p.field)
            v = ctx.gen_value(p, f)
            args[p.name] = [v] if p.op == "in" else v
    if rng.random() < 0.3:
        args["limit"] = rng.randint(1, min(tool.max_page_size, 25))
    if rng.random() < 0.2:
        args["offset"] = rng.randint(0, 5)
    if tool.sort and tool.sort.fields and rng.random() < 0.3:
        args["sort_by"] = rng.choice(tool.sort.fields)
        args["sort_order"] = rng.choice(["asc", "desc"])
    return args
