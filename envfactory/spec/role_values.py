"""What a value of a role looks like: the shapes of contact details, codes and amounts
(``ROLE_SHAPES``) and the date, date-time and time-of-day spellings a time field may hold
(``parse_when``, ``is_time_of_day``). One definition, used by the audit that judges rows and by
the runtime that refuses writes which would break them."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .role_vocab import FieldRole

__all__ = ["ROLE_SHAPES", "parse_when", "is_time_of_day", "gap_hours"]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_TIME = re.compile(r"^\d{2}:\d{2}(:\d{2})?$")

ROLE_SHAPES: dict[FieldRole, re.Pattern[str]] = {
    FieldRole.email: re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"),
    FieldRole.url: re.compile(r"^(https?|ftp)://[^\s]+$|^/[^\s]*$"),
    FieldRole.hostname: re.compile(
        r"^(?=.{1,253}\.?$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\.?$"
    ),
    FieldRole.phone: re.compile(r"^\+?[\d\s().\-x]{7,}$"),
    FieldRole.country_code: re.compile(r"^[A-Z]{2}$"),
    FieldRole.currency: re.compile(r"^[A-Z]{3}$"),
    FieldRole.airport_code: re.compile(r"^[A-Z]{3}$"),
    FieldRole.money: re.compile(r"^-?\d+(\.\d+)?$"),
    FieldRole.quantity: re.compile(r"^-?\d+(\.\d+)?$"),
    FieldRole.percentage: re.compile(r"^-?\d+(\.\d+)?%?$"),
    FieldRole.duration: re.compile(
        r"^P(\d+[YMWD])*(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$|^\d+(:\d{2}){1,2}$|^\d+$"
    ),
}
"""The shape a string field of each role must have (a field with an ``enum`` is judged by it)."""


def parse_when(v: Any) -> dt.datetime | None:
    """An ISO date or date-time string as a naive datetime (a date at midnight); None otherwise."""
    if not isinstance(v, str):
        return None
    s = v.strip()
    if _DATE.match(s):
        try:
            return dt.datetime.fromisoformat(s)
        except ValueError:
            return None
    if _DATETIME.match(s):
        try:
            d = dt.datetime.fromisoformat(s.replace("Z", "+00:00").replace(" ", "T"))
        except ValueError:
            return None
        return d.replace(tzinfo=None)
    return None


def is_time_of_day(v: Any) -> bool:
    """True for '15:00' or '15:00:30' (or a full date-time)."""
    return isinstance(v, str) and bool(_TIME.match(v.strip()) or parse_when(v))


def gap_hours(earlier: Any, later: Any) -> float | None:
    """Hours from ``earlier`` to ``later`` (ISO dates or date-times; None unless both are). A date
    is a day: it is not before a moment of that day (``created_on`` 2026-06-01 after ``created_at``
    2026-06-01T09:00), so a date-time before a date counts from its day's midnight."""
    a, b = parse_when(earlier), parse_when(later)
    if a is None or b is None:
        return None
    if isinstance(later, str) and len(later.strip()) == 10:
        a = a.replace(hour=0, minute=0, second=0, microsecond=0)
    return (b - a).total_seconds() / 3600.0
