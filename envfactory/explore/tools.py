"""Tool drafts from operation plans: params, filters, required fields, action conditions.

Drafts name entity fields; types are taken from the (final) fields when the drafts are
turned into ToolSpecs, so a foreign key found late still types its parameter right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ingest import Parameter
from ..spec import Condition, Effect, FieldType
from .actions import ACTION_RULES, DEAD, TERMINAL, VERB_NOUNS, participles, rule_for
from .entities import (
    EntityDraft,
    FieldDraft,
    field_from_schema,
    parent_field_name,
    props_of,
    schema_type,
    unwrap,
)
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
SERVER_SET = re.compile(
    r"^(created|updated|modified|deleted|last_modified|last_updated)(_at|_on|_date|_time|_by)?$|"
    r"^(date_created|date_updated|date_modified|creation_date|last_modified_date)$|"
    r"^(grand_)?total$|^subtotal|_total$|_count$|^(etag|version|revision)$"
)
_DISPLAY = (
    "name",
    "title",
    "display_name",
    "full_name",
    "subject",
    "label",
    "summary",
    "last_name",
    "username",
    "email",
    "code",
    "number",
    "description",
)
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


@dataclass
class ParamDraft:
    name: str
    field: str
    op: str = "eq"
    required: bool = False
    key: bool = False
    description: str = ""
    elem_schema: dict | None = None  # for op 'in': the items schema
    ftype: FieldType | None = None  # type of an argument that maps to no field (an amount to pay)
    minimum: float | None = None


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


def _fold(v: str) -> str:
    return v.strip().lower().replace("-", "_").replace(" ", "_")


def _doc(enum: list[str] | None, value: str) -> str | None:
    """The document's spelling of an action-table value (``SENT`` for ``sent``), None if absent."""
    want = _fold(value)
    return next((e for e in enum or [] if _fold(e) == want), None)


def _styled(enum: list[str], value: str) -> str:
    """A value added to a documented enum, written in the document's case style."""
    if enum and all(e.isupper() for e in enum if any(c.isalpha() for c in e)):
        return value.upper()
    return value


def _pdesc(p: Parameter | None, fallback: str) -> str:
    d = first_sentence(p.description, 160) if p is not None else ""
    return d or fallback


def _h(name: str) -> str:
    return name.replace("_", " ")


def _field_for_stem(ent: EntityDraft, stem: str) -> str | None:
    for cand in (
        stem,
        f"{stem}_at",
        f"{stem}_date",
        f"{stem}_time",
        f"{stem}_datetime",
        f"{stem}_on",
        singular(stem),
    ):
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
        return ParamDraft(
            n, disp, "contains", description=desc or f"Text to look for in the {_h(ent.name)} {disp}."
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
            n, target, "in", description=desc or f"Any of these {_h(target)} values.", elem_schema=items
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
            return ParamDraft(n, range_target, op, description=desc or f"{word} {_h(range_target)}.")
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
        kname = kp if kp.endswith("_id") and is_ident(kp) and kp not in ent.fields else f"{ent.name}_id"
        if kname in ent.fields:
            kname = ent.pk
    return ParamDraft(
        kname,
        ent.pk,
        required=True,
        key=True,
        description=_pdesc(
            next((p for p in plan.op.parameters if p.name == plan.key_param), None),
            f"Id of the {_h(ent.name)}.",
        ),
    )


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
            fname, fname, required=True, description=_pdesc(byname.get(param), f"Id of the {_h(parent)}.")
        )
    ]


def _draft_list(
    t: ToolDraft, ent: EntityDraft, ents: dict[str, EntityDraft], parents: list[ParamDraft]
) -> None:
    op, plan = t.plan.op, t.plan
    t.params = list(parents)
    seen = {p.name for p in t.params}
    for p in op.parameters:
        if p.location in ("path", "body"):
            continue
        d = _list_param(p, ent, ents)
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
                    description=_pdesc(byname.get(pname), f.description or f"Id of the new {_h(ent.name)}."),
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
                description=_pdesc(byname.get(pname), f.description or f"{_h(fname).capitalize()}."),
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
        if fname == ent.pk or pname == key.name or any(p.field == fname for p in params):
            continue
        if not documented and not _writable(ent, f, sf=None):
            continue
        params.append(
            ParamDraft(
                pname,
                fname,
                required=fname in req,
                description=_pdesc(byname.get(pname), f.description or f"New {_h(fname)}."),
            )
        )
    if not params:
        return "update documents no field we can write"
    t.params = [key, *params]
    t.base_name = f"update_{ent.name}" + (f"_{plan.qualifier}" if plan.qualifier else "")
    if (
        "updated_at" in ent.fields
        and ent.fields["updated_at"].type in (FieldType.datetime, FieldType.date)
        and not any(p.field == "updated_at" for p in params)
    ):
        t.effects.append(Effect(field="updated_at", now=True))
    return None


