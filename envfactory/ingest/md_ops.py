"""Endpoint drafts of the Markdown reader and how they become Operations: paths normalised
(``/buckets/1/todos/2.json`` -> ``/buckets/{bucket_id}/todos/{todo_id}.json``), parameters placed,
request bodies and responses inferred from the JSON examples."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from envfactory.ingest.infer import infer_schema, merge_schemas
from envfactory.ingest.model import Operation, Parameter, Response

__all__ = ["EndpointDraft", "singular", "normalize_path", "to_operation", "operations", "base_url"]


def singular(word: str) -> str:
    """Cheap English singular for resource names in paths (todolists -> todolist)."""
    w = word.lower()
    irregular = {
        "people": "person",
        "children": "child",
        "men": "man",
        "women": "woman",
        "data": "data",
        "media": "media",
        "news": "news",
        "series": "series",
    }
    if w in irregular:
        return irregular[w]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes", "uses")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def normalize_path(raw: str) -> tuple[str, dict[str, str]]:
    """``/buckets/1/todos/2.json`` -> ``/buckets/{bucket_id}/todos/{todo_id}.json``.

    Returns the path and, for each placeholder, the JSON type it was written with
    (``integer`` for numeric segments). ``:id`` becomes ``{id}``; a placeholder name
    used twice is qualified by the segment before it.
    """
    raw = raw.split("?", 1)[0].split("#", 1)[0].rstrip(".")
    segs = raw.split("/")
    types: dict[str, str] = {}
    out: list[str] = []
    names: list[tuple[int, str, str]] = []  # (index, name, prefix segment)
    prev = ""
    for seg in segs:
        stem, dot, ext = seg.partition(".")
        if stem.isdigit() and (not dot or ext.isalpha()):
            base = re.sub(r"\W", "_", singular(prev)) if prev else "id"
            name = f"{base}_id" if base != "id" else "id"
            names.append((len(out), name, prev))
            out.append("{" + name + "}" + (dot + ext if dot else ""))
            types[name] = "integer"
        elif seg.startswith(":") and len(seg) > 1:
            name = re.sub(r"\W", "_", seg[1:])
            names.append((len(out), name, prev))
            out.append("{" + name + "}")
            types[name] = "string"
        elif seg.startswith("{") and seg.endswith("}"):
            names.append((len(out), seg[1:-1], prev))
            out.append(seg)
            types.setdefault(seg[1:-1], "string")
        else:
            out.append(seg)
        if not (seg.startswith((":", "{")) or stem.isdigit()):
            prev = seg
    counts: dict[str, int] = {}
    for _, n, _p in names:
        counts[n] = counts.get(n, 0) + 1
    for i, n, p in names:
        if counts[n] > 1 and p:
            new = f"{re.sub(r'[^0-9A-Za-z_]', '_', singular(p))}_{n}"
            out[i] = out[i].replace("{" + n + "}", "{" + new + "}")
            types[new] = types.get(n, "string")
    final = "/".join(out) or "/"
    placeholders = re.findall(r"\{([^}]+)\}", final)
    return final, {n: types.get(n, "string") for n in placeholders}


@dataclass
class EndpointDraft:
    method: str
    raw_path: str
    summary: str = ""
    anchor: str = ""
    link: str = ""  # "#anchor" this endpoint line points to (an alias of that section)
    description: list[str] = field(default_factory=list)
    params: dict[tuple[str, str], Parameter] = field(default_factory=dict)
    request_examples: list[Any] = field(default_factory=list)
    responses: dict[str, list[Any]] = field(default_factory=dict)
    response_desc: dict[str, str] = field(default_factory=dict)
    statuses: list[str] = field(default_factory=list)  # mentioned in prose ("returns 201 Created")
    primary: bool = True


def to_operation(op: EndpointDraft) -> Operation:
    """One endpoint draft as an Operation: path placeholders typed, body and responses inferred from examples."""
    path, placeholders = normalize_path(op.raw_path)
    params: list[Parameter] = []
    for name, typ in placeholders.items():
        documented = op.params.get((name, "path"))
        if documented is None and name == "id":
            documented = next((p for (n, loc), p in op.params.items() if loc == "path"), None)
        params.append(
            documented.model_copy(update={"name": name, "required": True})
            if documented
            else Parameter(name=name, location="path", required=True, schema={"type": typ})
        )
    for (_name, loc), p in op.params.items():
        if loc != "path":
            params.append(p)
    body: dict[str, Any] | None = None
    example = op.request_examples[0] if op.request_examples else None
    if op.request_examples and isinstance(example, (dict, list)):
        body = infer_schema(example)
        for ex in op.request_examples[1:]:
            body = merge_schemas(body, infer_schema(ex))
        if body.get("type") == "object":
            body.pop("required", None)  # an example shows what may be sent, not what must
    body_params = [p for p in params if p.location == "body"]
    if body_params:
        body = body or {"type": "object", "properties": {}}
        if body.get("type") == "object":
            props = dict(body.get("properties") or {})
            for p in body_params:
                s = props.get(p.name) or p.schema_
                if p.description and isinstance(s, dict):
                    s = {**s, "description": p.description}
                props[p.name] = s
            body = {**body, "properties": props}
            req = [p.name for p in body_params if p.required]
            if req:
                body["required"] = req
        if isinstance(example, dict):  # the example knows the real type better than prose
            params = [
                p.model_copy(update={"schema_": infer_schema(example[p.name]), "example": example[p.name]})
                if p.location == "body" and p.name in example and example[p.name] is not None
                else p
                for p in params
            ]
    elif isinstance(body, dict) and isinstance(body.get("properties"), dict):
        params += [
            Parameter(
                name=k,
                location="body",
                schema=v,
                example=example.get(k) if isinstance(example, dict) else None,
            )
            for k, v in body["properties"].items()
        ]
    responses: list[Response] = []
    for status, examples in op.responses.items():
        schema = infer_schema(examples[0])
        for ex in examples[1:]:
            schema = merge_schemas(schema, infer_schema(ex))
        responses.append(
            Response(
                status=status,
                description=op.response_desc.get(status, ""),
                schema=schema,
                example=examples[0],
            )
        )
    for status in op.statuses + list(op.response_desc):
        if status not in op.responses and all(r.status != status for r in responses):
            responses.append(Response(status=status, description=op.response_desc.get(status, "")))
    responses.sort(key=lambda r: r.status)
    return Operation(
        method=op.method,
        path=path,
        summary=op.summary,  # type: ignore[arg-type]
        operation_id=re.sub(r"\W+", "_", op.anchor).strip("_") or None if op.primary else None,
        description=" ".join(op.description),
        parameters=params,
        request_body=body,
        request_example=example,
        responses=responses,
    )


def operations(drafts: list[EndpointDraft]) -> list[Operation]:
    """The drafts as Operations, in document order; an alias line borrows its section's details; first of a key wins."""
    by_anchor = {op.anchor: op for op in drafts if op.primary and op.anchor}
    out: list[Operation] = []
    seen: dict[str, Operation] = {}
    for op in drafts:
        src = by_anchor.get(op.link) if op.link else None
        if src is not None and src is not op:  # "legacy route -> [Get to-dos](#get-to-dos)"
            op = EndpointDraft(
                method=op.method,
                raw_path=op.raw_path,
                summary=src.summary,
                anchor="",
                description=src.description,
                params=src.params,
                request_examples=src.request_examples,
                responses=src.responses,
                response_desc=src.response_desc,
                statuses=src.statuses,
                primary=False,
            )
        operation = to_operation(op)
        first = seen.get(operation.key)
        if first is not None:
            # the same endpoint written again (its example request under a heading that names it):
            # one operation, with the details the first mention lacks
            out[out.index(first)] = seen[operation.key] = _fill(first, operation)
            continue
        seen[operation.key] = operation
        out.append(operation)
    return out


