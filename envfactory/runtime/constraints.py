"""Make seeded rows keep their entity's cross-field constraints (``envfactory.spec.roles``).

Columns are generated independently; this pass then moves the values a constraint names so the
row holds together: birth dates of adults, past stamps before the clock, completed rows in the
past and scheduled ones ahead, each later field a realistic gap after its earlier one (in the
order the constraints chain: ``created_at`` before ``updated_at``), totals that are
quantity x price. Values that already comply are left as they are; draws come from one
generator seeded by the spec's seed and the entity, so the same spec gives the same rows.

Tool calls keep the same rules (``validate.write_guard``): a create, update or action whose row would
hold a non-date in a date field, an undocumented status, a value not shaped like its role, or
break a constraint on a field it writes is refused with a one-line tool error, state unchanged.
"""

from __future__ import annotations

import datetime as dt
import random
import zlib
from functools import lru_cache
from typing import Any

from ..spec import (
    ConstraintSpec,
    EntitySpec,
    FieldRole,
    FieldSpec,
    FieldType,
    gap_hours,
    parse_when,
    realistic_range,
)

__all__ = ["apply_constraints", "constraint_problem", "believable_range", "number_ranges"]

_SEED_GAP_CAP = 30 * 24.0  # hours: a later field is drawn at most this far after the earlier one


@lru_cache(maxsize=1 << 16)
def _parse_str(v: str) -> tuple[dt.datetime, bool] | None:
    return _parse_uncached(v)


def _parse(v: Any) -> tuple[dt.datetime, bool] | None:
    return _parse_str(v) if isinstance(v, str) else None


def _parse_uncached(v: Any) -> tuple[dt.datetime, bool] | None:
    """(value, is_datetime) for an ISO date or date-time string; None otherwise."""
    if not isinstance(v, str) or len(v) < 10:
        return None
    try:
        if len(v) == 10:
            return dt.datetime.fromisoformat(v), False
        d = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d.replace(tzinfo=None), True


def _fmt(d: dt.datetime, as_datetime: bool, up: bool = False) -> str:
    if as_datetime:
        whole = d.replace(second=0, microsecond=0)
        if up and whole < d:
            whole += dt.timedelta(minutes=1)  # never earlier than drawn: a least gap stays kept
        return whole.isoformat(timespec="seconds")
    return d.date().isoformat()


def _ordered(cons: list[ConstraintSpec]) -> list[ConstraintSpec]:
    """Order constraints so an earlier field is settled before the fields after it."""
    orders = [c for c in cons if c.kind == "order"]
    rank: dict[str, int] = {}
    for _ in range(len(orders) + 1):
        changed = False
        for c in orders:
            a, b = c.fields
            want = rank.get(a, 0) + 1
            if rank.get(b, 0) < want and want <= len(orders) + 1:
                rank[b] = want
                changed = True
        if not changed:
            break
    return sorted(orders, key=lambda c: (rank.get(c.fields[1], 0), c.fields))


_RANGED = (FieldRole.quantity, FieldRole.rating, FieldRole.percentage, FieldRole.duration)


def believable_range(ent: EntitySpec, f: FieldSpec) -> tuple[float, float] | None:
    """The range a number field's values must lie in: documented bounds win, a side the document
    leaves open keeps the believable bound of its role (a count, a rating, a percentage ...); None
    when nothing bounds it. One rule for the seeder, the write guard and the audit."""
    if f.type not in (FieldType.integer, FieldType.number):
        return None
    known = realistic_range(f.name) if ent.role_of(f) in _RANGED else None
    lo = f.minimum if f.minimum is not None else (known[0] if known else None)
    hi = f.maximum if f.maximum is not None else (known[1] if known else None)
    if lo is None and hi is None:
        return None
    return (lo if lo is not None else float("-inf"), hi if hi is not None else float("inf"))


def number_ranges(ent: EntitySpec) -> list[tuple[str, bool, float, float, float, float]]:
    """(field, integer, believable low/high, typical low/high) of each number with a believable range
    (keys and references excluded)."""
    out = []
    for f in ent.fields:
        if f.name == ent.primary_key or f.ref:
            continue
        bound = believable_range(ent, f)
        if bound is None:
            continue
        typ = realistic_range(f.name, typical=True) or bound
        tlo, thi = max(typ[0], bound[0]), min(typ[1], bound[1])
        if tlo > thi or tlo == float("-inf") or thi == float("inf"):
            tlo, thi = (
                (bound[0], bound[1]) if bound[0] > float("-inf") and bound[1] < float("inf") else (tlo, tlo)
            )
        out.append((f.name, f.type == FieldType.integer, bound[0], bound[1], tlo, thi))
    return out


