"""JSON Schemas of tool inputs and outputs, derived from an EnvSpec."""

from __future__ import annotations

from typing import Any

from .limits import MAX_IN_ITEMS
from .model import EntitySpec, EnvSpec, FieldSpec, FieldType, ParamSpec, ToolKind, ToolSpec

# What a datetime argument looks like: local ISO time, optional seconds/fraction/offset.
DATETIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

__all__ = [
    "DATETIME_PATTERN",
    "DATE_PATTERN",
    "param_json_schema",
    "tool_input_schema",
    "tool_output_schema",
    "field_json_schema",
]


def _base_schema(ftype: FieldType, enum: list[str] | None) -> dict[str, Any]:
    if ftype == FieldType.string:
        s: dict[str, Any] = {"type": "string"}
    elif ftype == FieldType.integer:
        s = {"type": "integer"}
    elif ftype == FieldType.number:
        s = {"type": "number"}
    elif ftype == FieldType.boolean:
        s = {"type": "boolean"}
    elif ftype == FieldType.date:
        s = {"type": "string", "format": "date"}
    elif ftype == FieldType.datetime:
        # The environment clock is local time without an offset (2026-06-01T09:00:00), which
        # RFC 3339 'date-time' would reject; a pattern says exactly what is accepted.
        s = {"type": "string", "pattern": DATETIME_PATTERN}
    elif ftype == FieldType.enum:
        s = {"type": "string"}
    elif ftype == FieldType.object:
        s = {"type": "object"}
    else:
        s = {"type": "array"}
    if enum:
        s["enum"] = list(enum)
    return s


def param_json_schema(p: ParamSpec, tool: ToolSpec | None = None) -> dict[str, Any]:
    if p.op == "in":
        s: dict[str, Any] = {
            "type": "array",
            "items": _base_schema(p.type, p.enum),
            "minItems": 1,
            "maxItems": MAX_IN_ITEMS,
        }
    else:
        s = _base_schema(p.type, p.enum)
    if p.description:
        s["description"] = p.description
    if p.minimum is not None:
        s["minimum"] = p.minimum
    if p.maximum is not None:
        s["maximum"] = p.maximum
    if p.default is not None:
        s["default"] = p.default
    return s


def _paging_params(tool: ToolSpec) -> dict[str, dict[str, Any]]:
    props: dict[str, dict[str, Any]] = {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": tool.max_page_size,
            "default": tool.page_size,
            "description": f"Maximum number of results to return (default {tool.page_size}).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Number of results to skip, for paging.",
        },
    }
    if tool.sort and tool.sort.fields:
        props["sort_by"] = {
            "type": "string",
            "enum": list(tool.sort.fields),
            "description": "Field to sort the results by.",
        }
        props["sort_order"] = {"type": "string", "enum": ["asc", "desc"], "description": "Sort direction."}
    return props


def tool_input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments (what MCP and OpenAI function calling expect)."""
    props = {p.name: param_json_schema(p, tool) for p in tool.params}
    if tool.kind == ToolKind.list:
        for k, v in _paging_params(tool).items():
            props.setdefault(k, v)
    required = [p.name for p in tool.params if p.required]
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def field_json_schema(f: FieldSpec) -> dict[str, Any]:
    s = _base_schema(f.type, f.enum)
    if f.nullable:
        s = {"anyOf": [s, {"type": "null"}]}
    if f.description:
        s["description"] = f.description
    return s


def _row_schema(ent: EntitySpec, fields: list[str] | None) -> dict[str, Any]:
    names = fields or [f.name for f in ent.fields]
    return {
        "type": "object",
        "properties": {n: field_json_schema(ent.field(n)) for n in names},
        "required": names,
    }


def tool_output_schema(spec: EnvSpec, tool: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of a successful call's result."""
    ent = spec.entity(tool.entity)
    row = _row_schema(ent, tool.returns)
    if tool.kind == ToolKind.list:
        return {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": row},
                "count": {"type": "integer"},
                "offset": {"type": "integer"},
                "has_more": {"type": "boolean"},
            },
            "required": ["items", "count", "offset", "has_more"],
        }
    if tool.kind == ToolKind.delete:
        return {
            "type": "object",
            "properties": {"deleted": {"type": "boolean"}, ent.primary_key: field_json_schema(ent.pk)},
            "required": ["deleted", ent.primary_key],
        }
    return row
