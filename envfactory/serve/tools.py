"""MCP tool descriptions from an EnvSpec: JSON Schemas, annotations from the tool kind."""

from __future__ import annotations

from typing import Any

from ..spec import EnvSpec, ToolKind, ToolSpec, tool_input_schema, tool_output_schema
from ..spec.model import Condition, Effect

__all__ = ["build_tool_list", "tool_annotations", "is_idempotent"]

_INCREMENTS = ("increment", "increment_param", "increment_from")


def _is_increment(ef: Effect) -> bool:
    return any(getattr(ef, k) is not None for k in _INCREMENTS)


def _falsifies(cond: Condition, ef: Effect) -> bool:
    """Whether writing ``ef``'s literal value makes ``cond`` false (so a repeat call is refused)."""
    if not ef.uses_set or cond.field != ef.field or cond.value_param:
        return False
    v = ef.set
    if cond.op == "eq":
        return v != cond.value
    if cond.op == "in":
        return v not in (cond.value or [])
    if cond.op == "ne":
        return v == cond.value
    if cond.op == "not_in":
        return v in (cond.value or [])
    if cond.op == "is_null":
        return v is not None
    return False


def is_idempotent(tool: ToolSpec) -> bool:
    """Calling twice with the same arguments changes nothing more than calling once.

    Reads, deletes (the second call finds nothing) and plain writes are idempotent. A write
    with increments is idempotent only if its own effects falsify one of its preconditions
    (cancelling a confirmed booking sets it cancelled, so a second cancel is refused).
    """
    if tool.kind in (ToolKind.get, ToolKind.list, ToolKind.delete):
        return True
    if tool.kind == ToolKind.create or tool.upsert:  # (an upsert called without a key makes a row each time)
        return False
    if not any(_is_increment(ef) for ef in tool.effects):
        return True
    return any(_falsifies(c, ef) for c in tool.preconditions for ef in tool.effects)


def tool_annotations(tool: ToolSpec) -> dict[str, Any]:
    """MCP ToolAnnotations (wire form) for a tool, from its kind and effects."""
    title = tool.name.replace("_", " ").capitalize()
    if tool.kind in (ToolKind.get, ToolKind.list):
        return {"title": title, "readOnlyHint": True, "openWorldHint": False}
    return {
        "title": title,
        "readOnlyHint": False,
        "destructiveHint": tool.kind in (ToolKind.update, ToolKind.delete, ToolKind.action),
        "idempotentHint": is_idempotent(tool),
        "openWorldHint": False,
    }


_NAIVE_DATETIME = {
    "type": "string",
    "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$",
}


def _local_datetimes(schema: Any) -> Any:
    """Replace ``format: date-time`` by an ISO pattern that also admits times without an offset.

    The runtime returns the environment's local clock (``2026-06-01T09:00:00``); RFC 3339
    ``date-time`` requires an offset, so strict validators (the Inspector's ajv) would refuse
    every result that holds a datetime.
    """
    if isinstance(schema, dict):
        if schema.get("format") == "date-time":
            out = {k: v for k, v in schema.items() if k != "format"}
            out.update(_NAIVE_DATETIME)
            return out
        return {k: _local_datetimes(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_local_datetimes(v) for v in schema]
    return schema


def build_tool_list(spec: EnvSpec) -> list[dict[str, Any]]:
    """The ``tools/list`` entries (wire form, camelCase) of every tool of the spec."""
    out = []
    for t in spec.tools:
        out.append(
            {
                "name": t.name,
                "title": t.name.replace("_", " ").capitalize(),
                "description": t.description,
                "inputSchema": tool_input_schema(t),
                "outputSchema": _local_datetimes(tool_output_schema(spec, t)),
                "annotations": tool_annotations(t),
            }
        )
    return out