class _Fixer:
    def __init__(self, ent: EntitySpec, clock: dt.datetime, seed: int):
        self.cons = ent.effective_constraints()
        self.clock = clock
        self.rng = random.Random(zlib.crc32(f"{seed}\x1f{ent.name}\x1fconstraints".encode()))
        self.past = {c.fields[0] for c in self.cons if c.kind == "clock" and c.relation == "past"}
        self.future = {c.fields[0] for c in self.cons if c.kind == "clock" and c.relation == "future"}
        self.firsts = [c for c in self.cons if c.kind in ("age", "clock", "status_time")]
        self.orders = _ordered(self.cons)
        self.products = [c for c in self.cons if c.kind == "product"]
        nullable = {f.name for f in ent.fields if f.nullable}
        self.set_when = [
            (c.fields[0], c.fields[1], set(c.past or []))
            for c in self.cons
            if c.kind == "set_when" and c.fields[0] in nullable
        ]
        self.ranges = number_ranges(ent)

    def hours(self, lo: float, hi: float) -> dt.timedelta:
        return dt.timedelta(hours=self.rng.uniform(lo, max(lo, hi)))

    def first(self, c: ConstraintSpec, row: dict[str, Any]) -> None:
        name = c.fields[0]
        got = _parse(row.get(name))
        if got is None:
            return
        v, is_dt = got
        clock = self.clock
        if c.kind == "age":
            lo, hi = c.min if c.min is not None else 18.0, c.max if c.max is not None else 90.0
            age = (clock - v).days / 365.25
            if not lo <= age <= hi:
                years = self.rng.uniform(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo))
                row[name] = _fmt(clock - dt.timedelta(days=years * 365.25), is_dt)
        elif c.kind == "clock":
            if c.relation == "past" and v > clock:
                row[name] = _fmt(clock - self.hours(1, 365 * 24), is_dt)
            elif c.relation == "future" and v <= clock:
                row[name] = _fmt(clock + self.hours(24, 180 * 24), is_dt)
        elif c.kind == "status_time":
            status = row.get(c.fields[1])
            if status in (c.past or []) and v > clock:
                row[name] = _fmt(clock - (v - clock) - self.hours(1, 48), is_dt)
            elif status in (c.future or []) and v <= clock:
                row[name] = _fmt(clock + (clock - v) + self.hours(24, 72), is_dt)

    def order(self, c: ConstraintSpec, row: dict[str, Any]) -> bool:
        """Move the later field where it belongs; True when anything moved."""
        a_name, b_name = c.fields
        a, b = _parse(row.get(a_name)), _parse(row.get(b_name))
        if a is None or b is None:
            return False
        gap = (b[0] - a[0]).total_seconds() / 3600.0
        lo = c.min or 0.0
        hi = c.max if c.max is not None else float("inf")
        late = b_name in self.past and b[0] > self.clock
        if lo <= gap <= hi and not late:
            return False
        upper = min(hi, max(lo, _SEED_GAP_CAP))
        start = a[0]
        if b_name in self.past:
            room = (self.clock - start).total_seconds() / 3600.0
            if room < lo:  # no room before the clock: the earlier field moves back
                start = self.clock - self.hours(lo, lo + 48)
                row[a_name] = _fmt(start, a[1])
                room = (self.clock - start).total_seconds() / 3600.0
            upper = max(lo, min(upper, room))
        new = start + self.hours(lo, upper)
        if not b[1]:  # a date after a date-time: the next midnight, so the day is not before it
            day = dt.datetime.combine(new.date(), dt.time())
            new = day if day >= start + dt.timedelta(hours=lo) else day + dt.timedelta(days=1)
            if b_name in self.past and new > self.clock:
                new = dt.datetime.combine(self.clock.date(), dt.time())  # today, not tomorrow
                if new < start + dt.timedelta(hours=lo):  # the earlier stamp moves back before that day
                    row[a_name] = _fmt(new - self.hours(max(lo, 1.0), max(lo, 1.0) + 48), a[1])
        row[b_name] = _fmt(new, b[1], up=True)
        return True

    def in_range(self, row: dict[str, Any]) -> None:
        for name, integer, lo, hi, tlo, thi in self.ranges:
            v = row.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not lo <= v <= hi:
                row[name] = (
                    self.rng.randint(int(tlo), int(thi)) if integer else round(self.rng.uniform(tlo, thi), 2)
                )

    def product(self, c: ConstraintSpec, row: dict[str, Any]) -> None:
        total, q, p = c.fields
        qv, pv = row.get(q), row.get(p)
        if (
            isinstance(qv, (int, float))
            and isinstance(pv, (int, float))
            and not isinstance(row.get(total), bool)
        ):
            if isinstance(row.get(total), (int, float)):
                row[total] = (
                    round(qv * pv, 2) if isinstance(row[total], float) or isinstance(pv, float) else qv * pv
                )