def _draft_action(t: ToolDraft, ent: EntityDraft, key: ParamDraft, byname: dict) -> str | None:
    plan = t.plan
    rule = rule_for(plan.verb or "")
    t.params = [key]
    t.base_name = action_name(plan.word or rule.verb, rule.verb, ent)
    conds, effects, note = _action_semantics(ent, rule)
    wparams, weffects, wconds, wnotes = _action_writes(plan, ent, rule, byname, {e.field for e in effects})
    if not effects and not weffects:
        return (
            f"action {plan.word or rule.verb!r}: {ent.name} has no status, flag or documented field "
            f"it could change"
        )
    if not effects:
        conds, note = _writes_guard(ent, rule)
    effects += weffects
    written = {e.field for e in effects}
    for ts in rule.timestamps:
        f = ent.fields.get(ts)
        if f is not None and f.type in (FieldType.datetime, FieldType.date) and ts not in written:
            effects.append(Effect(field=ts, now=True))
            written.add(ts)
    t.params += wparams
    t.preconditions = conds + wconds
    t.effects = effects
    t.action_note = "; ".join(x for x in [*wnotes, note] if x)
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
        why = _draft_action(t, ent, key, byname)
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


def prepare_actions(plans: list[OpPlan], ents: dict[str, EntityDraft], warnings: list[str]) -> None:
    """Make sure each entity with actions has a field they can move (see actions.py)."""
    by_ent: dict[str, list[str]] = {}
    for p in plans:
        if p.kind == "action" and p.verb:
            by_ent.setdefault(p.entity, []).append(p.verb)
    for name, verbs in sorted(by_ent.items()):
        ent = ents[name]
        rules = [r for r in (rule_for(v) for v in dict.fromkeys(verbs)) if not r.writes_only]
        if not rules:
            continue
        sf = status_field(ent)
        if sf is not None and sf.type == FieldType.enum:
            for r in rules:
                if not any(_doc(sf.enum, x) for x in r.targets) and not any(
                    fl in ent.fields and ent.fields[fl].type == FieldType.boolean for fl in r.flags
                ):
                    sf.enum = [*(sf.enum or []), _styled(sf.enum or [], r.targets[0])]
                    warnings.append(
                        f"{name}.{sf.name}: added {r.targets[0]!r} to its enum for action {r.verb!r}"
                    )
            continue
        if sf is None and all(
            any(fl in ent.fields and ent.fields[fl].type == FieldType.boolean for fl in r.flags)
            for r in rules
        ):
            continue
        values: list[str] = []
        for r in rules:
            values += [*r.synth_from, r.targets[0]]
        values = list(dict.fromkeys(values))
        if sf is None:
            sf = ent.ensure(
                FieldDraft(
                    name="status", type=FieldType.enum, enum=values, description=f"Status of the {_h(name)}."
                )
            )
            warnings.append(
                f"{name}.status synthesized from actions {', '.join(r.verb for r in rules)}: {values}"
            )
        else:
            sf.type, sf.enum = FieldType.enum, values
            warnings.append(f"{name}.{sf.name}: undocumented values, enum inferred from actions: {values}")


def _action_semantics(ent: EntityDraft, rule) -> tuple[list[Condition], list[Effect], str]:
    sf = status_field(ent)
    effects: list[Effect] = []
    conds: list[Condition] = []
    note = ""
    if sf is not None and sf.type == FieldType.enum and any(_doc(sf.enum, x) for x in rule.targets):
        target = next(d for d in (_doc(sf.enum, x) for x in rule.targets) if d)
        assert sf.enum is not None  # _doc found the target in it
        allowed = [d for d in (_doc(sf.enum, x) for x in rule.allowed_from) if d and d != target]
        if allowed:
            conds.append(Condition(field=sf.name, op="in", value=allowed))
            note = f"sets {sf.name} to '{target}'; only allowed while {sf.name} is one of {allowed}"
        else:
            blocked = [target] + [s for s in sf.enum if _fold(s) in TERMINAL and s != target]
            conds.append(Condition(field=sf.name, op="not_in", value=blocked))
            note = f"sets {sf.name} to '{target}'; fails while {sf.name} is one of {blocked}"
        effects.append(Effect(field=sf.name, set=target))
    else:
        for fl in rule.flags:
            f = ent.fields.get(fl)
            if f is not None and f.type == FieldType.boolean:
                conds.append(
                    Condition(
                        field=fl,
                        op="ne",
                        value=rule.flag_value,
                        message=f"{fl} is already {str(rule.flag_value).lower()}",
                    )
                )
                effects.append(Effect(field=fl, set=rule.flag_value))
                note = f"sets {fl} to {str(rule.flag_value).lower()}; fails if it already is"
                break
    return conds, effects, note


