"""Argument validation for tool calls, compiled once per tool; and the write guard.

This is the hot path of every call, so each tool gets a small compiled checker rather
than a general JSON Schema validation (which costs more than the SQL it guards). The
JSON Schema a client sees (``tool_input_schema``) and this checker come from the same
ParamSpecs; the verifier checks the two agree.

``write_guard``: a create, update or action keeps what the seeder keeps. The row as it will be
stored holds values of each written field's role (a date in a date field, a documented status,
an email shaped like one) and keeps the entity's constraints on the fields the call writes
(``constraints.constraint_problem``: an end after its start, a past stamp not ahead of the
clock, total = quantity x price ...). A call that would break one is refused with a one-line
tool error and the state unchanged; constraints a call does not touch are not judged.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ArgumentError, ConstraintError
from ..spec import (
    DATE_PATTERN,
    DATETIME_PATTERN,
    MAX_IN_ITEMS,
    ROLE_SHAPES,
    STATUS_WORDS,
    TIME_ROLES,
    EntitySpec,
    FieldRole,
    FieldSpec,
    FieldType,
    ParamSpec,
    ToolKind,
    ToolSpec,
    is_time_of_day,
    parse_when,
)
from .constraints import constraint_problem, number_ranges

__all__ = ["ArgValidator", "to_db", "WriteGuard", "write_guard", "fit_write", "role_value"]

_TYPE_WORD = {
    FieldType.string: "a string",
    FieldType.integer: "an integer",
    FieldType.number: "a number",
    FieldType.boolean: "true or false",
    FieldType.date: "a date as YYYY-MM-DD",
    FieldType.datetime: "a date-time as YYYY-MM-DDTHH:MM:SS",
    FieldType.enum: "one of the allowed values",
    FieldType.object: "a JSON object",
    FieldType.array: "a JSON array",
}


_DATE_RE = re.compile(DATE_PATTERN)
_DATETIME_RE = re.compile(DATETIME_PATTERN)


def _is_date(v: Any) -> bool:
    # the shape the schema promises, then a real calendar date
    if not isinstance(v, str) or not _DATE_RE.match(v):
        return False
    try:
        dt.date.fromisoformat(v)
        return True
    except ValueError:
        return False


def _is_datetime(v: Any) -> bool:
    if not isinstance(v, str) or not _DATETIME_RE.match(v):
        return False
    try:
        dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


# SQLite stores integers as signed 64-bit; a larger one would be an OverflowError at bind time.
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
MAX_TEXT_CHARS = (
    1 << 20
)  # one string argument, or one object/array argument as JSON (sessions allow 64 MiB rows)


def _is_text(v: Any) -> bool:
    # a lone surrogate ('\ud800', which JSON can spell) cannot be encoded for SQLite
    if not isinstance(v, str) or len(v) > MAX_TEXT_CHARS:
        return False
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and INT_MIN <= v <= INT_MAX


def _is_number(v: Any) -> bool:
    # NaN and +-Infinity (and 1e309, which JSON parsers read as inf) have no JSON spelling
    if isinstance(v, float):
        return math.isfinite(v)
    return _is_int(v)


def _is_json(v: Any) -> bool:
    # what to_db will store: finite numbers, encodable strings, 64-bit integers inside too
    try:
        text = json.dumps(v, allow_nan=False)
        text.encode("utf-8")
    except (ValueError, TypeError, RecursionError):
        return False
    return len(text) <= MAX_TEXT_CHARS and _json_ints_ok(v)


def _json_ints_ok(v: Any) -> bool:
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
            if not all(isinstance(k, str) for k in x):
                return False
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, int) and not isinstance(x, bool) and not (INT_MIN <= x <= INT_MAX):
            return False
    return True


_CHECKS: dict[FieldType, Callable[[Any], bool]] = {
    FieldType.string: _is_text,
    FieldType.integer: _is_int,
    FieldType.number: _is_number,
    FieldType.boolean: lambda v: isinstance(v, bool),
    FieldType.date: _is_date,
    FieldType.datetime: _is_datetime,
    FieldType.enum: _is_text,
    FieldType.object: lambda v: isinstance(v, dict) and _is_json(v),
    FieldType.array: lambda v: isinstance(v, list) and _is_json(v),
}


def to_db(ftype: FieldType, v: Any) -> Any:
    """A validated Python value as stored in SQLite."""
    if v is None:
        return None
    if ftype == FieldType.boolean:
        return 1 if v else 0
    if ftype in (FieldType.object, FieldType.array):
        return json.dumps(v, sort_keys=True)
    if ftype == FieldType.number:
        return float(v)
    return v


def _why_not(v: Any) -> str:
    """What a value of the right kind lacks (said after 'must be a number')."""
    if isinstance(v, float) and not math.isfinite(v):
        return " (finite: NaN and Infinity have no JSON value)"
    if isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX:
        return " from -2^63 to 2^63-1"
    if isinstance(v, str) and len(v) > MAX_TEXT_CHARS:
        return f" of at most {MAX_TEXT_CHARS:,} characters"
    if isinstance(v, str) and not _is_text(v):
        return " of encodable characters (no lone surrogates)"
    if isinstance(v, (dict, list)):
        return (
            f" of finite numbers, 64-bit integers and encodable strings, at most {MAX_TEXT_CHARS:,} "
            "characters as JSON"
        )
    return ""


def _show(v: Any) -> str:
    """A short JSON-ish rendering of a refused value (which may itself not be JSON)."""
    if isinstance(v, int) and v.bit_length() > 128:
        return f"an integer of {v.bit_length()} bits"
    try:
        text = json.dumps(v, allow_nan=False, ensure_ascii=True)
    except (ValueError, TypeError, RecursionError):
        try:
            text = repr(v).encode("ascii", "backslashreplace").decode()
        except (ValueError, RecursionError):
            text = type(v).__name__
    if len(text) > 60:  # a 2**64 digit string or a long list: say what it is, not all of it
        text = text[:57] + "..."
    return text


class ArgValidator:
    """Checks one tool's arguments; returns them with defaults filled in."""

    def __init__(self, tool: ToolSpec):
        self.tool = tool
        self.params: dict[str, ParamSpec] = {p.name: p for p in tool.params}
        self.required = [p.name for p in tool.params if p.required]
        extra: dict[str, tuple[FieldType, list[str] | None, float | None, float | None]] = {}
        if tool.kind == ToolKind.list:
            extra["limit"] = (FieldType.integer, None, 1, tool.max_page_size)
            extra["offset"] = (FieldType.integer, None, 0, None)
            if tool.sort and tool.sort.fields:
                extra["sort_by"] = (FieldType.enum, list(tool.sort.fields), None, None)
                extra["sort_order"] = (FieldType.enum, ["asc", "desc"], None, None)
        self.extra = {k: v for k, v in extra.items() if k not in self.params}
        self.allowed = sorted(set(self.params) | set(self.extra))
        self._enums = {p.name: set(p.enum) for p in tool.params if p.enum}
        self._defaults = [(p.name, p.default) for p in tool.params if p.default is not None]

    def _fail(self, arg: str | None, msg: str) -> ArgumentError:
        return ArgumentError(f"{self.tool.name}: {msg}", tool=self.tool.name, argument=arg)

    def _check_value(
        self,
        name: str,
        ftype: FieldType,
        enum: list[str] | set[str] | None,
        lo: float | None,
        hi: float | None,
        v: Any,
    ) -> None:
        if not _CHECKS[ftype](v):
            raise self._fail(
                name, f"argument '{name}' must be {_TYPE_WORD[ftype]}{_why_not(v)}, got {_show(v)}"
            )
        if enum is not None and v not in enum:
            allowed = ", ".join(sorted(map(str, enum)))
            raise self._fail(name, f"argument '{name}' must be one of [{allowed}], got {_show(v)}")
        if lo is not None and v < lo:
            raise self._fail(name, f"argument '{name}' must be >= {lo:g}, got {v}")
        if hi is not None and v > hi:
            raise self._fail(name, f"argument '{name}' must be <= {hi:g}, got {v}")

    def __call__(self, args: dict[str, Any] | None) -> dict[str, Any]:
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise self._fail(None, f"arguments must be a JSON object, got {type(args).__name__}")
        for k in args:
            if k not in self.params and k not in self.extra:
                raise self._fail(
                    k, f"unknown argument '{k}'; valid arguments: {', '.join(self.allowed) or '(none)'}"
                )
        for r in self.required:
            if args.get(r) is None:
                rp = self.params[r]
                hint = f" ({rp.description})" if rp.description else ""
                raise self._fail(r, f"missing required argument '{r}'{hint}")
        out: dict[str, Any] = {}
        for k, v in args.items():
            if v is None:
                continue
            p = self.params.get(k)
            if p is not None:
                if p.op == "in":
                    if not isinstance(v, list) or not v:
                        raise self._fail(k, f"argument '{k}' must be a non-empty JSON array")
                    if len(v) > MAX_IN_ITEMS:
                        raise self._fail(
                            k, f"argument '{k}' may list at most {MAX_IN_ITEMS} values, got {len(v):,}"
                        )
                    for item in v:
                        self._check_value(k, p.type, self._enums.get(k), p.minimum, p.maximum, item)
                else:
                    self._check_value(k, p.type, self._enums.get(k), p.minimum, p.maximum, v)
            else:
                ftype, enum, lo, hi = self.extra[k]
                self._check_value(k, ftype, enum, lo, hi, v)
            out[k] = v
        for name, default in self._defaults:
            if name not in out:
                out[name] = default
        return out


