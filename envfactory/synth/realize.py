"""Realize an executed plan as a request in a person's words (no model needed).

The realizer reads a ``GoldResult`` and the env's ``EnvSpec`` and writes what a person would
say: outcomes, never tools or steps; natural facts (names, emails, dates, cities, amounts,
enum values), never internal ids they could not know. It applies four refinement rules:

- implicit reference / parameter omission: ids are left for the agent to discover; some
  facts are held back as hidden facts the user reveals when asked;
- action compression: discovery and set-up steps are never spelled out; a set-up write and
  the goal it serves are said in one phrase;
- ambiguity resolved by implicit constraints: when a plan picks one row among several list
  results, the realizer states what singles it out ("the cheapest one", "the one departing
  earliest") when the data makes that row the unique extreme, else a fact that is unique to
  it among the results; if neither exists the selection is recorded as unresolved;
- goal expansion: a second goal is joined in the same request.

Phrasing is a small template grammar with seeded choices; entity and field names are
humanized from the spec (``flight_id`` -> "flight", ``premium_economy`` -> "premium economy").
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..graph import GoldResult
from ..graph.plan import REF, is_ref, iter_refs
from ..spec import EnvSpec, FieldType, Persona, SubGoal, ToolKind

__all__ = [
    "Realization",
    "Selection",
    "realize_goal",
    "find_selections",
    "parse_fact_key",
    "humanize",
    "format_value",
    "is_person_entity",
    "format_answer",
]

STYLES = ("terse", "polite", "chatty", "hurried")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
# Verbs by the first word of a tool name; the realizer never says the tool name itself.
_VERBS: dict[str, list[str]] = {
    "cancel": ["cancel", "call off"],
    "delete": ["delete", "remove"],
    "remove": ["remove", "delete"],
    "book": ["book"],
    "reserve": ["reserve", "book"],
    "pay": ["pay for", "settle the bill for"],
    "refund": ["refund", "get a refund for"],
    "assign": ["set", "assign"],
    "create": ["create", "set up", "add"],
    "add": ["add", "set up"],
    "register": ["register", "sign up"],
    "update": ["update", "change"],
    "edit": ["update", "change"],
    "set": ["set", "change"],
    "approve": ["approve"],
    "reject": ["reject"],
    "close": ["close"],
    "open": ["open"],
    "archive": ["archive"],
    "send": ["send"],
    "submit": ["submit"],
    "confirm": ["confirm"],
    "complete": ["complete", "mark as done"],
    "activate": ["activate"],
    "deactivate": ["deactivate"],
    "pickup": ["pick up"],
    "seat": ["pick a seat for"],
}
# How a create tool's verb names the new row: 'book a hotel reservation', 'make a payment'.
_CREATE_VERBS: dict[str, list[str]] = {
    "create": ["create", "set up", "add"],
    "add": ["add", "set up"],
    "book": ["book"],
    "reserve": ["book", "make"],
    "pay": ["make"],
    "register": ["register"],
}
_GET_VERBS = ["look up", "check", "pull up", "find"]
_LIST_VERBS = ["find", "look for", "search for"]
_OPENERS = {
    "terse": ["", ""],
    "polite": ["Hello, this is {name}. ", "Hi, I'm {name}. ", "Good morning, my name is {name}. "],
    "chatty": ["Hi there! {name} here, hope your day is going well. ", "Hey! It's {name}. "],
    "hurried": ["{name} here, quick one: ", "Hi, {name}, in a rush: "],
}
_ASK = {
    "terse": ["{req}.", "Please {req}."],
    "polite": ["Could you please {req}?", "I'd like you to {req}, please.", "Would you {req}?"],
    "chatty": ["I was hoping you could {req}. Thanks so much!", "Could you {req} for me? That would be lovely."],
    "hurried": ["{req}, thanks.", "Need you to {req}. Thanks!"],
}
_JOIN = [", and also ", ", and while you're at it, ", ". Also, please ", ", plus "]
_ID_NAMES = {"id", "uuid", "key", "ref", "code"}


def humanize(name: str) -> str:
    """``flight_id`` -> "flight", ``price_per_night`` -> "price per night"."""
    s = str(name)
    for suf in ("_id", "_uuid", "_ref"):
        if s.endswith(suf) and len(s) > len(suf):
            s = s[: -len(suf)]
    return s.replace("_", " ").strip()


_LABELS = {"date_of_birth": "date of birth", "birth_date": "birth date", "created_at": "creation time",
           "updated_at": "last update", "dob": "date of birth",
           "expires_on": "expiry date", "expires_at": "expiry time", "to": "recipient", "cc": "cc",
           "bcc": "bcc"}
_COMPOUNDS = {"check in": "check-in", "check out": "check-out", "dropoff": "drop-off", "pickup": "pickup",
              "e mail": "email"}
_UNIT_WORDS = {"minutes": "minutes", "hours": "hours", "cm": "cm", "kg": "kg", "km": "km", "bpm": "bpm",
               "grams": "grams", "cents": "cents", "pct": "percent", "kcal": "kcal"}
# Count-like fields: said as "3 stops"; (singular, plural, most a person would plausibly say).
_COUNTS: dict[str, tuple[str, str, float]] = {
    "stops": ("stop", "stops", 4), "passengers": ("passenger", "passengers", 9), "guests": ("guest", "guests", 10),
    "seats": ("seat", "seats", 12), "nights": ("night", "nights", 60), "checked_bags": ("checked bag", "checked bags", 6),
    "bags": ("bag", "bags", 6), "stars": ("star", "stars", 5), "credits": ("credit", "credits", 12),
    "weeks": ("week", "weeks", 104), "rental_days": ("rental day", "rental days", 90),
    "sessions_per_week": ("session a week", "sessions a week", 14), "refills_authorized": ("refill", "refills", 12),
    "days_supply": ("day's supply", "days' supply", 365), "quantity": ("unit", "units", 100),
}


def field_label(spec: EnvSpec | None, entity: str, fname: str) -> str:
    """A field as a person names it: ``pickup_at`` -> "pickup time", ``check_in`` -> "check-in date",
    ``duration_minutes`` -> "duration in minutes", ``loyalty_airline_id`` -> "loyalty airline"."""
    if fname in _LABELS:
        return _LABELS[fname]
    ft = _ftype(spec, entity, fname) if spec is not None else None
    words = humanize(fname).split()
    if fname.startswith("is_") and len(words) > 1:
        words = words[1:]
    if len(words) > 1 and words[-1] in ("at", "on"):
        timed = ft == FieldType.datetime or (ft is None and words[-1] == "at")
        words = words[:-1] + (["time"] if timed else ["date"])
    elif ft == FieldType.date and words[-1] not in ("date", "day", "birth", "expiry", "dob"):
        words.append("date")
    elif ft == FieldType.datetime and words[-1] not in ("time", "date", "timestamp"):
        words.append("time")
    if len(words) > 1 and words[-1] in _UNIT_WORDS:
        words = words[:-1] + ["in", _UNIT_WORDS[words[-1]]]
    s = " ".join(words)
    for a, b in _COMPOUNDS.items():
        s = re.sub(rf"\b{a}\b", b, s)
    return s


def _count_phrase(fname: str, v: Any) -> str | None:
    """'3 stops' for count-like fields; None when the field is not one."""
    c = _COUNTS.get(fname)
    if c is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    n = _num(v)
    if v == 0:
        return f"no {c[1]}"
    return f"{n} {c[0] if v == 1 else c[1]}"


def _implausible(fname: str, v: Any) -> bool:
    """A count no person would use to describe a row ('330 stops'): left out of descriptions."""
    c = _COUNTS.get(fname)
    return c is not None and isinstance(v, (int, float)) and not isinstance(v, bool) and (v < 0 or v > c[2])


def _plural(word: str) -> str:
    if word.endswith("y") and not word.endswith(("ay", "ey", "oy")):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def is_person_entity(ent: Any) -> bool:
    names = {f.name for f in ent.fields}
    return ({"first_name", "last_name"} <= names) or ({"name", "email"} <= names and "person" in ent.name)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return str(int(v)) if v == int(v) else f"{v:.2f}".rstrip("0").rstrip(".")
    return str(v)


def format_answer(v: Any) -> str:
    """The form of a value an answer must contain (after ``normalize_text``)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return _num(v)
    return str(v)