_SPLIT_VERBS = {"declare", "report", "mark", "pay", "record", "request", "flag", "set", "add", "clear"}
_AMOUNT = re.compile(r"(^|_)(amount|delta|quantity|qty|change|adjustment|sum)(_|$)")
_MINUS = {
    "pay",
    "settle",
    "redeem",
    "deduct",
    "spend",
    "use",
    "consume",
    "debit",
    "withdraw",
    "subtract",
    "decrement",
    "clear",
    "waive",
}
_PLUS = {"adjust", "add", "increment", "deposit", "credit", "top", "topup", "restock", "receive", "load"}
_STOCK = (
    "on_hand",
    "quantity_on_hand",
    "quantity",
    "stock",
    "stock_level",
    "balance",
    "current_balance",
    "available_balance",
    "points",
    "credits",
)


def action_name(word: str, verb: str, ent: EntityDraft) -> str:
    """``grade`` -> grade_enrollment; ``declare_lost`` -> declare_loan_lost; ``no_show`` -> mark_appointment_no_show."""
    head, _, rest = word.partition("_")
    if rest and head in _SPLIT_VERBS and not rest.startswith("as_"):
        return f"{head}_{ent.name}_{rest}"
    sf = status_field(ent)
    if sf is not None and sf.enum and word in sf.enum and ("_" in word or word not in ACTION_RULES):
        return f"mark_{ent.name}_{word}"
    return f"{verb}_{ent.name}"


def _writes_guard(ent: EntityDraft, rule) -> tuple[list[Condition], str]:
    """Preconditions of an action that moves no status: its allowed-from states, else not a dead one."""
    sf = status_field(ent)
    if sf is None or sf.type != FieldType.enum or not sf.enum:
        return [], ""
    allowed = [d for d in (_doc(sf.enum, x) for x in rule.allowed_from) if d]
    if allowed and len(allowed) < len(sf.enum):
        return [
            Condition(field=sf.name, op="in", value=allowed)
        ], f"only allowed while {sf.name} is one of {allowed}"
    blocked = [s for s in sf.enum if _fold(s) in DEAD]
    if blocked and len(blocked) < len(sf.enum):
        return [
            Condition(field=sf.name, op="not_in", value=blocked)
        ], f"fails while {sf.name} is one of {blocked}"
    return [], ""


def _action_body(plan: OpPlan, ent: EntityDraft) -> tuple[dict, set[str]]:
    body = plan.op.request_body
    schema = unwrap(body, ent.name) if isinstance(body, dict) and props_of(body)[0] else None
    if schema is None:
        bparams = [p for p in plan.op.parameters if p.location == "body"]
        schema = {
            "properties": {
                p.name: {**(p.schema_ or {}), "description": p.description or ""} for p in bparams
            },
            "required": [p.name for p in bparams if p.required],
        }
    return props_of(schema)


def _balance_field(ent: EntityDraft, obj: str, pname: str, taken: set[str]) -> str | None:
    nums = [
        f
        for f in ent.fields.values()
        if f.type in (FieldType.integer, FieldType.number)
        and not f.ref
        and f.name != ent.pk
        and f.name not in taken
    ]
    if obj:
        stems = (obj, singular(obj))
        cands = [f.name for f in nums if f.name.startswith(stems)]
        cands.sort(
            key=lambda n: (
                not any(w in n for w in ("due", "balance", "owed", "outstanding")),
                pname.endswith("_cents") != n.endswith("_cents"),
                n,
            )
        )
        return cands[0] if cands else None
    return next((n for n in _STOCK if any(f.name == n for f in nums)), None)


