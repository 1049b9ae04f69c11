"""Values as the verifier reads them: SQL identifiers, stored values as JSON (and back), and
precondition semantics written independently of the runtime (``envfactory.verify.args``)."""

from __future__ import annotations

import json
from typing import Any

from ..spec import Condition, FieldType

__all__ = ["q", "row_value", "db_value", "compare", "condition_sql"]


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def row_value(ftype: FieldType, v: Any) -> Any:
    """A stored SQLite value as the JSON value a tool returns."""
    if v is None:
        return None
    if ftype == FieldType.boolean:
        return bool(v)
    if ftype in (FieldType.object, FieldType.array) and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def db_value(ftype: FieldType | None, v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return 1 if v else 0
    if ftype in (FieldType.object, FieldType.array) and not isinstance(v, str):
        return json.dumps(v, sort_keys=True)
    return v


def compare(actual: Any, op: str, expected: Any) -> bool:
    """Precondition semantics, written independently of the runtime."""
    if op == "is_null":
        return actual is None
    if op == "not_null":
        return actual is not None
    if op == "eq":
        return actual == expected
    if op == "ne":
        return actual != expected
    if op == "in":
        return actual in (expected or [])
    if op == "not_in":
        return actual not in (expected or [])
    if actual is None or expected is None:
        return False
    try:
        return {
            "gt": actual > expected,
            "gte": actual >= expected,
            "lt": actual < expected,
            "lte": actual <= expected,
        }[op]
    except TypeError:
        return False


def condition_sql(col: str, c: Condition, ftype: FieldType | None) -> tuple[str, list[Any]] | None:
    """SQL for a literal-valued condition on ``col`` (None when it can only be checked in Python)."""
    if c.value_param or ftype in (FieldType.object, FieldType.array):
        return None
    v = c.value
    if c.op == "is_null":
        return f"{col} IS NULL", []
    if c.op == "not_null":
        return f"{col} IS NOT NULL", []
    if c.op == "eq":
        return f"{col} IS ?", [db_value(ftype, v)]
    if c.op == "ne":
        return f"{col} IS NOT ?", [db_value(ftype, v)]
    if c.op in ("in", "not_in"):
        vals = [db_value(ftype, x) for x in (v or [])]
        non_null = [x for x in vals if x is not None]
        has_null = len(non_null) != len(vals)
        marks = ", ".join("?" * len(non_null))
        if c.op == "in":
            parts = [f"{col} IN ({marks})"] if non_null else []
            if has_null:
                parts.append(f"{col} IS NULL")
            return ("(" + " OR ".join(parts) + ")") if parts else "0", non_null
        parts = [f"{col} NOT IN ({marks})"] if non_null else ["1"]
        return (
            f"({col} IS NOT NULL AND {parts[0]})" if has_null else f"({col} IS NULL OR {parts[0]})"
        ), non_null
    sym = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[c.op]
    if v is None:
        return "0", []
    return f"{col} {sym} ?", [db_value(ftype, v)]
