"""Infer a JSON Schema from an example value (Markdown and HTML references show
examples, not schemas)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["infer_schema", "merge_schemas"]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_URI = re.compile(r"^https?://\S+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _string_format(value: str) -> str | None:
    if _DATE_TIME.match(value):
        return "date-time"
    if _DATE.match(value):
        return "date"
    if _UUID.match(value):
        return "uuid"
    if _EMAIL.match(value):
        return "email"
    if _URI.match(value):
        return "uri"
    return None


def infer_schema(example: Any, *, _depth: int = 0) -> dict[str, Any]:
    """Return a JSON Schema describing ``example``.

    Objects get ``properties`` and ``required`` (every key present in the example),
    arrays get ``items`` merged over all elements, strings get a ``format`` when they
    look like a date, date-time, uuid, email or URI, and ``null`` values give
    ``{"nullable": true}`` with no type (the example does not say which type).
    """
    if _depth > 32:  # pathological nesting: stop describing
        return {}
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if isinstance(example, str):
        fmt = _string_format(example)
        return {"type": "string", "format": fmt} if fmt else {"type": "string"}
    if example is None:
        return {"nullable": True}
    if isinstance(example, dict):
        props = {str(k): infer_schema(v, _depth=_depth + 1) for k, v in example.items()}
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if props:
            schema["required"] = list(props)
        return schema
    if isinstance(example, (list, tuple)):
        items: dict[str, Any] | None = None
        for element in example:
            s = infer_schema(element, _depth=_depth + 1)
            items = s if items is None else merge_schemas(items, s)
        return {"type": "array", "items": items or {}}
    return {"type": "string"}  # datetime and the like, seen as their string form


def merge_schemas(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Merge two inferred schemas of the same thing (two examples of one field).

    Properties are united, ``required`` keeps only keys present in both, a missing
    type (from a ``null`` example) takes the other side's type and becomes nullable.
    """
    if not a:
        return dict(b)
    if not b:
        return dict(a)
    ta, tb = a.get("type"), b.get("type")
    if ta is None or tb is None:
        out = dict(b if ta is None else a)
        if "nullable" in a or "nullable" in b:
            out["nullable"] = True
        return out
    if ta != tb:
        if {ta, tb} == {"integer", "number"}:
            return {**a, "type": "number"}
        return a  # first seen wins; examples rarely disagree on types
    out = dict(a)
    if a.get("nullable") or b.get("nullable"):
        out["nullable"] = True
    if ta == "object":
        pa, pb = a.get("properties", {}), b.get("properties", {})
        props = dict(pa)
        for k, v in pb.items():
            props[k] = merge_schemas(pa[k], v) if k in pa else v
        out["properties"] = props
        req = [k for k in a.get("required", []) if k in set(b.get("required", []))]
        if req:
            out["required"] = req
        else:
            out.pop("required", None)
    elif ta == "array":
        out["items"] = merge_schemas(a.get("items") or {}, b.get("items") or {})
    elif ta == "string" and a.get("format") != b.get("format"):
        out.pop("format", None)
    return out
