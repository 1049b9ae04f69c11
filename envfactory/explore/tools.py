"""Tool drafts from operation plans: params, filters, required fields, action conditions.

Drafts name entity fields; types are taken from the (final) fields when the drafts are
turned into ToolSpecs, so a foreign key found late still types its parameter right.
"""

from __future__ import annotations

import re

from ..ingest import Parameter
from ..spec import Effect, FieldType
from .action_tools import action_name, draft_action, prepare_actions
from .drafts import (
    SERVER_SET,
    ParamDraft,
    ToolDraft,
    display_field,
    doc_value,
    human,
    param_desc,
    status_field,
)
from .entities import (
    EntityDraft,
    FieldDraft,
    field_from_schema,
    parent_field_name,
    props_of,
    schema_type,
)
from .fhir_search import referenced_entity
from .fidelity import documented_body
from .naming import first_sentence, is_ident, plural, singular, snake
from .resources import PAGING_PARAMS, OpPlan

__all__ = [
    "ParamDraft",
    "ToolDraft",
    "draft_tool",
    "prepare_actions",
    "display_field",
    "SERVER_SET",
    "status_field",
    "action_name",
]

_TEXT_SEARCH = {
    "q",
    "query",
    "search",
    "keyword",
    "keywords",
    "term",
    "text",
    "search_term",
    "search_query",
    "search_text",
    "name_contains",
    "filter",
}
_CONTAINS = re.compile(r"(^|_)(name|title|city|description|label|subject|keyword|address|display_name)$")
_RANGE = [
    (re.compile(r"^(min|minimum|from|since|after|earliest)_(.+)$"), "gte", 2, True),
    (re.compile(r"^(max|maximum|to|until|before|latest)_(.+)$"), "lte", 2, True),
    (re.compile(r"^(.+)_(min|minimum|from|since|after|gte|ge|greater_than|start|earliest)$"), "gte", 1, True),
    (re.compile(r"^(.+)_(max|maximum|to|until|before|lte|le|less_than|end|latest)$"), "lte", 1, True),
    (re.compile(r"^(.+)_gt$"), "gt", 1, True),
    (re.compile(r"^(.+)_lt$"), "lt", 1, True),
]
_INITIAL = (
    "pending",
    "draft",
    "new",
    "open",
    "active",
    "created",
    "scheduled",
    "confirmed",
    "requested",
    "submitted",
    "available",
    "enabled",
)


def _field_for_stem(ent: EntityDraft, stem: str) -> str | None:
    # ``courseWorkStates`` on course_work filters its ``state``: the entity's name is no part of the field's
    own = stem[len(ent.name) + 1 :] if stem.startswith(f"{ent.name}_") else ""
    for s in (stem, own) if own else (stem,):
        for cand in (s, f"{s}_at", f"{s}_date", f"{s}_time", f"{s}_datetime", f"{s}_on", singular(s)):
            if cand in ent.fields:
                return cand
    return None


_CONTROL_NAME = re.compile(r"^(show|include|always|hide|with|expand|return|fetch)_|_token$|^(all|refresh)$")
_CONTROL_DESC = re.compile(
    r"\bwhether to (include|expand|show|return|hide)\b|\b(used|included|returned|to include) in the (response|result)"
    r"|\bto fetch all\b",
    re.I,
)


def request_control(p: Parameter, ent: EntityDraft) -> bool:
    """A query argument that shapes the answer rather than naming rows: Calendar's ``showDeleted``
    ("Whether to include deleted events"), ``singleEvents`` ("Whether to expand recurring events"),
    ``alwaysIncludeEmail``, ``maxAttendees`` ("... attendees to include in the response"),
    ``syncToken``; Traccar's ``all`` ("... to fetch all entities") and ``refresh`` flags. It filters no field, and no field is made for it (a documented field of that
    name is still filtered)."""
    n = snake(p.name)
    if n in ent.fields:
        return False
    return bool(_CONTROL_NAME.search(n) or _CONTROL_DESC.search(p.description or ""))


