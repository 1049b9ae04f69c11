"""The English envfactory writes: plurals, articles, labels, counts, values and phrase tables.

One rule set for every stage (explorer tool names, task goals, assistant and user messages,
evaluation questions). Words live in ``envfactory/data/english.yaml``; this module holds the
rules that use them::

    plural("hotel reservation")           -> "hotel reservations"   (also snake_case: "flight_offers")
    article("user") + " user"             -> "a user"               ("an hour", "an order")
    humanize("flight_id")                 -> "flight"
    field_label("pickup_at", "datetime")  -> "pickup time"
    count_phrase("checked_bags", 1)       -> "1 checked bag"
    format_value("date", "check_in", "2026-06-19") -> "June 19, 2026"
    format_answer(12.0)                   -> "12"                   (the form an answer must contain)
    format_plain([1.0, "x"])              -> "1, x"                 (verbatim, for replies a checker reads)

Imports nothing from envfactory: every layer may use it. Field types are given as their
names ("date", "datetime", "enum", ...), which ``spec.FieldType`` members compare equal to.

(``inflect`` was measured and left out: importing it takes about 5 s here, as typeguard
instruments its functions at import.)
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = [
    "English",
    "english",
    "phrases",
    "paraphrases",
    "plural",
    "singular",
    "article",
    "humanize",
    "field_label",
    "count_forms",
    "count_phrase",
    "implausible_count",
    "join_phrases",
    "format_number",
    "format_answer",
    "format_plain",
    "format_date",
    "date_forms",
    "DATE_STYLES",
    "format_value",
]

DATA_FILE = "english.yaml"
PARAPHRASE_FILE = "paraphrases.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Nouns(_Strict):
    uncountable: frozenset[str]
    irregular: dict[str, str]
    singular_in_s: frozenset[str]


class _Articles(_Strict):
    a_before: tuple[str, ...]
    an_before: tuple[str, ...]


class _Fields(_Strict):
    reference_suffixes: tuple[str, ...]
    id_words: frozenset[str]
    labels: dict[str, str]
    compounds: dict[str, str]
    date_words: frozenset[str]
    time_words: frozenset[str]
    units: dict[str, str]
    money_words: tuple[str, ...]
    event_times: frozenset[str]
    state_fields: tuple[str, ...]
    kind_fields: frozenset[str]
    place_fields: tuple[str, ...]
    identifying: tuple[str, ...]
    null_words: frozenset[str]
    person_names: tuple[str, ...]
    person_contact: frozenset[str]
    person_word: str


class _Counts(_Strict):
    nouns: dict[str, float]
    aliases: dict[str, str]
    per: dict[str, str]
    measures: frozenset[str]
    participle_endings: tuple[str, ...]


class _Adjectives(_Strict):
    negations: dict[str, str]
    lowest: dict[str, str]
    highest: dict[str, str]
    standalone: frozenset[str]


class _Questions(_Strict):
    stop_words: frozenset[str]
    synonyms: dict[str, frozenset[str]]
    tool_verbs: frozenset[str]


class English(_Strict):
    """The contents of ``data/english.yaml``, validated (see the file for what each list means)."""

    nouns: _Nouns
    articles: _Articles
    months: tuple[str, ...]
    fields: _Fields
    counts: _Counts
    adjectives: _Adjectives
    phrases: dict[str, list[str] | dict[str, list[str]] | dict[str, str]]
    questions: _Questions


@cache
def english() -> English:
    """The word lists and phrase tables (read once)."""
    import yaml

    text = resources.files("envfactory").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    return English.model_validate(yaml.safe_load(text))


def phrases(name: str) -> Any:
    """A phrase table from the data file: a list of choices, or choices by style or kind."""
    return english().phrases[name]


@cache
def _paraphrase_tables() -> dict[str, Any]:
    import yaml

    text = resources.files("envfactory").joinpath("data", PARAPHRASE_FILE).read_text(encoding="utf-8")
    out = yaml.safe_load(text)
    return out if isinstance(out, dict) else {}


def paraphrases(name: str) -> Any:
    """A paraphrase table (``data/paraphrases.yaml``): many ways to say one part of a request."""
    return _paraphrase_tables()[name]


# ---- nouns ---------------------------------------------------------------------------------------


def _split_last(phrase: str) -> tuple[str, str]:
    """(everything up to and including the last separator, the last word); words are split on
    spaces and underscores, so snake_case names and phrases both work."""
    i = max(phrase.rfind(" "), phrase.rfind("_"))
    return phrase[: i + 1], phrase[i + 1 :]


@lru_cache(maxsize=4096)
def _plural_word(w: str) -> str:
    n = english().nouns
    low = w.lower()
    if not low or low in n.uncountable:
        return w
    if low in n.irregular:
        return n.irregular[low]
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return w[:-1] + "ies"
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w + "s"


def plural(phrase: str) -> str:
    """The plural of a noun phrase (its last word): "hotel reservation" -> "hotel reservations",
    "flight_offer" -> "flight_offers", "category" -> "categories", "person" -> "people"."""
    head, word = _split_last(phrase)
    return head + _plural_word(word)


@cache
def _singulars() -> dict[str, str]:
    return {p: s for s, p in english().nouns.irregular.items()}


@lru_cache(maxsize=4096)
def _singular_word(w: str) -> str:
    n = english().nouns
    if w in n.uncountable or w in n.singular_in_s or len(w) <= 3:
        return w
    if w in _singulars():
        return _singulars()[w]
    if w.endswith("es") and w[:-2] in n.singular_in_s:
        return w[:-2]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return w[:-2]
    if w.endswith(("ss", "us", "is", "os")):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def singular(phrase: str) -> str:
    """The singular of a noun phrase (its last word; lower-case words): "checked bags" ->
    "checked bag", "statuses" -> "status", "people" -> "person"."""
    head, word = _split_last(phrase)
    return head + _singular_word(word)


def article(phrase: str) -> str:
    """ "a" or "an" for a phrase, by how its first word sounds: "an order", "a user", "an hour"."""
    w = phrase.strip().lower()
    a = english().articles
    if w.startswith(a.an_before):
        return "an"
    if w.startswith(a.a_before):
        return "a"
    return "an" if w[:1] in ("a", "e", "i", "o", "u") else "a"


# ---- field names ---------------------------------------------------------------------------------


def humanize(name: str) -> str:
    """``flight_id`` -> "flight", ``price_per_night`` -> "price per night"."""
    s = str(name)
    for suf in english().fields.reference_suffixes:
        if s.endswith(suf) and len(s) > len(suf):
            s = s[: -len(suf)]
    return s.replace("_", " ").strip()


def _compound(s: str) -> str:
    for a, b in english().fields.compounds.items():
        s = re.sub(rf"\b{a}\b", b, s)
    return s


@lru_cache(maxsize=8192)
def field_label(name: str, kind: str | None = None) -> str:
    """A field as a person names it, given its type's name: ``pickup_at`` -> "pickup time",
    ``check_in`` (date) -> "check-in date", ``duration_minutes`` -> "duration in minutes",
    ``loyalty_airline_id`` -> "loyalty airline"."""
    f = english().fields
    if name in f.labels:
        return f.labels[name]
    words = humanize(name).split()
    if name.startswith("is_") and len(words) > 1:
        words = words[1:]
    if len(words) > 1 and words[-1] in ("at", "on"):
        timed = kind == "datetime" or (kind is None and words[-1] == "at")
        words = words[:-1] + (["time"] if timed else ["date"])
    elif kind == "date" and words[-1] not in f.date_words:
        words.append("date")
    elif kind == "datetime" and words[-1] not in f.time_words:
        words.append("time")
    if len(words) > 1 and words[-1] in f.units:
        words = words[:-1] + ["in", f.units[words[-1]]]
    return _compound(" ".join(words))


@lru_cache(maxsize=8192)
def count_forms(name: str) -> tuple[str, str, float] | None:
    """(singular phrase, plural phrase, most a person would mention) when ``name`` names a count
    of things (``checked_bags`` -> ("checked bag", "checked bags", 6)); None otherwise.

    Rules: the count noun is the name's last word, in the plural (``stops``), or an alias
    (``quantity`` -> units); a ``per_X`` ending is said "a X" (``sessions_per_week``); trailing
    participles are dropped (``refills_authorized``); a measure noun after the count makes a
    possessive (``days_supply`` -> "days' supply").
    """
    c = english().counts
    words = [w for w in name.lower().split("_") if w]
    if len(words) == 1 and words[0] in c.aliases:
        noun = c.aliases[words[0]]
        return noun, plural(noun), c.nouns[noun]
    tail: list[str] = []
    if len(words) >= 3 and words[-2] in c.per:
        tail = [c.per[words[-2]], words[-1]]
        words = words[:-2]
    while len(words) > 1 and words[-1].endswith(c.participle_endings):
        words = words[:-1]
    measure = None
    if len(words) > 1 and words[-1] in c.measures:
        measure, words = words[-1], words[:-1]
    if not words:
        return None
    head = words[-1]
    one = _singular_word(head)
    if one == head or one not in c.nouns:
        return None
    mods = words[:-1]

    def say(noun: str, many: bool) -> str:
        if measure is not None:
            noun = (noun + "'" if many else noun + "'s") + " " + measure
        return _compound(" ".join(mods + [noun] + tail))

    return say(one, False), say(head, True), c.nouns[one]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def count_phrase(name: str, v: Any) -> str | None:
    """ "3 stops", "1 checked bag", "no nights" for count fields; None when ``name`` is not one."""
    forms = count_forms(name)
    if forms is None or not _is_number(v):
        return None
    if v == 0:
        return f"no {forms[1]}"
    return f"{format_number(v)} {forms[0] if v == 1 else forms[1]}"


def implausible_count(name: str, v: Any) -> bool:
    """A count no person would use to describe a row ("330 stops")."""
    forms = count_forms(name)
    return forms is not None and _is_number(v) and (v < 0 or v > forms[2])


# ---- values --------------------------------------------------------------------------------------


def join_phrases(parts: list[str], conj: str = "and") -> str:
    """ "a, b and c"; a phrase given twice is said once (a repeated clause reads as a mistake)."""
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:
            seen.append(p)
    if len(seen) <= 1:
        return "".join(seen)
    return ", ".join(seen[:-1]) + f" {conj} " + seen[-1]


def format_number(v: Any) -> str:
    """12.0 -> "12", 3.456 -> "3.46", 7 -> "7"."""
    if isinstance(v, float):
        return str(int(v)) if v == int(v) else f"{v:.2f}".rstrip("0").rstrip(".")
    return str(v)


def format_answer(v: Any) -> str:
    """The form of a value an answer must contain (yes/no, numbers as ``format_number``)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return format_number(v)
    return str(v)