def apply_constraints(ent: EntitySpec, table: list[dict[str, Any]], clock: dt.datetime, seed: int) -> None:
    """Adjust ``table`` (the entity's generated rows, in place) so every row keeps its constraints."""
    fx = _Fixer(ent, clock, seed)
    if not (fx.cons or fx.ranges) or not table:
        return
    for row in table:
        if fx.ranges:
            fx.in_range(row)
        for c in fx.firsts:
            fx.first(c, row)
        moved = False
        for c in fx.orders:
            moved = fx.order(c, row) or moved
        if moved:  # a second pass settles a field an earlier pass moved back
            for c in fx.orders:
                fx.order(c, row)
        for c in fx.products:
            fx.product(c, row)
        for stamp, status, when in fx.set_when:
            if row.get(status) is not None and row.get(status) not in when:
                row[stamp] = None


# ---- writes (``validate.write_guard`` refuses a call whose row would break a constraint) --------


def _span(hours: float) -> str:
    return f"{hours / 24:g} days" if hours >= 48 else f"{hours:g} hours"


def constraint_problem(c: ConstraintSpec, row: dict[str, Any], clock: dt.datetime) -> str | None:
    """Why ``row`` breaks constraint ``c`` (None when it keeps it, or a value it names is unset)."""
    f = c.fields
    if c.kind == "product":
        vals = [row.get(n) for n in f]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
            return None
        t, qv, pv = (float(x) for x in vals)  # type: ignore[arg-type]  # numbers, checked above
        if abs(t - qv * pv) <= 0.011 + 1e-6 * abs(t):
            return None
        return f"{f[0]} must be {f[1]} x {f[2]} = {round(qv * pv, 2):g}, got {t:g}"
    if c.kind == "set_when":
        status = row.get(f[1])
        if row.get(f[0]) is None or status is None or status in (c.past or []):
            return None
        return (
            f"{f[0]} is set only when {f[1]} is one of [{', '.join(c.past or [])}], and {f[1]} is {status!r}"
        )
    a = parse_when(row.get(f[0]))
    if a is None:
        return None
    now = clock.isoformat(timespec="seconds")
    if c.kind == "order":
        gap = gap_hours(row.get(f[0]), row.get(f[1]))
        if gap is None:
            return None
        lo, hi = c.min or 0.0, c.max
        if gap < lo - 1e-9:
            least = "not before" if lo == 0 else f"at least {_span(lo)} after"
            return f"{f[1]} ({row[f[1]]}) must be {least} {f[0]} ({row[f[0]]})"
        if hi is not None and gap > hi + 1e-9:
            return f"{f[1]} ({row[f[1]]}) must be at most {_span(hi)} after {f[0]} ({row[f[0]]})"
        return None
    if c.kind == "clock":
        if c.relation == "past" and a > clock:
            return f"{f[0]} ({row[f[0]]}) must not be after now ({now})"
        if c.relation == "future" and a <= clock:
            return f"{f[0]} ({row[f[0]]}) must be after now ({now})"
        return None
    if c.kind == "age":
        age = (clock - a).days / 365.25
        young, old = c.min if c.min is not None else 0.0, c.max if c.max is not None else 150.0
        if not young <= age <= old:
            return f"{f[0]} ({row[f[0]]}) gives an age of {age:.0f} at {now}; it must be {young:g} to {old:g}"
        return None
    status = row.get(f[1])  # status_time
    if status in (c.past or []) and a > clock:
        return f"{f[1]} cannot be {status!r} while {f[0]} ({row[f[0]]}) is ahead of now ({now})"
    if status in (c.future or []) and a <= clock:
        return f"{f[1]} cannot be {status!r} while {f[0]} ({row[f[0]]}) has passed ({now})"
    return None