def _list_param(p: Parameter, ent: EntityDraft, ents: dict[str, EntityDraft]) -> ParamDraft | None:
    n = snake(p.name)
    if p.location in ("header", "cookie") or n in PAGING_PARAMS or not is_ident(n):
        return None
    if request_control(p, ent):
        return None
    s = p.schema_ or {}
    ftype, enum = schema_type(s)
    desc = param_desc(p, "")
    parent = referenced_entity(p, ents)
    if parent is not None and parent != ent.name:  # FHIR's ``Schedule.actor:HealthcareService``, ``_has``
        target = f"{parent}_id"
        ent.ensure(FieldDraft(name=target, type=FieldType.string, description=f"Id of its {human(parent)}."))
        return ParamDraft(n, target, "eq", description=desc or f"Id of the {human(parent)}.")
    if n in _TEXT_SEARCH:
        disp = display_field(ent)
        if disp is None:
            return None
        return ParamDraft(
            n, disp, "contains", description=desc or f"Text to look for in the {human(ent.name)} {disp}."
        )
    if ftype == FieldType.array:
        items = s.get("items") if isinstance(s.get("items"), dict) else {"type": "string"}
        stem = n[:-4] + "_id" if n.endswith("_ids") else singular(n)
        if n in ("ids", f"{ent.name}_ids") or stem == ent.pk:
            target = ent.pk
        else:
            target = _field_for_stem(ent, stem) or stem
            if target not in ent.fields:
                f = field_from_schema(target, items, False)
                if f is None:
                    return None
                ent.ensure(f)
        return ParamDraft(
            n, target, "in", description=desc or f"Any of these {human(target)} values.", elem_schema=items
        )
    if ftype in (FieldType.integer, FieldType.number, FieldType.date, FieldType.datetime, FieldType.string):
        for rx, op, grp, _ in _RANGE:
            m = rx.match(n)
            if not m:
                continue
            stem = m.group(grp)
            if (
                n in ent.fields
                and op in ("gte", "lte")
                and m.group(1 if grp == 2 else 2) in ("start", "end", "from", "to")
            ):
                break  # ``start_date`` is a field of its own here
            range_target = _field_for_stem(ent, stem)
            if range_target is None:
                range_target = stem if is_ident(stem) else None
                if range_target is None or range_target == ent.pk:
                    break
                ent.ensure(FieldDraft(name=range_target, type=ftype, description=desc))
            word = {"gte": "Lowest", "lte": "Highest", "gt": "Above", "lt": "Below"}[op]
            return ParamDraft(n, range_target, op, description=desc or f"{word} {human(range_target)}.")
    target = n
    if target == "id" or target == f"{ent.name}_id" and ent.pk != target:
        target = ent.pk
    if target not in ent.fields:
        f = field_from_schema(n, s, False)
        if f is None:
            return None
        ent.ensure(f)
    op = "contains" if ent.fields[target].type == FieldType.string and _CONTAINS.search(n) else "eq"
    return ParamDraft(n, target, op, description=desc or f"{human(target).capitalize()} to match.")


def _body_fields(plan: OpPlan, ent: EntityDraft) -> tuple[list[tuple[str, str]], set[str], bool]:
    """(param name, field) pairs of a create/update body, its required fields, and whether a body is documented.

    Every documented property is kept (a field is added for one the responses do not show),
    wrapper bodies (``{"transaction": {...}}``, JSON:API ``data.attributes``) unwrapped, with
    the document's required flags; only names that cannot be a parameter are left out.
    """
    props, req = documented_body(plan.op)
    if not props:
        op = plan.op
        has_body = bool(props_of(op.request_body)[0]) or any(p.location == "body" for p in op.parameters)
        return [], set(), has_body
    out: list[tuple[str, str]] = []
    required: set[str] = set()
    for k, sch in props.items():
        fn = snake(k)
        if fn not in ent.fields:
            f = field_from_schema(k, sch, False)
            if f is None:
                continue
            ent.ensure(f)
        if any(fn == x for _, x in out):
            continue
        out.append((fn, fn))
        if k in req:
            required.add(fn)
    return out, required, True


def _writable(ent: EntityDraft, f: FieldDraft, *, sf: FieldDraft | None) -> bool:
    return f.name != ent.pk and not f.read_only and not SERVER_SET.search(f.name) and f is not sf


def _key_param(plan: OpPlan, ent: EntityDraft) -> ParamDraft:
    kname = ent.pk
    if kname == "id":
        kp = snake(plan.key_param) if plan.key_param else ""
        kname = (
            kp
            if kp.endswith(("_id", "_token")) and is_ident(kp) and kp not in ent.fields
            else f"{ent.name}_id"
        )
        if kname in ent.fields:
            kname = ent.pk
    required = not _documented_optional(plan)
    desc = param_desc(
        None if plan.bulk else next((p for p in plan.op.parameters if p.name == plan.key_param), None),
        f"Id of the {human(ent.name)}"
        + (" (the API's bulk endpoint, one row per call)." if plan.bulk else "."),
    )
    if not required and not plan.upsert:  # optional as documented, yet it is what selects the row
        desc = f"{desc.rstrip('.')}; without it no {human(ent.name)} is selected."
    return ParamDraft(kname, ent.pk, required=required, key=True, description=desc)


