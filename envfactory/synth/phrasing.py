"""Rows and facts of an environment in a person's words, with the spec at hand.

``envfactory.text`` knows English; this module knows which field is a date, an id, a person's
name or a count in a given ``EnvSpec`` and says rows accordingly: "the confirmed hotel
reservation in Paris with check-in date July 8, 2026 and 2 guests".
"""

from __future__ import annotations

import random
import re
from typing import Any

from ..spec import EnvSpec, FieldRole, FieldType
from ..text import (
    count_forms,
    count_phrase,
    english,
    field_label,
    format_value,
    humanize,
    implausible_count,
    join_phrases,
    paraphrases,
)

__all__ = [
    "person_name",
    "ftype",
    "label",
    "id_like",
    "usable",
    "is_person_entity",
    "parse_fact_key",
    "value_phrase",
    "fact_phrase",
    "describe",
    "superlative",
    "say_value",
    "clock_year",
    "quoted",
    "misfit_value",
    "spoken_label",
    "doc_noun",
    "sayable_noun",
    "event_verb",
    "event_phrase",
    "own_name",
]


def ftype(spec: EnvSpec, entity: str, fname: str) -> FieldType | None:
    try:
        return spec.entity(entity).field(fname).type
    except KeyError:
        return None


def label(spec: EnvSpec | None, entity: str, fname: str) -> str:
    """``field_label`` with the field's type read from the spec (when there is one)."""
    ft = ftype(spec, entity, fname) if spec is not None else None
    return field_label(fname, ft.value if ft is not None else None)


_DOC_LABEL = re.compile(r"[A-Za-z][A-Za-z'-]*( [A-Za-z][A-Za-z'-]*){0,4}")
_DOC_STOP = {
    "is",
    "are",
    "be",
    "may",
    "must",
    "should",
    "will",
    "set",
    "this",
    "that",
    "whether",
    "if",
    "when",
}


def _doc_label(spec: EnvSpec, entity: str, fname: str, lab: str) -> str | None:
    """The field's own documented description when it is a short noun phrase that names the same
    thing as the label ('Operating airline.' for airline, 'Loyalty programme tier.' for loyalty tier)."""
    try:
        d = (spec.entity(entity).field(fname).description or "").strip().rstrip(".")
    except KeyError:
        return None
    if not _DOC_LABEL.fullmatch(d):
        return None
    words = d.lower().split()
    if set(words) & _DOC_STOP or words[0] in ("a", "an", "the", "unique", "id"):
        return None
    stems = {w.rstrip("s") for w in lab.lower().split()}
    return d.lower() if {w.rstrip("s") for w in words} & stems else None


def spoken_label(spec: EnvSpec | None, entity: str, fname: str, rng: random.Random | None = None) -> str:
    """The field's label, or with ``rng`` one of the ways a person also says it: its last word as
    people say it ('postal code', 'date of birth'), or the documentation's own short description."""
    lab = label(spec, entity, fname)
    if rng is None or not lab or (spec is not None and id_like(spec, entity, fname)):
        return lab
    head, _, last = lab.rpartition(" ")
    forms = [lab] + [f"{head} {w}".strip() for w in paraphrases("label_words").get(last, [])[1:]]
    doc = _doc_label(spec, entity, fname, lab) if spec is not None else None
    if doc and doc != lab:
        forms.append(doc)
    return rng.choice(forms)


_NOUN_OPEN = re.compile(r"^(this represents|represents|describes|definition of)\s+", re.I)
_NOUN_END = {"of", "for", "with", "to", "by", "that", "which", "who", "in", "on", "from", "and", "is", "are"}


def doc_noun(spec: EnvSpec, entity: str) -> str | None:
    """The noun phrase the documentation opens an entity's description with, when it says more than
    the entity's name ('authoritative DNS zone' for zone, 'scheduled flight' for flight); None for
    boilerplate ('A zone of the X API.') or a phrase that names something else."""
    try:
        d = spec.entity(entity).description or ""
    except KeyError:
        return None
    words: list[str] = []
    for w in _NOUN_OPEN.sub("", d.strip()).split():
        bare = w.strip(",.;:()")
        if bare.lower() in _NOUN_END or not re.fullmatch(r"[A-Za-z][A-Za-z-]*", bare):
            break
        words.append(bare)
        if bare != w:
            break
    if words and words[0].lower() in ("a", "an", "the"):
        words = words[1:]
    noun = humanize(entity).lower().split()
    low = [w.lower() for w in words]
    if not (2 <= len(low) <= 4) or low == noun or low[0] in ("unique", "single", "one"):
        return None
    if low[-1].rstrip("s") != noun[-1].rstrip("s") and not noun[-1].endswith(low[-1]):
        return None  # names something else ('key' does name a cryptokey)
    return " ".join(w if w.isupper() else w.lower() for w in words)