# ---- the write guard ---------------------------------------------------------------------------


def _value_check(ent: EntitySpec, f: FieldSpec) -> tuple[Callable[[Any], bool], str] | None:
    """(test, what the value must be) for a string field whose role says what it holds."""
    if f.type != FieldType.string:
        return None
    role = ent.role_of(f)
    if role in (FieldRole.date, FieldRole.birth_date):
        return (lambda v: parse_when(v) is not None), "a date (YYYY-MM-DD)"
    if role == FieldRole.datetime:
        return (lambda v: parse_when(v) is not None), "a date-time (YYYY-MM-DDTHH:MM:SS)"
    if role == FieldRole.time:
        return is_time_of_day, "a time of day (HH:MM)"
    if f.enum:
        return None
    if role == FieldRole.status:
        known = {str(x).lower() for x in (f.examples or [])} | set(STATUS_WORDS)
        shown = ", ".join(sorted(str(x) for x in (f.examples or []))[:8]) or "active, pending, completed ..."
        return (lambda v: v.lower() in known), f"a status ({shown})"
    if role == FieldRole.internal_id and f.name != ent.primary_key and f.ref is None:
        return (lambda v: not (v.isalpha() and len(v) < 24 and not v.isupper())), "an id, not a word"
    shape = ROLE_SHAPES.get(role) if role is not None else None
    if shape is not None:
        word = role.value.replace("_", " ")  # type: ignore[union-attr]  # shape implies a role
        return (lambda v: bool(shape.match(v.strip()))), f"{'an' if word[0] in 'aeiou' else 'a'} {word}"
    return None


