"""Fidelity to the document: what a build kept of each documented operation, measured.

For every document of a build: its documented operations; the operations a tool was made
for (before verification) and the ones whose tool passed verification and ships; every other
operation with the stage that dropped it and the reason. For the operations that ship as a
tool that writes (create / update / action / delete), the request body's documented
properties are compared with the tool's parameters: how many are kept, whether each kept
parameter's required flag is the document's, and whether each documented enum is kept with
its values exactly as written (case included). A parameter enum the document does not state
is counted as invented.

What "documented body property" means is read from the document alone, never from the
explorer: the top-level properties of the JSON request body (or the Swagger form fields),
after unwrapping a one-property wrapper object (``{"transaction": {...}}``) and JSON:API
``data.attributes``; properties the document marks ``readOnly`` are not request fields, nor are those its own name
and description call a credential, a request control or a constant tag (Plaid's "Your Plaid
API `secret`", Slack's "Authentication token", Stripe's ``expand`` "fields in the response",
an ``idempotency_key``, Google's ``kind`` "Type of the resource" and ``etag``); a bulk
body (an array of objects, or ``{"data": [...]}``) documents the properties of its items. A body
property that repeats a path parameter (``PUT /calendars/{calendarId}`` with a body ``id``) is
kept by the tool's path parameter, and its required flag is the path's (required).

An operation the explorer records as served by another operation's tool (a PUT of a row whose
PATCH made the one update tool, ``explore.one_update``) counts as made and verified when that tool
ships; it is listed under ``served``, and its body is not compared again (the tool is the PATCH's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..ingest import ApiDoc, Operation
from ..spec import EnvSpec, ToolSpec
from .naming import singular, snake
from .shapes import bulk_items

__all__ = [
    "FIDELITY_COUNTS",
    "DocFidelity",
    "FidelityReport",
    "DroppedOp",
    "build_fidelity",
    "documented_body",
    "snake_name",
    "drop_reasons",
]

# the counts every document's fidelity carries (summed over documents in a corpus report)
FIDELITY_COUNTS = (
    "operations",
    "tools_made",
    "verified",
    "body_documented",
    "body_kept",
    "required_checked",
    "required_agree",
    "enums_documented",
    "enums_kept",
    "enums_invented",
)

_WRITES = ("create", "update", "action", "delete")
_WRAPPER_KEYS = {
    "data",
    "item",
    "resource",
    "record",
    "body",
    "payload",
    "object",
    "entity",
    "input",
    "request",
    "attributes",
    "fields",
    "properties",
}


def snake_name(name: str) -> str:
    """The snake_case spelling tools use for a documented name (``firstName`` -> ``first_name``)."""
    return snake(name)


@dataclass(frozen=True)
class DroppedOp:
    operation: str  # "POST /invoices/search"
    stage: str  # explore | verify | environment
    reason: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class DocFidelity:
    """One document's figures (see the module docstring)."""

    source: str
    operations: int = 0
    tools_made: int = 0
    verified: int = 0
    body_documented: int = 0
    body_kept: int = 0
    required_checked: int = 0
    required_agree: int = 0
    enums_documented: int = 0
    enums_kept: int = 0
    enums_invented: int = 0
    dropped: list[DroppedOp] = field(default_factory=list)
    disagreements: list[str] = field(
        default_factory=list
    )  # "POST /x: name required in the document, optional in the tool"
    served: list[str] = field(default_factory=list)  # "PUT /x: served by PATCH /x" (counted as verified)

    def add(self, other: DocFidelity) -> None:
        for k in FIDELITY_COUNTS:
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def figures(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, int)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            **self.figures(),
            "dropped": [d.to_dict() for d in self.dropped],
            "disagreements": self.disagreements[:100],
            "served": self.served[:200],
        }


@dataclass
class FidelityReport:
    documents: list[DocFidelity] = field(default_factory=list)

    @property
    def totals(self) -> DocFidelity:
        t = DocFidelity(source="total")
        for d in self.documents:
            t.add(d)
        return t

    def to_dict(self) -> dict[str, Any]:
        t = self.totals
        return {
            "totals": {**t.figures(), "drop_reasons": drop_reasons(self.documents)},
            "documents": [d.to_dict() for d in self.documents],
        }


