"""Audit an environment's seeded state (and its state after tool calls) against field roles and
cross-field constraints: would a person believe these rows?

Checks, each a count of violations over the values (or rows) it looked at, with examples:

- ``constraint``: the entity's constraints (stated or inferred, ``envfactory.spec.roles``) and the
  believable ranges of numbers: an end before its start, an arrival three days after the
  departure, a traveller born after the clock, a completed visit in the future, 995 guests;
- ``non_date``: a date, date-time or time field holding something else;
- ``status_word``: a status holding neither a documented value nor a status word ("happy");
- ``id_word``: a non-key ``*_id`` holding a plain word;
- ``shape``: an email without ``@``, a URL that is not one, a currency that is not ISO 4217 ...;
- ``person_name``: a person's name on something that is not a person (a category "Candice
  Stone", a hotel "Scott Sharp");
- ``lorem``: free text that is one placeholder word ("threat");
- ``empty``: object and array values that are empty (a rate: ``violations / checked``).

Every figure is computed from the environment's own template database, deterministically.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..runtime import Environment
from ..runtime.constraints import believable_range
from ..spec import (
    PERSON_ROLES,
    ROLE_SHAPES,
    STATUS_WORDS,
    TIME_ROLES,
    ConstraintSpec,
    EntitySpec,
    FieldRole,
    FieldSpec,
    FieldType,
    ToolKind,
    gap_hours,
    is_time_of_day,
    labels_for,
    parse_when,
    titles_for,
)

__all__ = [
    "CHECKS",
    "AuditCheck",
    "SeedAuditReport",
    "audit_environment",
    "audit_rows",
    "looks_like_person",
    "is_lorem_word",
]

CHECKS = ("constraint", "non_date", "status_word", "id_word", "shape", "person_name", "lorem", "empty")
_MAX_EXAMPLES = 3


@lru_cache(maxsize=1)
def _names() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    from faker.providers.lorem.en_US import Provider as Lorem
    from faker.providers.person.en_US import Provider as Person

    first = frozenset(n.lower() for n in [*Person.first_names_female, *Person.first_names_male])
    last = frozenset(n.lower() for n in Person.last_names)
    return first, last, frozenset(w.lower() for w in Lorem.word_list)


def looks_like_person(value: Any) -> bool:
    """True for 'Candice Stone' (a first name then a family name, as Faker makes them)."""
    if not isinstance(value, str):
        return False
    parts = [p.strip(".,") for p in value.split()]
    parts = [
        p for p in parts if p.lower() not in ("mr", "mrs", "ms", "dr", "jr", "sr", "ii", "iii", "md", "phd")
    ]
    if not 2 <= len(parts) <= 3 or not all(
        p[:1].isupper() and p.replace("-", "").replace("'", "").isalpha() for p in parts
    ):
        return False
    first, last, _ = _names()
    return parts[0].lower() in first and parts[-1].lower() in last


def is_lorem_word(value: Any) -> bool:
    """True for a single placeholder word of Faker's lorem list ('threat', 'happy'); a code in
    capitals ('HE', 'ON') is not one."""
    if not isinstance(value, str) or " " in value.strip() or value.strip().isupper():
        return False
    return value.strip().lower() in _names()[2]


_when = parse_when


@dataclass
class AuditCheck:
    """One kind of check: how many values (or rows) it looked at, how many failed, examples."""

    violations: int = 0
    checked: int = 0
    examples: list[str] = field(default_factory=list)
    by_field: dict[str, int] = field(default_factory=dict)

    def add(self, ok: bool, where: str, example: str) -> None:
        self.checked += 1
        if ok:
            return
        self.violations += 1
        self.by_field[where] = self.by_field.get(where, 0) + 1
        if len(self.examples) < _MAX_EXAMPLES and not any(e.startswith(where + " ") for e in self.examples):
            self.examples.append(f"{where} {example}")

    @property
    def rate(self) -> float:
        return self.violations / self.checked if self.checked else 0.0

    def to_dict(self) -> dict[str, Any]:
        top = sorted(self.by_field.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        return {
            "violations": self.violations,
            "checked": self.checked,
            "examples": list(self.examples),
            "by_field": dict(top),
        }


def _checks() -> dict[str, AuditCheck]:
    return {k: AuditCheck() for k in CHECKS}


@dataclass
class SeedAuditReport:
    """What ``envfactory audit`` found in one environment: seeded state, then state after calls."""

    env: str
    rows: int = 0
    seed: dict[str, AuditCheck] = field(default_factory=_checks)
    after_calls: dict[str, AuditCheck] = field(default_factory=_checks)
    calls: int = 0

    def figures(self) -> dict[str, Any]:
        """The headline numbers (what ``build.json`` records): violations per check, empty rate."""
        out: dict[str, Any] = {"rows": self.rows}
        for k in CHECKS:
            out[k] = self.seed[k].violations
        out["empty_rate"] = round(self.seed["empty"].rate, 4)
        out["after_calls"] = {k: self.after_calls[k].violations for k in CHECKS if k != "empty"}
        out["calls"] = self.calls
        return out

    @property
    def ok(self) -> bool:
        """No finding in the seeded rows, and at most 5% empty object/array values. (The state after
        calls is reported beside it: its values are the callers' arguments as much as the runtime's.)"""
        return (
            all(self.seed[k].violations == 0 for k in CHECKS if k != "empty")
            and self.seed["empty"].rate <= 0.05
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "rows": self.rows,
            "calls": self.calls,
            "ok": self.ok,
            "seed": {k: v.to_dict() for k, v in self.seed.items()},
            "after_calls": {k: v.to_dict() for k, v in self.after_calls.items()},
        }


# ---- row checks --------------------------------------------------------------------------------


def _short(v: Any) -> str:
    s = json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _row_key(ent: EntitySpec, row: dict[str, Any]) -> str:
    return f"[{ent.primary_key}={row.get(ent.primary_key)}]"


class _FieldPlan:
    """Which checks apply to one field (decided once per entity, not per row)."""

    def __init__(self, ent: EntitySpec, f: FieldSpec):
        self.f = f
        self.where = f"{ent.name}.{f.name}"
        self.role = ent.role_of(f)
        role, t = self.role, f.type
        self.time = role in TIME_ROLES or t in (FieldType.date, FieldType.datetime)
        self.status_values: set[str] | None = None
        if role == FieldRole.status and t == FieldType.string:
            self.status_values = {str(x).lower() for x in (f.enum or f.examples or [])} | set(STATUS_WORDS)
        self.id_word = (
            role == FieldRole.internal_id
            and t == FieldType.string
            and f.name != ent.primary_key
            and f.ref is None
        )
        self.shape = (
            ROLE_SHAPES.get(role) if (role is not None and t == FieldType.string and not f.enum) else None
        )
        text_like = (
            t == FieldType.string
            and not f.enum
            and role not in PERSON_ROLES
            and (
                role is None
                or role
                in (
                    FieldRole.title,
                    FieldRole.label,
                    FieldRole.organisation,
                    FieldRole.sentence,
                    FieldRole.paragraph,
                    FieldRole.city,
                    FieldRole.region,
                )
            )
        )
        self.person = text_like
        self.lorem = text_like and role not in (FieldRole.organisation, FieldRole.city, FieldRole.region)
        self.free_text = role in (FieldRole.sentence, FieldRole.paragraph)
        # a one-word label or title is fine when it is a documented or vocabulary value ('Support', 'public')
        self.known = {str(x).lower() for x in (f.examples or [])}
        if role == FieldRole.label:
            self.known |= {x.lower() for x in labels_for(f.name)}
        elif role == FieldRole.title:
            self.known |= {x.lower() for x in titles_for(ent.name, f.name)}
        self.empty = t in (FieldType.object, FieldType.array)
        # the range the seeder draws in and the runtime refuses writes outside of
        self.range: tuple[float, float] | None = believable_range(ent, f)


def _check_value(p: _FieldPlan, v: Any, key: str, out: dict[str, AuditCheck]) -> None:
    if v is None:
        return
    if p.empty:
        out["empty"].add(v not in ({}, [], "{}", "[]"), p.where, f"{key} = {_short(v)}")
        return
    if p.time:
        if p.role == FieldRole.time:
            ok = is_time_of_day(v)
        else:
            ok = _when(v) is not None
        out["non_date"].add(ok, p.where, f"{key} = {_short(v)}")
        return
    if p.range is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = p.range
        out["constraint"].add(lo <= v <= hi, p.where, f"{key} = {v} (believable {lo:g}..{hi:g})")
    if not isinstance(v, str):
        return
    if p.status_values is not None:
        out["status_word"].add(v.lower() in p.status_values, p.where, f"{key} = {_short(v)}")
        return
    if p.id_word:
        word = v.isalpha() and len(v) < 24 and not v.isupper()  # 'GHB' is a code, 'lose' a word
        out["id_word"].add(not word, p.where, f"{key} = {_short(v)}")
        return
    if p.shape is not None:
        out["shape"].add(
            bool(p.shape.match(v.strip())),
            p.where,
            f"{key} = {_short(v)} (not a {p.role.value})" if p.role else f"{key} = {_short(v)}",
        )
        return
    if p.person:
        out["person_name"].add(not looks_like_person(v), p.where, f"{key} = {_short(v)}")
    if p.lorem and v.lower() not in p.known:
        one_word = p.free_text and " " not in v.strip() and len(v.strip()) > 0
        out["lorem"].add(not (is_lorem_word(v) or one_word), p.where, f"{key} = {_short(v)}")


def _check_constraint(
    ent: EntitySpec, c: ConstraintSpec, row: dict[str, Any], clock: dt.datetime, key: str, out: AuditCheck
) -> None:
    where = f"{ent.name}:{c.kind}({','.join(c.fields)})"
    if c.kind == "order":
        gap = gap_hours(row.get(c.fields[0]), row.get(c.fields[1]))
        if gap is None:
            return
        ok = gap >= (c.min or 0.0) - 1e-9 and (c.max is None or gap <= c.max + 1e-9)
        out.add(ok, where, f"{key} {c.fields[0]}={row[c.fields[0]]} {c.fields[1]}={row[c.fields[1]]}")
    elif c.kind == "clock":
        a = _when(row.get(c.fields[0]))
        if a is None:
            return
        ok = a <= clock if c.relation == "past" else a > clock
        out.add(ok, where, f"{key} {c.fields[0]}={row[c.fields[0]]} (clock {clock.isoformat()})")
    elif c.kind == "age":
        a = _when(row.get(c.fields[0]))
        if a is None:
            return
        age = (clock - a).days / 365.25
        ok = (c.min is None or age >= c.min) and (c.max is None or age <= c.max)
        out.add(ok, where, f"{key} {c.fields[0]}={row[c.fields[0]]} (age {age:.0f})")
    elif c.kind == "status_time":
        a, status = _when(row.get(c.fields[0])), row.get(c.fields[1])
        if a is None or status is None:
            return
        if status in (c.past or []):
            out.add(
                a <= clock,
                where,
                f"{key} {c.fields[1]}={status} but {c.fields[0]}={row[c.fields[0]]} is ahead",
            )
        elif status in (c.future or []):
            out.add(
                a > clock,
                where,
                f"{key} {c.fields[1]}={status} but {c.fields[0]}={row[c.fields[0]]} has passed",
            )
    elif c.kind == "set_when":
        v, status = row.get(c.fields[0]), row.get(c.fields[1])
        if status is not None and ent.has_field(c.fields[0]) and ent.field(c.fields[0]).nullable:
            out.add(
                v is None or status in (c.past or []),
                where,
                f"{key} {c.fields[0]}={v} but {c.fields[1]}={status}",
            )
    elif c.kind == "product":
        vals = [row.get(n) for n in c.fields]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
            return
        t, q, p = (float(x) for x in vals)  # type: ignore[arg-type]  # numbers, checked above
        ok = abs(t - q * p) <= 0.011 + 1e-6 * abs(t)
        out.add(ok, where, f"{key} {c.fields[0]}={t} != {c.fields[1]}={q} x {c.fields[2]}={p}")


def audit_rows(
    ent: EntitySpec,
    rows: Iterable[dict[str, Any]],
    clock: dt.datetime,
    out: dict[str, AuditCheck] | None = None,
    constraints: list[ConstraintSpec] | None = None,
) -> dict[str, AuditCheck]:
    """Check rows of one entity (JSON values) against its roles and constraints."""
    out = out if out is not None else _checks()
    plans = [_FieldPlan(ent, f) for f in ent.fields]
    cons = constraints if constraints is not None else _all_constraints(ent)
    for row in rows:
        key = _row_key(ent, row)
        for p in plans:
            _check_value(p, row.get(p.f.name), key, out)
        for c in cons:
            _check_constraint(ent, c, row, clock, key, out["constraint"])
    return out


def _all_constraints(ent: EntitySpec) -> list[ConstraintSpec]:
    """Stated and inferred constraints (a spec that states none is judged as a person would)."""
    seen: set[Any] = set()
    out: list[ConstraintSpec] = []
    for c in [*(ent.constraints or []), *ent.inferred_constraints()]:
        if c.key() not in seen:
            seen.add(c.key())
            out.append(c)
    return out


# ---- the environment ---------------------------------------------------------------------------


def _table_rows(session: Any, ent: EntitySpec) -> list[dict[str, Any]]:
    cols = [f.name for f in ent.fields]
    decode = [f.type in (FieldType.object, FieldType.array) for f in ent.fields]
    quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in cols)
    out = []
    for r in session.query(f'SELECT {quoted} FROM "{ent.name}"'):
        row = {}
        for c, d, v in zip(cols, decode, r):
            if d and isinstance(v, str):
                try:
                    v = json.loads(v)
                except ValueError:
                    pass
            row[c] = v
        out.append(row)
    return out


def _call_writes(env: Environment, session: Any, seed: int, per_tool: int) -> int:
    from ..verify import valid_args

    calls = 0
    for tool in env.spec.tools:
        if tool.kind not in (ToolKind.create, ToolKind.update, ToolKind.action):
            continue
        rng = random.Random(f"{seed}/{tool.name}")
        for _ in range(per_tool):
            args = valid_args(session, env, tool, rng)
            if args is None:
                break
            res = session.try_call(tool.name, args)
            calls += 1
            if not res.get("ok"):
                break
    return calls


def audit_environment(env: Environment, *, seed: int = 0, calls_per_tool: int = 2) -> SeedAuditReport:
    """Audit the template rows, then make up to ``calls_per_tool`` valid calls of every write
    tool on a fresh session and audit the rows those calls added or changed."""
    spec = env.spec
    clock = dt.datetime.fromisoformat(spec.clock)
    report = SeedAuditReport(env=f"{spec.domain}/{spec.name}")
    with env.new_session() as s:
        for ent in spec.entities:
            rows = _table_rows(s, ent)
            report.rows += len(rows)
            audit_rows(ent, rows, clock, report.seed)
        if calls_per_tool > 0:
            report.calls = _call_writes(env, s, seed, calls_per_tool)
            d = s.diff()
            for ent in spec.entities:
                touched = list(d.added.get(ent.name, []))
                keys = [c["key"] for c in d.changed.get(ent.name, [])]
                touched += [r for r in (s.get_row(ent.name, k) for k in keys) if r is not None]
                if touched:
                    audit_rows(ent, touched, clock, report.after_calls)
    return report