def say_value(
    ft: FieldType | None, fname: str, v: Any, this_year: int | None = None, rng: random.Random | None = None
) -> str:
    """``format_value`` for a field of type ``ft`` (a date of ``this_year`` said without it); with
    ``rng``, a date is written in one of the ways people write dates ("3 June", "June 3rd", a
    12-hour clock), all of which a checker reads (``text.date_forms``)."""
    style = "mdy"
    if rng is not None and isinstance(v, str) and _ISO_START.match(v):
        style = rng.choice(paraphrases("date_styles"))
    return format_value(ft.value if ft is not None else None, fname, v, this_year, style)


_ISO_START = re.compile(r"\d{4}-\d{2}-\d{2}")


def clock_year(spec: EnvSpec | None) -> int | None:
    """The year of the environment's clock: the year a person leaves out of a date."""
    try:
        return int(spec.clock[:4]) if spec is not None else None
    except (TypeError, ValueError):
        return None


def id_like(spec: EnvSpec, entity: str, fname: str) -> bool:
    """Whether a field holds an identifier a person would not know (keys, references, *_id)."""
    try:
        ent = spec.entity(entity)
        f = ent.field(fname)
    except KeyError:
        return fname.endswith("_id") or fname in english().fields.id_words
    return fname == ent.primary_key or f.ref is not None or fname.endswith("_id")


def usable(v: Any) -> bool:
    # Seed artefacts such as an unexpanded '{{city}} International' are not something a person says.
    return not (isinstance(v, str) and ("{{" in v or "}}" in v))


_DATE_NAME = re.compile(
    r"(^|_)(created|updated|modified|deleted|completed|date|time|timestamp)(_|$)|_(at|on)$"
)
_ID_TEXT = re.compile(r"\b(id|ids|identifier|identifiers|uuid|reference)\b", re.I)
_PHRASE = re.compile(r"[A-Za-z][A-Za-z'-]*( [A-Za-z][A-Za-z'-]*)+")


def misfit_value(spec: EnvSpec, entity: str, fname: str, v: Any) -> bool:
    """A seeded value no one would say for this field: a field with no role whose name or
    documentation says it holds a date or an identifier ('created', 'parent': "Parent task
    identifier."), holding a phrase of plain words instead ('Synergized empowering open
    architecture', the seeder's filler for a field it could not place)."""
    if not isinstance(v, str) or not _PHRASE.fullmatch(v.strip()):
        return False
    try:
        f = spec.entity(entity).field(fname)
    except KeyError:
        return False
    if f.role is not None:
        return False
    return bool(
        _DATE_NAME.search(fname)
        or _ID_TEXT.search(fname.replace("_", " "))
        or _ID_TEXT.search(f.description or "")
    )


def sayable_noun(entity: str) -> bool:
    """Whether a person can name rows of this entity: not a one- or two-letter stub ('x', from a
    path segment the explorer could not name)."""
    return len(re.sub(r"[^a-z]", "", humanize(entity).lower())) >= 3


def is_person_entity(ent: Any) -> bool:
    f = english().fields
    names = {x.name for x in ent.fields}
    return set(f.person_names) <= names or (f.person_contact <= names and f.person_word in ent.name)


def person_name(row: dict[str, Any]) -> str | None:
    """A person's full name from a row that has every name field filled, else None."""
    parts = [row.get(f) for f in english().fields.person_names]
    return " ".join(str(p) for p in parts) if all(parts) else None


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


