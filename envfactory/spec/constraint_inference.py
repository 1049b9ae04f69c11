"""Constraints a spec does not state, inferred from the names, types, roles and enums of an
entity's fields (``infer_constraints``; the kinds are documented in ``envfactory.spec.roles``)."""

from __future__ import annotations

import re

from .role_inference import _ANIMAL_WORDS, _words
from .role_vocab import STATUS_FUTURE, STATUS_PAST, ConstraintSpec, FieldRole

__all__ = ["infer_constraints"]


# ---- constraints from names ----------------------------------------------------------------------

# (earlier word, later word, least gap hours, largest gap hours) for a pair named alike.
_PAIRS: list[tuple[str, str, float, float]] = [
    ("departure", "arrival", 0.5, 20.0),
    ("departs", "arrives", 0.5, 20.0),
    ("depart", "arrive", 0.5, 20.0),
    ("check_in", "check_out", 24.0, 21 * 24.0),
    ("checkin", "checkout", 24.0, 21 * 24.0),
    ("pickup", "dropoff", 2.0, 30 * 24.0),
    ("pick_up", "drop_off", 2.0, 30 * 24.0),
    ("pickup", "return", 2.0, 30 * 24.0),
    ("start", "end", 0.25, 12.0),
    ("starts", "ends", 0.25, 12.0),
    ("begin", "end", 0.25, 12.0),
    ("from", "to", 0.0, 90 * 24.0),
    ("from", "until", 0.0, 365 * 24.0),
    ("valid_from", "valid_until", 24.0, 3 * 365 * 24.0),
    ("valid_from", "valid_to", 24.0, 3 * 365 * 24.0),
    ("opened", "closed", 0.0, 365 * 24.0),
    ("issued", "expires", 24.0, 5 * 365 * 24.0),
    ("issue", "expiry", 24.0, 5 * 365 * 24.0),
    ("shipped", "delivered", 2.0, 14 * 24.0),
    ("created", "updated", 0.0, 2 * 365 * 24.0),
    ("created", "modified", 0.0, 2 * 365 * 24.0),
    ("creation", "modification", 0.0, 2 * 365 * 24.0),
]
_DATE_SPAN = {"start": 365 * 24.0, "starts": 365 * 24.0, "begin": 365 * 24.0}  # start/end *dates* span longer
_PAST_STAMP = re.compile(
    r"^((date|time)_)?(created|last_update|creation|updated|modified|completed|cancell?ed|canceled|deleted|paid|delivered|shipped|closed|resolved|"
    r"submitted|sent|received|registered|joined|signed_up|archived|approved|rejected|refunded|processed|"
    r"fulfilled|checked_in|last_login|last_seen|last_modified|last_updated|last_active|last_activity|verified|"
    r"confirmed|dispensed|collected|reported|posted|read|opened|accepted|declined|ended|returned|discharged|"
    r"issued|voided|captured|authorized|requested|started|finished|ordered|placed|purchased|reviewed|"
    r"acknowledged|booked|reserved|redeemed|settled|expired|first_seen|last_sign_in|last_signed_in)(_at|_on|_date|_time|_timestamp)?$"
)
_PRINCIPAL_TIME = re.compile(
    r"^(start_time|start_at|starts_at|start_date|start|scheduled_at|scheduled_for|scheduled_time|scheduled_date|"
    r"appointment_time|appointment_date|date|datetime|departure_time|departure_at|departure_date|departure|"
    r"check_in|check_in_date|checkin_date|pickup_time|pickup_at|pickup_date|event_date|event_time|"
    r"due_date|due_at|due_on|delivery_date|session_date|visit_date|reservation_time|reservation_date)$"
)


# Stamps of a state a row is in only at the end (a cancelled_at only on cancelled rows).
_EXCLUSIVE = re.compile(
    r"^(cancell?ed|canceled|refunded|deleted|rejected|declined|failed|voided|archived|"
    r"discontinued|expired)(_at|_on|_date|_time)?$"
)


