"""What a suite entry says: BFCL function docs, accepted values, and question text.

The rule that makes a suite discriminate lives here (:func:`possible_answer`): an argument the
question states is required, with its accepted forms; only arguments the question leaves open
(masked by the task, paging, values at their documented default) may be omitted (``""``).
:func:`fit_gold_args` drops values that make no sense as a gold answer (``{}`` as an address).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..spec import tool_input_schema
from ..text import format_date, format_plain

__all__ = [
    "PAGING_PARAMS",
    "bfcl_function_doc",
    "fit_gold_args",
    "is_stated",
    "possible_answer",
    "question_text",
]

PAGING_PARAMS = frozenset({"limit", "offset", "sort_by", "sort_order"})
_BFCL_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "float",
    "boolean": "boolean",
    "array": "array",
    "object": "dict",
}


# ----------------------------------------------------------------------------- function docs


def _bfcl_property(schema: Mapping[str, Any]) -> dict[str, Any]:
    if "anyOf" in schema:  # nullable: the non-null branch
        base = next((s for s in schema["anyOf"] if s.get("type") != "null"), {"type": "string"})
        schema = {**base, **{k: v for k, v in schema.items() if k != "anyOf"}}
    out: dict[str, Any] = {"type": _BFCL_TYPES.get(schema.get("type", "string"), "string")}
    description = schema.get("description", "")
    fmt = schema.get("format")
    if fmt == "date":
        description = (description + " " if description else "") + "Format: YYYY-MM-DD."
    elif fmt == "date-time":
        description = (description + " " if description else "") + "Format: YYYY-MM-DDTHH:MM:SS."
    if description:
        out["description"] = description
    if "enum" in schema:
        out["enum"] = list(schema["enum"])
    if out["type"] == "array":
        # BFCL's tooling (and OpenAI's tools schema) needs items on every array.
        out["items"] = _bfcl_property(schema.get("items") or {"type": "string"})
    if out["type"] == "dict" and isinstance(schema.get("properties"), Mapping) and schema["properties"]:
        out["properties"] = {k: _bfcl_property(v) for k, v in schema["properties"].items()}
    if "default" in schema:
        out["default"] = schema["default"]
    return out


def bfcl_function_doc(tool: Any) -> dict[str, Any]:
    """A ``ToolSpec`` as a BFCL function doc (``parameters.type`` is ``dict``, numbers ``float``)."""
    schema = tool_input_schema(tool)
    return {
        "name": tool.name,
        "description": tool.description or tool.name.replace("_", " "),
        "parameters": {
            "type": "dict",
            "properties": {k: _bfcl_property(v) for k, v in schema.get("properties", {}).items()},
            "required": list(schema.get("required", [])),
        },
    }


# ----------------------------------------------------------------------------- gold values


def _nonsense(value: Any) -> bool:
    # An empty object or list, or a blank string, is not something a person asks for.
    if isinstance(value, (dict, list)) and not value:
        return True
    return isinstance(value, str) and not value.strip()


def _fits(value: Any, prop: Mapping[str, Any]) -> bool:
    declared = prop.get("type")
    if "enum" in prop and not isinstance(value, list) and value not in prop["enum"]:
        return False
    if declared == "dict":
        return isinstance(value, dict)
    if declared == "array":
        return isinstance(value, list)
    if declared == "boolean":
        return isinstance(value, bool)
    if declared in ("integer", "float"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def fit_gold_args(doc: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The gold arguments fit to be an answer: nonsense values of optional parameters dropped;
    None when a required parameter's value is nonsense or a value does not fit its declaration
    (such a step tests nothing a question can ask for)."""
    properties = doc["parameters"]["properties"]
    required = set(doc["parameters"].get("required", []))
    out: dict[str, Any] = {}
    for param, value in args.items():
        prop = properties.get(param)
        if prop is None:
            return None
        if _nonsense(value) or (isinstance(value, dict) and any(_nonsense(v) for v in value.values())):
            if param in required:
                return None
            continue
        if not _fits(value, prop):
            return None
        out[param] = value
    return out


def _forms(value: Any, prop: Mapping[str, Any]) -> list[Any]:
    declared = prop.get("type")
    if declared == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if declared == "integer" and isinstance(value, float) and value.is_integer():
        return [int(value)]
    if declared == "string" and isinstance(value, str):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", value):
            return [value, value.replace("T", " ")]
        return [value]
    if declared == "array" and isinstance(value, list):
        item_prop = prop.get("items", {})
        items = [(_forms(v, item_prop) or [v])[0] for v in value]
        if 1 < len(items) <= 3:
            seen: list[list[Any]] = []
            for perm in itertools.permutations(items):
                if list(perm) not in seen:
                    seen.append(list(perm))
            return seen
        return [items]
    if declared == "dict" and isinstance(value, dict):
        return [{k: [v] for k, v in value.items()}]
    return [value]


def possible_answer(
    doc: Mapping[str, Any], args: Mapping[str, Any], masked: Iterable[str], text: str
) -> dict[str, Any]:
    """BFCL's accepted values for one gold call asked by ``text``.

    A parameter the question states is required (no ``""``), whatever the task marked it; one it
    leaves open (masked and unstated, paging, at its default) may be omitted.
    """
    masked = set(masked)
    properties = doc["parameters"]["properties"]
    accepted: dict[str, list[Any]] = {}
    for param, prop in properties.items():
        if param in args:
            forms = _forms(args[param], prop)
            at_default = "default" in prop and args[param] == prop["default"]
            open_ = (
                param in PAGING_PARAMS
                or at_default
                or (param in masked and not is_stated(param, args[param], text))
            )
            accepted[param] = [*forms, ""] if open_ else forms
        elif "default" in prop:
            accepted[param] = [*_forms(prop["default"], prop), ""]
    return {doc["name"]: accepted}


# ----------------------------------------------------------------------------- questions


def _label(param: str) -> str:
    return param.replace("_", " ")


def is_stated(param: str, value: Any, text: str) -> bool:
    """Whether ``text`` states ``value`` (numbers as numbers, strings case-insensitively)."""
    lowered = text.lower()
    if isinstance(value, bool):
        return _label(param) in lowered
    if isinstance(value, (int, float)):
        plain = lowered.replace(",", "")
        forms = {str(value)}
        if isinstance(value, float) and value.is_integer():
            forms.add(str(int(value)))
        return any(re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", plain) for f in forms)
    if isinstance(value, list):
        return bool(value) and all(is_stated(param, v, text) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(is_stated(k, v, text) for k, v in value.items())
    said = str(value).strip().lower()
    if not said:
        return False
    forms = {said, said.replace("_", " ")}
    date = format_date(str(value))
    if date is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ]00:00(:00)?)?", str(value)):
        forms.add(date.lower())  # a date said in words ("September 27, 2026") states the date
    return any(f in lowered for f in forms)


def question_text(text: str, args: Mapping[str, Any], optional: set[str]) -> str:
    """The sentence, plus the values the call needs that it does not state."""
    text = text.strip()
    missing = [(p, v) for p, v in args.items() if p not in optional and not is_stated(p, v, text)]
    if not missing:
        return text
    if text and text[-1] not in ".?!":
        text += "."
    details = "; ".join(f"{_label(p)}: {format_plain(v)}" for p, v in missing)
    return f"{text} Details: {details}."