def format_value(ftype: FieldType | None, fname: str, v: Any) -> str:
    """A value as a person says it: dates spelled out, money with a $, enums humanized."""
    if v is None:
        return "none"
    if isinstance(v, list) and not v:
        return "none"
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return _join([format_value(None, fname, x) for x in v])
    if isinstance(v, bool):
        return "yes" if v else "no"
    if ftype in (FieldType.date, FieldType.datetime) and isinstance(v, str):
        m = re.match(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?", v)
        if m:
            y, mo, d, hh, mm = m.groups()
            s = f"{_MONTHS[int(mo) - 1]} {int(d)}, {y}"
            if hh is not None and ftype == FieldType.datetime and (hh, mm) != ("00", "00"):
                s += f" at {hh}:{mm}"
            return s
    if isinstance(v, (int, float)):
        money = any(w in fname for w in ("price", "amount", "total", "rate", "cost", "fare", "balance"))
        return f"${_num(v)}" if money else _num(v)
    if ftype == FieldType.enum or (isinstance(v, str) and "_" in v and " " not in v and v.islower()):
        return v.replace("_", " ")
    return str(v)


def parse_fact_key(spec: EnvSpec, key: str) -> tuple[str, str, str] | None:
    """``entity.field`` -> ("entity", entity, field); ``tool.param`` -> ("param", entity, field)."""
    base = key.split("#", 1)[0]
    if "." not in base:
        return None
    a, b = base.split(".", 1)
    ents = {e.name: e for e in spec.entities}
    if a in ents and ents[a].has_field(b):
        return ("entity", a, b)
    tools = {t.name: t for t in spec.tools}
    if a in tools:
        t = tools[a]
        try:
            p = t.param(b)
        except KeyError:
            return None
        return ("param", t.entity, p.field or b)
    if a == "prefer" and "." in b:
        e, f = b.split(".", 1)
        if e in ents:
            return ("prefer", e, f)
    return None


def _ftype(spec: EnvSpec, entity: str, fname: str) -> FieldType | None:
    try:
        return spec.entity(entity).field(fname).type
    except KeyError:
        return None


def _id_like(spec: EnvSpec, entity: str, fname: str) -> bool:
    try:
        ent = spec.entity(entity)
        f = ent.field(fname)
    except KeyError:
        return fname.endswith("_id") or fname in _ID_NAMES
    return fname == ent.primary_key or f.ref is not None or fname.endswith("_id")


def _usable(v: Any) -> bool:
    # Seed artefacts such as an unexpanded '{{city}} International' are not something a person says.
    return not (isinstance(v, str) and ("{{" in v or "}}" in v))


# --- selections: a plan that picks one row among several --------------------------------


@dataclass
class Selection:
    """Step ``step`` picked ``items[index]`` of list step ``source``; how the user pins it."""

    source: int
    index: int
    entity: str
    row: dict[str, Any]
    how: str = "only"  # only | constraint | fact | unresolved
    fact_key: str | None = None
    fact_value: Any = None
    phrase: str = ""


_LOW = {"price": "cheapest", "amount": "smallest", "time": "earliest", "date": "earliest", "at": "earliest"}
_HIGH = {"price": "most expensive", "amount": "largest", "time": "latest", "date": "latest", "at": "latest"}


def _superlative(fname: str, low: bool, spec: EnvSpec | None = None, entity: str = "") -> str:
    words = fname.split("_")
    table = _LOW if low else _HIGH
    label = field_label(spec, entity, fname)
    if fname in _COUNTS:
        return f"the one with the {'fewest' if low else 'most'} {_COUNTS[fname][1]}"
    for w in reversed(words):
        if w in table:
            adj = table[w]
            if w == "price":
                return f"the {adj} one"
            return f"the one with the {adj} {label}"
    return f"the one with the {'lowest' if low else 'highest'} {label}"


def find_selections(spec: EnvSpec, gold: GoldResult, known: dict[str, Any] | None = None,
                    prefer_constraints: bool = True) -> list[Selection]:
    """Every ``items[k]`` a later step used, with how the user can single that row out."""
    out: list[Selection] = []
    seen: set[tuple[int, int]] = set()
    plan = gold.plan
    for s in plan.steps:
        for r in iter_refs(s.args):
            if len(r) < 3 or r[1] != "items" or not isinstance(r[2], int):
                continue
            key = (r[0], r[2])
            if key in seen or r[0] >= len(gold.calls):
                continue
            seen.add(key)
            call = gold.calls[r[0]]
            items = (call.output or {}).get("items") or []
            if r[2] >= len(items):
                continue
            entity = spec.tool(plan.steps[r[0]].tool).entity
            sel = Selection(r[0], r[2], entity, items[r[2]])
            has_more = bool((call.output or {}).get("has_more"))
            if len(items) == 1 and not has_more:
                out.append(sel)
                continue
            if known and _pinned_by_facts(spec, entity, items, r[2], known):
                sel.how = "facts"
                out.append(sel)
                continue
            _pin(spec, sel, items, has_more, prefer_constraints)
            out.append(sel)
    return out


def _pinned_by_facts(spec: EnvSpec, entity: str, items: list[dict], idx: int, facts: dict[str, Any]) -> bool:
    return candidates_after_facts(spec, entity, items, idx, facts) == [idx]


def candidates_after_facts(spec: EnvSpec, entity: str, items: list[dict], idx: int,
                           facts: dict[str, Any]) -> list[int]:
    """Indices of ``items`` consistent with the facts that describe ``items[idx]``."""
    row = items[idx]
    cand = list(range(len(items)))
    for k, v in facts.items():
        pk = parse_fact_key(spec, k)
        if pk is None or pk[1] != entity:
            continue
        kind, _, f = pk
        if kind == "prefer":
            vals = [it.get(f) for it in items]
            if any(x is None for x in vals):
                continue
            ext = min(vals) if v == "lowest" else max(vals)
            if row.get(f) == ext:
                cand = [i for i in cand if items[i].get(f) == ext]
        elif kind == "entity" and f in row and row[f] == v:
            cand = [i for i in cand if items[i].get(f) == v]
    return cand


def _pin(spec: EnvSpec, sel: Selection, items: list[dict], has_more: bool, prefer_constraints: bool) -> None:
    ent = spec.entity(sel.entity)
    row = sel.row
    constraint = None
    if not has_more:
        for f in ent.fields:
            if f.type not in (FieldType.number, FieldType.integer, FieldType.date, FieldType.datetime):
                continue
            if _id_like(spec, ent.name, f.name):
                continue
            vals = [it.get(f.name) for it in items]
            if any(v is None for v in vals) or row.get(f.name) is None:
                continue
            for low in (True, False):
                ext = min(vals) if low else max(vals)
                if row[f.name] == ext and vals.count(ext) == 1:
                    constraint = (f.name, "lowest" if low else "highest", _superlative(f.name, low, spec, ent.name))
                    break
            if constraint:
                break
    fact = None
    order = sorted(ent.fields, key=lambda f: (f.name not in ("email", "name", "last_name", ent.display_field or ""),
                                              f.type in (FieldType.boolean,)))
    for f in order:
        if _id_like(spec, ent.name, f.name) or f.type in (FieldType.object, FieldType.array):
            continue
        v = row.get(f.name)
        if v is None or not _usable(v):
            continue
        if sum(1 for it in items if it.get(f.name) == v) == 1:
            fact = (f.name, v)
            break
    if constraint and (prefer_constraints or fact is None):
        sel.how, sel.fact_key, sel.fact_value, sel.phrase = (
            "constraint", f"prefer.{ent.name}.{constraint[0]}", constraint[1], constraint[2])
    elif fact:
        sel.how, sel.fact_key, sel.fact_value = "fact", f"{ent.name}.{fact[0]}", fact[1]
    else:
        sel.how = "unresolved"


# --- the realization -------------------------------------------------------------------


@dataclass
class Realization:
    persona: Persona
    goal: str
    subgoals: list[SubGoal]
    answer_facts: list[str]
    masked_args: list[list[str]]
    selections: list[Selection] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    @property
    def unresolved(self) -> list[Selection]:
        return [s for s in self.selections if s.how == "unresolved"]


def _ancestors(plan: Any, i: int) -> list[int]:
    seen: list[int] = []
    stack = list(plan.steps[i].deps) + plan.steps[i].ref_steps()
    while stack:
        j = stack.pop()
        if j in seen:
            continue
        seen.append(j)
        stack.extend(plan.steps[j].deps)
        stack.extend(plan.steps[j].ref_steps())
    return sorted(seen, reverse=True)


_NEGATED = {"refundable": "non-refundable", "available": "unavailable", "active": "inactive",
            "enabled": "disabled", "paid": "unpaid", "read": "unread", "verified": "unverified"}


def _value_phrase(spec: EnvSpec, entity: str, fname: str, v: Any, ftype: FieldType | None = None) -> str:
    """One field and its value as a person says it: "3 stops", "card method", "pickup time June 3, 2026 at 10:00"."""
    ft = ftype or _ftype(spec, entity, fname)
    val = format_value(ft, fname, v)
    label = field_label(spec, entity, fname)
    count = _count_phrase(fname, v)
    if count is not None:
        return count
    if ft == FieldType.enum or (isinstance(v, str) and label and fname in ("status", "state", "type")):
        if fname in ("status", "state"):
            return f"status {val}"
        if label and label.split()[-1] in val.split():
            return val  # 'star alliance', not 'star alliance alliance'
        if val in ("none", "null", "n/a"):
            return f"no {label}"
        return f"{val} {label}"
    if ft in (FieldType.date, FieldType.datetime) and fname in ("created_at", "updated_at", "created_on",
                                                                  "updated_on"):
        return f"{fname.split('_')[0]} on {val}"
    return f"{label} {val}"


def _fact_phrase(spec: EnvSpec, entity: str, fname: str, v: Any) -> str:
    if _id_like(spec, entity, fname):
        return f"reference {format_value(_ftype(spec, entity, fname), fname, v)}"
    return _value_phrase(spec, entity, fname, v)


def _join(parts: list[str], conj: str = "and") -> str:
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:  # a clause said twice reads as a mistake
            seen.append(p)
    parts = seen
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {conj} " + parts[-1]


def _bool_adj(spec: EnvSpec, entity: str, fname: str, v: Any) -> str:
    label = field_label(spec, entity, fname)
    if v:
        return label.replace(" ", "-")
    if label in _NEGATED:
        return _NEGATED[label]
    if " " not in label and label.endswith("ed"):
        return "un" + label  # 'unshared', 'unstarred'
    return "not " + label.replace(" ", "-")


def _describe(spec: EnvSpec, entity: str, facts: list[tuple[str, Any]], article: str = "the",
              phrase: str = "") -> str:
    """'the confirmed available room in Paris with seat 12A' from an entity's facts."""
    noun = humanize(entity)
    adjs, place, rest = [], [], []
    seen_fields: set[str] = set()
    for f, v in facts:
        if f in seen_fields or _implausible(f, v):
            continue  # one value per field; '330 stops' is not how anyone describes a flight
        seen_fields.add(f)
        ft = _ftype(spec, entity, f)
        if f in ("status", "state") and ft == FieldType.enum and not adjs:
            adjs.append(format_value(ft, f, v))
        elif ft == FieldType.boolean or isinstance(v, bool):
            adjs.append(_bool_adj(spec, entity, f, v))
        elif f in ("city", "country", "region", "state_name"):
            place.append((("city", "region", "state_name", "country").index(f), format_value(ft, f, v)))
        else:
            rest.append(_fact_phrase(spec, entity, f, v))
    s = f"{article} {' '.join(adjs) + ' ' if adjs else ''}{noun}"
    if place:
        s += " in " + ", ".join(p for _, p in sorted(place))
    if rest:
        s += " with " + _join(rest)
    if phrase:
        s += f" ({phrase})"
    return s.strip()


def _list_answer_field(spec: EnvSpec, entity: str, items: list[dict], own_fields: set[str],
                       stated: set[str]) -> str | None:
    """A field to ask about for every listed row: the display field unless the user already
    said it (asking "travelers named Golden: tell me their last name" asks nothing)."""
    ent = spec.entity(entity)
    order = ([ent.display_field] if ent.display_field else []) + [f.name for f in ent.fields]
    for fname in order:
        if fname in own_fields or _id_like(spec, entity, fname):
            continue
        try:
            ft = ent.field(fname).type
        except KeyError:
            continue
        if ft in (FieldType.object, FieldType.array, FieldType.boolean, FieldType.datetime):
            continue
        vals = [it.get(fname) for it in items]
        if any(v is None or not _usable(v) or (isinstance(v, str) and ("_" in v or len(v) > 40)) for v in vals):
            continue
        if all(format_answer(v) in stated or str(v) in stated for v in vals):
            continue
        return fname
    return None


def _answer_fields(spec: EnvSpec, entity: str, row: dict[str, Any], stated: set[str],
                   rng: random.Random, k: int = 2, exclude: set[str] = frozenset()) -> list[tuple[str, Any]]:
    ent = spec.entity(entity)
    good = []
    for f in ent.fields:
        if f.name in exclude:
            continue
        v = row.get(f.name)
        if v is None or _id_like(spec, entity, f.name) or not _usable(v):
            continue
        if f.type in (FieldType.datetime, FieldType.object, FieldType.array, FieldType.boolean):
            continue
        if isinstance(v, str) and ("_" in v or len(v) > 40):
            continue
        if format_answer(v) in stated or str(v) in stated:
            continue
        good.append((f.name, v))
    rng.shuffle(good)
    return sorted(good[:k], key=lambda x: [f.name for f in ent.fields].index(x[0]))


def realize_goal(spec: EnvSpec, gold: GoldResult, *, seed: int = 0, style: str | None = None,
                 prefer_constraints: bool = True, hide_rate: float = 0.35,
                 drop_facts: set[str] | None = None) -> Realization:
    """Write the request a person would make for ``gold`` (an executed plan)."""
    rng = random.Random(f"{seed}:{gold.plan.env}:{gold.plan.index}:{len(gold.plan.steps)}")
    plan = gold.plan
    style = style or rng.choice(STYLES)
    drop_facts = drop_facts or set()
    rules: list[str] = ["implicit_reference"]

    # Facts: what the user knows, by entity, plus values to be written.
    entity_facts: dict[str, list[tuple[str, str, Any]]] = {}
    param_facts: dict[str, list[tuple[str, str, Any]]] = {}
    known: dict[str, Any] = {}
    for k, v in plan.user_facts.items():
        if k in drop_facts:
            continue
        pk = parse_fact_key(spec, k)
        if pk is None or not _usable(v):
            continue
        if pk[0] == "entity":
            entity_facts.setdefault(_inst_key(pk[1], k), []).append((k, pk[2], v))
        else:
            tool = k.split("#", 1)[0].split(".", 1)[0]
            param_facts.setdefault(tool, []).append((k, k.split("#", 1)[0].split(".", 1)[1], v))
        known[k] = v

    selections = find_selections(spec, gold, known, prefer_constraints)
    extra_phrase: dict[str, str] = {}
    for s in selections:
        if s.how in ("constraint", "fact") and s.fact_key and s.fact_key not in drop_facts:
            known[s.fact_key] = s.fact_value
            if s.how == "constraint":
                extra_phrase[s.entity] = s.phrase
                rules.append("implicit_constraint")
            else:
                entity_facts.setdefault(_inst_key(s.entity, s.fact_key), []).append(
                    (s.fact_key, s.fact_key.split(".", 1)[1], s.fact_value))

    # Persona: a person row the plan is about, else a seeded Faker name.
    persona_name, person_entity = None, None
    for i, st in enumerate(plan.steps):
        t = spec.tool(st.tool)
        ent = spec.entity(t.entity)
        if not is_person_entity(ent) or i >= len(gold.calls):
            continue
        out = gold.calls[i].output or {}
        row = None
        if t.kind == ToolKind.create:
            row = out
        else:
            for s in selections:
                if s.source == i:
                    row = s.row
            if row is None and isinstance(out, dict) and "items" not in out and t.kind != ToolKind.delete:
                row = out
        if row and row.get("first_name") and row.get("last_name"):
            persona_name, person_entity = f"{row['first_name']} {row['last_name']}", ent.name
            break
    if persona_name is None:
        from faker import Faker

        fk = Faker("en_US")
        fk.seed_instance(rng.randrange(1 << 30))
        persona_name = fk.name()

    # Parameter omission: hold back some facts; the user reveals them when asked.
    hidden: dict[str, Any] = {}
    for tool, facts in param_facts.items():
        if spec.tool(tool).kind != ToolKind.create:
            continue  # an update or action must say what it sets; only a new row's details may wait
        for k, _, v in facts:
            if len(known) - len(hidden) > 2 and rng.random() < hide_rate and len(hidden) < 2:
                hidden[k] = v
    for ename, facts in entity_facts.items():
        if len(facts) >= 3 and rng.random() < hide_rate and len(hidden) < 2:
            k = facts[-1][0]
            if k not in {s.fact_key for s in selections}:
                hidden[k] = known[k]
    if hidden:
        rules.append("parameter_omission")
    # A count no one would use to describe a row ('330 stops') is not said up front; the user
    # still knows it and gives it when asked.
    sel_keys = {s.fact_key for s in selections}
    for facts in entity_facts.values():
        for k, f, v in facts:
            if _implausible(f, v) and k not in sel_keys:
                hidden[k] = v
    for k in hidden:
        known.pop(k, None)

    # Which instance of an entity (facts 'flight.x' vs 'flight.x#2') a step is about.
    inst_of: dict[int, str] = {}
    counter: dict[str, int] = {}
    for i, st in enumerate(plan.steps):
        e = spec.tool(st.tool).entity
        if any(not is_ref(v) for v in st.args.values()) and spec.tool(st.tool).kind == ToolKind.list:
            counter[e] = counter.get(e, 0) + 1
        n = max(1, counter.get(e, 1))
        inst_of[i] = e if n == 1 else f"{e}#{n}"

    def efacts(ename: str) -> list[tuple[str, Any]]:
        return [(f, v) for k, f, v in entity_facts.get(ename, []) if k not in hidden]

    def ent_of(inst: str) -> str:
        return inst.split("#", 1)[0]

    # One phrase per goal step; set-up writes folded into the goal they serve.
    goal_steps = list(plan.goal_steps)
    phrases: list[tuple[str, list[int], list[str]]] = []
    answers: list[str] = []
    stated_values = {format_answer(v) for v in known.values()} | {str(v) for v in known.values()}
    used_setup: set[int] = set()
    described: set[str] = set()
    for g in goal_steps:
        st = plan.steps[g]
        t = spec.tool(st.tool)
        anc = _ancestors(plan, g)
        steps = sorted(set(anc) | {g})
        value_refs: dict[str, int] = {}
        if t.kind == ToolKind.update:
            kp = t.key_param.name if t.key_param else None
            value_refs = {p: st.args[p][REF][0] for p in st.args if p != kp and is_ref(st.args[p])}
        ctx_ents: list[str] = []
        for a in anc:
            e = inst_of[a]
            if a in value_refs.values():
                continue
            if ent_of(e) != t.entity and e not in ctx_ents and (efacts(e) or ent_of(e) in extra_phrase):
                ctx_ents.append(e)
        setup_bits = []
        for a in anc:
            at = spec.tool(plan.steps[a].tool)
            if plan.steps[a].role == "setup" and at.writes and a not in used_setup:
                used_setup.add(a)
                bit = _write_phrase(spec, at, plan.steps[a], param_facts, hidden, rng, new=True)
                if bit not in setup_bits:
                    setup_bits.append(bit)
                if inst_of[a] in ctx_ents:
                    ctx_ents.remove(inst_of[a])
        ctx = ""
        if ctx_ents:
            ctx = " for " + " of ".join(
                _describe(spec, ent_of(e), efacts(e) if e not in described else [], "the",
                          extra_phrase.get(ent_of(e), "") if e not in described else "")
                for e in ctx_ents[:3])
            described.update(ctx_ents[:3])
        own = efacts(inst_of[g]) if inst_of[g] not in described else []
        described.add(inst_of[g])
        reveals = [k for k in hidden if parse_fact_key(spec, k) and
                   (k.split(".", 1)[0] == st.tool or parse_fact_key(spec, k)[1] in
                    {spec.tool(plan.steps[a].tool).entity for a in steps})]
        out = gold.calls[g].output if g < len(gold.calls) else None
        new_refs = {}
        for p, src in value_refs.items():
            desc = _describe(spec, ent_of(inst_of[src]), efacts(inst_of[src]), "the",
                             extra_phrase.get(ent_of(inst_of[src]), ""))
            path = [x for x in st.args[p][REF][1:] if isinstance(x, str) and x != "items"]
            src_pk = spec.entity(ent_of(inst_of[src])).primary_key
            if path and path[-1] != src_pk:
                # The new value is a field of the row found ('the home airport of the airline'),
                # not the row itself.
                desc = f"the {field_label(spec, ent_of(inst_of[src]), path[-1])} of {desc}"
            new_refs[p] = desc
        phrase, ans = _goal_phrase(spec, t, st, own, extra_phrase.get(t.entity, ""), ctx, out, param_facts,
                                   hidden, stated_values, rng, new_refs)
        if setup_bits:
            rules.append("action_compression")
            phrase = _join(setup_bits) + " and " + phrase
        answers.extend(a for a in ans if a not in answers)
        same = next((ph for ph in phrases if ph[0] == phrase), None)
        if same is not None:
            # The same request twice (a merged plan that repeats a step): say it once.
            same[1][:] = sorted(set(same[1]) | set(steps))
            same[2].extend(r for r in reveals if r not in same[2])
            continue
        phrases.append((phrase, steps, reveals))
    if len(goal_steps) > 1:
        rules.append("goal_expansion")

    # Assemble.
    opener = rng.choice(_OPENERS[style]).format(name=persona_name)
    req = phrases[0][0]
    for p, _, _ in phrases[1:]:
        req += rng.choice(_JOIN) + p
    body = rng.choice(_ASK[style]).format(req=req)
    goal = _tidy(opener + body)
    subgoals = []
    for i, (p, steps, reveals) in enumerate(phrases):
        text = rng.choice(_ASK[style]).format(req=p)
        subgoals.append(SubGoal(text=_tidy((opener if i == 0 else "") + text), steps=steps, reveals=reveals))
    masked = []
    for i, st in enumerate(plan.steps):
        t = spec.tool(st.tool)
        if t.kind == ToolKind.list:
            masked.append(sorted(st.args))
        else:
            masked.append(sorted(a for a in st.args if a in ("limit", "offset", "sort_by", "order")))
    persona = Persona(name=persona_name, style=style, known_facts=known, hidden_facts=hidden)
    return Realization(persona, goal, subgoals, answers, masked, selections, sorted(set(rules)))


def _inst_key(entity: str, key: str) -> str:
    return entity + ("#" + key.split("#", 1)[1] if "#" in key else "")


def _tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = s.replace(" ,", ",").replace("..", ".").replace("?.", "?").replace(" .", ".")
    return s[:1].upper() + s[1:]


def _write_values(spec: EnvSpec, t: Any, st: Any, param_facts: dict, hidden: dict, *,
                  to: bool = False) -> list[str]:
    """This call's literal values as phrases ("3 guests", "email ann@x.org"); one per field.

    A value is said when it is a fact the user holds for this tool (keys ``tool.param`` or
    ``tool.param#n``, matched on the call's own value, so two calls of one tool never mix)
    and not held back. ``to``: phrase as a new value ("email to ann@x.org").
    """
    facts = param_facts.get(st.tool, [])
    kp = t.key_param.name if t.key_param else None
    bits = []
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
        ft = _ftype(spec, t.entity, f) or p.type
        if to:
            bits.append(f"{field_label(spec, t.entity, f)} to {format_value(ft, f, arg)}")
        else:
            bits.append(_value_phrase(spec, t.entity, f, arg, ft))
    return bits


def _verb(tool_name: str, rng: random.Random) -> str:
    parts = tool_name.split("_")
    if parts[:2] == ["check", "in"]:
        return "check in"
    if parts[:2] == ["check", "out"]:
        return "check out"
    return rng.choice(_VERBS.get(parts[0], [humanize(parts[0])]))


def _create_clause(t: Any, rng: random.Random) -> str:
    """'book a hotel reservation', 'make a payment': the new row is named, never its parent."""
    noun = humanize(t.entity)
    verb = rng.choice(_CREATE_VERBS.get(t.name.split("_")[0], _CREATE_VERBS["create"]))
    return f"{verb} {_article(noun)} {noun}"


def _write_phrase(spec: EnvSpec, t: Any, st: Any, param_facts: dict, hidden: dict, rng: random.Random,
                  new: bool = False) -> str:
    noun = humanize(t.entity)
    if t.kind == ToolKind.create:
        vals = _write_values(spec, t, st, param_facts, hidden)
        if is_person_entity(spec.entity(t.entity)):
            s = rng.choice(["register me as a new customer", "set me up as a new " + noun, "create a profile for me"])
        else:
            s = _create_clause(t, rng)
        return s + (" with " + _join(vals) if vals else "")
    if t.kind == ToolKind.update:
        vals = _write_values(spec, t, st, param_facts, hidden, to=True)
        return f"{rng.choice(['change', 'update', 'set'])} the {_join(vals)} on it" if vals else f"update the {noun}"
    vals = _write_values(spec, t, st, param_facts, hidden)
    return f"{_verb(t.name, rng)} it" + (" with " + _join(vals) if vals else "")


def _goal_phrase(spec: EnvSpec, t: Any, st: Any, own: list, extra: str, ctx: str, out: Any,
                 param_facts: dict, hidden: dict, stated: set[str], rng: random.Random,
                 new_refs: dict[str, str] | None = None) -> tuple[str, list[str]]:
    noun = humanize(t.entity)
    obj = _describe(spec, t.entity, own, "the", extra) + ctx
    answers: list[str] = []
    own_fields = {f for f, _ in own}
    if t.kind == ToolKind.get:
        fields = [fv for fv in _answer_fields(spec, t.entity, out or {}, stated, rng, exclude=own_fields)]
        answers = [format_answer(v) for _, v in fields]
        ask = _join([field_label(spec, t.entity, f) for f, _ in fields]) or "details"
        its = "their" if is_person_entity(spec.entity(t.entity)) else "its"
        return f"{rng.choice(_GET_VERBS)} {obj} and tell me {its} {ask}", answers
    if t.kind == ToolKind.list:
        items = (out or {}).get("items") or []
        plural = _plural(noun)
        base = _describe(spec, t.entity, own, "", extra).strip()
        base = base.replace(noun, plural, 1) if base.startswith(noun) or f" {noun}" in base else plural
        if items and len(items) <= 3 and not (out or {}).get("has_more"):
            disp = _list_answer_field(spec, t.entity, items, own_fields, stated)
            if disp:
                answers = [format_answer(it[disp]) for it in items]
                return (f"{rng.choice(_LIST_VERBS)} {base}{ctx} and tell me their "
                        f"{field_label(spec, t.entity, disp)}"), answers
            answers = [str(len(items))]
            return f"tell me how many {base}{ctx} there are", answers
        return f"{rng.choice(_LIST_VERBS)} {base}{ctx}", answers
    if t.kind == ToolKind.create:
        vals = _write_values(spec, t, st, param_facts, hidden)
        ent = spec.entity(t.entity)
        s = f"{_create_clause(t, rng)}{ctx}"
        if vals:
            s += ("," if ctx else "") + " with " + _join(vals)
        if isinstance(out, dict) and ent.primary_key in out and rng.random() < 0.5:
            answers = [format_answer(out[ent.primary_key])]
            s += f", and give me the new {noun}'s reference"
        return s, answers
    if t.kind == ToolKind.update:
        vals = _write_values(spec, t, st, param_facts, {}, to=True)
        for pname, desc in (new_refs or {}).items():
            p = t.param(pname)
            vals.append(f"{field_label(spec, t.entity, p.field or pname)} to {desc}")
        verb = rng.choice(["change", "update", "set"])
        if not vals:
            return f"{verb} {obj}", answers
        return f"{verb} the {_join(vals)} on {obj}", answers
    if t.kind == ToolKind.delete:
        return f"{rng.choice(_VERBS['delete'])} {obj}", answers
    vals = _write_values(spec, t, st, param_facts, hidden)
    return f"{_verb(t.name, rng)} {obj}" + (" with " + _join(vals) if vals else ""), answers


def refs_of(v: Any) -> bool:
    return isinstance(v, dict) and REF in v