class WriteGuard:
    """What one write tool must keep: the role of each field it writes, and the constraints on
    those fields. Compiled once per environment and tool (``write_guard``)."""

    def __init__(self, ent: EntitySpec, tool: ToolSpec, clock: dt.datetime):
        self.tool = tool.name
        self.clock = clock
        self.create = tool.kind == ToolKind.create
        self.field_params = [(p.name, p.field) for p in tool.params if p.field and not p.key]
        self.values = {f.name: chk for f in ent.fields if (chk := _value_check(ent, f)) is not None}
        self.value_names = sorted(self.values)
        self.cons = ent.effective_constraints()
        self._cons = [(c, frozenset(c.fields), c.kind == "set_when") for c in self.cons]
        self.past = {c.fields[0] for c in self.cons if c.kind == "clock" and c.relation == "past"}
        # numbers with a documented or believable range (the audit's): name -> (low, high, integer, typical)
        self.ranges = {
            n: (lo, hi, integer, (tlo, thi)) for n, integer, lo, hi, tlo, thi in number_ranges(ent)
        }
        writes = tool.kind in (ToolKind.create, ToolKind.update, ToolKind.action)
        self.off = not writes or not (self.values or self.cons or self.ranges)  # nothing to judge: no cost

    def problem(self, row: dict[str, Any], written: Iterable[str]) -> tuple[str | None, str, bool] | None:
        """(the field at fault, why, whether a value breaks its role) for the first thing ``row``
        would break; None when it keeps everything. ``written``: the fields this call sets (a
        create sets every field)."""
        wrote = row.keys() if self.create else set(written)
        for name in self.value_names:
            if name in wrote:
                v = row.get(name)
                test, what = self.values[name]
                if isinstance(v, str) and not test(v):
                    return name, f"{name} must be {what}, got {json.dumps(v)[:60]}", True
        for name, (lo, hi, _, _) in self.ranges.items():
            v = row.get(name) if name in wrote else None
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not lo <= v <= hi:
                return name, f"{name} must be between {lo:g} and {hi:g}, got {v:g}", True
        for c, names, stamp_only in self._cons:
            if (c.fields[0] not in wrote) if stamp_only else names.isdisjoint(wrote):
                continue  # untouched (a stamp the call leaves alone is not the call's fault)
            why = constraint_problem(c, row, self.clock)
            if why is not None:
                return next((n for n in c.fields if n in wrote), None), why, False
        return None

    def check(self, row: dict[str, Any], a: dict[str, Any], own: dict[str, Any]) -> None:
        """Raise the tool error for ``problem`` of a call with arguments ``a`` whose effects wrote
        ``own`` (naming the argument that set the field); ``row`` is the row as it will be stored."""
        if self.off:
            return
        found = self.problem(row, [*(f for p, f in self.field_params if p in a), *own])
        if found is None:
            return
        field, why, bad_value = found
        arg = next((p for p, f in self.field_params if f == field and p in a), None) if field else None
        if arg is not None and bad_value:
            why = why.replace(f"{field} must", f"argument '{arg}' ({field}) must", 1)
        cls = ArgumentError if arg is not None and bad_value else ConstraintError
        raise cls(f"{self.tool}: {why}", tool=self.tool, argument=arg)


