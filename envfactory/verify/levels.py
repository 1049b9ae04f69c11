"""L1 (per-tool properties) and L2 (interactions) checks of an environment.

Every check takes the *expected* spec (what the environment claims, or the original of a
mutant) and the environment under test (anything with ``spec``, ``new_session(snapshot)``,
``snapshot_from_bytes`` and ``template``): arguments, the list and effect oracles and the
output schemas come from the expected spec, calls go to the environment under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import SchemaError

from ..errors import ArgumentError, NotFoundError, PreconditionError, RuntimeToolError
from ..spec import Condition, EnvSpec, FieldType, ToolKind, ToolSpec, tool_input_schema, tool_output_schema
from .args import _shift, compare, filter_args, valid_args
from .oracle import (
    call_key,
    effect_oracle,
    key_args,
    list_oracle,
    normalize_row,
    project,
    read_row,
    read_rows,
)
from .schemas import SchemaValidator, check_schema, schema_validator
from .smoke import ToolCheck, malformed_calls, tool_rng

__all__ = ["check_l1", "check_l2", "check_tool_l1", "check_tool_l2", "fk_violations"]


_MAX_PAGES = 5


class _Fail(Exception):
    pass


def fk_violations(session: Any) -> list[tuple]:
    """Rows whose foreign key points nowhere (SQLite's foreign_key_check)."""
    return session.query("SELECT * FROM pragma_foreign_key_check")


def _missing_key(ftype: FieldType) -> Any:
    return 987654321 if ftype == FieldType.integer else "ZZ_MISSING_0000"


class _Ctx:
    def __init__(self, expected: EnvSpec, env: Any, tool: ToolSpec, seed: int, level: str):
        self.spec = expected
        self.env = env
        self.tool = tool
        self.ent = expected.entity(tool.entity)
        self.rng = tool_rng(seed, tool.name, level)
        self.level = level
        self._in: SchemaValidator | None = None
        self._out: SchemaValidator | None = None

    @property
    def in_validator(self) -> SchemaValidator:
        if self._in is None:
            self._in = schema_validator(tool_input_schema(self.tool))
        return self._in

    @property
    def out_validator(self) -> SchemaValidator:
        if self._out is None:
            self._out = schema_validator(tool_output_schema(self.spec, self.tool))
        return self._out

    def fail(self, msg: str) -> _Fail:
        return _Fail(msg)

    def args(self, s: Any) -> dict[str, Any]:
        a = valid_args(s, self.spec, self.tool, self.rng)
        if a is None:
            raise _Fail("no valid call found in the seeded state")
        return a

    def ok_call(self, s: Any, args: dict[str, Any], what: str = "valid call") -> Any:
        h0 = s.state_hash()
        try:
            out = s.call(self.tool.name, args)
        except RuntimeToolError as e:
            raise _Fail(f"{what} {json.dumps(args)[:200]} failed: {e.code}: {e}") from None
        # every item has the same schema: the first ten stand for a long page (jsonschema is slow)
        shown = {**out, "items": out["items"][:10]} if isinstance(out.get("items"), list) else out
        err = next(iter(self.out_validator.iter_errors(shown)), None)
        if err is not None:
            raise _Fail(f"{what}: result does not match the output schema: {err.message[:200]}")
        h1 = s.state_hash()
        if self.tool.writes:
            if fk_violations(s):
                raise _Fail(f"{what} {json.dumps(args)[:200]} broke a foreign key")
        elif h1 != h0:
            raise _Fail(f"read call {json.dumps(args)[:200]} changed the state")
        return out

    def bad_call(
        self, s: Any, args: dict[str, Any], exc: type, what: str, name: str | None = None
    ) -> RuntimeToolError:
        h0 = s.state_hash()
        try:
            s.call(self.tool.name, args)
        except exc as e:  # type: ignore[misc]
            if name and name not in str(e):
                raise _Fail(f"{what}: the error does not name '{name}': {e}") from None
            if not str(e).strip():
                raise _Fail(f"{what}: the error has no message") from None
            if s.state_hash() != h0:
                raise _Fail(f"{what}: the failed call changed the state") from None
            return e
        except RuntimeToolError as e:
            raise _Fail(f"{what}: expected {exc.__name__}, got {e.code}: {e}") from None
        raise _Fail(f"{what}: call {json.dumps(args)[:200]} was accepted")


# ---- L1 ---------------------------------------------------------------------------------------


def _violate(op: str, expected: Any, ftype: FieldType | None, enum: list[str] | None) -> tuple[bool, Any]:
    """A value for which ``compare(value, op, expected)`` is false: (found, value)."""
    cands: list[Any] = []
    if op == "is_null":
        cands = ([enum[0]] if enum else []) + ["x", 1, "2026-01-01"]
    elif op == "not_null":
        cands = [None]
    elif op in ("eq", "in"):
        if ftype == FieldType.boolean:
            cands = [False, True]
        elif enum:
            cands = list(enum)
        elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
            cands = [expected + 1]
        elif isinstance(expected, list) and expected and isinstance(expected[0], (int, float)):
            cands = [max(expected) + 1]
        else:
            cands = ["zz_other"]
    elif op == "ne":
        cands = [expected]
    elif op == "not_in":
        cands = list(expected or [])[:1]
    elif op in ("gt", "lte"):
        cands = [expected, _shift(expected, ftype, -1 if op == "gt" else 1)]
    elif op in ("gte", "lt"):
        cands = [
            _shift(expected, ftype, -1 if op == "gte" else 1),
            _shift(expected, ftype, -5 if op == "gte" else 5),
        ]
    for v in cands:
        if not compare(v, op, expected):
            return True, v
    return False, None


def _precondition_case(c: _Ctx, cond: Condition, idx: int) -> str | None:
    """Make ``cond`` fail (by state or argument) and expect a PreconditionError. None: done."""
    tool, ent, spec = c.tool, c.ent, c.spec
    with c.env.new_session() as s0:
        args = c.args(s0)
    by_field = {p.field: p for p in tool.params if p.field}
    parts = cond.field.split(".")
    if len(parts) == 2:
        tent = spec.entity(ent.field(parts[0]).ref)  # type: ignore[arg-type]
        tf = tent.field(parts[1])
    else:
        tent, tf = ent, ent.field(parts[0])
    expected = args.get(cond.value_param) if cond.value_param else cond.value
    if cond.value_param and expected is None:
        return "skipped: compared argument absent"
    # an own field of a new row is an argument: violate through the argument
    if tool.kind == ToolKind.create and len(parts) == 1:
        p = by_field.get(tf.name)
        if p is None or p.name not in args:
            return "skipped: field not set by an argument"
        found, v = _violate(cond.op, expected, tf.type, p.enum or tf.enum)
        if not found or v is None:
            return "skipped: no violating value"
        if (p.minimum is not None and isinstance(v, (int, float)) and v < p.minimum) or (
            p.maximum is not None and isinstance(v, (int, float)) and v > p.maximum
        ):
            return "skipped: violating value out of bounds"
        bad = {**args, p.name: v}
        with c.env.new_session() as s:
            c.bad_call(s, bad, PreconditionError, f"precondition {cond.field} {cond.op}")
        return None
    # otherwise change the row the call reads
    if tool.kind == ToolKind.create:
        fk_param = by_field.get(parts[0])
        if fk_param is None or fk_param.name not in args:
            return "skipped: foreign key not set by an argument"
        key = args[fk_param.name]
    elif len(parts) == 2:
        with c.env.new_session() as s0:
            row = read_row(s0, ent, call_key(s0, ent, tool, args))
        key = row.get(parts[0]) if row else None
        if key is None:
            return "skipped: no referenced row"
    else:
        with c.env.new_session() as s0:
            key = call_key(s0, ent, tool, args)
    found, v = _violate(cond.op, expected, tf.type, tf.enum)
    if not found or (v is None and not tf.nullable):
        return "skipped: no violating value"
    if tf.name == tent.primary_key or tf.ref:
        return "skipped: would change a key"
    try:
        snap = c.env.snapshot_with([(tent.name, key, tf.name, v)])
    except RuntimeToolError as e:  # the schema refuses the value (or the row is gone)
        return f"skipped: {e}"
    with c.env.new_session(snap) as s:
        c.bad_call(s, args, PreconditionError, f"precondition {cond.field} {cond.op} {json.dumps(expected)}")
    return None


def check_tool_l1(expected: EnvSpec, env: Any, tool: ToolSpec, *, seed: int = 0) -> list[str]:
    """L1 failures of one tool (empty: passed)."""
    c = _Ctx(expected, env, tool, seed, "L1")
    fails: list[str] = []

    def run(fn: Callable[[], Any]) -> None:
        try:
            fn()
        except _Fail as e:
            fails.append(str(e))

    try:
        check_schema(tool_input_schema(tool))
    except SchemaError as e:
        return [f"input schema is not valid JSON Schema: {e.message}"]

    def valid() -> None:
        with env.new_session() as s:
            args = c.args(s)
            err = next(iter(c.in_validator.iter_errors(args)), None)
            if err is not None:
                raise _Fail(
                    f"valid arguments {json.dumps(args)[:200]} rejected by the input schema: {err.message}"
                )
            for what, bad, name in _l1_malformed(tool, args):
                if c.in_validator.is_valid(bad):
                    raise _Fail(f"{what}: accepted by the input schema")
                c.bad_call(s, bad, ArgumentError, what, name)
            c.ok_call(s, args)

    def not_found() -> None:
        with env.new_session() as s:
            args = c.args(s)
            key = tool.key_param
            if key is not None and tool.selects_row:
                missing = {**args, key.name: _missing_key(key.type)}
                c.bad_call(s, missing, NotFoundError, f"missing {tool.entity} key", key.name)
                if not key.required:  # optional as documented: the schema lets a call leave it out
                    without = {k: v for k, v in args.items() if k != key.name}
                    c.bad_call(s, without, ArgumentError, f"no {tool.entity} key given", key.name)
            if tool.kind in (ToolKind.create, ToolKind.update, ToolKind.action):
                for p in tool.params:
                    if p.key or not p.field or not c.ent.field(p.field).ref:
                        continue
                    if p.type not in (FieldType.string, FieldType.integer):
                        continue
                    bad = {**args, p.name: _missing_key(p.type)}
                    c.bad_call(
                        s, bad, NotFoundError, f"missing {c.ent.field(p.field).ref} '{p.name}'", p.name
                    )

    run(valid)
    run(not_found)
    for i, cond in enumerate(tool.preconditions):
        run(lambda cond=cond, i=i: _precondition_case(c, cond, i))  # type: ignore[misc]  # mypy cannot infer lambdas with default args
    return fails


def _l1_malformed(tool: ToolSpec, args: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    out = malformed_calls(tool, args)
    for p in tool.params:
        if p.required:
            out.append(
                (f"missing required '{p.name}'", {k: v for k, v in args.items() if k != p.name}, p.name)
            )
        if p.enum:
            out.append(
                (
                    f"out-of-enum '{p.name}'",
                    {**args, p.name: ["zz_bad"] if p.op == "in" else "zz_bad"},
                    p.name,
                )
            )
        if p.minimum is not None and p.type in (FieldType.integer, FieldType.number) and p.op != "in":
            out.append((f"'{p.name}' below minimum", {**args, p.name: int(p.minimum) - 1}, p.name))
        if p.maximum is not None and p.type in (FieldType.integer, FieldType.number) and p.op != "in":
            out.append((f"'{p.name}' above maximum", {**args, p.name: int(p.maximum) + 1}, p.name))
        if p.name in args:
            from .smoke import _wrong_value

            out.append((f"wrong type for '{p.name}'", {**args, p.name: _wrong_value(p)}, p.name))
    if tool.kind == ToolKind.list:
        out.append(("limit above max_page_size", {**args, "limit": tool.max_page_size + 1}, "limit"))
        out.append(("limit 0", {**args, "limit": 0}, "limit"))
        out.append(("negative offset", {**args, "offset": -1}, "offset"))
    return out


# ---- L2 ---------------------------------------------------------------------------------------


def _find_tool(spec: EnvSpec, entity: str, kind: ToolKind) -> ToolSpec | None:
    return next((t for t in spec.tools if t.entity == entity and t.kind == kind), None)


def _check_effects(c: _Ctx, s: Any, args: dict[str, Any], predicted: dict, out: dict) -> None:
    spec = c.spec
    ent = c.ent
    if c.tool.kind == ToolKind.create or (c.tool.upsert and (ent.name, None) in predicted):
        key = out.get(ent.primary_key)
        predicted = {
            (t, (key if (t == ent.name and k is None) or (t == ent.name and k == key) else k)): r
            for (t, k), r in predicted.items()
        }
        own = predicted.get((ent.name, key))
        if own is not None:
            own[ent.primary_key] = key
    d = s.diff()
    touched = set()
    for kind in ("added", "removed"):
        for table, rows in getattr(d, kind).items():
            pk = spec.entity(table).primary_key
            touched |= {(table, r[pk]) for r in rows}
    for table, rows in d.changed.items():
        touched |= {(table, r["key"]) for r in rows}
    extra = touched - set(predicted)
    if extra:
        raise _Fail(
            f"call {json.dumps(args)[:160]} changed rows the spec does not touch: {sorted(map(str, extra))[:3]}"
        )
    for (table, key), row in predicted.items():
        te = spec.entity(table)
        actual = read_row(s, te, key)
        if row is None:
            if actual is not None:
                raise _Fail(
                    f"call {json.dumps(args)[:160]}: {table} {key!r} should be deleted but still exists"
                )
            continue
        if actual is None:
            raise _Fail(f"call {json.dumps(args)[:160]}: {table} {key!r} missing after the call")
        want, got = normalize_row(te, row), normalize_row(te, actual)
        if want != got:
            diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
            raise _Fail(
                f"call {json.dumps(args)[:160]}: {table} {key!r} fields (expected, actual) {json.dumps(diff, default=str)[:240]}"
            )
        if table == ent.name and c.tool.kind != ToolKind.delete:
            if normalize_row(te, {**want, **out}) != want or set(out) - set(want):
                raise _Fail(
                    f"call {json.dumps(args)[:160]} returned {json.dumps(out, default=str)[:200]}, "
                    f"not the stored row"
                )
            if c.tool.returns and list(out) != list(c.tool.returns):
                raise _Fail(f"result fields {list(out)} differ from the declared {c.tool.returns}")


def _l2_read(c: _Ctx) -> None:
    tool, ent = c.tool, c.ent
    with c.env.new_session() as s:
        if tool.kind == ToolKind.get:
            for _ in range(3):
                args = c.args(s)
                out = c.ok_call(s, args)
                want = project(tool, read_row(s, ent, call_key(s, ent, tool, args)) or {})
                if normalize_row(ent, out) != normalize_row(ent, want) or list(out) != list(want):
                    raise _Fail(
                        f"get {json.dumps(args)} returned {json.dumps(out, default=str)[:200]}, "
                        f"stored row is {json.dumps(want, default=str)[:200]}"
                    )
            return
        rows = read_rows(s, ent)
        cache: dict = {}
        base = _required_base(c, s)  # a nested list needs its parent's id in every call
        cases = [base] + [c.args(s) for _ in range(6)]
        # a page walk and each sort order
        cases.append({**base, "limit": 3, "offset": 2})
        if tool.sort:
            for f in tool.sort.fields:
                cases.append({**base, "sort_by": f, "limit": 5})
                cases.append({**base, "sort_by": f, "sort_order": "desc", "limit": 5, "offset": 1})
        for args in cases:
            out = c.ok_call(s, args)
            want = list_oracle(c.spec, tool, rows, args, cache)
            if _norm_page(ent, out) != _norm_page(ent, want):
                raise _Fail(_page_diff(args, out, want, ent.primary_key))
        # each filter alone, every page of its result (capped)
        for p in tool.params:
            if not p.field:
                continue
            fa = filter_args(s, c.spec, tool, c.rng, [p])
            if not fa:
                continue
            fa = {**base, **fa}
            for page in range(_MAX_PAGES):
                args = {**fa, "limit": tool.max_page_size, "offset": page * tool.max_page_size}
                out = c.ok_call(s, args)
                want = list_oracle(c.spec, tool, rows, args, cache)
                if _norm_page(ent, out) != _norm_page(ent, want):
                    raise _Fail(_page_diff(args, out, want, ent.primary_key))
                if not want["has_more"]:
                    break


def _required_base(c: _Ctx, s: Any) -> dict[str, Any]:
    """Values for a list's required filters (a parent id) taken from one stored row, so the
    list's fixed cases (no filter, a page walk, each sort order) are valid calls with results."""
    req = [p for p in c.tool.params if p.required and p.field]
    if not req:
        return {}
    base = filter_args(s, c.spec, c.tool, c.rng, req)
    if len(base) < len(req):
        full = c.args(s)  # no stored row: the generated valid arguments carry every required one
        base = {p.name: full[p.name] for p in c.tool.params if p.required and p.name in full}
    return base


def _lister_args(lister: ToolSpec, row: dict[str, Any] | None) -> dict[str, Any] | None:
    """The call of ``lister`` that would show ``row`` (its required filters from the row); None: cannot."""
    la: dict[str, Any] = {"limit": lister.max_page_size}
    for p in lister.params:
        if not p.required:
            continue
        if row is None or not p.field or row.get(p.field) is None:
            return None
        la[p.name] = [row[p.field]] if p.op == "in" else row[p.field]
    return la


def _norm_page(ent: Any, page: dict) -> Any:
    # 1 == 1.0 and True == 1 in Python, so plain equality compares values; keys compare in order
    items = page.get("items", [])
    return {**page, "__keys": [list(r) for r in items[:1]]}


def _page_diff(args: dict, out: dict, want: dict, pk: str) -> str:
    got_keys = [r.get(pk) for r in out.get("items", [])]
    want_keys = [r.get(pk) for r in want["items"]]
    if got_keys != want_keys:
        return (
            f"list {json.dumps(args)[:160]} returned keys {got_keys[:6]} (count {out.get('count')}), "
            f"the filters and order documented give {want_keys[:6]} (count {want['count']})"
        )
    if (
        out.get("has_more") != want["has_more"]
        or out.get("offset") != want["offset"]
        or out.get("count") != want["count"]
    ):
        return (
            f"list {json.dumps(args)[:160]}: paging fields count/offset/has_more "
            f"{out.get('count')}/{out.get('offset')}/{out.get('has_more')}, expected "
            f"{want['count']}/{want['offset']}/{want['has_more']}"
        )
    return f"list {json.dumps(args)[:160]}: item values differ from the stored rows"


def _repeat_must_not_change(tool: ToolSpec) -> bool:
    """An action that sets a field of its row moves a state: repeating it must fail or change nothing.

    Only actions made purely of increments (add points, top up) may move the state again.
    """
    absolute = all(
        e.uses_set or e.now or e.param is not None or e.copy_from is not None for e in tool.effects
    )
    moves = any(e.uses_set and "." not in e.field for e in tool.effects)
    return absolute or moves


def _l2_write(c: _Ctx, sample: int) -> None:
    tool, ent, spec = c.tool, c.ent, c.spec
    getter = _find_tool(spec, tool.entity, ToolKind.get)
    with c.env.new_session() as s:
        args = c.args(s)
        before = read_row(s, ent, call_key(s, ent, tool, args)) if tool.kind == ToolKind.delete else None
        predicted = effect_oracle(spec, tool, s, args)
        out = c.ok_call(s, args)
        _check_effects(c, s, args, predicted, out)
        made = tool.kind == ToolKind.create or tool.upsert  # (an upsert answers the row it made or changed)
        key = out.get(ent.primary_key) if made else call_key(s, ent, tool, args)
        if getter is not None and key is not None:
            gargs = key_args(getter, key)
            if tool.kind == ToolKind.delete:
                try:
                    s.call(getter.name, gargs)
                    raise _Fail(f"{getter.name} still finds {ent.name} {key!r} after delete")
                except NotFoundError:
                    pass
                except RuntimeToolError as e:
                    raise _Fail(f"{getter.name} after delete: expected not_found, got {e.code}") from None
            else:
                try:
                    got = s.call(getter.name, gargs)
                except RuntimeToolError as e:
                    raise _Fail(
                        f"{getter.name} cannot read {ent.name} {key!r} after {tool.name}: {e}"
                    ) from None
                stored = project(getter, read_row(s, ent, key) or {})
                if normalize_row(ent, got) != normalize_row(ent, stored):
                    raise _Fail(f"{getter.name} after {tool.name} disagrees with the stored row")
                if tool.kind != ToolKind.delete and tool.returns is None and getter.returns is None:
                    if normalize_row(ent, got) != normalize_row(ent, out):
                        raise _Fail(
                            f"{tool.name} returned {json.dumps(out, default=str)[:160]} but "
                            f"{getter.name} then returns {json.dumps(got, default=str)[:160]}"
                        )
        if tool.kind == ToolKind.delete:
            listers = sorted(
                (t for t in spec.tools if t.entity == tool.entity and t.kind == ToolKind.list),
                key=lambda t: sum(p.required for p in t.params),
            )
            lister, la = next(
                ((t, a) for t in listers if (a := _lister_args(t, before)) is not None), (None, None)
            )
            if lister is not None and la is not None:
                rows = read_rows(s, ent)
                page = s.call(lister.name, la)
                if any(r.get(ent.primary_key) == key for r in page["items"]):
                    raise _Fail(f"{lister.name} still returns deleted {ent.name} {key!r}")
                want = list_oracle(spec, lister, rows, la)
                if [r.get(ent.primary_key) for r in page["items"]] != [
                    r.get(ent.primary_key) for r in want["items"]
                ]:
                    raise _Fail(f"{lister.name} after delete differs from the stored rows")
        if tool.kind == ToolKind.action:
            h = s.state_hash()
            try:
                s.call(tool.name, args)
            except PreconditionError as e:
                if not str(e).strip():
                    raise _Fail("repeated action failed without a message") from None
                if s.state_hash() != h:
                    raise _Fail("repeated action failed but changed the state") from None
            except RuntimeToolError as e:
                raise _Fail(
                    f"repeated action: expected precondition_failed or no change, got {e.code}: {e}"
                ) from None
            else:
                if s.state_hash() != h and _repeat_must_not_change(tool):
                    raise _Fail(
                        f"{tool.name} can be repeated on the same {ent.name} and changes the state again; "
                        f"add a precondition on the state it moves"
                    )


def check_tool_l2(
    expected: EnvSpec, env: Any, tool: ToolSpec, *, seed: int = 0, samples: int = 2
) -> list[str]:
    """L2 failures of one tool (empty: passed)."""
    fails: list[str] = []
    c = _Ctx(expected, env, tool, seed, "L2")
    try:
        if tool.writes:
            for i in range(samples):
                _l2_write(c, i)
        else:
            _l2_read(c)
    except _Fail as e:
        fails.append(str(e))
    return fails


def _run(
    expected: EnvSpec, env: Any, level: str, fn: Callable[..., list[str]], seed: int, tools: list[str] | None
) -> list[ToolCheck]:
    out = []
    for t in expected.tools:
        if tools is not None and t.name not in tools:
            continue
        try:
            fails = fn(expected, env, t, seed=seed)
        except Exception as e:  # a crash is a finding about the tool
            fails = [f"crashed: {type(e).__name__}: {e}"]
        out.append(ToolCheck(t.name, not fails, level, "; ".join(fails) if fails else "ok"))
    return out


def check_l1(
    env: Any, *, expected: EnvSpec | None = None, seed: int = 0, tools: list[str] | None = None
) -> list[ToolCheck]:
    """L1 verdict per tool of ``env`` (checked against ``expected``, default ``env.spec``)."""
    return _run(expected or env.spec, env, "L1", check_tool_l1, seed, tools)


def check_l2(
    env: Any, *, expected: EnvSpec | None = None, seed: int = 0, tools: list[str] | None = None
) -> list[ToolCheck]:
    """L2 verdict per tool of ``env`` (checked against ``expected``, default ``env.spec``)."""
    return _run(expected or env.spec, env, "L2", check_tool_l2, seed, tools)
