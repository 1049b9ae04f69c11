"""What a person can say about a row: the fields a request names a row by, and the values a person
states when they create or change one.

A task's words must hold their meaning. A person names their booking by its date, its status or the
traveller's email, never by a field that holds seeded filler (a field the seeder could not place gets
a catch-phrase such as 'Team-oriented needs-based open system'), a long description, a technical
link to the record itself, an object or an internal id. The same judgement, read off a field's role
and type, gates every stage that puts words in a person's mouth: the plan sampler's filters, the
values a goal sets, the facts that single out a row, and the facts an answer reports.

- ``names_row``: a request may name a row by this field ("the order placed on June 3", "my silver
  tier account", "the Paris hotel").
- ``states_value``: a person would state this field's value when creating or changing a row, or ask
  for it in an answer ("with a note saying ...", "set the price to $12", "tell me its phone number").
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from .entities import EntitySpec, FieldSpec, FieldType
from .role_vocab import FieldRole
from .seed_defaults import default_generator

if TYPE_CHECKING:
    from .model import EnvSpec, GeneratorSpec  # noqa: F401 (GeneratorSpec: annotations)

__all__ = [
    "names_row",
    "tells_row",
    "states_value",
    "is_stamp",
    "is_filler",
    "identifiable",
    "account_roots",
    "account_key",
    "account_key_args",
]

# Roles whose values a person knows and says to name a row.
_NAMING = frozenset(
    {
        FieldRole.person_name,
        FieldRole.given_name,
        FieldRole.family_name,
        FieldRole.username,
        FieldRole.organisation,
        FieldRole.title,
        FieldRole.label,
        FieldRole.city,
        FieldRole.country,
        FieldRole.country_code,
        FieldRole.airport_code,
        FieldRole.address,
        FieldRole.postcode,
        FieldRole.region,
        FieldRole.email,
        FieldRole.hostname,
        FieldRole.phone,
        FieldRole.money,
        FieldRole.currency,
        FieldRole.quantity,
        FieldRole.percentage,
        FieldRole.rating,
        FieldRole.duration,
        FieldRole.date,
        FieldRole.datetime,
        FieldRole.time,
        FieldRole.birth_date,
        FieldRole.status,
        FieldRole.code,
        FieldRole.reference,
    }
)
# ... and what a person states as a value without naming a row by it (a note's text, a count).
_STATING = _NAMING | {FieldRole.sentence, FieldRole.url}  # a paragraph is too long to say
# A web address a person knows as theirs (a shop's website), not a link to the record itself.
_SITE = re.compile(r"(^|_)(website|homepage|home_page|site|web_site|blog|domain)(_url)?$")
# Bookkeeping a service writes itself: no one asks for 'the list updated at 14:05' or sets it.
_STAMP = re.compile(
    r"^(updated|modified|deleted|synced|sync|indexed|etag|revision|version|row_version|touched|"
    r"last_(access|accessed|seen|login|modified|update|updated|sync|synced|used|activity|active))"
    r"(_(at|on|time|date|timestamp|token|by))?$|_(updated|modified|synced)(_(at|on|time))?$"
    r"|(^|_)(modified|updated)_time(_millis|_nanos|_ns|_ms)?$"
)
# Request controls and paging that leaked into a row: no person describes a row by them.
_CONTROL = re.compile(
    r"^(raw|all|refresh|view|show_[a-z_]+|include_[a-z_]+|fetch_[a-z_]+|expand|fields|filter|sort|"
    r"order_by|limit|offset|page|max_results|status_code|http_status|self|self_link|self_url|href|links|"
    r"kind|etag)$|(^|_)token$"
)


def is_stamp(fname: str) -> bool:
    """A field the service maintains itself (updated_at, etag, last_access_at)."""
    return bool(_STAMP.search(fname.lower()))


def _generator(spec: EnvSpec, entity: EntitySpec, f: FieldSpec) -> GeneratorSpec:
    seeded = spec.seed.entities.get(entity.name)
    if seeded is not None and f.name in seeded.fields:
        return seeded.fields[f.name]
    return default_generator(entity, f, dt.datetime.fromisoformat(spec.clock))


def is_filler(spec: EnvSpec, entity: EntitySpec, f: FieldSpec) -> bool:
    """Whether the seeder fills this field with catch-phrases ('Synergized empowering open
    architecture'): its fallback for a string it could not place. Nothing a person knows."""
    return _filler_gen(_generator(spec, entity, f))


def _filler_gen(g: GeneratorSpec) -> bool:
    while g.kind == "null_or" and g.inner is not None:
        g = g.inner
    return g.kind == "faker" and g.provider == "catch_phrase"


# Roles whose values tell one row from the next (a name, an email, a date), not a few shared words
_TELLING = _NAMING - {
    FieldRole.label,
    FieldRole.status,
    FieldRole.currency,
    FieldRole.country,
    FieldRole.country_code,
    FieldRole.rating,
    FieldRole.quantity,
    FieldRole.percentage,
    FieldRole.duration,
    FieldRole.time,
}


def identifiable(entity: EntitySpec, generators: dict[str, GeneratorSpec], clock: dt.datetime) -> bool:
    """Whether a person could tell this entity's rows apart by what they know: some field a request
    names a row by holds values that differ from row to row (a name, an email, a domain, a date),
    with ``generators`` the seed recipe's explicit ones. A server known only by its links and type
    is not: a person has one."""
    for f in entity.fields:
        g = generators.get(f.name) or default_generator(entity, f, clock)
        if _filler_gen(g) or not _names(entity, f):
            continue
        if entity.role_of(f) in _TELLING:
            return True
    return False


def _cached(spec: EnvSpec, entity: EntitySpec) -> tuple[frozenset[str], frozenset[str]]:
    """(fields that name a row, fields whose values a person states), computed once per entity.
    Kept in ``__dict__`` beside the model's fields (as ``EntitySpec`` caches its field index)."""
    hit = entity.__dict__.get("_sayable")
    if hit is not None and hit[0] is entity.fields and hit[1] == len(entity.fields):
        return hit[2], hit[3]
    naming, stating = set(), set()
    for f in entity.fields:
        if is_filler(spec, entity, f):
            continue
        if _names(entity, f):
            naming.add(f.name)
        if _states(entity, f):
            stating.add(f.name)
    out = (frozenset(naming), frozenset(stating))
    object.__setattr__(entity, "_sayable", (entity.fields, len(entity.fields), *out))
    return out


def _identifier(entity: EntitySpec, f: FieldSpec) -> bool:
    return f.name == entity.primary_key or f.ref is not None or entity.role_of(f) == FieldRole.internal_id


def _names(entity: EntitySpec, f: FieldSpec) -> bool:
    if _identifier(entity, f) or f.type in (FieldType.object, FieldType.array):
        return False
    name = f.name.lower()
    if _CONTROL.search(name) or is_stamp(name):
        return False
    role = entity.role_of(f)
    if role == FieldRole.url:
        return bool(_SITE.search(name))
    if role is not None:
        return role in _NAMING
    # no role: a documented value list, a documented shape ('12A') or a yes/no flag is said as it
    # is; a bare number names nothing a person knows
    return f.type in (FieldType.enum, FieldType.boolean, FieldType.string) or bool(f.enum)


def _states(entity: EntitySpec, f: FieldSpec) -> bool:
    if _identifier(entity, f) or f.type in (FieldType.object, FieldType.array):
        return False
    name = f.name.lower()
    if _CONTROL.search(name) or is_stamp(name):
        return False
    role = entity.role_of(f)
    if role is not None:
        return role in _STATING
    return f.type != FieldType.datetime or bool(f.enum)


def names_row(spec: EnvSpec, entity: str, fname: str) -> bool:
    """Whether a request may name a row of ``entity`` by field ``fname`` (see the module docstring)."""
    return fname in _cached(spec, spec.entity(entity))[0]


def tells_row(spec: EnvSpec, entity: str, fname: str) -> bool:
    """Whether field ``fname`` names a row and tells it from the next by its role (a name, a title,
    an email, a date): what a person creating a row says first ('a task called ...')."""
    ent = spec.entity(entity)
    return names_row(spec, entity, fname) and ent.role_of(ent.field(fname)) in _TELLING


def states_value(spec: EnvSpec, entity: str, fname: str) -> bool:
    """Whether a person would state (or ask for) the value of field ``fname`` of ``entity``."""
    return fname in _cached(spec, spec.entity(entity))[1]


def account_roots(spec: EnvSpec) -> frozenset[str]:
    """Entities the caller has exactly one of, that no tool creates, deletes or lists, and whose key
    other rows' tools ask for (Basecamp's to-do set, named in every path but listed by no documented
    operation): the account's own, whose keys the deployment states (the system prompt) rather than
    a person (who never knows an internal id) or a look-up (there is none). Computed once per spec
    (kept beside the model's fields, as ``_cached`` keeps an entity's)."""
    hit = spec.__dict__.get("_account_roots")
    key = (spec.entities, spec.tools, len(spec.entities), len(spec.tools))
    if hit is not None and all(a is b for a, b in zip(hit[0][:2], key[:2])) and hit[0][2:] == key[2:]:
        return hit[1]
    out = _account_roots(spec)
    object.__setattr__(spec, "_account_roots", (key, out))
    return out


def _account_roots(spec: EnvSpec) -> frozenset[str]:
    out = set()
    for e in spec.entities:
        seed = spec.seed.entities.get(e.name)
        if seed is None or seed.rows != 1:
            continue
        tools = [t for t in spec.tools if t.entity == e.name]
        if any(t.kind.value in ("create", "delete", "upsert") for t in tools):
            continue
        if any(t.kind.value == "list" and (not t.returns or e.primary_key in t.returns) for t in tools):
            continue
        if getattr(e, "singleton", None):
            continue  # a singleton's tools take no key of it (Stripe's balance, /settings)
        if not any(_names_key(spec, t, p, e.name) for t in spec.tools for p in t.params):
            continue  # no other row's tool asks for its key: nothing to state (a lookup by its own key
            # is no account's row: Sinao's VIES record of a SIREN)
        out.add(e.name)
    return frozenset(out)


def _names_key(spec: EnvSpec, t: Any, p: Any, entity: str) -> bool:
    """Whether parameter ``p`` of tool ``t`` takes a key of ``entity`` as another row's parent."""
    if not p.field:
        return False
    try:
        own = spec.entity(t.entity)
        f = own.field(p.field)
    except KeyError:
        return False
    return f.ref == entity and t.entity != entity  # a parent other rows name, not a row read by its own key


def account_key(spec: EnvSpec, t: Any, fname: str) -> bool:
    """Whether field ``fname`` of tool ``t``'s entity is the key of an ``account_roots`` entity."""
    roots = account_roots(spec)
    if not roots:
        return False
    try:
        own = spec.entity(t.entity)
        f = own.field(fname)
    except KeyError:
        return False
    target = f.ref or (t.entity if fname == own.primary_key else None)
    return target in roots


def account_key_args(spec: EnvSpec, calls: list[dict[str, Any]]) -> list[str]:
    """'tool.arg' for every argument of ``calls`` (gold calls: tool, args, refs) that is an account
    root's key not found by an earlier call: the system prompt states it, and a harness without
    one (BFCL's entries) cannot."""
    out = []
    for i, c in enumerate(calls):
        try:
            t = spec.tool(c["tool"])
        except KeyError:
            continue
        refs = c.get("refs") or {}
        for name in c.get("args") or {}:
            r = refs.get(name)
            if r and isinstance(r[0], int) and r[0] < i:
                continue
            p = next((p for p in t.params if p.name == name), None)
            if p is not None and account_key(spec, t, p.field or name):
                out.append(f"{t.name}.{name}")
    return out