_GUARDS: weakref.WeakKeyDictionary[Any, dict[str, WriteGuard]] = weakref.WeakKeyDictionary()


def write_guard(env: Any, tool: ToolSpec) -> WriteGuard:
    """The ``WriteGuard`` of ``tool`` in environment ``env`` (an ``Environment``), made once."""
    per_env = _GUARDS.get(env)
    if per_env is None:
        per_env = _GUARDS[env] = {}
    g = per_env.get(tool.name)
    if g is None:
        g = per_env[tool.name] = WriteGuard(env.spec.entity(tool.entity), tool, env.clock)
    return g


_SHAPED: dict[FieldRole, Callable[[random.Random, int], str]] = {
    FieldRole.email: lambda r, n: f"verify.{n}@example.com",
    FieldRole.url: lambda r, n: f"https://example.com/verify/{n}",
    FieldRole.hostname: lambda r, n: f"verify-{n}.example.com",
    FieldRole.phone: lambda r, n: f"+1 555 {n:05d}",
    FieldRole.country_code: lambda r, n: r.choice(["US", "GB", "DE", "FR", "ES", "NL"]),
    FieldRole.currency: lambda r, n: r.choice(["USD", "EUR", "GBP"]),
    FieldRole.airport_code: lambda r, n: r.choice(["JFK", "LHR", "CDG", "AMS", "SFO"]),
    FieldRole.money: lambda r, n: f"{r.randint(5, 500)}.{r.choice(['00', '50', '99'])}",
    FieldRole.quantity: lambda r, n: str(r.randint(1, 5)),
    FieldRole.percentage: lambda r, n: str(r.randint(1, 60)),
    FieldRole.duration: lambda r, n: f"PT{r.randint(1, 4)}H",
}


def role_value(ent: EntitySpec, f: FieldSpec, rng: random.Random, clock: dt.datetime) -> Any:
    """A value a caller could write to field ``f`` that keeps its role and its clock constraints
    (a past stamp in the past, a birth date of an adult, a status of the documented ones, an email
    shaped like one); None where the field's type alone decides (a plain string, a future date)."""
    role = ent.role_of(f)
    if f.type not in (FieldType.string, FieldType.date, FieldType.datetime) or (
        f.type == FieldType.string and f.enum
    ):
        return None
    if role in TIME_ROLES or f.type != FieldType.string:
        if role == FieldRole.time and f.type == FieldType.string:
            return f"{rng.randint(8, 18):02d}:{rng.choice(['00', '15', '30', '45'])}"
        cons = [c for c in ent.effective_constraints() if c.fields[0] == f.name]
        age = next((c for c in cons if c.kind == "age"), None)
        past = any(c.kind == "clock" and c.relation == "past" for c in cons)
        if age is not None:
            lo, hi = age.min if age.min is not None else 18.0, age.max if age.max is not None else 90.0
            when = clock - dt.timedelta(days=rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)) * 365.25)
        elif past:
            when = clock - dt.timedelta(days=rng.randint(1, 90), hours=rng.randint(0, 23))
        elif f.type != FieldType.string:
            return None  # a date or date-time field: the caller's own future date
        else:
            when = clock + dt.timedelta(days=rng.randint(1, 90), hours=rng.randint(0, 23))
        as_dt = f.type == FieldType.datetime or (f.type == FieldType.string and role == FieldRole.datetime)
        return (
            when.replace(minute=0, second=0, microsecond=0).isoformat() if as_dt else when.date().isoformat()
        )
    if role == FieldRole.status:
        return rng.choice([str(x) for x in f.examples]) if f.examples else "active"
    make = _SHAPED.get(role) if role is not None else None
    return make(rng, rng.randint(10000, 99999)) if make is not None else None


