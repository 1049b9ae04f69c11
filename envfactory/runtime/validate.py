"""Argument validation for tool calls, compiled once per tool.

This is the hot path of every call, so each tool gets a small compiled checker rather
than a general JSON Schema validation (which costs more than the SQL it guards). The
JSON Schema a client sees (``tool_input_schema``) and this checker come from the same
ParamSpecs; the verifier checks the two agree.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from typing import Any

from ..errors import ArgumentError
from ..spec import DATE_PATTERN, DATETIME_PATTERN, MAX_IN_ITEMS, FieldType, ParamSpec, ToolKind, ToolSpec

__all__ = ["ArgValidator", "to_db"]

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
