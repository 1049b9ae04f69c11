"""What the explorer agent shows its model (documentation sections, prompt texts) and how
it reads the replies.

A document is read section by section so that each prompt stays small whatever the size of
the API: operations are grouped by their first tag (or, untagged, by resource path), and a
group larger than the character budget is split into several sections. Each section
carries only its own operations, their parameters and their (compacted) request and
response schemas.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from envfactory.ingest.model import ApiDoc, Operation
from envfactory.spec import EnvSpec

__all__ = [
    "DocSection",
    "build_sections",
    "compact_schema",
    "render_operation",
    "spec_json",
    "system_prompt",
    "section_prompt",
    "repair_prompt",
    "invalid_reply_prompt",
    "parse_reply",
]

_MAX_ERRORS_SHOWN = 20

_VERSION_SEGMENT = re.compile(r"^(v\d+(\.\d+)*|api|rest)$", re.IGNORECASE)
_DROP_SCHEMA_KEYS = {
    "example",
    "examples",
    "externalDocs",
    "xml",
    "x-cycle",
    "$schema",
    "title",
    "discriminator",
}


@dataclass(frozen=True)
class DocSection:
    """A slice of one document: operations of one tag or resource, rendered for a prompt."""

    title: str
    source: str
    operation_keys: tuple[str, ...]
    text: str
    part: int = 1
    parts: int = 1

    @property
    def label(self) -> str:
        return self.title if self.parts == 1 else f"{self.title} (part {self.part}/{self.parts})"


def _clip(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def compact_schema(schema: Any, *, depth: int = 3, max_props: int = 25, desc_chars: int = 80) -> Any:
    """A JSON Schema cut down for a prompt: shallow, short descriptions, no examples.

    Nesting below ``depth`` becomes ``{"type": ...}`` only; objects keep at most
    ``max_props`` properties (the rest are counted in ``x-omitted``).
    """
    if isinstance(schema, list):
        return [
            compact_schema(s, depth=depth, max_props=max_props, desc_chars=desc_chars) for s in schema[:8]
        ]
    if not isinstance(schema, dict):
        return schema
    if depth <= 0:
        kept = {k: schema[k] for k in ("type", "enum", "format") if k in schema}
        return kept or {"type": "object"}
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in _DROP_SCHEMA_KEYS:
            continue
        if k == "description":
            if v:
                out[k] = _clip(str(v), desc_chars)
        elif k == "properties" and isinstance(v, dict):
            items = list(v.items())
            out[k] = {
                name: compact_schema(sub, depth=depth - 1, max_props=max_props, desc_chars=desc_chars)
                for name, sub in items[:max_props]
            }
            if len(items) > max_props:
                out["x-omitted"] = f"{len(items) - max_props} more properties"
        elif k == "enum" and isinstance(v, list):
            out[k] = v[:30]
        elif isinstance(v, (dict, list)):
            out[k] = compact_schema(v, depth=depth - 1, max_props=max_props, desc_chars=desc_chars)
        else:
            out[k] = v
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def render_operation(op: Operation, *, max_chars: int = 3000) -> str:
    """One operation as compact text: route, summary, parameters, body and response schemas."""
    lines = [f"### {op.key}" + (f"  (operationId: {op.operation_id})" if op.operation_id else "")]
    if op.deprecated:
        lines.append("DEPRECATED")
    if op.summary:
        lines.append(_clip(op.summary, 200))
    if op.description and op.description.strip() != op.summary.strip():
        lines.append(_clip(op.description, 400))
    for p in op.parameters:
        if p.location in ("header", "cookie"):
            continue  # auth and tracing headers say nothing about the data model
        bits = [f"- {p.name} ({p.location}, {p.type or 'any'}{', required' if p.required else ''})"]
        if p.enum:
            bits.append(f"one of {p.enum[:20]}")
        if p.description:
            bits.append(_clip(p.description, 120))
        lines.append(" ".join(bits))
    if op.request_body:
        lines.append("body: " + _dumps(compact_schema(op.request_body)))
    ok = op.success_response()
    if ok is not None and ok.schema_:
        lines.append(f"returns {ok.status}: " + _dumps(compact_schema(ok.schema_)))
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 20] + "\n…(truncated)"


def _group_name(op: Operation) -> str:
    if op.tags:
        return op.tags[0]
    segments = [
        s for s in op.path.strip("/").split("/") if s and not s.startswith("{") and not s.startswith(":")
    ]
    segments = [s for s in segments if not _VERSION_SEGMENT.match(s)]
    return "/" + segments[0] if segments else "/"


def build_sections(doc: ApiDoc, *, max_chars: int = 12000, max_op_chars: int = 3000) -> list[DocSection]:
    """The document's operations grouped by tag or resource, in the order the document first
    mentions each group. A group over ``max_chars`` is split into parts; consecutive small
    groups are packed into one section up to ``max_chars`` (APIs with one tag per operation
    would otherwise cost one model call per operation)."""
    groups: dict[str, list[Operation]] = {}
    for op in doc.operations:
        groups.setdefault(_group_name(op), []).append(op)
    # (titles, [(key, text)], part, parts) per chunk
    chunks: list[tuple[list[str], list[tuple[str, str]], int, int]] = []
    for title, ops in groups.items():
        parts: list[list[tuple[str, str]]] = [[]]
        size = 0
        for op in ops:
            text = render_operation(op, max_chars=max_op_chars)
            if parts[-1] and size + len(text) > max_chars:
                parts.append([])
                size = 0
            parts[-1].append((op.key, text))
            size += len(text) + 2
        for i, part in enumerate(parts, 1):
            chunks.append(([title], part, i, len(parts)))
    packed: list[tuple[list[str], list[tuple[str, str]], int, int]] = []
    for titles, texts, part_no, n_parts in chunks:
        if packed and n_parts == 1 and packed[-1][3] == 1:
            prev_titles, prev_ops, _, _ = packed[-1]
            if sum(len(t) + 2 for _, t in prev_ops) + sum(len(t) + 2 for _, t in texts) <= max_chars:
                packed[-1] = (prev_titles + titles, prev_ops + texts, 1, 1)
                continue
        packed.append((titles, texts, part_no, n_parts))
    sections = []
    for titles, texts, part_no, n_parts in packed:
        title = ", ".join(titles[:6]) + (f" (+{len(titles) - 6} more)" if len(titles) > 6 else "")
        sections.append(
            DocSection(
                title=title,
                source=doc.source,
                operation_keys=tuple(k for k, _ in texts),
                text="\n\n".join(t for _, t in texts),
                part=part_no,
                parts=n_parts,
            )
        )
    return sections


def spec_json(spec: EnvSpec) -> str:
    """A spec as compact JSON for a prompt, defaults left out.

    ``exclude_defaults`` would also drop an explicit ``set: null`` effect (clearing a field),
    leaving an effect with no value source, so those are put back.
    """
    data = spec.model_dump(mode="json", exclude_defaults=True)
    for tool, tool_data in zip(spec.tools, data.get("tools", [])):
        for effect, effect_data in zip(tool.effects, tool_data.get("effects", [])):
            if effect.set is None and effect.uses_set:
                effect_data["set"] = None
    return _dumps({"name": spec.name, "domain": spec.domain, **data})


# --- prompt texts ------------------------------------------------------------------------------

_RULES = """\
You design tool environments for LLM agents from API documentation. An environment is an
EnvSpec: DATA that a trusted runtime interprets over SQLite, never code.