def _fill(first: Operation, again: Operation) -> Operation:
    """``first`` with what ``again`` documents and it does not (a body, responses, parameters)."""
    update: dict[str, Any] = {}
    if first.request_body is None and again.request_body is not None:
        update["request_body"], update["request_example"] = again.request_body, again.request_example
    if not any(r.schema_ or r.example is not None for r in first.responses) and again.responses:
        update["responses"] = again.responses
    names = {(p.name, p.location) for p in first.parameters}
    extra = [p for p in again.parameters if (p.name, p.location) not in names]
    if extra:
        update["parameters"] = [*first.parameters, *extra]
    if not first.description and again.description:
        update["description"] = again.description
    return first.model_copy(update=update) if update else first


def base_url(urls: list[str], drafts: list[EndpointDraft]) -> str | None:
    """The server part of a sample URL that ends with one of the endpoints' paths, if any."""
    for url in urls:
        for op in drafts:
            raw = op.raw_path.split("?")[0]
            if len(raw) > 1 and url.split("?")[0].endswith(raw):
                base = url.split("?")[0][: -len(raw)]
                # curl samples write account ids as shell variables: $ACCOUNT_ID -> {account_id}
                return (
                    re.sub(r"\$\{?([A-Za-z_]\w*)\}?", lambda m: "{" + m.group(1).lower() + "}", base) or None
                )
    return None
