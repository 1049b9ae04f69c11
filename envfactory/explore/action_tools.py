"""Action tools: the status or flag an action moves, the states it is allowed from, and what its
request body writes (a documented field, a balance an amount moves, a counter)."""

from __future__ import annotations

import re

from ..spec import Condition, Effect, FieldType
from .actions import ACTION_RULES, DEAD, TERMINAL, UNLINK_VERBS, VERB_NOUNS, participles, rule_for
from .drafts import (
    SERVER_SET,
    ParamDraft,
    ToolDraft,
    doc_value,
    fold,
    human,
    param_desc,
    status_field,
    styled,
)
from .entities import EntityDraft, FieldDraft, field_from_schema, props_of, schema_type, unwrap
from .naming import first_sentence, is_ident, plural, singular, snake
from .resources import PAGING_PARAMS, OpPlan

__all__ = ["draft_action", "prepare_actions", "action_name"]


def draft_action(t: ToolDraft, ent: EntityDraft, key: ParamDraft, byname: dict) -> str | None:
    plan = t.plan
    rule = rule_for(plan.verb or "")
    t.params = [key]
    t.base_name = action_name(plan.word or rule.verb, rule.verb, ent)
    conds, effects, note = _action_semantics(ent, rule)
    wparams, weffects, wconds, wnotes = _action_writes(plan, ent, rule, byname, {e.field for e in effects})
    if not effects and not weffects and (link := _unlinked_ref(plan, ent)) is not None:
        conds = [Condition(field=link, op="not_null", message=f"{link} is already empty")]
        effects, note = [Effect(field=link, set=None)], f"clears {link}; fails if it is already empty"
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


def _unlinked_ref(plan: OpPlan, ent: EntityDraft) -> str | None:
    """Stripe ``POST /v1/payment_methods/{id}/detach`` "Detaches a PaymentMethod object from a
    Customer": the reference to the row it is detached from (``customer``) is cleared; None when
    the verb unlinks nothing or the document names no reference field of the row."""
    if (plan.verb or "") not in UNLINK_VERBS:
        return None
    text = f"{plan.op.summary} {plan.op.description}"
    for m in re.finditer(r"\bfrom (?:a|an|the|its) ([A-Za-z_]+)", text):
        f = ent.fields.get(snake(m.group(1)))
        if f is not None and f.ref and f.nullable:
            return f.name
    return None


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
                if not any(doc_value(sf.enum, x) for x in r.targets) and not any(
                    fl in ent.fields and ent.fields[fl].type == FieldType.boolean for fl in r.flags
                ):
                    sf.enum = [*(sf.enum or []), styled(sf.enum or [], r.targets[0])]
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
                    name="status",
                    type=FieldType.enum,
                    enum=values,
                    description=f"Status of the {human(name)}.",
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
    if sf is not None and sf.type == FieldType.enum and any(doc_value(sf.enum, x) for x in rule.targets):
        target = next(d for d in (doc_value(sf.enum, x) for x in rule.targets) if d)
        assert sf.enum is not None  # _doc found the target in it
        allowed = [d for d in (doc_value(sf.enum, x) for x in rule.allowed_from) if d and d != target]
        if allowed:
            conds.append(Condition(field=sf.name, op="in", value=allowed))
            note = f"sets {sf.name} to '{target}'; only allowed while {sf.name} is one of {allowed}"
        else:
            blocked = [target] + [s for s in sf.enum if fold(s) in TERMINAL and s != target]
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
    allowed = [d for d in (doc_value(sf.enum, x) for x in rule.allowed_from) if d]
    if allowed and len(allowed) < len(sf.enum):
        return [
            Condition(field=sf.name, op="in", value=allowed)
        ], f"only allowed while {sf.name} is one of {allowed}"
    blocked = [s for s in sf.enum if fold(s) in DEAD]
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


# Body properties of an action that name no field get one (``cancel {reason}`` ->
# ``cancellation_reason``), except controls, credentials, ids of other rows, and the members of
# a many-to-many relation (``addTag {tag}`` adds one of many: a field that holds one would lie).
_GENERIC = {
    "reason",
    "reason_code",
    "note",
    "notes",
    "comment",
    "comments",
    "message",
    "description",
    "amount",
    "type",
    "code",
    "date",
    "time",
    "details",
    "memo",
    "text",
    "value",
    "values",
    "items",
    "data",
    "metadata",
    "status",
    "state",
}
_NOT_STATE = {"client_id", "secret", "client_secret", "api_key", "password", "signature", "id"}
MEMBERSHIP_HEADS = (
    "add",
    "remove",
    "attach",
    "detach",
    "link",
    "unlink",
    "follow",
    "unfollow",
    "join",
    "leave",
)


