"""What a precondition means: the one definition the runtime and the planners share.

(The verifier keeps its own, independent copy on purpose: an oracle that imports the code it
checks cannot catch that code's mistakes.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["compare"]


def compare(actual: Any, op: str, expected: Any) -> bool:
    """True when ``actual <op> expected`` holds; values of incomparable types never satisfy an order."""
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
        if op == "gt":
            return actual > expected
        if op == "gte":
            return actual >= expected
        if op == "lt":
            return actual < expected
        if op == "lte":
            return actual <= expected
    except TypeError:
        return False
    raise ValueError(f"unknown condition operator {op!r}")
