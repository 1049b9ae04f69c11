"""The measured invariants of a task: where every gold argument comes from, which calls are needed,
which rows the goal's words pick out, and whether a person's words hold internal ids.

One implementation for two users: the task builder drops a task that breaks one
(``check_invariants``), and ``envfactory audit DATASET`` counts them on a written dataset. Each
function reads plain data (a ``GoldView`` of concrete calls, their references and outputs), so it
runs on a ``Task`` and on a dataset row alike.

Provenance of an argument value (first that applies):

- ``ref``: the plan feeds it from an earlier call's output (a reference);
- ``said``: the value, in one of its spoken forms, is among the user's words (the goal, or a
  hidden fact the user gives when asked);
- ``seen``: the value appears in an earlier call's output;
- ``default``: the parameter's documented default;
- ``control``: paging and sorting arguments (``limit``, ``offset``, ``sort_by``, ...), the agent's choice;
- ``bound``: a range filter's bound within 10% of a number (or on the date) the user said;
- otherwise ``invented``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..spec import EnvSpec, FieldType, ToolKind, account_key, names_row, states_value
from ..text import date_forms, format_answer
from .phrasing import ftype, id_like, parse_fact_key, say_value

__all__ = [
    "GoldView",
    "canon",
    "has_value",
    "value_forms",
    "arg_provenance",
    "invented_args",
    "unused_calls",
    "resolve_targets",
    "goal_mismatches",
    "internal_ids",
    "CONTROL_ARGS",
    "says_answer",
    "unsayable_facts",
]

CONTROL_ARGS = frozenset(
    {"limit", "offset", "page", "page_size", "per_page", "sort_by", "sort_order", "order", "cursor"}
)
_EDGE_PUNCT = re.compile(r"[.!?;:,)\]\"'(\[]+(?=\s|$)|(?<=\s)[(\[\"']+|^[(\[\"']+")


def canon(text: str) -> str:
    """Lower-case words with sentence punctuation and commas removed, padded with spaces, so a
    value is found as whole words (' 12 ' is not inside ' 120 ')."""
    s = re.sub(r"(?<=\d),(?=\d)", "", str(text).lower())  # '1,869.63' is the number 1869.63
    s = s.replace(",", " ").replace("$", "$ ")  # '$82' says the number 82
    s = _EDGE_PUNCT.sub(" ", s)
    return " " + " ".join(s.split()) + " "


def value_forms(v: Any, ft: Any = None, fname: str = "") -> set[str]:
    """The spoken forms of a value, canonical: '12.0' -> {'12', '12.0'}, a date -> its ISO and its
    'June 3, 2026' form; a datetime also by its date alone."""
    out = {format_answer(v), str(v)}
    if ft is not None:
        try:
            out.add(say_value(ft, fname, v))
        except (ValueError, TypeError):
            pass
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d\d-\d\d(T.*)?", v):
        out.add(v[:10])
        out |= date_forms(v)  # every way the realizer writes it ('3 June 2026', 'June 3rd', '5:15 pm')
        if ft is not None:  # a date of the current year, said without it ('June 3 at 10:00')
            out.add(say_value(ft, fname, v, int(v[:4])))
            out.add(say_value(FieldType.date, fname, v[:10], int(v[:4])))
        try:
            out.add(say_value(FieldType.date, fname, v[:10]))
        except (ValueError, TypeError):
            pass
    return {c.strip() for c in (canon(x) for x in out) if c.strip()}


def has_value(text_canon: str, forms: Iterable[str]) -> bool:
    return any(f" {f} " in text_canon for f in forms)


def says_answer(task: Any, text: str) -> list[str]:
    """The task's required facts that ``text`` already states, found as the dataset audit finds them
    (whole words anywhere in the text, so 'great' is in 'Great, thanks')."""
    c = canon(text)
    return [f for f in task.reward.required_facts if canon(f).strip() and has_value(c, {canon(f).strip()})]


@dataclass
class GoldView:
    """Concrete gold calls of one task: tool, args, references (param -> [step, path...]) and outputs."""

    calls: list[dict[str, Any]]
    outputs: list[Any]
    facts: dict[str, Any] = field(default_factory=dict)  # known and hidden
    required: list[str] = field(default_factory=list)

    @classmethod
    def of_task(cls, task: Any) -> GoldView:
        calls = [dict(c) for c in task.reward.gold_calls]
        return cls(
            calls,
            [g.output for g in task.gold],
            {**task.persona.known_facts, **task.persona.hidden_facts},
            list(task.reward.required_facts),
        )


def _scalars(out: Any) -> Iterable[Any]:
    if isinstance(out, dict):
        for v in out.values():
            yield from _scalars(v)
    elif isinstance(out, list):
        for v in out:
            yield from _scalars(v)
    elif out is not None:
        yield out


def _numbers(text_canon: str) -> list[float]:
    out = []
    for w in text_canon.split():
        try:
            out.append(float(w.replace("$", "")))
        except ValueError:
            continue
    return out


def arg_provenance(spec: EnvSpec, view: GoldView, words: str) -> list[tuple[int, str, str]]:
    """(call index, argument, provenance) for every argument of every gold call; ``words`` is what the
    user says (goal and revealed facts)."""
    text = canon(words)
    nums = _numbers(text)
    out: list[tuple[int, str, str]] = []
    seen = _Seen(view.outputs)
    for i, c in enumerate(view.calls):
        try:
            t = spec.tool(c["tool"])
        except KeyError:
            continue
        refs = c.get("refs") or {}
        seen.upto = i
        for name, v in (c.get("args") or {}).items():
            out.append((i, name, _provenance(spec, t, name, v, refs, text, nums, seen, i)))
    return out


class _Seen:
    """The spoken forms of every value the outputs before call ``upto`` hold, read only when an
    argument was not said (most are, or come by reference), and each output once."""

    def __init__(self, outputs: list[Any]):
        self.outputs, self.upto, self._read = outputs, 0, 0
        self._forms: set[str] = set()

    def __and__(self, forms: set[str]) -> set[str]:
        while self._read < min(self.upto, len(self.outputs)):
            for s in _scalars(self.outputs[self._read]):
                self._forms.update(_scalar_forms(s))
            self._read += 1
        return forms & self._forms


@lru_cache(maxsize=100_000, typed=True)
def _scalar_forms(s: Any) -> tuple[str, str]:
    return canon(format_answer(s)).strip(), canon(str(s)).strip()


def _provenance(
    spec: EnvSpec, t: Any, name: str, v: Any, refs: dict, text: str, nums: list[float], seen: _Seen, i: int
) -> str:
    r = refs.get(name)
    if r and isinstance(r[0], int) and r[0] < i:
        return "ref"
    p = next((p for p in t.params if p.name == name), None)
    if p is None:
        return "control" if name in CONTROL_ARGS else "invented"
    vals = v if isinstance(v, list) else [v]
    if not vals:
        return "said"  # an empty list states nothing
    fname = p.field or name
    ft = ftype(spec, t.entity, fname) or p.type
    kinds = []
    for x in vals:
        forms = value_forms(x, ft, fname)
        if has_value(text, forms):
            kinds.append("said")
        elif seen & forms:
            kinds.append("seen")
        elif p.default is not None and x == p.default:
            kinds.append("default")
        elif isinstance(x, bool) and has_value(text, _bool_forms(spec, t.entity, fname, x)):
            kinds.append("said")
        elif p.op in ("gte", "gt", "lte", "lt") and _near(x, nums, text):
            kinds.append("bound")
        elif account_key(spec, t, fname):
            kinds.append("context")  # the account's own one, whose key the system prompt states
        else:
            return "invented"
    return "said" if "said" in kinds else kinds[0]


def _bool_forms(spec: EnvSpec, entity: str, fname: str, v: bool) -> set[str]:
    """How a person says a yes/no field: 'refundable', 'non-refundable', 'unacknowledged', 'has seats'."""
    from .phrasing import _bool_adj, label

    lab = label(spec, entity, fname)
    forms = {_bool_adj(spec, entity, fname, v), lab if v else "not " + lab, lab.replace(" ", "-")}
    return {c.strip() for c in (canon(f) for f in forms) if c.strip()}


def _near(x: Any, nums: list[float], text: str) -> bool:
    """A range bound a person's number implies ('rating 4.5' -> min_rating 4): within 25% or 1."""
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float)):
        return any(abs(n - x) <= max(0.25 * abs(x), 1.0) for n in nums)
    if isinstance(x, str) and len(x) >= 10:
        return has_value(text, value_forms(x[:10], FieldType.date))
    return False