The vocabulary:
- entities: tables with typed fields, one primary_key, unique fields, and relations as
  foreign keys (a field's `ref` names the entity it points to).
- tools, each with a `kind`: get (one row by key), list (filters, sorting, paging), create,
  update, delete, action (a state change guarded by `preconditions`, applying `effects`, e.g.
  cancel a booking only while its status is confirmed).
- a tool's params map to fields of its entity (`field`); get/update/delete/action need exactly
  one param with `key: true` mapped to the primary key, required unless the documentation marks
  that body or query id optional (a call without it is then refused); every param of a list tool
  must map to a field and says how it filters with `op`.
- an update documented as creating the row its key names none of is an upsert (`upsert: true`):
  its key param is then optional, as the documentation makes it.
- an action's effect may add an argument's values to an array field, or take them out of it
  (`append_param` / `remove_param`; `match_key` names the elements of an array of objects).
- seed: rows per entity (5 to 40 is plenty) and optional value generators.

Write well:
- tool names are snake_case verb_object (get_order, search_orders, cancel_order);
- a tool's description is read by a model that must decide when to call it: say what it does,
  when to use it, what the ids are and where to find them (which other tool returns them);
- describe every field and param; model the relations and the state changes (status
  transitions as actions with preconditions and effects) that the documentation implies;
- leave out operations the vocabulary cannot express (file uploads, auth, webhooks) and list
  them in `excluded` as "METHOD /path: reason".

Reply with exactly one JSON object: the COMPLETE EnvSpec (not a diff), matching this JSON
Schema. No prose, no Markdown fences.
"""


def system_prompt(schema_json: str) -> str:
    return _RULES + "\nJSON Schema of EnvSpec:\n" + schema_json


def section_prompt(
    *,
    env_name: str,
    domain: str,
    current: str,
    section: DocSection,
    index: int,
    total: int,
    from_draft: bool,
) -> str:
    if from_draft:
        intro = (
            "The current spec below was drafted by deterministic rules from the whole API. Improve it "
            "with what this section documents: clearer names, descriptions written for a model, relations "
            "and actions (with preconditions and effects) the rules missed. Keep what is right; do not drop "
            "working tools."
        )
    elif current:
        intro = "The current spec below covers the sections read so far. Extend it with this section."
    else:
        intro = "There is no spec yet: start it from this section."
    return (
        f"Environment `{env_name}` in domain `{domain}`. Documentation section {index}/{total}: "
        f"{section.label} (from {section.source}).\n\n{intro}\n\n"
        f"Current spec (JSON):\n{current or '(none)'}\n\n"
        f"Section operations:\n{section.text}\n\n"
        f"Reply with the complete updated EnvSpec as one JSON object (name `{env_name}`, domain `{domain}`)."
    )


def repair_prompt(*, env_name: str, current: str, failures: list[str]) -> str:
    listed = "\n".join(f"- {f}" for f in failures)
    return (
        f"The environment `{env_name}` below was materialized over SQLite and its tools were "
        f"smoke-tested by calling them. These checks failed:\n{listed}\n\n"
        f"Current spec (JSON):\n{current}\n\n"
        "Return the complete corrected EnvSpec as one JSON object. Fix the failing tools; remove a tool "
        "only if the documentation cannot support it, and then list its operation in `excluded` with the reason."
    )


def invalid_reply_prompt(errors: list[str]) -> str:
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        f"Your reply is not a valid EnvSpec:\n{listed}\n\n"
        "Fix these errors and reply again with the complete EnvSpec as one JSON object."
    )


# --- parsing the model's reply ----------------------------------------------------------------

_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def _extract_json(text: str) -> Any:
    """The JSON object in a reply; tolerates Markdown fences and prose around one object."""
    text = (text or "").strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                pass
        raise first


def _loc_label(data: Any, loc: tuple[Any, ...]) -> str:
    """A validation error location with list items named (``tools[cancel_order].params[0]``)."""
    parts: list[str] = []
    cur = data
    for key in loc:
        if isinstance(key, int) and isinstance(cur, list) and 0 <= key < len(cur):
            item = cur[key]
            name = item.get("name") if isinstance(item, dict) else None
            parts.append(f"[{name}]" if isinstance(name, str) and name else f"[{key}]")
            cur = item
        else:
            parts.append(("." if parts else "") + str(key))
            cur = cur.get(key) if isinstance(cur, dict) else None
    return "".join(parts) or "(top level)"


def parse_reply(text: str, *, name: str, domain: str, sources: list[str]) -> tuple[EnvSpec | None, list[str]]:
    """``(spec, [])`` for a valid reply, else ``(None, errors written for the model)``.

    ``name`` and ``domain`` are imposed (the environment's identity is the caller's, not the
    model's) and ``sources`` are added to the ones the reply lists."""
    try:
        data = _extract_json(text)
    except json.JSONDecodeError as e:
        return None, [f"the reply is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})"]
    if isinstance(data, dict) and "tools" not in data and len(data) == 1:
        (inner,) = data.values()  # {"spec": {...}} and similar wrappers
        if isinstance(inner, dict):
            data = inner
    if not isinstance(data, dict):
        return None, [f"the reply must be a JSON object (an EnvSpec), got {type(data).__name__}"]
    data["name"], data["domain"] = name, domain
    given = data.get("sources")
    data["sources"] = list(dict.fromkeys([*(given if isinstance(given, list) else []), *sources]))
    try:
        return EnvSpec.model_validate(data), []
    except ValidationError as e:
        errors = [
            f"{_loc_label(data, tuple(err['loc']))}: {err['msg']}" for err in e.errors()[:_MAX_ERRORS_SHOWN]
        ]
        if e.error_count() > _MAX_ERRORS_SHOWN:
            errors.append(f"(+{e.error_count() - _MAX_ERRORS_SHOWN} more errors)")
        return None, errors