def _action_writes(plan: OpPlan, ent: EntityDraft, rule, byname: dict, taken: set[str]):
    """Parameters, effects, preconditions and notes for what an action's request body writes.

    A body property naming a field of the entity (``grade``; ``reason`` -> ``suspension_reason``
    for suspend) writes it from the argument; an amount on a paying/adjusting verb moves a
    balance (``pay_fines`` with ``amount_cents`` lowers ``fines_due_cents``); ``<verb>_count``
    counts the action.
    """
    word = plan.word or rule.verb
    props, req = _action_body(plan, ent)
    nouns = list(
        dict.fromkeys(x for x in (VERB_NOUNS.get(rule.verb), rule.verb, word, *participles(word)[:2]) if x)
    )
    taken = set(taken)
    params: list[ParamDraft] = []
    effects: list[Effect] = []
    conds: list[Condition] = []
    notes: list[str] = []
    for k, s in props.items():
        n = snake(k)
        s = s if isinstance(s, dict) else {}
        if not is_ident(n) or any(p.name == n for p in params) or n == ent.pk:
            continue
        desc = first_sentence(s.get("description"), 160) or _pdesc(byname.get(k), "")
        fname = next((c for c in [n, *(f"{x}_{n}" for x in nouns)] if c in ent.fields), None)
        sf = status_field(ent)
        if (
            fname is None
            and sf is not None
            and sf.enum
            and n.endswith("status")
            and isinstance(s.get("enum"), list)
            and s["enum"]
            and set(s["enum"]) <= set(sf.enum)
        ):
            fname = sf.name  # report {result_status: final}: the argument is the new status
        if fname is not None:
            # read-only in the entity's schema is fine: this operation is how the field gets written
            f = ent.fields[fname]
            if fname == ent.pk or fname in taken or SERVER_SET.search(fname):
                continue
            taken.add(fname)
            params.append(
                ParamDraft(
                    n,
                    fname,
                    required=k in req or n == word or fname == word,
                    description=desc or f.description or f"New {_h(fname)}.",
                )
            )
            effects.append(Effect(field=fname, param=n))
            notes.append(f"writes {fname} from {n}" if fname != n else f"writes {fname}")
            continue
        ftype, _ = schema_type(s)
        head, _, obj = word.partition("_")
        sign = -1 if head in _MINUS else 1 if head in _PLUS else 0
        if not sign or ftype not in (FieldType.integer, FieldType.number) or not _AMOUNT.search(n):
            continue
        target = _balance_field(ent, obj, n, taken)
        if target is None:
            continue
        taken.add(target)
        params.append(
            ParamDraft(
                n,
                "",
                required=True,
                ftype=ftype,
                minimum=0 if sign < 0 else None,
                description=desc or f"Amount to {'take off' if sign < 0 else 'add to'} {_h(target)}.",
            )
        )
        effects.append(Effect(field=target, increment_param=n, negate_param=sign < 0))
        if sign < 0:
            conds.append(
                Condition(
                    field=target,
                    op="gte",
                    value_param=n,
                    message=f"{n} is more than the {_h(target)} ({target}) left",
                )
            )
            notes.append(f"lowers {target} by {n}; fails if {n} is more than {target}")
        else:
            notes.append(f"adds {n} to {target} (negative to lower it)")
    # A reference written on the side of a status move or of other writes (acknowledge's
    # practitioner_id, reschedule's practitioner_id) is left out: it is not the action's point
    # and makes it fail where a referenced id is unknown. Where it is the point (assign), keep it.
    refs = {e.field for e in effects if e.param and ent.fields[e.field].ref}
    if refs and (taken - refs - {e.field for e in effects} or len(refs) < sum(1 for e in effects if e.param)):
        params = [p for p in params if p.field not in refs]
        effects = [e for e in effects if e.field not in refs]
        notes = [x for x in notes if not any(x.startswith(f"writes {r}") for r in refs)]
    for c in dict.fromkeys(f"{x}_count" for x in nouns):
        count_field = ent.fields.get(c)
        if count_field is not None and count_field.type == FieldType.integer and c not in taken:
            effects.append(Effect(field=c, increment=1))
            notes.append(f"adds 1 to {c}")
            break
    return params, effects, conds, notes


def create_effects(t: ToolDraft, ent: EntityDraft) -> None:
    """Server-set values of a create: initial status, creation timestamps; the rest becomes nullable."""
    covered = {p.field for p in t.params if p.required}
    sf = status_field(ent)
    for f in ent.fields.values():
        if f.name == ent.pk or f.name in covered:
            continue
        if f is sf and f.type == FieldType.enum:
            assert f.enum is not None  # enum fields carry their values (schema_type, status_field)
            init = next((d for d in (_doc(f.enum, x) for x in _INITIAL) if d), f.enum[0])
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
