"""What a seed recipe means where it says nothing: the generator a field without one gets,
inferred from its role (stated, or inferred from its name and type: ``envfactory.spec.roles``),
and the id prefix of an entity without one.

Part of the contract: the runtime seeds with these defaults, and the explorer reads them to
decide where the documentation knows better (``envfactory.explore.seeding``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .model import EntitySpec, FieldSpec, FieldType, GeneratorSpec
from .roles import FieldRole, realistic_range
from .seed_titles import NOTES
from .seed_vocab import AIRPORTS, DURATIONS, STATUS_FALLBACK, TIMES, labels_for, titles_for

__all__ = ["default_generator", "default_id_prefix"]


def default_id_prefix(entity: str) -> str:
    parts = [p for p in entity.split("_") if p]
    if len(parts) >= 2:
        return (parts[0][0] + parts[1][0]).upper()
    word = parts[0] if parts else "x"
    consonants = [c for c in word[1:] if c not in "aeiou"]
    return (word[0] + (consonants[0] if consonants else word[-1])).upper()


_ORG_PATTERNS: list[tuple[str, str]] = [
    ("hotel", "{{city}} Grand Hotel"),
    ("restaurant", "{{last_name}}'s Kitchen"),
    ("pharmacy", "{{city}} Pharmacy"),
    ("clinic", "{{city}} Medical Clinic"),
    ("hospital", "{{city}} General Hospital"),
    ("bank", "{{city}} Savings Bank"),
    ("gym", "{{city}} Fitness"),
    ("school", "{{city}} High School"),
    ("university", "University of {{city}}"),
    ("store", "{{city}} Market"),
    ("shop", "{{city}} Market"),
    ("airline", "{{city}} Air"),
    ("venue", "{{city}} Arena"),
    ("team", "{{city}} Team"),
    ("airport", "{{city}} International Airport"),
    ("trip", "Trip to {{city}}"),
    ("station", "{{city}} Central Station"),
]
# Codes whose shape a name says: (name pattern, bothify pattern).
_CODE_SHAPES: list[tuple[str, str]] = [
    (r"flight_number", "??###"),
    (r"seat_number", "##?"),
    (r"passport", "?########"),
    (r"last_?4", "####"),
    (r"(^|_)(token|hash|secret|signature|cursor|etag)$", "????????????????"),
    (r"(^|_)gate$", "?##"),
    (r"(^|_)terminal$", "#"),
    (r"(^|_)(column|aisle)$", "?"),
    (r"ticket_number", "###-##########"),
    (r"_(number|no|num)$", "#########"),
]
_NUMBERS: dict[FieldRole, tuple[float, float, int]] = {
    FieldRole.money: (5, 2000, 2),
    FieldRole.percentage: (0, 60, 1),
    FieldRole.rating: (1, 5, 1),
    FieldRole.duration: (15, 240, 0),
    FieldRole.latitude: (-60, 60, 5),
    FieldRole.longitude: (-150, 150, 5),
    FieldRole.quantity: (1, 10, 0),
}
_STRINGS: dict[FieldRole, dict[str, Any]] = {
    FieldRole.email: {"kind": "faker", "provider": "email"},
    FieldRole.given_name: {"kind": "faker", "provider": "first_name"},
    FieldRole.family_name: {"kind": "faker", "provider": "last_name"},
    FieldRole.person_name: {"kind": "faker", "provider": "name"},
    FieldRole.username: {"kind": "faker", "provider": "user_name"},
    FieldRole.phone: {"kind": "pattern", "pattern": "+1-###-###-####"},
    FieldRole.url: {"kind": "faker", "provider": "url"},
    FieldRole.hostname: {"kind": "faker", "provider": "domain_name"},
    FieldRole.city: {"kind": "faker", "provider": "city"},
    FieldRole.country: {"kind": "faker", "provider": "country"},
    FieldRole.country_code: {"kind": "faker", "provider": "country_code"},
    FieldRole.address: {"kind": "faker", "provider": "street_address"},
    FieldRole.postcode: {"kind": "faker", "provider": "postcode"},
    FieldRole.region: {"kind": "faker", "provider": "state"},
    FieldRole.currency: {"kind": "choice", "values": ["USD", "EUR", "GBP"]},
    FieldRole.airport_code: {"kind": "choice", "values": AIRPORTS},
    FieldRole.duration: {"kind": "choice", "values": DURATIONS},
    FieldRole.time: {"kind": "choice", "values": TIMES},
    FieldRole.reference: {"kind": "pattern", "pattern": "??####", "value": "upper"},
    FieldRole.code: {"kind": "pattern", "pattern": "??####", "value": "upper"},
    FieldRole.sentence: {"kind": "choice", "values": NOTES},
    FieldRole.paragraph: {"kind": "faker", "provider": "paragraph"},
}


def _time_window(clock: dt.datetime, role: FieldRole | None, name: str) -> tuple[dt.datetime, dt.datetime]:
    if role == FieldRole.birth_date:
        return clock - dt.timedelta(days=round(80 * 365.25)), clock - dt.timedelta(days=round(20 * 365.25))
    return clock - dt.timedelta(days=90), clock + dt.timedelta(days=180)


def _time_generator(f: FieldSpec, role: FieldRole | None, clock: dt.datetime) -> GeneratorSpec:
    lo, hi = _time_window(clock, role, f.name)
    as_date = (
        f.type == FieldType.date
        or role in (FieldRole.date, FieldRole.birth_date)
        and f.type != FieldType.datetime
    )
    if as_date:
        return GeneratorSpec(kind="date", start=lo.date().isoformat(), end=hi.date().isoformat())
    return GeneratorSpec(kind="datetime", start=lo.isoformat(), end=hi.isoformat())


def _number_generator(f: FieldSpec, role: FieldRole | None) -> GeneratorSpec:
    integer = f.type == FieldType.integer
    lo, hi, dec = _NUMBERS.get(role, (1, 1000, 2)) if role else (1, 1000, 2)
    rng = realistic_range(f.name, typical=True)
    if rng is not None:
        lo, hi = rng
    # documented bounds narrow the typical range; a bound the document leaves open stays typical
    if f.minimum is not None:
        lo = max(lo, f.minimum) if f.minimum <= hi else f.minimum
        hi = max(hi, lo)
    if f.maximum is not None:
        hi = min(hi, f.maximum) if f.maximum >= lo else f.maximum
        lo = min(lo, hi)
    if integer:
        return GeneratorSpec(kind="int", min=int(-(-lo // 1)), max=int(hi // 1))
    return GeneratorSpec(kind="float", min=lo, max=hi, decimals=dec)


def _string_generator(entity: EntitySpec, f: FieldSpec, role: FieldRole | None) -> GeneratorSpec:
    if f.pattern and role in (FieldRole.code, FieldRole.reference, FieldRole.internal_id, None):
        return GeneratorSpec(
            kind="pattern", pattern=f.pattern, value="upper" if f.pattern.upper() == f.pattern else None
        )
    if role in (FieldRole.code, FieldRole.reference):
        for pat, shape in _CODE_SHAPES:
            if re.search(pat, f.name):
                return GeneratorSpec(kind="pattern", pattern=shape, value="upper")
    if role in _STRINGS:
        return GeneratorSpec(**_STRINGS[role])
    if role == FieldRole.internal_id:
        base = f.name[:-3] if f.name.endswith("_id") else f.name
        return GeneratorSpec(kind="pattern", pattern=default_id_prefix(base or "x") + "#######")
    if role in (
        FieldRole.money,
        FieldRole.quantity,
        FieldRole.percentage,
        FieldRole.rating,
        FieldRole.latitude,
        FieldRole.longitude,
    ):
        return _number_generator(f, role)  # a number written as a string ("12.50")
    if role == FieldRole.status:
        return GeneratorSpec(kind="choice", values=STATUS_FALLBACK)
    if role == FieldRole.organisation:
        words = set(entity.name.split("_")) | set(f.name.split("_"))
        for word, pat in _ORG_PATTERNS:
            if word in words:
                return GeneratorSpec(kind="pattern", pattern=pat)
        return GeneratorSpec(kind="faker", provider="company")
    if role == FieldRole.title:
        words = set(entity.name.split("_"))
        for word, pat in _ORG_PATTERNS:
            if word in words and f.name in ("name", f"{entity.name}_name"):
                return GeneratorSpec(kind="pattern", pattern=pat)
        return GeneratorSpec(kind="choice", values=titles_for(entity.name, f.name))
    if role == FieldRole.label:
        return GeneratorSpec(kind="choice", values=labels_for(f.name))
    if role in (FieldRole.date, FieldRole.datetime, FieldRole.birth_date):
        return GeneratorSpec(kind="const", value=None)  # unreachable: time roles are handled first
    return GeneratorSpec(kind="faker", provider="catch_phrase")


def _shaped(entity: EntitySpec, f: FieldSpec, clock: dt.datetime) -> GeneratorSpec:
    """A non-empty object or array whose parts are seeded by their own roles (names say what)."""
    n = f.name.lower()
    if f.type == FieldType.array:
        item = FieldSpec(name=_singular(n), type=FieldType.string)
        if re.search(r"slots|times", n):
            inner = GeneratorSpec(kind="choice", values=TIMES)
        elif re.search(r"(^|_)(tags|labels|keywords|categories|genres)$", n):
            inner = GeneratorSpec(kind="choice", values=labels_for(_singular(n)))
        elif n.endswith("_ids") or n == "ids":
            inner = GeneratorSpec(kind="pattern", pattern=default_id_prefix(n[:-4] or "x") + "#####")
        else:
            tmp = EntitySpec(
                name=entity.name, primary_key="x", fields=[FieldSpec(name="x", type=FieldType.string), item]
            )
            inner = default_generator(tmp, item, clock)
            if inner.kind == "faker" and inner.provider == "catch_phrase":
                inner = GeneratorSpec(kind="choice", values=labels_for(item.name))
        return GeneratorSpec(kind="list", inner=inner, min=1, max=3, unique=False)
    if re.search(r"address|location", n):
        props = {
            "line1": GeneratorSpec(kind="faker", provider="street_address"),
            "city": GeneratorSpec(kind="faker", provider="city"),
            "postal_code": GeneratorSpec(kind="faker", provider="postcode"),
            "country": GeneratorSpec(kind="faker", provider="country_code"),
        }
    elif re.search(r"price|amount|total|cost|fee|balance|money|fare", n):
        props = {
            "amount": GeneratorSpec(kind="float", min=5, max=2000, decimals=2),
            "currency": GeneratorSpec(kind="choice", values=["USD", "EUR", "GBP"]),
        }
    elif re.search(r"(^|_)distance$", n):
        props = {
            "value": GeneratorSpec(kind="float", min=0.2, max=25, decimals=1),
            "unit": GeneratorSpec(kind="choice", values=["KM", "MILE"]),
        }
    elif re.search(r"(^|_)(geo|geo_code|geocode|coordinates?|position|location_point)$", n):
        props = {
            "lat": GeneratorSpec(kind="float", min=-60, max=60, decimals=5),
            "lng": GeneratorSpec(kind="float", min=-150, max=150, decimals=5),
        }
    elif re.search(r"contact|person|owner|creator|author|customer|user|patient|guest", n):
        props = {
            "name": GeneratorSpec(kind="faker", provider="name"),
            "email": GeneratorSpec(kind="faker", provider="email"),
        }
    elif re.search(r"insurance|policy|coverage", n):
        props = {
            "provider": GeneratorSpec(kind="faker", provider="company"),
            "member_id": GeneratorSpec(kind="pattern", pattern="??#########", value="upper"),
        }
    else:
        props = {
            # a nested stub is spelled into env.yaml: a short list keeps the file readable
            "name": GeneratorSpec(kind="choice", values=titles_for(entity.name, f.name)[:12]),
            "note": GeneratorSpec(kind="faker", provider="sentence"),
        }
    return GeneratorSpec(kind="object", properties=props)


def _singular(n: str) -> str:
    return n[:-3] + "y" if n.endswith("ies") else n[:-1] if n.endswith("s") and not n.endswith("ss") else n


def default_generator(entity: EntitySpec, f: FieldSpec, clock: dt.datetime) -> GeneratorSpec:
    """A believable generator for a field, from its role (stated, or inferred from its name and
    type), its documented examples, pattern and range."""
    if f.name == entity.primary_key:
        if f.type == FieldType.integer:
            return GeneratorSpec(kind="sequence")
        return GeneratorSpec(kind="sequence", prefix=f.id_prefix or default_id_prefix(entity.name))
    if f.ref:
        return GeneratorSpec(kind="ref")
    if f.enum:
        return GeneratorSpec(kind="choice", values=list(f.enum))
    if f.examples and not f.unique:
        return GeneratorSpec(kind="choice", values=list(f.examples))
    t = f.type
    role = entity.role_of(f)
    if t == FieldType.boolean:
        return GeneratorSpec(kind="choice", values=[True, False])
    if t in (FieldType.date, FieldType.datetime) or role in (
        FieldRole.date,
        FieldRole.datetime,
        FieldRole.birth_date,
    ):
        return _time_generator(f, role, clock)
    if t in (FieldType.integer, FieldType.number):
        return _number_generator(f, role)
    if t in (FieldType.object, FieldType.array):
        return _shaped(entity, f, clock)
    return _string_generator(entity, f, role)