def invented_args(spec: EnvSpec, view: GoldView, words: str) -> list[str]:
    """'tool.arg=value' for every argument with no provenance."""
    return [
        f"{view.calls[i]['tool']}.{a}={view.calls[i]['args'][a]!r}"
        for i, a, how in arg_provenance(spec, view, words)
        if how == "invented"
    ]


def unused_calls(spec: EnvSpec, view: GoldView) -> list[str]:
    """Read calls whose output feeds no later call and holds no required fact."""
    fed = {r[0] for c in view.calls for r in (c.get("refs") or {}).values() if r}
    req = [canon(f).strip() for f in view.required]
    out = []
    for i, c in enumerate(view.calls):
        try:
            t = spec.tool(c["tool"])
        except KeyError:
            continue
        if t.writes or i in fed:
            continue
        vals = {
            canon(format_answer(s)).strip()
            for s in _scalars(view.outputs[i] if i < len(view.outputs) else None)
        }
        vals |= {canon(str(s)).strip() for s in _scalars(view.outputs[i] if i < len(view.outputs) else None)}
        if isinstance(view.outputs[i], dict) and "count" in view.outputs[i]:
            vals.add(str(len(view.outputs[i].get("items") or [])))
        if not any(f in vals for f in req):
            out.append(c["tool"])
    return out


