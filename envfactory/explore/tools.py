"""Tool drafts from operation plans: params, filters, required fields, action conditions.

Drafts name entity fields; types are taken from the (final) fields when the drafts are
turned into ToolSpecs, so a foreign key found late still types its parameter right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ingest import Parameter
from ..spec import Condition, Effect, FieldType
from .actions import ACTION_RULES, TERMINAL
from .entities import EntityDraft, FieldDraft, field_from_schema, parent_field_name, props_of, schema_type, unwrap
from .naming import first_sentence, is_ident, singular, snake
from .resources import PAGING_PARAMS, OpPlan

__all__ = ["ParamDraft", "ToolDraft", "draft_tool", "prepare_actions", "display_field", "SERVER_SET",
           "status_field"]

_TEXT_SEARCH = {"q", "query", "search", "keyword", "keywords", "term", "text", "search_term", "search_query",
                "search_text", "name_contains", "filter"}
_CONTAINS = re.compile(r"(^|_)(name|title|city|description|label|subject|keyword|address|display_name)$")
_RANGE = [
    (re.compile(r"^(min|minimum|from|since|after|earliest)_(.+)$"), "gte", 2, True),
    (re.compile(r"^(max|maximum|to|until|before|latest)_(.+)$"), "lte", 2, True),
    (re.compile(r"^(.+)_(min|minimum|from|since|after|gte|ge|greater_than|start|earliest)$"), "gte", 1, True),
    (re.compile(r"^(.+)_(max|maximum|to|until|before|lte|le|less_than|end|latest)$"), "lte", 1, True),
    (re.compile(r"^(.+)_gt$"), "gt", 1, True),
    (re.compile(r"^(.+)_lt$"), "lt", 1, True),
]
SERVER_SET = re.compile(r"^(created|updated|modified|deleted|last_modified|last_updated)(_at|_on|_date|_time|_by)?$|"
                        r"^(date_created|date_updated|date_modified|creation_date|last_modified_date)$|"
                        r"^(grand_)?total$|^subtotal|_total$|_count$|^(etag|version|revision)$")
_DISPLAY = ("name", "title", "display_name", "full_name", "subject", "label", "summary", "last_name", "username",
            "email", "code", "number", "description")
_INITIAL = ("pending", "draft", "new", "open", "active", "created", "scheduled", "confirmed", "requested",
            "submitted", "available", "enabled")


@dataclass
class ParamDraft:
    name: str
    field: str
    op: str = "eq"
    required: bool = False
    key: bool = False
    description: str = ""
    elem_schema: dict | None = None  # for op 'in': the items schema


@dataclass
class ToolDraft:
    plan: OpPlan
    kind: str
    entity: str
    base_name: str
    params: list[ParamDraft] = field(default_factory=list)
    preconditions: list[Condition] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    sortable: bool = False
    summary: str = ""
    action_note: str = ""
    name: str = ""


def display_field(ent: EntityDraft) -> str | None:
    for n in _DISPLAY:
        f = ent.fields.get(n)
        if f is not None and f.type == FieldType.string and not f.ref:
            return n
    return None


def status_field(ent: EntityDraft) -> FieldDraft | None:
    for n in ("status", "state", f"{ent.name}_status", f"{ent.name}_state"):
        if n in ent.fields:
            return ent.fields[n]
    for f in ent.fields.values():
        if f.name.endswith(("_status", "_state")) and f.type == FieldType.enum:
            return f
    return None


def _pdesc(p: Parameter | None, fallback: str) -> str:
    d = first_sentence(p.description, 160) if p is not None else ""
    return d or fallback


def _h(name: str) -> str:
    return name.replace("_", " ")


def _field_for_stem(ent: EntityDraft, stem: str) -> str | None:
    for cand in (stem, f"{stem}_at", f"{stem}_date", f"{stem}_time", f"{stem}_datetime", f"{stem}_on",
                 singular(stem)):
        if cand in ent.fields:
            return cand
    return None


def _list_param(p: Parameter, ent: EntityDraft, ents: dict[str, EntityDraft]) -> ParamDraft | None:
    n = snake(p.name)
    if p.location in ("header", "cookie") or n in PAGING_PARAMS or not is_ident(n):
        return None
    s = p.schema_ or {}
    ftype, enum = schema_type(s)
    desc = _pdesc(p, "")
    if n in _TEXT_SEARCH:
        disp = display_field(ent)
        if disp is None:
            return None
        return ParamDraft(n, disp, "contains", description=desc or f"Text to look for in the {_h(ent.name)} {disp}.")
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
        return ParamDraft(n, target, "in", description=desc or f"Any of these {_h(target)} values.", elem_schema=items)
    if ftype in (FieldType.integer, FieldType.number, FieldType.date, FieldType.datetime, FieldType.string):
        for rx, op, grp, _ in _RANGE:
            m = rx.match(n)
            if not m:
                continue
            stem = m.group(grp)
            if n in ent.fields and op in ("gte", "lte") and m.group(1 if grp == 2 else 2) in ("start", "end", "from", "to"):
                break  # ``start_date`` is a field of its own here
            target = _field_for_stem(ent, stem)
            if target is None:
                target = stem if is_ident(stem) else None
                if target is None or target == ent.pk:
                    break
                ent.ensure(FieldDraft(name=target, type=ftype, description=desc))
            word = {"gte": "Lowest", "lte": "Highest", "gt": "Above", "lt": "Below"}[op]
            return ParamDraft(n, target, op, description=desc or f"{word} {_h(target)}.")
    target = n
    if target == "id" or target == f"{ent.name}_id" and ent.pk != target:
        target = ent.pk
    if target not in ent.fields:
        f = field_from_schema(n, s, False)
        if f is None:
            return None
        ent.ensure(f)
    op = "contains" if ent.fields[target].type == FieldType.string and _CONTAINS.search(n) else "eq"
    return ParamDraft(n, target, op, description=desc or f"{_h(target).capitalize()} to match.")


def _body_fields(plan: OpPlan, ent: EntityDraft) -> tuple[list[tuple[str, str]], set[str], bool]:
    """(param name, field) pairs of a create/update body, its required fields, and whether a body is documented."""
    body = plan.op.request_body
    schema = None
    if isinstance(body, dict) and props_of(body)[0]:
        schema = unwrap(body, ent.name)
    if schema is None:
        bparams = [p for p in plan.op.parameters if p.location == "body"]
        if bparams:
            schema = {"properties": {p.name: p.schema_ for p in bparams}, "required": [p.name for p in bparams if p.required]}
    if schema is None:
        return [], set(), False
    props, req = props_of(schema)
    out, required = [], set()
    for k in props:
        fn = snake(k)
        if fn in ent.fields:
            out.append((fn, fn))
            if k in req:
                required.add(fn)
    return out, required, True


def _writable(ent: EntityDraft, f: FieldDraft, *, sf: FieldDraft | None) -> bool:
    return (f.name != ent.pk and not f.read_only and not SERVER_SET.search(f.name) and f is not sf)


def draft_tool(plan: OpPlan, ents: dict[str, EntityDraft]) -> tuple[ToolDraft | None, str | None]:
    """The tool draft for one plan, or (None, reason)."""
    ent = ents[plan.entity]
    op = plan.op
    summary = first_sentence(op.summary or op.description, 220)
    t = ToolDraft(plan=plan, kind=plan.kind or "", entity=ent.name, base_name="", summary=summary)
    kname = ent.pk
    if kname == "id":
        kp = snake(plan.key_param) if plan.key_param else ""
        kname = kp if kp.endswith("_id") and is_ident(kp) and kp not in ent.fields else f"{ent.name}_id"
        if kname in ent.fields:
            kname = ent.pk
    key = ParamDraft(kname, ent.pk, required=True, key=True,
                     description=_pdesc(next((p for p in op.parameters if p.name == plan.key_param), None),
                                        f"Id of the {_h(ent.name)}."))
    byname = {p.name: p for p in op.parameters}
    parents = []
    if plan.parents:
        param, parent = plan.parents[-1]
        if parent in ents and parent != ent.name:
            fname = parent_field_name(param, parent)
            if fname in ent.fields and fname != ent.pk:
                parents.append(ParamDraft(fname, fname, required=True,
                                          description=_pdesc(byname.get(param), f"Id of the {_h(parent)}.")))
    sf = status_field(ent)
    if t.kind == "get":
        t.params = [key]
        t.base_name = f"get_{ent.name}"
    elif t.kind == "list":
        t.params = list(parents)
        seen = {p.name for p in t.params}
        for p in op.parameters:
            if p.location == "path":
                continue
            d = _list_param(p, ent, ents)
            if d is not None and d.name not in seen and d.name not in ("limit", "offset", "sort_by", "sort_order"):
                t.params.append(d)
                seen.add(d.name)
        if plan.kind == "list" and op.method == "post":  # POST /x/search: body properties are filters
            bschema = op.request_body if isinstance(op.request_body, dict) else {}
            for k, s in props_of(bschema)[0].items():
                d = _list_param(Parameter(name=k, location="query", schema=s if isinstance(s, dict) else {}), ent, ents)
                if d is not None and d.name not in seen:
                    t.params.append(d)
                    seen.add(d.name)
        t.sortable = any(snake(p.name) in ("sort", "sort_by", "order", "order_by", "sort_order") for p in op.parameters)
        searchy = plan.qualifier is not None or any(p.op not in ("eq", "in") for p in t.params)
        from .naming import plural
        t.base_name = f"{'search' if searchy else 'list'}_{plural(ent.name)}"
        if plan.qualifier and plan.qualifier.startswith("by_"):
            t.base_name += f"_{plan.qualifier}"
    elif t.kind == "create":
        pairs, req, documented = _body_fields(plan, ent)
        if not documented:
            pairs = [(f.name, f.name) for f in ent.fields.values() if _writable(ent, f, sf=sf)]
            req = {f.name for f in ent.fields.values() if not f.nullable}
        t.params = list(parents)
        seen = {p.field for p in t.params}
        for pname, fname in pairs:
            f = ent.fields[fname]
            if fname in seen or not _writable(ent, f, sf=None) or fname == ent.pk:
                continue
            if f is sf and f.type == FieldType.enum and fname not in req:
                continue
            seen.add(fname)
            t.params.append(ParamDraft(pname, fname, required=fname in req or not f.nullable,
                                       description=_pdesc(byname.get(pname), f.description or f"{_h(fname).capitalize()}.")))
        t.base_name = f"create_{ent.name}"
    elif t.kind == "update":
        pairs, _, documented = _body_fields(plan, ent)
        if not documented:
            pairs = [(f.name, f.name) for f in ent.fields.values()
                     if _writable(ent, f, sf=sf) and f.type not in (FieldType.object, FieldType.array) and not f.ref]
        params = []
        for pname, fname in pairs:
            f = ent.fields[fname]
            if fname == ent.pk or not _writable(ent, f, sf=None) or any(p.field == fname for p in params):
                continue
            params.append(ParamDraft(pname, fname, description=_pdesc(byname.get(pname), f.description or f"New {_h(fname)}.")))
        if not params:
            return None, "update documents no field we can write"
        t.params = [key, *params]
        t.base_name = f"update_{ent.name}" + (f"_{plan.qualifier}" if plan.qualifier else "")
        if "updated_at" in ent.fields and ent.fields["updated_at"].type in (FieldType.datetime, FieldType.date):
            t.effects.append(Effect(field="updated_at", now=True))
    elif t.kind == "delete":
        t.params = [key]
        t.base_name = f"delete_{ent.name}"
    elif t.kind == "action":
        rule = ACTION_RULES[plan.verb or ""]
        t.params = [key]
        t.base_name = f"{rule.verb}_{ent.name}"
        conds, effects, note = _action_semantics(ent, rule)
        if not effects:
            return None, f"action {rule.verb!r}: {ent.name} has no status or flag field it could change"
        t.preconditions, t.effects, t.action_note = conds, effects, note
    else:
        return None, f"unsupported kind {t.kind!r}"
    for p in t.params:
        if p.name in ("limit", "offset", "sort_by", "sort_order") and not p.key:
            p.name = f"{p.name}_value"
    names = [p.name for p in t.params]
    if len(set(names)) != len(names):
        t.params = list({p.name: p for p in t.params}.values())
    return t, None


def prepare_actions(plans: list[OpPlan], ents: dict[str, EntityDraft], warnings: list[str]) -> None:
    """Make sure each entity with actions has a field they can move (see actions.py)."""
    by_ent: dict[str, list[str]] = {}
    for p in plans:
        if p.kind == "action" and p.verb:
            by_ent.setdefault(p.entity, []).append(p.verb)
    for name, verbs in sorted(by_ent.items()):
        ent = ents[name]
        rules = [ACTION_RULES[v] for v in dict.fromkeys(verbs)]
        sf = status_field(ent)
        if sf is not None and sf.type == FieldType.enum:
            for r in rules:
                if not any(x in sf.enum for x in r.targets) and not any(
                        fl in ent.fields and ent.fields[fl].type == FieldType.boolean for fl in r.flags):
                    sf.enum = [*sf.enum, r.targets[0]]
                    warnings.append(f"{name}.{sf.name}: added {r.targets[0]!r} to its enum for action {r.verb!r}")
            continue
        if sf is None and all(any(fl in ent.fields and ent.fields[fl].type == FieldType.boolean for fl in r.flags)
                              for r in rules):
            continue
        values: list[str] = []
        for r in rules:
            values += [*r.synth_from, r.targets[0]]
        values = list(dict.fromkeys(values))
        if sf is None:
            sf = ent.ensure(FieldDraft(name="status", type=FieldType.enum, enum=values,
                                       description=f"Status of the {_h(name)}."))
            warnings.append(f"{name}.status synthesized from actions {', '.join(r.verb for r in rules)}: {values}")
        else:
            sf.type, sf.enum = FieldType.enum, values
            warnings.append(f"{name}.{sf.name}: undocumented values, enum inferred from actions: {values}")


def _action_semantics(ent: EntityDraft, rule) -> tuple[list[Condition], list[Effect], str]:
    sf = status_field(ent)
    effects: list[Effect] = []
    conds: list[Condition] = []
    note = ""
    if sf is not None and sf.type == FieldType.enum and any(x in sf.enum for x in rule.targets):
        target = next(x for x in rule.targets if x in sf.enum)
        allowed = [s for s in rule.allowed_from if s in sf.enum and s != target]
        if allowed:
            conds.append(Condition(field=sf.name, op="in", value=allowed))
            note = f"sets {sf.name} to '{target}'; only allowed while {sf.name} is one of {allowed}"
        else:
            blocked = [target] + [s for s in sf.enum if s in TERMINAL and s != target]
            conds.append(Condition(field=sf.name, op="not_in", value=blocked))
            note = f"sets {sf.name} to '{target}'; fails while {sf.name} is one of {blocked}"
        effects.append(Effect(field=sf.name, set=target))
    else:
        for fl in rule.flags:
            f = ent.fields.get(fl)
            if f is not None and f.type == FieldType.boolean:
                conds.append(Condition(field=fl, op="ne", value=rule.flag_value,
                                       message=f"{fl} is already {str(rule.flag_value).lower()}"))
                effects.append(Effect(field=fl, set=rule.flag_value))
                note = f"sets {fl} to {str(rule.flag_value).lower()}; fails if it already is"
                break
    if effects:
        for ts in rule.timestamps:
            f = ent.fields.get(ts)
            if f is not None and f.type in (FieldType.datetime, FieldType.date):
                effects.append(Effect(field=ts, now=True))
    return conds, effects, note


def create_effects(t: ToolDraft, ent: EntityDraft) -> None:
    """Server-set values of a create: initial status, creation timestamps; the rest becomes nullable."""
    covered = {p.field for p in t.params if p.required}
    sf = status_field(ent)
    for f in ent.fields.values():
        if f.name == ent.pk or f.name in covered:
            continue
        if f is sf and f.type == FieldType.enum:
            init = next((s for s in _INITIAL if s in f.enum), f.enum[0])
            if any(p.field == f.name for p in t.params):
                f.default = init
            else:
                t.effects.append(Effect(field=f.name, set=init))
        elif f.name in ("created_at", "updated_at", "created", "date_created", "creation_date", "created_on") \
                and f.type in (FieldType.datetime, FieldType.date):
            t.effects.append(Effect(field=f.name, now=True))
        elif not f.nullable:
            f.nullable = True