def drop_reasons(docs: Iterable[DocFidelity]) -> dict[str, int]:
    """``stage: reason`` (the reason's words before any quoted name) -> count, most common first."""
    out: dict[str, int] = {}
    for d in docs:
        for x in d.dropped:
            head = re.sub(r"'[^']*'", "X", x.reason).split(" (", 1)[0].split(": ", 1)[0].strip()[:80]
            out[f"{x.stage}: {head}"] = out.get(f"{x.stage}: {head}", 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


# ---- what the document says ----------------------------------------------------------------------


def _props(schema: Any, depth: int = 0) -> tuple[dict[str, Any], set[str]]:
    if not isinstance(schema, dict) or depth > 4:
        return {}, set()
    props: dict[str, Any] = {}
    req: set[str] = set()
    for sub in schema.get("allOf") or []:
        p, r = _props(sub, depth + 1)
        props.update(p)
        req |= r
    if not schema.get("properties"):
        for comb in ("oneOf", "anyOf"):
            for b in schema.get(comb) or []:
                p, r = _props(b, depth + 1)
                if p:
                    props.update(p)
                    req |= r
                    break
            if props:
                break
    if isinstance(schema.get("properties"), dict):
        props.update(schema["properties"])
    if isinstance(schema.get("required"), list):
        req |= {r for r in schema["required"] if isinstance(r, str)}
    return props, req


def documented_body(op: Operation) -> tuple[dict[str, dict], set[str]]:
    """The documented request-body properties of ``op`` (name -> schema) and the required ones."""
    items = bulk_items(op.request_body)  # PUT /customers [{...}]: each item documents the row's properties
    props, req = _props(items if items is not None else op.request_body)
    if not props:
        params = [p for p in op.parameters if p.location == "body"]
        props = {p.name: dict(p.schema_ or {}) for p in params}
        req = {p.name for p in params if p.required}
    words = {singular(snake(w)) for w in re.split(r"[/.:{}]", op.path) if w}
    for _ in range(3):  # {"transaction": {...}} and JSON:API {"data": {"attributes": {...}}}
        if len(props) != 1:
            break
        ((only, inner),) = props.items()
        if snake(only) not in _WRAPPER_KEYS and singular(snake(only)) not in words:
            break  # {"settings": {...}} on /teams/{id}: one real property, not a wrapper
        inner_props, inner_req = _props(inner)
        if not inner_props:
            break
        if only == "data" and isinstance(inner_props.get("attributes"), dict):
            attrs, areq = _props(inner_props["attributes"])
            if attrs:
                props, req = attrs, areq
                continue
        props, req = inner_props, inner_req
    keep = {
        k: (v if isinstance(v, dict) else {})
        for k, v in props.items()
        if not (isinstance(v, dict) and (v.get("readOnly") or not_a_field(k, v)))
    }
    return keep, {r for r in req if r in keep}


# Body properties the document itself describes as something other than a value a user sets on
# a row: the caller's credentials, a control of the request or its response, a constant type tag.
_NOT_FIELDS = (
    (r"^(client_id|secret|client_secret)$", r"^your .*\bapi\b"),  # Plaid: "Your Plaid API `secret`"
    (r"^token$", r"^authentication token\b"),  # Slack: "Authentication token. Requires scope: ..."
    (r"^expand$", r"\bin the response\b"),  # Stripe: "which fields in the response should be expanded"
    (r"^idempotency_key$", r""),  # a retry guard of the request (Square, Plaid)
    (r"^kind$", r"^(type of the resource|identifies (what kind of resource|this as))"),  # Google
    (r"^etag$", r"^etag of the resource"),  # Google: a version tag the server sets
)


def not_a_field(name: str, schema: dict) -> bool:
    """Whether a documented body property is a credential, a request control or a constant
    tag by its own name and description (``secret``: "Your Plaid API secret")."""
    desc = str(schema.get("description") or "").strip().lower()
    return any(re.match(n, snake(name)) and re.search(d, desc) for n, d in _NOT_FIELDS)


def _doc_enum(s: dict) -> list[str] | None:
    vals = s.get("enum")
    if not isinstance(vals, list) or not vals or not all(isinstance(v, str) for v in vals if v is not None):
        items = s.get("items")
        return _doc_enum(items) if isinstance(items, dict) and s.get("type") == "array" else None
    out = [v for v in vals if isinstance(v, str) and v.strip()]
    return out or None


# ---- the comparison ------------------------------------------------------------------------------


def _match_param(tool: ToolSpec, prop: str, schema: dict | None = None):
    n = snake_name(prop)
    for p in tool.params:  # a body property that is the tool's key (``{"consent_id": ...}``) is kept as it
        if p.name in (prop, n) or (p.field is not None and p.field in (prop, n)):
            return p
    if tool.entity and n == f"{tool.entity}_id":  # Jira [{contextId, ...}] on a context's update: its key
        return next((p for p in tool.params if p.key), None)
    if (schema or {}).get("type") != "array":
        return None
    # a bulk write's list of ids ({webhookIds}, Discord {messages: [snowflake]}): its key, one per call
    one = n[:-1] if n == "ids" or n.endswith("_ids") else f"{singular(n)}_id" if singular(n) != n else ""
    return next((p for p in tool.params if p.key and one and (p.name == one or n == "ids")), None)


def _key_from_path(op: Operation, p: Any, entity: str | None = None) -> bool:
    """``PUT /calendars/{calendarId}`` with a body ``id``, ``POST /products/{product_id}/images``
    with a body ``product_id``: the tool takes the value as the path parameter (required, as
    every path parameter is); the body's optional property only repeats it. So does Traccar's
    ``PUT /devices/{id}/accumulators`` body ``deviceId``: the key of the item the path names."""
    path = op.path.split("?", 1)[0]
    if p.key and re.search(r"/\{[^}/]+\}$", path):
        return True  # PUT /calendars/{id}: the key (calendar_id) is the item path's parameter
    item = re.search(r"/([^{}/]+)/\{[^}/]+\}/[^{}/]+$", path)  # /devices/{id}/accumulators
    if p.key and item is not None and entity is not None:
        coll = singular(snake(item.group(1)))
        own = entity == coll or entity.startswith(f"{coll}_")  # the device, or its accumulators
        if own and p.name.startswith(coll):
            return (
                True  # (not PATCH /guilds/{guild_id}/channels [{id}]: that key is a channel's, in the body)
            )
    return any(x.location == "path" and p.name in (x.name, snake_name(x.name)) for x in op.parameters)


def _compare_body(op: Operation, tool: ToolSpec, fid: DocFidelity) -> None:
    props, req = documented_body(op)
    for name, s in props.items():
        fid.body_documented += 1
        p = _match_param(tool, name, s)
        if p is None:
            fid.disagreements.append(f"{op.key}: body property {name!r} not kept")
            continue
        fid.body_kept += 1
        fid.required_checked += 1
        if p.required == (name in req) or _key_from_path(op, p, tool.entity):
            fid.required_agree += 1
        else:
            doc = "required" if name in req else "optional"
            fid.disagreements.append(
                f"{op.key}: {name!r} is {doc} in the document, "
                f"{'required' if p.required else 'optional'} in {tool.name}"
            )
        denum = _doc_enum(s)
        if denum is not None:
            fid.enums_documented += 1
            if p.enum is not None and list(p.enum) == denum:
                fid.enums_kept += 1
            else:
                fid.disagreements.append(
                    f"{op.key}: enum of {name!r} is {denum[:8]} in the document, "
                    f"{p.enum[:8] if p.enum else 'none'} in {tool.name}"
                )
        elif p.enum:
            fid.enums_invented += 1
            fid.disagreements.append(
                f"{op.key}: {tool.name}.{p.name} has an enum the document does not state"
            )


def build_fidelity(
    docs: list[ApiDoc],
    explore_excluded: Iterable[Any],
    made: list[EnvSpec],
    shipped: list[EnvSpec],
    verify_dropped: dict[tuple[str, str], str],
    env_dropped: dict[str, str],
    origins: dict[tuple[str, str], str] | None = None,
) -> FidelityReport:
    """Per-document fidelity of one build.

    ``explore_excluded``: the explorer's ExcludedOp records (source, operation, reason);
    ``made``: the specs as drafted (before verification); ``shipped``: what the build wrote;
    ``verify_dropped``: (env, tool) -> why verification excluded it; ``env_dropped``: env ->
    why the whole environment did not ship; ``origins``: (env, tool) -> document source,
    where the explorer knows it (else the first of the spec's sources documenting the operation).
    """
    origins = origins or {}
    keys_by_doc = {d.source: {op.key for op in d.operations} for d in docs}

    def doc_of(spec: EnvSpec, tool: ToolSpec) -> str | None:
        src = origins.get((spec.name, tool.name))
        if src is not None:
            return src
        for s in spec.sources or [d.source for d in docs]:
            if tool.source in keys_by_doc.get(s, ()):
                return s
        return None

    made_ops: dict[tuple[str, str], list[tuple[EnvSpec, ToolSpec]]] = {}
    for s in made:
        for t in s.tools:
            src = doc_of(s, t)
            if src is not None and t.source:
                made_ops.setdefault((src, t.source), []).append((s, t))
    shipped_ops: dict[tuple[str, str], tuple[EnvSpec, ToolSpec]] = {}
    for s in shipped:
        for t in s.tools:
            src = doc_of(s, t)
            if src is not None and t.source:
                shipped_ops.setdefault((src, t.source), (s, t))
    excluded: dict[tuple[str, str], str] = {}
    served: dict[tuple[str, str], str] = {}  # (document, operation) -> the operation whose tool serves it
    for x in explore_excluded:
        excluded.setdefault((x.source, x.operation), x.reason)
        if getattr(x, "served_by", None):
            served.setdefault((x.source, x.operation), x.served_by)
    report = FidelityReport()
    for d in docs:
        fid = DocFidelity(source=d.source)
        for op in d.operations:
            k = (d.source, op.key)
            fid.operations += 1
            if k in made_ops:
                fid.tools_made += 1
            if k in shipped_ops:
                fid.verified += 1
                _, tool = shipped_ops[k]
                if tool.kind.value in _WRITES:
                    _compare_body(op, tool, fid)
                continue
            by = served.get(k)
            if by is not None and (d.source, by) in shipped_ops:
                # one tool does what both do (a PUT and a PATCH of one row): its body is compared
                # with the operation it was made from, which states what the tool writes
                fid.tools_made += 1
                fid.verified += 1
                fid.served.append(f"{op.key}: served by {shipped_ops[(d.source, by)][1].name} ({by})")
                continue
            fid.dropped.append(_why(k, made_ops, excluded, verify_dropped, env_dropped))
        report.documents.append(fid)
    return report


def _why(
    k: tuple[str, str],
    made_ops: dict,
    excluded: dict[tuple[str, str], str],
    verify_dropped: dict[tuple[str, str], str],
    env_dropped: dict[str, str],
) -> DroppedOp:
    if k in made_ops:
        for spec, tool in made_ops[k]:
            if (spec.name, tool.name) in verify_dropped:
                return DroppedOp(
                    k[1],
                    "verify",
                    f"{tool.name} failed verification: {verify_dropped[(spec.name, tool.name)][:200]}",
                )
        for spec, _tool in made_ops[k]:
            if spec.name in env_dropped:
                return DroppedOp(
                    k[1],
                    "environment",
                    f"environment {spec.name} did not ship: {env_dropped[spec.name][:200]}",
                )
        return DroppedOp(k[1], "build", "the tool was made but did not ship (environment limit)")
    if k in excluded:
        return DroppedOp(k[1], "explore", excluded[k])
    return DroppedOp(k[1], "explore", "no tool was made and the explorer gave no reason")