# ---- the independent resolver --------------------------------------------------------------------


def _instances(
    spec: EnvSpec, facts: dict[str, Any]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Entity facts by entity, one dict per instance ('booking.status' and 'booking.status#2' are two
    bookings), and the 'prefer.entity.field' constraints."""
    inst: dict[str, dict[int, dict[str, Any]]] = {}
    prefer: dict[str, Any] = {}
    for k, v in facts.items():
        pk = parse_fact_key(spec, k)
        if pk is None:
            continue
        kind, ent, f = pk
        if kind == "prefer":
            prefer[ent] = (f, v)
        elif kind == "entity":
            n = int(k.split("#", 1)[1]) if "#" in k else 1
            inst.setdefault(ent, {}).setdefault(n, {})[f] = v
    return {e: [d[n] for n in sorted(d)] for e, d in inst.items()}, prefer


def _rows_matching(state: Any, ent: Any, facts: dict[str, Any]) -> set[Any]:
    """Keys of the rows whose fields equal every fact (an index per field, kept on ``state``)."""
    idx: dict[tuple[str, str], dict[Any, set[Any]]] = state.__dict__.setdefault("_resolver_index", {})
    pk = ent.primary_key
    out: set[Any] | None = None
    for f, v in facts.items():
        try:
            hash(v)
        except TypeError:
            keys = {r[pk] for r in state.rows.get(ent.name, []) if r.get(f) == v}
        else:
            by_value = idx.get((ent.name, f))
            if by_value is None:
                by_value = idx[(ent.name, f)] = {}
                for r in state.rows.get(ent.name, []):
                    try:
                        by_value.setdefault(r.get(f), set()).add(r[pk])
                    except TypeError:
                        continue
            keys = by_value.get(v, set())
            if isinstance(v, bool) or isinstance(v, (int, float)):  # 1 == 1.0 == True in a dict: recheck
                keys = {
                    k
                    for k in keys
                    if type(state.by_pk[ent.name][k].get(f)) is type(v) or not isinstance(v, bool)
                }
        out = set(keys) if out is None else out & keys
        if not out:
            return set()
    return out if out is not None else {r[pk] for r in state.rows.get(ent.name, [])}


def resolve_targets(spec: EnvSpec, state: Any, facts: dict[str, Any], entity: str) -> list[set[Any]]:
    """The primary keys each description of ``entity`` in the goal picks on the initial state: its
    own facts, narrowed by the rows the facts of related entities pick (parents it points at and
    children that point at it), then by a preference ('the cheapest one')."""
    inst, prefer = _instances(spec, facts)
    ents = {e.name: e for e in spec.entities}

    def own(e: str) -> list[set[Any]]:
        return [_rows_matching(state, ents[e], fs) for fs in inst.get(e, [])]

    direct = {e: own(e) for e in inst if e in ents}
    ent = ents[entity]
    pk = ent.primary_key
    rows = state.rows.get(entity, [])
    groups: list[set[Any] | None] = [*direct[entity]] if direct.get(entity) else [None]
    out = []
    for g in groups:
        cand = [r for r in rows if g is None or r[pk] in g]
        narrowed = g is not None
        for f in ent.fields:  # parents this row points at
            if f.ref and f.ref != entity and direct.get(f.ref):
                keys = set().union(*direct[f.ref])
                cand = [r for r in cand if r.get(f.name) in keys]
                narrowed = True
        for other in spec.entities:  # children that point at this row
            if other.name == entity or not direct.get(other.name):
                continue
            for f in other.fields:
                if f.ref == entity:
                    kids = set().union(*direct[other.name])
                    opk = other.primary_key
                    parents = {r.get(f.name) for r in state.rows.get(other.name, []) if r[opk] in kids}
                    if parents - {None}:
                        cand = [r for r in cand if r[pk] in parents]
                        narrowed = True
        if not narrowed:
            continue
        if entity in prefer and cand:
            fname, how = prefer[entity]
            vals = [r.get(fname) for r in cand if r.get(fname) is not None]
            if vals:
                ext = min(vals) if how == "lowest" else max(vals)
                cand = [r for r in cand if r.get(fname) == ext]
        out.append({r[pk] for r in cand})
    return out


def goal_mismatches(spec: EnvSpec, state: Any, view: GoldView) -> list[str]:
    """Rows a keyed gold call acts on (that exist before the run) which the goal's descriptors do not
    pick out uniquely: why, per target. A row reached from another target's own row ('the traveller
    of the booking I named': the key is that row's foreign key, not a pick among listed rows) is
    determined by it and needs no words of its own."""
    out = []
    created: set[Any] = set()
    determined: set[int] = set()  # steps whose row the goal pins (checked, or reached from one)
    for i, c in enumerate(view.calls):
        try:
            t = spec.tool(c["tool"])
        except KeyError:
            continue
        if t.kind == ToolKind.create:
            out.extend(_parent_mismatches(spec, state, view, c, t, created))
            o = view.outputs[i] if i < len(view.outputs) else None
            if isinstance(o, dict):
                created.add(o.get(spec.entity(t.entity).primary_key))
            continue
        if t.kind == ToolKind.list:
            out.extend(_count_mismatches(spec, view, i, t))
            continue
        if t.key_param is None:
            continue
        key = (c.get("args") or {}).get(t.key_param.name)
        if key is None or key in created or key not in state.by_pk.get(t.entity, {}):
            determined.add(i)
            continue
        src = (c.get("refs") or {}).get(t.key_param.name)
        if src and src[0] in determined and "items" not in src[1:]:
            determined.add(i)
            continue
        determined.add(i)
        picks = resolve_targets(spec, state, view.facts, t.entity)
        if not picks:
            out.append(f"{c['tool']}: nothing in the goal says which {t.entity} ({key})")
        elif not any(p == {key} for p in picks):
            sizes = "/".join(str(len(p)) for p in picks)
            out.append(f"{c['tool']}: the goal's words pick {sizes} {t.entity} row(s), not just {key}")
    return out


def _count_mismatches(spec: EnvSpec, view: GoldView, i: int, t: Any) -> list[str]:
    """A count the goal asks for ('how many changes with token X') over listed rows that its words do
    not all describe: the look-up did not filter by what the user said, so the count is of other rows."""
    o = view.outputs[i] if i < len(view.outputs) else None
    items = o.get("items") if isinstance(o, dict) else None
    if not isinstance(items, list) or str(len(items)) not in {str(f).strip() for f in view.required}:
        return []
    for k, v in view.facts.items():
        parsed = parse_fact_key(spec, k)
        if parsed is None or parsed[0] != "entity" or parsed[1] != t.entity:
            continue
        if any(isinstance(it, dict) and it.get(parsed[2]) != v for it in items):
            return [
                f"{t.name}: the goal counts {t.entity} rows with {parsed[2]}={v!r}, not every listed row has it"
            ]
    return []


def _parent_mismatches(
    spec: EnvSpec, state: Any, view: GoldView, c: dict[str, Any], t: Any, created: set[Any]
) -> list[str]:
    """The rows a create links to (its foreign keys, found by a look-up) which the goal's descriptors
    do not pick out uniquely: 'an order of the customer with email X' must name that customer."""
    out = []
    ent = spec.entity(t.entity)
    for p in t.params:
        v = (c.get("args") or {}).get(p.name)
        f = p.field or p.name
        ref = ent.field(f).ref if ent.has_field(f) else None
        if v is None or ref is None or v in created or v not in state.by_pk.get(ref, {}):
            continue
        if p.name not in (c.get("refs") or {}):
            continue  # not looked up (a documented default or a value the user gave)
        picks = resolve_targets(spec, state, view.facts, ref)
        if not picks:
            out.append(f"{c['tool']}: nothing in the goal says which {ref} ({v}) the new {t.entity} is for")
        elif not any(pk == {v} for pk in picks):
            sizes = "/".join(str(len(pk)) for pk in picks)
            out.append(
                f"{c['tool']}: the goal's words pick {sizes} {ref} row(s) for the new {t.entity}, not just {v}"
            )
    return out


def internal_ids(spec: EnvSpec, view: GoldView, text: str) -> list[str]:
    """Internal ids (keys and references of the rows the run touches) that ``text`` states."""
    ids: set[str] = set()
    for i, c in enumerate(view.calls):
        try:
            t = spec.tool(c["tool"])
        except KeyError:
            continue
        fields: dict[str, str] = {p.name: (p.field or p.name) for p in t.params}
        rows: list[Any] = [c.get("args") or {}]
        o = view.outputs[i] if i < len(view.outputs) else None
        if isinstance(o, dict):
            rows += o["items"] if t.kind == ToolKind.list and isinstance(o.get("items"), list) else [o]
        for row in rows:
            for k, v in (row or {}).items() if isinstance(row, dict) else []:
                if isinstance(v, str) and len(v) >= 3 and id_like(spec, t.entity, fields.get(k) or k):
                    ids.add(v)
    tokens = set(re.findall(r"[A-Za-z0-9_\-]+", text))
    return sorted(v for v in ids if v in tokens)


def unsayable_facts(spec: EnvSpec, facts: dict[str, Any]) -> list[str]:
    """Facts the user states that no person knows or would say (``envfactory.spec.sayable``): a row
    named by seeded filler, a bookkeeping stamp or a link to the record itself; a new row's detail
    that is filler or an object. One line per fact: its key and value."""
    out = []
    for k, v in facts.items():
        parsed = parse_fact_key(spec, k)
        if parsed is None or parsed[0] == "prefer":
            continue
        kind, entity, fname = parsed
        try:
            ent = spec.entity(entity)
        except KeyError:
            continue
        if not ent.has_field(fname):
            continue
        tool = spec.tool(k.split("#", 1)[0].split(".", 1)[0]) if kind == "param" else None
        naming = tool is None or tool.kind == ToolKind.list
        ok = names_row(spec, entity, fname) if naming else states_value(spec, entity, fname)
        if not ok:
            out.append(f"{k}={str(v)[:40]}")
    return out