def format_plain(v: Any) -> str:
    """A value said verbatim (strings as they are, so a checker can find them): yes/no, lists
    joined by commas, mappings as "label value" pairs, 12.0 as "12"."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(format_plain(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{str(k).replace('_', ' ')} {format_plain(x)}" for k, x in v.items())
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?")


# How people write one date ("June 3, 2026 at 17:15" is the first): day first, an ordinal day, the
# time first, a 12-hour clock. ``date_forms`` lists every one, so a checker finds a value in any.
DATE_STYLES = ("mdy", "dmy", "ordinal", "time_first", "clock12", "comma")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def format_date(
    v: str, *, with_time: bool = False, this_year: int | None = None, style: str = "mdy"
) -> str | None:
    """ "2026-06-03T17:15:00" -> "June 3, 2026 at 17:15" (time only ``with_time`` and not midnight;
    the year left out when it is ``this_year``, as people say dates of the current year); None when
    ``v`` does not start with an ISO date. ``style`` (one of ``DATE_STYLES``): "3 June 2026 at 17:15",
    "June 3rd, 2026 at 17:15", "17:15 on June 3, 2026", "June 3, 2026 at 5:15 pm", "June 3, 2026, 17:15"."""
    m = _ISO.match(v)
    if not m:
        return None
    y, mo, d, hh, mm = m.groups()
    month, day = english().months[int(mo) - 1], int(d)
    year = this_year is None or int(y) != this_year
    if style == "dmy":
        s = f"{day} {month}" + (f" {y}" if year else "")
    else:
        s = f"{month} {_ordinal(day) if style == 'ordinal' else day}" + (f", {y}" if year else "")
    if not (with_time and hh is not None and (hh, mm) != ("00", "00")):
        return s
    if style == "time_first":
        return f"{hh}:{mm} on {s}"
    if style == "clock12":
        h = int(hh) % 12 or 12
        return f"{s} at {h}:{mm} {'am' if int(hh) < 12 else 'pm'}"
    if style == "comma":
        return f"{s}, {hh}:{mm}"
    return f"{s} at {hh}:{mm}"


@lru_cache(maxsize=16384)
def date_forms(v: str) -> frozenset[str]:
    """Every way ``format_date`` writes an ISO date or time: each style, with and without its year
    and its time (empty when ``v`` is not one)."""
    m = _ISO.match(v)
    if not m:
        return frozenset()
    own = int(m.group(1))
    out = set()
    for style in DATE_STYLES:
        for year in (None, own):
            for timed in (False, True):
                said = format_date(v, with_time=timed, this_year=year, style=style)
                if said is not None:
                    out.add(said)
    return frozenset(out)


_ISO_WHEN = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?$")


def format_value(
    kind: str | None, name: str, v: Any, this_year: int | None = None, date_style: str = "mdy"
) -> str:
    """A field's value as a person says it: dates spelled out (without ``this_year``, in
    ``date_style``), money with a $, enum values in words. ``kind``: the field type's name; ``name``:
    the field name (money is recognised by it)."""
    if v is None or (isinstance(v, list) and not v):
        return "none"
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return join_phrases([format_value(None, name, x) for x in v])
    if isinstance(v, bool):
        return "yes" if v else "no"
    if kind in ("date", "datetime") and isinstance(v, str):
        said = format_date(v, with_time=kind == "datetime", this_year=this_year, style=date_style)
        if said is not None:
            return said
    if kind in (None, "string") and isinstance(v, str) and _ISO_WHEN.match(v):
        # a time the document types as a plain string ('2026-04-17T05:06:00') is still said as one
        said = format_date(v, with_time="T" in v or " " in v, this_year=this_year, style=date_style)
        if said is not None:
            return said
    if isinstance(v, (int, float)):
        money = any(w in name for w in english().fields.money_words)
        return f"${format_number(v)}" if money else format_number(v)
    if kind == "enum" or (isinstance(v, str) and "_" in v and " " not in v and v.islower()):
        return v.replace("_", " ")
    return str(v)