def _documented_optional(plan: OpPlan) -> bool:
    """Whether the document marks the parameter that names the row optional: a body or query
    parameter without ``required`` (Intercom ``PUT /visitors {id?, user_id?}``, Gmail
    ``batchDelete {ids?}``), or a property the items of a bulk body leave optional (Discord
    ``PATCH /guilds/{guild_id}/roles [{id?, position}]``). A path parameter is always required."""
    kp = plan.key_param
    if not kp:
        return False
    params = [p for p in plan.op.parameters if p.name == kp]
    if params:
        return all(p.location in ("body", "query") and not p.required for p in params)
    props, req = documented_body(plan.op)
    return kp in props and kp not in req


def _parent_params(plan: OpPlan, ent: EntityDraft, ents: dict[str, EntityDraft]) -> list[ParamDraft]:
    if not plan.parents:
        return []
    param, parent = plan.parents[-1]
    if parent not in ents or parent == ent.name:
        return []
    fname = parent_field_name(param, parent)
    if fname not in ent.fields or fname == ent.pk:
        return []
    byname = {p.name: p for p in plan.op.parameters}
    return [
        ParamDraft(
            fname,
            fname,
            required=True,
            description=param_desc(byname.get(param), f"Id of the {human(parent)}."),
        )
    ]


def _draft_list(
    t: ToolDraft, ent: EntityDraft, ents: dict[str, EntityDraft], parents: list[ParamDraft]
) -> None:
    op, plan = t.plan.op, t.plan
    t.params = list(parents)
    seen = {p.name for p in t.params}
    for p in op.parameters:
        by_path = p.location == "path" and p.name in plan.path_filters
        if p.location in ("path", "body") and not by_path:
            continue
        d = _list_param(p.model_copy(update={"location": "query"}) if by_path else p, ent, ents)
        if d is not None and by_path:
            d.required = True  # a value of the path: every call states it
        if (
            d is not None
            and d.name not in seen
            and d.name not in ("limit", "offset", "sort_by", "sort_order")
        ):
            t.params.append(d)
            seen.add(d.name)
    if plan.kind == "list" and op.method == "post":  # POST /x/search: body properties are filters
        for k, s in documented_body(op)[0].items():
            d = _list_param(
                Parameter(name=k, location="query", schema=s if isinstance(s, dict) else {}), ent, ents
            )
            if d is not None and d.name not in seen:
                t.params.append(d)
                seen.add(d.name)
    t.sortable = any(
        snake(p.name) in ("sort", "sort_by", "order", "order_by", "sort_order") for p in op.parameters
    )
    searchy = plan.qualifier is not None or any(p.op not in ("eq", "in") for p in t.params)
    t.base_name = f"{'search' if searchy else 'list'}_{plural(ent.name)}"
    if plan.qualifier and plan.qualifier.startswith("by_"):
        t.base_name += f"_{plan.qualifier}"


def _draft_create(t: ToolDraft, ent: EntityDraft, parents: list[ParamDraft], byname: dict) -> None:
    sf = status_field(ent)
    pairs, req, documented = _body_fields(t.plan, ent)
    if not documented:
        pairs = [(f.name, f.name) for f in ent.fields.values() if _writable(ent, f, sf=sf)]
        req = {f.name for f in ent.fields.values() if not f.nullable}
    t.params = list(parents)
    seen = {p.field for p in t.params}
    for pname, fname in pairs:
        f = ent.fields[fname]
        if fname in seen:
            continue
        if fname == ent.pk:  # a key the client chooses (documented in the body)
            seen.add(fname)
            t.params.append(
                ParamDraft(
                    pname,
                    fname,
                    required=fname in req,
                    key=True,
                    description=param_desc(
                        byname.get(pname), f.description or f"Id of the new {human(ent.name)}."
                    ),
                )
            )
            continue
        if not documented and (
            not _writable(ent, f, sf=None) or (f is sf and f.type == FieldType.enum and fname not in req)
        ):
            continue
        seen.add(fname)
        required = fname in req if documented else (fname in req or not f.nullable)
        t.params.append(
            ParamDraft(
                pname,
                fname,
                required=required,
                description=param_desc(byname.get(pname), f.description or f"{human(fname).capitalize()}."),
            )
        )
    t.base_name = f"create_{ent.name}"