def value_phrase(
    spec: EnvSpec,
    entity: str,
    fname: str,
    v: Any,
    ft: FieldType | None = None,
    rng: random.Random | None = None,
) -> str:
    """One field and its value as a person says it: "3 stops", "card method", "pickup time June 3, 2026
    at 10:00"; with ``rng``, in one of several orders ("June 3, 2026 as the pickup time")."""
    f = english().fields
    ft = ft or ftype(spec, entity, fname)
    val = quoted(spec, entity, fname, say_value(ft, fname, v, clock_year(spec), rng))
    lab = spoken_label(spec, entity, fname, rng)
    count = count_phrase(fname, v)
    if count is not None:
        return count
    if ft == FieldType.enum or (isinstance(v, str) and lab and fname in f.kind_fields):
        if fname in f.state_fields:
            return rng.choice(paraphrases("status_forms")).format(val=val) if rng else f"status {val}"
        if lab and lab.split()[-1] in val.split():
            return val  # 'star alliance', not 'star alliance alliance'
        if val in f.null_words:
            return f"no {lab}"
        return f"{val} {lab}"
    verb = event_verb(fname, ft)
    if verb is not None and (rng is not None or fname in f.event_times):
        return event_phrase(verb, val, rng)
    if rng is not None and lab.endswith(" name") and _role(spec, entity, fname) == FieldRole.person_name:
        if rng.random() < 0.6:
            return f"{lab[: -len(' name')]} {val}"  # 'patient Ann Lee', not always 'patient name Ann Lee'
    if rng is not None and lab:
        return rng.choice(paraphrases("value_forms")).format(lab=lab, val=val)
    return f"{lab} {val}"


_PAST = frozenset({"paid", "sent", "made", "built", "held", "won", "lost"})
_STAMP_TAIL = frozenset({"at", "on", "date", "time", "timestamp"})


def event_verb(fname: str, ft: FieldType | None) -> str | None:
    """The past participle a date field is named for ('created' for ``created_at`` and
    ``creation_date``, 'paid' for ``paid_at``): a person says "paid on June 3", not "paid time June 3".
    None for other fields (a due date, a start time, a multi-word name)."""
    if ft not in (FieldType.date, FieldType.datetime):
        return None
    words = fname.lower().split("_")
    while len(words) > 1 and words[-1] in _STAMP_TAIL:
        words = words[:-1]
    if len(words) != 1:
        return None
    w = "created" if words[0] == "creation" else words[0]
    return w if (w.endswith("ed") and len(w) > 3) or w in _PAST else None


def event_phrase(verb: str, val: str, rng: random.Random | None = None) -> str:
    """'created on June 3', 'made at 17:05 on June 3', 'from June 3, 2025' (``val``: the date said)."""
    forms = paraphrases("event_forms")
    table = forms.get(verb, forms["*"])
    form = rng.choice(table) if rng is not None else table[0]
    on = "at" if val[:1].isdigit() else "on"  # 'at 17:05 on June 3', 'on 3 June'
    return form.format(verb=verb, on=on, val=val)


def _role(spec: EnvSpec, entity: str, fname: str) -> FieldRole | None:
    try:
        ent = spec.entity(entity)
        return ent.role_of(ent.field(fname))
    except KeyError:
        return None


def quoted(spec: EnvSpec, entity: str, fname: str, val: str) -> str:
    """A note or a reason in quotes, without its full stop ('with the note "Call first"'): a
    sentence inside a sentence."""
    try:
        ent = spec.entity(entity)
        role = ent.role_of(ent.field(fname))
    except KeyError:
        return val
    return f'"{val.rstrip(".")}"' if role == FieldRole.sentence and " " in val else val


def fact_phrase(spec: EnvSpec, entity: str, fname: str, v: Any, rng: random.Random | None = None) -> str:
    if id_like(spec, entity, fname):
        return f"reference {say_value(ftype(spec, entity, fname), fname, v)}"
    return value_phrase(spec, entity, fname, v, rng=rng)


def _bool_adj(spec: EnvSpec, entity: str, fname: str, v: Any) -> str:
    lab = label(spec, entity, fname)
    if v:
        return lab.replace(" ", "-")
    negations = english().adjectives.negations
    if lab in negations:
        return negations[lab]
    if " " not in lab and lab.endswith("ed"):
        return "un" + lab  # 'unshared', 'unstarred'
    return "not " + lab.replace(" ", "-")