def _as_like(d: dt.datetime, like: Any) -> str:
    return (
        d.date().isoformat() if isinstance(like, str) and len(like) == 10 else d.isoformat(timespec="seconds")
    )


def fit_write(
    ent: EntitySpec,
    tool: ToolSpec,
    before: dict[str, Any],
    args: dict[str, Any],
    own: dict[str, Any],
    clock: dt.datetime,
    rng: Any,
) -> bool:
    """Move the values a caller chose (``own``: field -> value, also in ``args``) so the row the
    write stores keeps the entity's order and product constraints; True when the guard would then
    accept it (for argument generators: a verifier's valid call, an audit's random calls)."""
    param_of = {p.field: p.name for p in tool.params if p.field and p.name in args}
    after = {**before, **own}
    effects: set[str] = set()  # own-row fields the tool's effects write (literal, clock, argument)
    for ef in tool.effects:
        if "." not in ef.field and ef.uses_set:
            after[ef.field] = ef.set
        elif "." not in ef.field and ef.now:
            date = ent.field(ef.field).type == FieldType.date
            after[ef.field] = clock.date().isoformat() if date else clock.isoformat(timespec="seconds")
        elif "." not in ef.field and ef.param is not None and ef.param in args:
            after[ef.field] = args[ef.param]
        else:
            continue
        effects.add(ef.field)

    def put(name: str, v: Any) -> None:
        after[name] = own[name] = v
        if name in param_of:
            args[param_of[name]] = v

    guard = WriteGuard(ent, tool, clock)
    if guard.off:
        return True
    for name in list(own):  # a value its role or a clock rule refuses: one of the role instead
        f = ent.field(name)
        singles = [c for c in guard.cons if c.kind in ("clock", "age") and c.fields[0] == name]
        bad = name in guard.values and isinstance(own[name], str) and not guard.values[name][0](own[name])
        if bad or any(constraint_problem(c, after, clock) for c in singles):
            v = role_value(ent, f, rng, clock)
            if v is not None:
                put(name, v)
        ranged = guard.ranges.get(name)
        x = own[name]
        if ranged is not None and isinstance(x, (int, float)) and not isinstance(x, bool):
            lo, hi, integer, (tlo, thi) = ranged
            if not lo <= x <= hi:  # out of its range: a typical value instead
                y = rng.uniform(tlo, thi) if math.isfinite(tlo) and math.isfinite(thi) else tlo
                y = y if math.isfinite(y) else (lo if math.isfinite(lo) else hi)
                put(name, int(round(y)) if integer else round(y, 2))
    for c in guard.cons:
        if c.kind == "order" and constraint_problem(c, after, clock) is not None:
            a_name, b_name = c.fields
            a, b = parse_when(after.get(a_name)), parse_when(after.get(b_name))
            lo, hi = c.min or 0.0, min(c.max if c.max is not None else 30 * 24.0, 30 * 24.0)
            if a is not None and b_name in guard.past:  # a past stamp after its start: before the clock
                hi = min(hi, (clock - a).total_seconds() / 3600.0)
            gap = dt.timedelta(hours=rng.uniform(lo, max(lo, hi)) if hi > lo else lo)
            if a is not None and b is not None and b_name in own:
                put(b_name, _as_like(a + gap, after[b_name]))
            elif a is not None and b is not None and a_name in own:
                put(a_name, _as_like(b - gap, after[a_name]))
        elif c.kind == "product" and c.fields[0] in own and constraint_problem(c, after, clock) is not None:
            q, p = after.get(c.fields[1]), after.get(c.fields[2])
            if isinstance(q, (int, float)) and isinstance(p, (int, float)):
                total = q * p
                put(c.fields[0], round(total, 2) if isinstance(total, float) else total)
    return guard.problem(after, [*own, *effects]) is None
