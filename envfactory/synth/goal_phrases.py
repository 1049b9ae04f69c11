"""The phrases of a request: one per goal step and per set-up write (no model needed).

Called by the realizer (``realize.py``) with its state (facts the user holds, what is hidden,
the seeded ``rng``); phrase tables are in ``envfactory/data/english.yaml``, rows and values are
said by ``phrasing.py``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from ..graph.plan import is_ref
from ..spec import EnvSpec, FieldType, ToolKind, states_value
from ..text import article, format_answer, humanize, join_phrases, paraphrases, phrases, plural
from .phrasing import (
    clock_year,
    describe,
    ftype,
    id_like,
    is_person_entity,
    label,
    own_name,
    say_value,
    spoken_label,
    usable,
    value_phrase,
)

if TYPE_CHECKING:
    from .realize import _Realizer

__all__: list[str] = []

_PLURAL_VERBS = (
    (" that has ", " that have "),
    (" that shows ", " that show "),
    (" that lists ", " that list "),
    (" that I know has ", " that I know have "),
    (" which has ", " which have "),
    (", which has ", ", which have "),
    (" that carries ", " that carry "),
    (" that goes with ", " that go with "),
    (" that works with ", " that work with "),
    (" that pairs with ", " that pair with "),
    (" that comes with ", " that come with "),
    (" that relates to ", " that relate to "),
    (" that belongs to ", " that belong to "),
    (" that sits under ", " that sit under "),
    (" which is part of ", " which are part of "),
    (" that is part of ", " that are part of "),
    (" that is ", " that are "),
    (" that isn't ", " that aren't "),
)


def _write_values(r: _Realizer, t: Any, st: Any, hidden: dict[str, Any], *, to: bool = False) -> list[str]:
    """This call's literal values as phrases ("3 guests", "email ann@x.org"); one per field.

    A value is said when it is a fact the user holds for this tool (keys ``tool.param`` or
    ``tool.param#n``, matched on the call's own value, so two calls of one tool never mix)
    and not held back. ``to``: phrase as a new value ("email to ann@x.org").
    """
    bits = []
    for f, ft, arg in _said_values(r, t, st, hidden):
        if to:
            bits.append(
                f"{spoken_label(r.spec, t.entity, f, r.rng)} to {say_value(ft, f, arg, clock_year(r.spec), r.rng)}"
            )
        else:
            bits.append(value_phrase(r.spec, t.entity, f, arg, ft, r.rng))
    return bits


def _said_values(r: _Realizer, t: Any, st: Any, hidden: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(field, field type, value) of each literal value of this call the user states."""
    facts = r.param_facts.get(st.tool, [])
    kp = t.key_param.name if t.key_param else None
    out = []
    for pname, arg in st.args.items():
        if pname == kp or is_ref(arg):
            continue
        keys = [k for k, pn, v in facts if pn == pname and v == arg]
        if not keys or all(k in hidden for k in keys):
            continue
        try:
            p = t.param(pname)
        except KeyError:
            continue
        f = p.field or pname
        out.append((f, ftype(r.spec, t.entity, f) or p.type, arg))
    return out


def _rename(r: _Realizer, t: Any, st: Any, obj: str) -> str | None:
    """'rename my plan Spring offer to Summer offer': an update that sets only what the row is called."""
    said = _said_values(r, t, st, {})
    if len(said) != 1 or not own_name(r.spec, t.entity, said[0][0]) or not isinstance(said[0][2], str):
        return None
    if r.rng.random() >= 0.6:
        return None
    return r.rng.choice(paraphrases("rename_forms")).format(obj=obj, val=said[0][2])


def _verb(tool_name: str, rng: random.Random) -> str:
    parts = tool_name.split("_")
    two = "_".join(parts[:2])
    phrasal = phrases("phrasal_verbs")
    if two in phrasal:
        return phrasal[two]
    return rng.choice(phrases("verbs").get(parts[0], [humanize(parts[0])]))


def _create_clause(t: Any, rng: random.Random) -> str:
    """'book a hotel reservation', 'make a payment': the new row is named, never its parent."""
    noun = humanize(t.entity)
    verbs = phrases("create_verbs")
    verb = rng.choice(verbs.get(t.name.split("_")[0], verbs["create"]))
    return f"{verb} {article(noun)} {noun}"


def _write_phrase(r: _Realizer, t: Any, st: Any) -> str:
    """A set-up write folded into the goal it serves."""
    rng, noun = r.rng, humanize(t.entity)
    if t.kind == ToolKind.create:
        vals = _write_values(r, t, st, r.hidden)
        if is_person_entity(r.spec.entity(t.entity)):
            s = rng.choice(phrases("new_person")).format(noun=noun)
        else:
            s = _create_clause(t, rng)
        return s + (" with " + join_phrases(vals) if vals else "")
    if t.kind == ToolKind.update:
        vals = _write_values(r, t, st, r.hidden, to=True)
        return (
            f"{rng.choice(paraphrases('update_verbs'))} the {join_phrases(vals)} on it"
            if vals
            else f"update the {noun}"
        )
    vals = _write_values(r, t, st, r.hidden)
    return f"{_verb(t.name, rng)} it" + (" with " + join_phrases(vals) if vals else "")


def _goal_phrase(
    r: _Realizer,
    t: Any,
    st: Any,
    own: list,
    extra: str,
    ctx: str,
    out: Any,
    stated: set[str],
    new_refs: dict[str, str],
) -> tuple[str, list[str]]:
    """The request for one goal step and the answer facts it asks for."""
    spec, rng = r.spec, r.rng
    obj = describe(spec, t.entity, own, "the", extra, rng, doc_words=True) + ctx
    own_fields = {f for f, _ in own}
    if t.kind == ToolKind.get:
        fields = _answer_fields(spec, t.entity, out or {}, stated, rng, exclude=own_fields)
        ask = join_phrases([spoken_label(spec, t.entity, f, rng) for f, _ in fields]) or "details"
        its = "their" if is_person_entity(spec.entity(t.entity)) else "its"
        tell = rng.choice(paraphrases("tell_me")).format(its=its, what=ask)
        return f"{rng.choice(paraphrases('get_verbs'))} {obj} {tell}", [format_answer(v) for _, v in fields]
    if t.kind == ToolKind.list:
        return _list_phrase(r, t, own, extra, ctx, out, stated)
    if t.kind == ToolKind.create:
        vals = _write_values(r, t, st, r.hidden)
        s = f"{_create_clause(t, rng)}{ctx}"
        if vals:
            s += ("," if ctx else "") + " with " + join_phrases(vals)
        pk = spec.entity(t.entity).primary_key
        if isinstance(out, dict) and pk in out and rng.random() < 0.5:
            ref = rng.choice(paraphrases("new_reference")).format(noun=humanize(t.entity))
            return s + ref, [format_answer(out[pk])]
        return s, []
    if t.kind == ToolKind.update:
        renamed = None if new_refs else _rename(r, t, st, obj)
        if renamed is not None:
            return renamed, []
        vals = _write_values(r, t, st, {}, to=True)
        for pname, desc in new_refs.items():
            p = t.param(pname)
            vals.append(f"{label(spec, t.entity, p.field or pname)} to {desc}")
        verb = rng.choice(paraphrases("update_verbs"))
        if not vals:
            return f"{verb} {obj}", []
        forms = paraphrases("update_forms")
        if obj.endswith((")", "--")):  # not '(patient name X) (zip code to Y)'
            forms = [f for f in forms if not f.endswith(("({vals})", "-- {vals}"))]
        form = rng.choice(forms)
        return form.format(verb=verb, vals=join_phrases(vals), obj=obj), []
    if t.kind == ToolKind.delete:
        return f"{rng.choice(paraphrases('delete_verbs'))} {obj}", []
    vals = _write_values(r, t, st, r.hidden)
    return f"{_verb(t.name, rng)} {obj}" + (" with " + join_phrases(vals) if vals else ""), []


def _list_phrase(
    r: _Realizer, t: Any, own: list, extra: str, ctx: str, out: Any, stated: set[str]
) -> tuple[str, list[str]]:
    """A search: "find flights with ... and tell me their flight number", or "how many"."""
    spec, rng = r.spec, r.rng
    noun = humanize(t.entity)
    items = (out or {}).get("items") or []
    many = plural(noun)
    base = describe(spec, t.entity, own, "", extra, rng).strip()
    for one, many_form in _PLURAL_VERBS:  # 'slots that have', not 'slots that has'
        base = base.replace(one, many_form, 1)
    base = base.replace(noun, many, 1) if base.startswith(noun) or f" {noun}" in base else many
    for one, many_form in _PLURAL_VERBS:  # 'zones that go with the server', not 'that goes with'
        if ctx.startswith(one):
            ctx = many_form + ctx[len(one) :]
            break
    # a count or a per-row answer is about every listed row: only when the words describe them all
    # (a detail that singles out one of them for a later step is not a filter: 'how many changes
    # with token X' must not count the rows without it)
    every = all(it.get(f) == v for f, v in own for it in items)
    if items and len(items) <= 3 and not (out or {}).get("has_more") and every:
        disp = _list_answer_field(spec, t.entity, items, {f for f, _ in own}, stated)
        if disp:
            tell = rng.choice(paraphrases("tell_me")).format(
                its="their", what=spoken_label(spec, t.entity, disp, rng)
            )
            return f"{rng.choice(paraphrases('list_verbs'))} {base}{ctx} {tell}", [
                format_answer(it[disp]) for it in items
            ]
        if str(len(items)) not in stated and str(len(items)) not in re.findall(r"\d+", base + ctx):
            return rng.choice(paraphrases("how_many")).format(what=f"{base}{ctx}"), [str(len(items))]
    return f"{rng.choice(paraphrases('list_verbs'))} {base}{ctx}", []


def _sayable(v: Any) -> bool:
    """A value a person can read out as an answer (not an identifier-like or long string)."""
    return v is not None and usable(v) and not (isinstance(v, str) and ("_" in v or len(v) > 40))


def _list_answer_field(
    spec: EnvSpec, entity: str, items: list[dict], own_fields: set[str], stated: set[str]
) -> str | None:
    """A field to ask about for every listed row: the display field unless the user already
    said it (asking "travelers named Golden: tell me their last name" asks nothing)."""
    ent = spec.entity(entity)
    order = ([ent.display_field] if ent.display_field else []) + [f.name for f in ent.fields]
    for fname in order:
        if fname in own_fields or id_like(spec, entity, fname) or not states_value(spec, entity, fname):
            continue
        try:
            ft = ent.field(fname).type
        except KeyError:
            continue
        if ft in (FieldType.object, FieldType.array, FieldType.boolean, FieldType.datetime):
            continue
        vals = [it.get(fname) for it in items]
        if not all(_sayable(v) for v in vals):
            continue
        if all(format_answer(v) in stated or str(v) in stated for v in vals):
            continue
        return fname
    return None


def _answer_fields(
    spec: EnvSpec,
    entity: str,
    row: dict[str, Any],
    stated: set[str],
    rng: random.Random,
    k: int = 2,
    exclude: AbstractSet[str] = frozenset(),
) -> list[tuple[str, Any]]:
    ent = spec.entity(entity)
    good = []
    for f in ent.fields:
        if f.name in exclude:
            continue
        v = row.get(f.name)
        if not _sayable(v) or id_like(spec, entity, f.name) or not states_value(spec, entity, f.name):
            continue
        if f.type in (FieldType.datetime, FieldType.object, FieldType.array, FieldType.boolean):
            continue
        if format_answer(v) in stated or str(v) in stated:
            continue
        good.append((f.name, v))
    rng.shuffle(good)
    return sorted(good[:k], key=lambda x: [f.name for f in ent.fields].index(x[0]))