def _action_field(ent: EntityDraft, prop: str, s: dict, noun: str, word: str, taken: set[str]) -> str | None:
    """The field an action's body property ``prop`` writes, added to ``ent``; None when it is no state."""
    n = snake(prop)
    if n in _NOT_STATE or n in PAGING_PARAMS or n.endswith(("_id", "_ids", "_gid", "_uuid")):
        return None
    if word.split("_", 1)[0] in MEMBERSHIP_HEADS:
        return None
    name = f"{noun}_{n}" if n in _GENERIC or n in ent.fields else n
    if name in ent.fields or name in taken or SERVER_SET.search(name) or len(name) > 48:
        return None
    f = field_from_schema(name, s, False)
    if f is None:
        return None
    f.read_only, f.link = False, None
    return ent.ensure(f).name


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
        desc = first_sentence(s.get("description"), 160) or param_desc(byname.get(k), "")
        member = _membership(word, ent, n, s, k in req, desc)
        if member is not None:  # POST /tasks/{id}/addTag {tag}: the task's tags take the tag
            taken.add(member[1].field)
            params.append(member[0])
            effects.append(member[1])
            notes.append(member[2])
            continue
        fname = _named_field(ent, n, s, nouns)
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
                    description=desc or f.description or f"New {human(fname)}.",
                )
            )
            effects.append(Effect(field=fname, param=n))
            notes.append(f"writes {fname} from {n}" if fname != n else f"writes {fname}")
            continue
        ftype, _ = schema_type(s)
        head, _, obj = word.partition("_")
        sign = -1 if head in _MINUS else 1 if head in _PLUS else 0
        numeric = ftype in (FieldType.integer, FieldType.number) and bool(_AMOUNT.search(n))
        target = _balance_field(ent, obj, n, taken) if sign and numeric else None
        if target is None:
            fname = _action_field(ent, k, s, nouns[0], word, taken)
            if fname is not None:  # capture {note_to_payer}: the action records what it was told
                taken.add(fname)
                f = ent.fields[fname]
                params.append(
                    ParamDraft(
                        n, fname, required=k in req, description=desc or f.description or f"{human(n)}."
                    )
                )
                effects.append(Effect(field=fname, param=n))
                notes.append(f"writes {fname} from {n}")
            continue
        taken.add(target)
        params.append(
            ParamDraft(
                n,
                "",
                required=True,
                ftype=ftype,
                minimum=0 if sign < 0 else None,
                description=desc or f"Amount to {'take off' if sign < 0 else 'add to'} {human(target)}.",
            )
        )
        effects.append(Effect(field=target, increment_param=n, negate_param=sign < 0))
        if sign < 0:
            conds.append(
                Condition(
                    field=target,
                    op="gte",
                    value_param=n,
                    message=f"{n} is more than the {human(target)} ({target}) left",
                )
            )
            notes.append(f"lowers {target} by {n}; fails if {n} is more than {target}")
        else:
            notes.append(f"adds {n} to {target} (negative to lower it)")
    params, effects, notes = _without_side_refs(ent, params, effects, notes, taken)
    for c in dict.fromkeys(f"{x}_count" for x in nouns):
        count_field = ent.fields.get(c)
        if count_field is not None and count_field.type == FieldType.integer and c not in taken:
            effects.append(Effect(field=c, increment=1))
            notes.append(f"adds 1 to {c}")
            break
    return params, effects, conds, notes


def _membership(
    word: str, ent: EntityDraft, n: str, s: dict, required: bool, desc: str
) -> tuple[ParamDraft, Effect, str] | None:
    """``addFollowers {followers}`` / ``removeTag {tag}`` on an entity with an array field of that
    name (or its plural), or a body property ``add_<x>``/``remove_<x>`` (Gmail ``modify``
    ``{addLabelIds, removeLabelIds}``): an argument whose values join (or leave) the array, each
    once, not a value that replaces it. Elements that are objects are named by their ``gid``/``id``
    (from the field's documented example). None for any other body property."""
    head = word.partition("_")[0]
    own, _, named = n.partition("_")
    target = n
    if own in ("add", "remove") and named:
        head, target = own, named
    elif head not in ("add", "remove"):
        return None
    fname = next(
        (c for c in (target, plural(target)) if c in ent.fields and ent.fields[c].type == FieldType.array),
        None,
    )
    if fname is None or fname == ent.pk:
        return None  # (an add and a remove may both name the field: Gmail's modify)
    ex = ent.fields[fname].example
    first = ex[0] if isinstance(ex, list) and ex else None
    key = next((k for k in ("gid", "id") if isinstance(first, dict) and k in first), None)
    ftype, _ = schema_type(s)
    verb = "Adds to" if head == "add" else "Takes out of"
    param = ParamDraft(n, "", required=required, ftype=ftype, description=desc or f"{verb} {human(fname)}.")
    if head == "add":
        return param, Effect(field=fname, append_param=n, match_key=key), f"adds {n} to {fname}"
    return param, Effect(field=fname, remove_param=n, match_key=key), f"takes {n} out of {fname}"


def _named_field(ent: EntityDraft, n: str, s: dict, nouns: list[str]) -> str | None:
    """The entity field a body property ``n`` names: itself, ``<noun>_<n>``, or the status its enum moves."""
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
    return fname


def _without_side_refs(
    ent: EntityDraft, params: list[ParamDraft], effects: list[Effect], notes: list[str], taken: set[str]
) -> tuple[list[ParamDraft], list[Effect], list[str]]:
    """A reference written on the side of a status move or of other writes (acknowledge's
    practitioner_id, reschedule's practitioner_id) is left out: it is not the action's point
    and makes it fail where a referenced id is unknown. Where it is the point (assign), keep it."""
    refs = {e.field for e in effects if e.param and ent.fields[e.field].ref}
    if refs and (taken - refs - {e.field for e in effects} or len(refs) < sum(1 for e in effects if e.param)):
        params = [p for p in params if p.field not in refs]
        effects = [e for e in effects if e.field not in refs]
        notes = [x for x in notes if not any(x.startswith(f"writes {r}") for r in refs)]
    return params, effects, notes