def _swap(name: str, a: str, b: str) -> str | None:
    parts = name.split("_")
    aw = a.split("_")
    for i in range(len(parts) - len(aw) + 1):
        if parts[i : i + len(aw)] == aw:
            return "_".join(parts[:i] + b.split("_") + parts[i + len(aw) :])
    return None


def infer_constraints(
    entity: str, fields: list[tuple[str, str, FieldRole | None, list[str] | None]]
) -> list[ConstraintSpec]:
    """Constraints a person would expect of an entity's rows, from ``(name, type, role, enum)`` of each
    field: start before end (within a realistic gap), past stamps before the clock, birth dates of
    adults, completed rows in the past and scheduled ones ahead, line totals = quantity x price."""
    by_name = {n: (t, r, e) for n, t, r, e in fields}
    timeish = {n for n, (t, r, _) in by_name.items() if r in (FieldRole.date, FieldRole.datetime)}
    out: list[ConstraintSpec] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(c: ConstraintSpec) -> None:
        if c.key() not in seen:
            seen.add(c.key())
            out.append(c)

    for n in sorted(timeish):
        for a, b, lo, hi in _PAIRS:
            other = _swap(n, a, b)
            if other and other != n and other in timeish:
                dates = by_name[n][1] == FieldRole.date or by_name[other][1] == FieldRole.date
                span = _DATE_SPAN.get(a, hi) if dates else hi
                least = 0.0 if dates and lo < 24 else lo
                add(ConstraintSpec(kind="order", fields=[n, other], min=least, max=max(span, least)))
                break
    stamps = [n for n in sorted(timeish) if _PAST_STAMP.match(n)]
    for n in stamps:
        add(ConstraintSpec(kind="clock", fields=[n], relation="past"))
    created = next(
        (
            c
            for c in (
                "created_at",
                "created",
                "created_on",
                "created_date",
                "creation_date",
                "date_created",
                "created_time",
                "creation_time",
            )
            if c in timeish
        ),
        None,
    )
    if created:
        for n in stamps:
            if n != created:
                add(ConstraintSpec(kind="order", fields=[created, n], min=0.0))
    for n, (t, r, _) in sorted(by_name.items()):
        if r == FieldRole.birth_date and t in ("date", "datetime", "string"):
            young = any(w in _ANIMAL_WORDS or w in ("child", "dependent", "minor") for w in _words(entity))
            add(
                ConstraintSpec(
                    kind="age", fields=[n], min=0.0 if young else 18.0, max=20.0 if young else 90.0
                )
            )
    status = next((n for n, (_, r, e) in sorted(by_name.items()) if r == FieldRole.status and e), None)
    principal = next((n for n in sorted(timeish) if _PRINCIPAL_TIME.match(n)), None)
    if status and principal and principal not in stamps:
        values = by_name[status][2] or []
        past = [v for v in values if v.lower() in STATUS_PAST]
        future = [v for v in values if v.lower() in STATUS_FUTURE]
        if past or future:
            add(
                ConstraintSpec(
                    kind="status_time", fields=[principal, status], past=past or None, future=future or None
                )
            )
    if status:
        values = by_name[status][2] or []
        for n in stamps:
            m = _EXCLUSIVE.match(n)
            if m:
                same = [
                    v
                    for v in values
                    if v.lower()
                    .replace("canceled", "cancelled")
                    .startswith(m.group(1).replace("canceled", "cancelled")[:6])
                ]
                if same:
                    add(ConstraintSpec(kind="set_when", fields=[n, status], past=same))
    numbers = {n for n, (t, _, _) in by_name.items() if t in ("integer", "number")}
    qty = next((q for q in ("quantity", "qty", "count", "units") if q in numbers), None)
    price = next(
        (p for p in ("unit_price", "price_per_unit", "unit_amount", "unit_cost", "price") if p in numbers),
        None,
    )
    total = next(
        (
            s
            for s in ("line_total", "total_price", "total_amount", "total", "subtotal", "amount")
            if s in numbers and s != price
        ),
        None,
    )
    if qty and price and total:
        add(ConstraintSpec(kind="product", fields=[total, qty, price]))
    return out