def _draft_update(t: ToolDraft, ent: EntityDraft, key: ParamDraft, byname: dict) -> str | None:
    sf = status_field(ent)
    plan = t.plan
    pairs, req, documented = _body_fields(plan, ent)
    if not documented:
        pairs = [
            (f.name, f.name)
            for f in ent.fields.values()
            if _writable(ent, f, sf=sf) and f.type not in (FieldType.object, FieldType.array) and not f.ref
        ]
    params: list[ParamDraft] = []
    for pname, fname in pairs:
        f = ent.fields[fname]
        named = plan.bulk and snake(plan.key_param or "") == fname  # items' {contextId}: the key, no field
        if fname == ent.pk or pname == key.name or named or any(p.field == fname for p in params):
            continue
        if not documented and not _writable(ent, f, sf=None):
            continue
        params.append(
            ParamDraft(
                pname,
                fname,
                required=fname in req,
                description=param_desc(byname.get(pname), f.description or f"New {human(fname)}."),
            )
        )
    if not params:
        return "update documents no field we can write"
    if plan.upsert:  # the document's optional key: a call without it creates the row
        key.required, t.upsert = False, True
    t.params = [key, *params]
    verb = "upsert" if t.upsert else "update"
    t.base_name = f"{verb}_{ent.name}" + (f"_{plan.qualifier}" if plan.qualifier else "")
    if (
        "updated_at" in ent.fields
        and ent.fields["updated_at"].type in (FieldType.datetime, FieldType.date)
        and not any(p.field == "updated_at" for p in params)
    ):
        t.effects.append(Effect(field="updated_at", now=True))
    return None


def draft_tool(plan: OpPlan, ents: dict[str, EntityDraft]) -> tuple[ToolDraft | None, str | None]:
    """The tool draft for one plan, or (None, reason)."""
    ent = ents[plan.entity]
    op = plan.op
    summary = first_sentence(op.summary or op.description, 220)
    t = ToolDraft(plan=plan, kind=plan.kind or "", entity=ent.name, base_name="", summary=summary)
    key = _key_param(plan, ent)
    byname = {p.name: p for p in op.parameters}
    parents = _parent_params(plan, ent, ents)
    why: str | None = None
    if t.kind == "get":
        t.params = [key]
        t.base_name = f"get_{ent.name}"
    elif t.kind == "list":
        _draft_list(t, ent, ents, parents)
    elif t.kind == "create":
        _draft_create(t, ent, parents, byname)
    elif t.kind == "update":
        why = _draft_update(t, ent, key, byname)
    elif t.kind == "delete":
        t.params = [key]
        t.base_name = f"delete_{ent.name}"
    elif t.kind == "action":
        why = draft_action(t, ent, key, byname)
    else:
        why = f"unsupported kind {t.kind!r}"
    if why is not None:
        return None, why
    for p in t.params:
        if p.name in ("limit", "offset", "sort_by", "sort_order") and not p.key:
            p.name = f"{p.name}_value"
    names = [p.name for p in t.params]
    if len(set(names)) != len(names):
        first: dict[str, ParamDraft] = {}
        for p in t.params:
            first.setdefault(p.name, p)  # the key (first) wins over a body property of its name
        t.params = list(first.values())
    return t, None


def create_effects(t: ToolDraft, ent: EntityDraft) -> None:
    """Server-set values of a create: initial status, creation timestamps; the rest becomes nullable."""
    covered = {p.field for p in t.params if p.required}
    sf = status_field(ent)
    for f in ent.fields.values():
        if f.name == ent.pk or f.name in covered:
            continue
        if f is sf and f.type == FieldType.enum:
            assert f.enum is not None  # enum fields carry their values (schema_type, status_field)
            init = next((d for d in (doc_value(f.enum, x) for x in _INITIAL) if d), f.enum[0])
            if any(p.field == f.name for p in t.params):
                f.default = init
            else:
                t.effects.append(Effect(field=f.name, set=init))
        elif f.name in (
            "created_at",
            "updated_at",
            "created",
            "date_created",
            "creation_date",
            "created_on",
        ) and f.type in (FieldType.datetime, FieldType.date):
            t.effects.append(Effect(field=f.name, now=True))
        elif not f.nullable:
            f.nullable = True