def describe(
    spec: EnvSpec,
    entity: str,
    facts: list[tuple[str, Any]],
    article: str = "the",
    phrase: str = "",
    rng: random.Random | None = None,
    doc_words: bool = False,
) -> str:
    """'the confirmed available room in Paris with seat 12A' from an entity's facts. With ``rng``, the
    facts come in a seeded order after one of many connectors ('with', 'listed with', 'that has');
    with ``doc_words`` too, the row is sometimes named as the documentation names it ('the
    authoritative DNS zone')."""
    fields = english().fields
    places = fields.place_fields
    noun = humanize(entity)
    alt = doc_noun(spec, entity) if doc_words and rng is not None else None
    doc_named = bool(alt) and rng is not None and rng.random() < 0.5
    adjs: list[str] = []
    named = ""  # a row's own name, said right after its noun ('the course Biology 101')
    post: list[str] = []  # at most one yes/no field said after the noun ('that isn't raw')
    when = ""  # a date the row is named for, said after the noun ('the order made on June 3')
    place: list[tuple[int, str]] = []
    rest: list[str] = []
    seen_fields: set[str] = set()
    for f, v in facts:
        if f in seen_fields or implausible_count(f, v):
            continue  # one value per field; '330 stops' is not how anyone describes a flight
        seen_fields.add(f)
        ft = ftype(spec, entity, f)
        if f in fields.state_fields and ft == FieldType.enum and not adjs:
            adjs.append(say_value(ft, f, v, clock_year(spec)))
        elif ft == FieldType.boolean or isinstance(v, bool):
            form = rng.choice(paraphrases("bool_yes" if v else "bool_no")) if rng is not None else "pre:"
            if form.startswith("pre:") or post:
                adjs.append(_bool_adj(spec, entity, f, v))
            else:
                post.append(form.format(lab=label(spec, entity, f)))
        elif f in places:
            place.append((places.index(f), say_value(ft, f, v, clock_year(spec))))
        elif rng is not None and not when and (verb := event_verb(f, ft)) is not None:
            when = " " + event_phrase(verb, say_value(ft, f, v, clock_year(spec), rng), rng)
        elif rng is not None and not named and own_name(spec, entity, f) and rng.random() < 0.7:
            named = rng.choice(paraphrases("named")).format(val=say_value(ft, f, v))
        elif (
            rng is not None
            and not named
            and isinstance(v, str)
            and _SELF_EVIDENT.match(v)
            and rng.random() < 0.8
        ):
            named = f" {v}"  # an email, a web address or a domain says what it is: 'the app clark.org'
        elif rng is not None and isinstance(v, str) and _SELF_EVIDENT.match(v) and rng.random() < 0.5:
            rest.append(say_value(ft, f, v))
        else:
            rest.append(fact_phrase(spec, entity, f, v, rng))
    if rng is not None and article == "the" and not is_person_entity(spec.entity(entity)):
        article = rng.choice(paraphrases("articles"))
    if doc_named and alt and not set(" ".join(adjs).lower().split()) & set(alt.lower().split()):
        noun = alt  # not 'the scheduled scheduled flight'
    s = f"{article} {' '.join(adjs) + ' ' if adjs else ''}{noun}{named}"
    if place:
        s += " in " + ", ".join(p for _, p in sorted(place))
    s += when + "".join(post)
    if rest:
        if rng is not None:
            rng.shuffle(rest)
        joint = rng.choice(paraphrases("with")) if rng is not None else " with "
        if joint.strip() in ("(", "--"):  # details in brackets: a list, not a clause
            close = ")" if joint.strip() == "(" else " --"
            s += joint + ", ".join(x.replace(": ", " ") for x in rest) + close
        else:
            s += joint + join_phrases(rest)
    if phrase:
        s += f" ({phrase})"
    return s.strip()


def own_name(spec: EnvSpec, entity: str, fname: str) -> bool:
    """Whether ``fname`` is what a row of ``entity`` is called (its display field, a title or an
    organisation's name), so a person says it as a name rather than as 'name X'."""
    try:
        ent = spec.entity(entity)
        f = ent.field(fname)
    except KeyError:
        return False
    role = ent.role_of(f)
    return fname == ent.display_field or (
        role in (FieldRole.title, FieldRole.organisation)
        and fname.split("_")[-1] in ("name", "title", "summary")
    )


_SELF_EVIDENT = re.compile(r"^(https?://\S+|[\w.+-]+@[\w-]+(\.[\w-]+)+|([a-z0-9-]+\.)+[a-z]{2,})$")


def superlative(fname: str, low: bool, spec: EnvSpec | None = None, entity: str = "") -> str:
    """How a person singles out the row with the lowest (``low``) or highest value of a field:
    "the cheapest one", "the one with the earliest departure time", "the one with the fewest stops"."""
    adjectives = english().adjectives
    table = adjectives.lowest if low else adjectives.highest
    lab = label(spec, entity, fname)
    counted = count_forms(fname)
    if counted is not None:
        return f"the one with the {'fewest' if low else 'most'} {counted[1]}"
    for w in reversed(fname.split("_")):
        if w in table:
            adj = table[w]
            if w in adjectives.standalone:
                return f"the {adj} one"
            return f"the one with the {adj} {lab}"
    return f"the one with the {'lowest' if low else 'highest'} {lab}"
