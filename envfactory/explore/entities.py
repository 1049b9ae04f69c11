"""Entities from schemas and paths: typed fields, primary keys, foreign keys, enums.

Where fields come from, in order: the success responses of an entity's operations (list
wrappers such as ``{data: [...]}`` / ``{items: [...]}`` unwrapped), the named schema of the
same name, the request bodies of its create/update operations, and (added later by the tool
builder) the properties its list filters name. Nested objects are kept as one ``object``
field (not flattened): a create/update body then has the same shape as the documented one.
A field is non-nullable only when a schema lists it as ``required``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..ingest import ApiDoc
from ..spec import FieldType
from .naming import entity_name, first_sentence, is_ident, plural, singular, snake
from .resources import OpPlan

__all__ = [
    "fk_stem",
    "is_envelope_name",
    "FieldDraft",
    "EntityDraft",
    "infer_entities",
    "schema_type",
    "field_from_schema",
    "props_of",
    "unwrap",
    "parent_field_name",
    "MAX_FIELDS",
]

MAX_FIELDS = 24
_WRAPPERS = (
    "data",
    "items",
    "results",
    "records",
    "entries",
    "list",
    "values",
    "content",
    "elements",
    "objects",
    "resources",
    "result",
    "collection",
    "hits",
    "value",
    "rows",
    "nodes",
    "edges",
)
_META = {
    "total",
    "count",
    "limit",
    "offset",
    "page",
    "next",
    "previous",
    "has_more",
    "next_cursor",
    "cursor",
    "next_page_token",
    "total_count",
    "page_size",
    "meta",
    "links",
    "_links",
    "ok",
    "url",
    "response_metadata",
    "warnings",
    "object",
    "dictionaries",
    "included",
    "errors",
    "pagination",
    "paging",
    "status",
    "success",
    "message",
    "code",
    "request_id",
    "total_results",
    "per_page",
    "page_count",
    "total_pages",
    "self",
    "next_link",
    "prev_link",
    "kind",
    "etag",
    "odata_context",
    "odata_next_link",
    "type",
}
_SKIP_PROPS = {"links", "_links", "_embedded", "meta", "etag", "self", "href", "object", "x_cycle", "kind"}
_SCHEMA_SUFFIX = re.compile(
    r"(Response|Request|Input|Create|Update|Dto|DTO|Model|Object|Resource|Details|Detail|Full|"
    r"Summary|Entity|Body|Payload|Output|Schema|Record|Info)$"
)


# paging and envelope words of a list response: never fields of the rows inside it
_ENVELOPE = re.compile(
    r"^(total|count|page|pages|next|prev|previous|has_more|has_next|cursor|links?|_links|meta|"
    r"limit|offset|per_page|page_size|page_count|pagination|paging)(_[a-z0-9_]+)?$|"
    r"_(count|total|cursor|token|url|link|links|page|pages)$|^(odata_|x_)"
)


def is_envelope_name(name: str) -> bool:
    """``total_items``, ``total_pages``, ``next_cursor``, ``links``: words of a list envelope."""
    return name in _META or bool(_ENVELOPE.search(name))


@dataclass
class FieldDraft:
    name: str
    type: FieldType
    enum: list[str] | None = None
    description: str = ""
    nullable: bool = True
    ref: str | None = None
    example: Any = None
    minimum: float | None = None
    maximum: float | None = None
    read_only: bool = False
    link: str | None = None  # entity named by a cut $ref, resolved to ``ref`` later
    default: Any = None


@dataclass
class EntityDraft:
    name: str
    description: str = ""
    fields: dict[str, FieldDraft] = field(default_factory=dict)
    pk: str = ""
    key_params: list[str] = field(default_factory=list)
    stub: bool = False

    def ensure(self, f: FieldDraft) -> FieldDraft:
        """Add ``f`` unless a field of that name exists; return the field kept."""
        cur = self.fields.get(f.name)
        if cur is not None:
            if cur.enum is None and f.enum and cur.type == FieldType.string:
                cur.type, cur.enum = f.type, f.enum
            if not cur.description and f.description:
                cur.description = f.description
            if cur.example is None:
                cur.example = f.example
            return cur
        self.fields[f.name] = f
        return f


def props_of(schema: Any, depth: int = 0) -> tuple[dict[str, Any], set[str]]:
    """Properties and required names of an object schema (allOf merged, first oneOf/anyOf branch)."""
    if not isinstance(schema, dict) or depth > 4:
        return {}, set()
    props: dict[str, Any] = {}
    req: set[str] = set()
    for sub in schema.get("allOf") or []:
        p, r = props_of(sub, depth + 1)
        props.update(p)
        req |= r
    for comb in ("oneOf", "anyOf"):
        branches = schema.get(comb)
        if isinstance(branches, list) and not schema.get("properties"):
            for b in branches:
                p, r = props_of(b, depth + 1)
                if p:
                    props.update(p)
                    req |= r
                    break
    if isinstance(schema.get("properties"), dict):
        props.update(schema["properties"])
    if isinstance(schema.get("required"), list):
        req |= {r for r in schema["required"] if isinstance(r, str)}
    return props, req


def _items(s: dict) -> dict | None:
    it = s.get("items")
    if isinstance(it, dict):
        return it
    if isinstance(it, list) and it and isinstance(it[0], dict):
        return it[0]
    return None


def unwrap(schema: Any, entity: str, *, listing: bool = False) -> dict | None:
    """The schema of one row inside a response/body (array items, list/data wrappers).

    ``listing``: the answer of a list operation, where one array of objects named as rows
    (``items``, ``data``, the entity's plural) holds the rows even beside documented page
    fields (Google's ``Events``: ``summary``, ``timeZone``, ``accessRole``, ``items``).
    """
    s = schema
    for _ in range(4):
        if not isinstance(s, dict):
            return None
        if (s.get("type") == "array" or "items" in s) and not s.get("properties"):
            s = _items(s)
            continue
        props, _ = props_of(s)
        if not props:
            return None
        names = {snake(k): k for k in props}
        nxt = None
        for key in (plural(entity), entity, *_WRAPPERS):
            others = [n for n in names if n != key]
            envelope = len(props) == 1 or all(is_envelope_name(n) for n in others)
            if key in names and isinstance(props[names[key]], dict) and envelope:
                inner = props[names[key]]
                if _items(inner) is not None or props_of(inner)[0]:
                    nxt = inner
                    break
        if nxt is None and listing:
            rows = [
                v
                for k, v in props.items()
                if snake(k) in (*_WRAPPERS, plural(entity))
                and isinstance(v, dict)
                and v.get("type") == "array"
                and isinstance(_items(v), dict)
                and (props_of(_items(v))[0] or "x-truncated" in (_items(v) or {}))
            ]
            nxt = rows[0] if len(rows) == 1 else None
        if nxt is None:
            arrays = [
                v
                for v in props.values()
                if isinstance(v, dict) and v.get("type") == "array" and props_of(_items(v) or {})[0]
            ]
            scalars = [k for k, v in props.items() if not (isinstance(v, dict) and v.get("type") == "array")]
            if len(arrays) == 1 and all(is_envelope_name(snake(k)) for k in scalars):
                nxt = arrays[0]
        if nxt is None:
            return s
        s = nxt
    return s if isinstance(s, dict) else None


def schema_type(s: Any) -> tuple[FieldType, list[str] | None]:
    """The FieldType (and enum values) of a JSON Schema."""
    if not isinstance(s, dict):
        return FieldType.string, None
    enum = s.get("enum")
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if isinstance(enum, list) and enum:
        vals = [e for e in enum if e is not None]
        if vals and all(isinstance(e, str) for e in vals) and len(vals) <= 60:
            uniq = list(dict.fromkeys(str(v) for v in vals if str(v).strip()))
            if uniq:
                return FieldType.enum, uniq
        if vals and all(isinstance(e, int) and not isinstance(e, bool) for e in vals):
            return FieldType.integer, None
    fmt = s.get("format")
    if t == "string" or (t is None and fmt in ("date", "date-time")):
        if fmt == "date":
            return FieldType.date, None
        if fmt in ("date-time", "datetime"):
            return FieldType.datetime, None
        return FieldType.string, None
    if t == "integer":
        return FieldType.integer, None
    if t == "number":
        return FieldType.number, None
    if t == "boolean":
        return FieldType.boolean, None
    if t == "array" or "items" in s:
        return FieldType.array, None
    if t == "object" or s.get("properties") or s.get("additionalProperties") or s.get("allOf"):
        return FieldType.object, None
    if s.get("oneOf") or s.get("anyOf"):
        for b in s.get("oneOf") or s.get("anyOf") or []:
            ft, en = schema_type(b)
            if ft != FieldType.string or (isinstance(b, dict) and b.get("type") == "string"):
                return ft, en
    return FieldType.string, None


def _ref_entity(s: dict) -> str | None:
    for k in ("x-truncated", "x-cycle"):
        ref = s.get(k)
        if isinstance(ref, str) and "/" in ref:
            name = _SCHEMA_SUFFIX.sub("", ref.rsplit("/", 1)[-1]) or ref.rsplit("/", 1)[-1]
            return entity_name(name)
    return None


def field_from_schema(name: str, s: Any, required: bool) -> FieldDraft | None:
    """A field for one property; None for binary blobs and unusable names."""
    fname = snake(name)
    if not is_ident(fname) or len(fname) > 48 or fname in _SKIP_PROPS:
        return None
    if not isinstance(s, dict):
        s = {}
    if s.get("format") == "binary":
        return None
    ftype, enum = schema_type(s)
    ex = s.get("example")
    if ex is None and isinstance(s.get("examples"), list) and s["examples"]:
        ex = s["examples"][0]
    return FieldDraft(
        name=fname,
        type=ftype,
        enum=enum,
        description=first_sentence(s.get("description") or s.get("title"), 160),
        nullable=not required or bool(s.get("nullable")),
        example=ex,
        minimum=s.get("minimum") if isinstance(s.get("minimum"), (int, float)) else None,
        maximum=s.get("maximum") if isinstance(s.get("maximum"), (int, float)) else None,
        read_only=bool(s.get("readOnly")),
        link=_ref_entity(s),
    )


def parent_field_name(param: str, parent: str) -> str:
    """The foreign-key field a parent path parameter fills: ``hotelId`` -> ``hotel_id``."""
    p = snake(param)
    if p.endswith("_id") and p != "id" and singular(p[:-3]) == parent:
        return p
    return f"{parent}_id"


def _add_props(ent: EntityDraft, schema: Any, *, body: bool = False, listing: bool = False) -> None:
    row = unwrap(schema, ent.name, listing=listing)
    if row is None:
        return
    props, req = props_of(row)
    for k, v in props.items():
        f = field_from_schema(k, v, k in req and not body)
        if f is not None:
            ent.ensure(f)
    if not ent.description and isinstance(row.get("description"), str):
        ent.description = first_sentence(row["description"])


def _body_schema(plan: OpPlan) -> dict | None:
    body = plan.op.request_body
    if isinstance(body, dict) and props_of(body)[0]:
        return body
    params = [p for p in plan.op.parameters if p.location == "body"]
    if params:
        return {
            "type": "object",
            "properties": {p.name: p.schema_ or {"type": "string"} for p in params},
            "required": [p.name for p in params if p.required],
        }
    return None


def _named_index(docs: list[ApiDoc]) -> dict[str, list[dict]]:
    """Entity name -> its named schemas, the best-ranked one of each document, in document order.

    Schemas of several documents unify by entity name (``Traveler`` in one and ``Travelers``
    or ``TravelerResponse`` in another both describe ``traveler``).
    """
    out: dict[str, list[dict]] = {}
    for doc in docs:
        idx: dict[str, tuple[int, dict]] = {}
        for name, s in doc.schemas.items():
            base = _SCHEMA_SUFFIX.sub("", name) or name
            ent = entity_name(base)
            rank = 0 if base == name else 1
            if ent not in idx or rank < idx[ent][0]:
                idx[ent] = (rank, s)
        for ent, (_, s) in idx.items():
            out.setdefault(ent, []).append(s)
    return out


def infer_entities(
    plans: list[OpPlan], doc: ApiDoc | list[ApiDoc], warnings: list[str]
) -> dict[str, EntityDraft]:
    """Entity drafts for the (non-excluded) plans; parent stubs for path parents without operations.

    With several documents (one domain), same-named resources and schemas unify into one entity.
    """
    ents: dict[str, EntityDraft] = {}
    for p in plans:
        ents.setdefault(p.entity, EntityDraft(name=p.entity))
        if p.key_param and p.key_param not in ents[p.entity].key_params:
            ents[p.entity].key_params.append(p.key_param)
    named = _named_index(doc if isinstance(doc, list) else [doc])
    for p in plans:
        ent = ents[p.entity]
        resp = p.op.success_response()
        if resp is not None and resp.schema_ and p.kind in ("get", "list", "create", "update"):
            _add_props(ent, resp.schema_, listing=p.kind == "list")
        if not ent.description and p.kind in ("get", "list"):
            ent.description = ""
    for name, ent in ents.items():
        for schema in named.get(name, ()):
            _add_props(ent, schema)
    for p in plans:
        if p.kind in ("create", "update") and p.qualifier is None:
            body = _body_schema(p)
            if body is not None:
                _add_props(ents[p.entity], body, body=True)
    # parents named by path nesting get a stub entity when they have no operations here
    for p in plans:
        for _, parent in p.parents:
            if parent not in ents and is_ident(parent):
                stub = EntityDraft(name=parent, stub=True)
                for schema in named.get(parent, ()):
                    _add_props(stub, schema)
                ents[parent] = stub
    for ent in ents.values():
        _choose_pk(ent)
    return ents


def _choose_pk(ent: EntityDraft) -> None:
    keys = [snake(k) for k in ent.key_params]
    for cand in ("id", f"{ent.name}_id", *keys):
        f = ent.fields.get(cand)
        if f is not None and f.type in (FieldType.string, FieldType.integer, FieldType.enum):
            ent.pk = cand
            break
    else:
        ent.pk = (
            keys[0]
            if keys and keys[0] != "id" and keys[0].endswith("_id")
            else ("id" if "id" not in ent.fields else f"{ent.name}_id")
        )
        # a same-named non-scalar field (Just Eat's map placeholder ``delivery-pool-id: {...}``) is no key
        rest = {k: v for k, v in ent.fields.items() if k != ent.pk}
        ent.fields = {ent.pk: FieldDraft(name=ent.pk, type=FieldType.string), **rest}
    pk = ent.fields[ent.pk]
    if pk.type == FieldType.enum:
        pk.type, pk.enum = FieldType.string, None
    pk.nullable = False
    pk.ref = None
    pk.link = None
    if not pk.description:
        pk.description = f"Unique id of the {ent.name.replace('_', ' ')}."


def link_entities(ents: dict[str, EntityDraft], plans: list[OpPlan], warnings: list[str]) -> None:
    """Foreign keys from path nesting, ``*_id`` names, fields named after an entity, and cut ``$ref``s."""
    for p in plans:
        if not p.parents:
            continue
        param, parent = p.parents[-1]
        ent = ents.get(p.entity)
        if ent is None or parent not in ents or parent == p.entity:
            continue
        fname = parent_field_name(param, parent)
        if fname == ent.pk:
            continue
        f = ent.ensure(
            FieldDraft(
                name=fname,
                type=FieldType.string,
                description=f"Id of the {parent.replace('_', ' ')} this belongs to.",
            )
        )
        f.ref = parent
    pk_owners: dict[str, list[str]] = {}
    for e in ents.values():
        if e.pk and e.pk != "id":
            pk_owners.setdefault(e.pk, []).append(e.name)
    for ent in ents.values():
        for f in list(ent.fields.values()):
            if f.ref or f.name == ent.pk:
                continue
            target = None
            stem = fk_stem(f.name)
            if stem is not None:
                base = stem
                for cand in (base, singular(base)):
                    if cand in ents:
                        target = cand
                        break
                if target is None and f.type in (FieldType.string, FieldType.integer):
                    target = _id_target(f"{stem}_id", ent.name, ents, pk_owners)
            elif f.name in ents and f.type in (FieldType.string, FieldType.integer):
                target = f.name
            elif f.link and f.link in ents and f.type in (FieldType.object, FieldType.string):
                newname = f.name if f.name.endswith("_id") else f"{f.name}_id"
                if newname not in ent.fields:
                    del ent.fields[f.name]
                    f.name = newname
                    ent.fields[newname] = f
                    target = f.link
            if target is not None:
                f.ref = target
    for ent in ents.values():
        for f in ent.fields.values():
            if f.ref:
                tpk = ents[f.ref].fields[ents[f.ref].pk]
                f.type = FieldType.integer if tpk.type == FieldType.integer else FieldType.string
                f.enum = None
                if f.ref == ent.name:
                    f.nullable = True
    _break_cycles(ents, warnings)


_FK_SUFFIX = re.compile(r"^(.+?)_(id|gid|uuid|idfk|id_fk|fk|key_fk)$")


def fk_stem(name: str) -> str | None:
    """The entity word of a foreign-key name: ``project_id``, ``ProjectIDFK`` (``project_idfk``),
    ``projectGid``, ``project_fk`` -> ``project``; None for other names."""
    m = _FK_SUFFIX.match(name)
    return m.group(1) if m else None


def _id_target(
    fname: str, owner: str, ents: dict[str, EntityDraft], pk_owners: dict[str, list[str]]
) -> str | None:
    """The entity an ``*_id`` field names when its stem is not an entity itself.

    ``offer_id`` -> the entity whose key is ``offer_id`` (``flight_offer``), preferring one
    named after the stem; ``origin_airport_id`` -> ``airport`` (a role prefix before an
    entity name, longest entity name first).
    """
    stem = fname[:-3]
    owners = [o for o in pk_owners.get(fname, ()) if o != owner]
    if len(owners) > 1:
        owners = [o for o in owners if o.endswith(f"_{stem}") or o == stem] or []
    if len(owners) == 1:
        return owners[0]
    parts = stem.split("_")
    for i in range(1, len(parts)):
        cand = "_".join(parts[i:])
        for c in (cand, singular(cand)):
            if c in ents and c != owner:
                return c
    return None


def _break_cycles(ents: dict[str, EntityDraft], warnings: list[str]) -> None:
    while True:
        g = nx.DiGraph()
        for e in ents.values():
            for f in e.fields.values():
                if f.ref and f.ref != e.name:
                    g.add_edge(f.ref, e.name, field=f.name)
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return
        src, dst = sorted(cycle)[-1][:2]
        fname = g.edges[src, dst]["field"]
        ents[dst].fields[fname].ref = None
        warnings.append(f"{dst}.{fname}: reference to {src} dropped to break a foreign-key cycle")


def cap_fields(ent: EntityDraft, keep: set[str]) -> None:
    """Keep at most MAX_FIELDS fields: key, references, required and used ones first."""
    if len(ent.fields) <= MAX_FIELDS:
        return
    order = list(ent.fields)
    rank = {
        n: (
            0
            if n == ent.pk
            else 1
            if n in keep
            else 2
            if ent.fields[n].ref
            else 3
            if not ent.fields[n].nullable
            else 4,
            i,
        )
        for i, n in enumerate(order)
    }
    chosen = set(sorted(order, key=lambda n: rank[n])[:MAX_FIELDS]) | keep | {ent.pk}
    ent.fields = {n: f for n, f in ent.fields.items() if n in chosen}
