"""What a seed recipe means where it says nothing: the generator a field without one gets,
inferred from its name and type, and the id prefix of an entity without one.

Part of the contract: the runtime seeds with these defaults, and the explorer reads them to
decide where the documentation knows better (``envfactory.explore.seeding``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .model import EntitySpec, FieldSpec, FieldType, GeneratorSpec

__all__ = ["default_generator", "default_id_prefix"]


def default_id_prefix(entity: str) -> str:
    parts = [p for p in entity.split("_") if p]
    if len(parts) >= 2:
        return (parts[0][0] + parts[1][0]).upper()
    word = parts[0] if parts else "x"
    consonants = [c for c in word[1:] if c not in "aeiou"]
    return (word[0] + (consonants[0] if consonants else word[-1])).upper()


_NAME_RULES: list[tuple[str, dict[str, Any]]] = [
    (r"email", {"kind": "faker", "provider": "email"}),
    (r"^first_name$|given_name", {"kind": "faker", "provider": "first_name"}),
    (r"^last_name$|family_name|surname", {"kind": "faker", "provider": "last_name"}),
    (r"phone|mobile", {"kind": "pattern", "pattern": "+1-###-###-####"}),
    (r"(^|_)city($|_)", {"kind": "faker", "provider": "city"}),
    (r"country_code", {"kind": "faker", "provider": "country_code"}),
    (r"country", {"kind": "faker", "provider": "country"}),
    (r"(^|_)(address|street)", {"kind": "faker", "provider": "street_address"}),
    (r"postal|zip", {"kind": "faker", "provider": "postcode"}),
    (r"(^|_)state$|region", {"kind": "faker", "provider": "state"}),
    (r"url|website|link", {"kind": "faker", "provider": "url"}),
    (r"currency", {"kind": "choice", "values": ["USD", "EUR", "GBP"]}),
    (r"iata|airport_code|(^|_)(origin|destination)$", {"kind": "pattern", "pattern": "???", "upper": True}),
    (r"(^|_)code$|sku|reference|number$|locator", {"kind": "pattern", "pattern": "??####", "upper": True}),
    (r"company|airline|carrier|brand|vendor|merchant|organization|employer", {"kind": "faker", "provider": "company"}),
    (r"(^|_)(title|subject|headline)$", {"kind": "faker", "provider": "catch_phrase"}),
    (r"description|notes?$|bio|comment|body|content|message|summary|text", {"kind": "faker", "provider": "sentence"}),
    (r"(^|_)name$|full_name|display_name|holder|owner_name|username", {"kind": "faker", "provider": "name"}),
    (r"color|colour", {"kind": "faker", "provider": "color_name"}),
    (r"language|locale", {"kind": "choice", "values": ["en", "fr", "de", "es", "it"]}),
    (r"timezone", {"kind": "choice", "values": ["UTC", "Europe/London", "America/New_York", "Asia/Tokyo"]}),
]

_NUM_RULES: list[tuple[str, tuple[float, float, int]]] = [
    (r"rating|stars|score", (1, 5, 1)),
    (r"price|amount|total|cost|fare|fee|balance|budget|salary|limit|rate", (20, 2000, 2)),
    (r"lat", (-60, 60, 5)),
    (r"lon|lng", (-150, 150, 5)),
    (r"percent|discount", (0, 50, 1)),
    (r"weight|kg", (1, 30, 1)),
]

_INT_RULES: list[tuple[str, tuple[int, int]]] = [
    (r"rating|stars", (1, 5)),
    (r"year", (1990, 2026)),
    (r"seat|capacity", (1, 300)),
    (r"quantity|count|qty|guests|passengers|adults|nights|party", (1, 6)),
    (r"duration|minutes", (30, 600)),
    (r"age", (18, 85)),
    (r"floor|level|priority", (1, 5)),
    (r"points|miles", (0, 50000)),
]


def default_generator(entity: EntitySpec, f: FieldSpec, clock: dt.datetime) -> GeneratorSpec:
    """Infer a realistic generator for a field from its name and type."""
    name = f.name.lower()
    if f.name == entity.primary_key:
        if f.type == FieldType.integer:
            return GeneratorSpec(kind="sequence")
        return GeneratorSpec(kind="sequence", prefix=f.id_prefix or default_id_prefix(entity.name))
    if f.ref:
        return GeneratorSpec(kind="ref")
    if f.enum:
        return GeneratorSpec(kind="choice", values=list(f.enum))
    t = f.type
    if t == FieldType.boolean:
        return GeneratorSpec(kind="choice", values=[True, False])
    if t == FieldType.date:
        return GeneratorSpec(kind="date", start=(clock - dt.timedelta(days=90)).date().isoformat(),
                             end=(clock + dt.timedelta(days=180)).date().isoformat())
    if t == FieldType.datetime:
        return GeneratorSpec(kind="datetime", start=(clock - dt.timedelta(days=90)).isoformat(),
                             end=(clock + dt.timedelta(days=180)).isoformat())
    if t == FieldType.integer:
        for pat, (lo, hi) in _INT_RULES:
            if re.search(pat, name):
                return GeneratorSpec(kind="int", min=lo, max=hi)
        return GeneratorSpec(kind="int", min=1, max=1000)
    if t == FieldType.number:
        for pat, (flo, fhi, dec) in _NUM_RULES:
            if re.search(pat, name):
                return GeneratorSpec(kind="float", min=flo, max=fhi, decimals=dec)
        return GeneratorSpec(kind="float", min=1, max=1000, decimals=2)
    if t == FieldType.object:
        return GeneratorSpec(kind="const", value={})
    if t == FieldType.array:
        return GeneratorSpec(kind="const", value=[])
    for pat, gen in _NAME_RULES:
        if re.search(pat, name):
            g = dict(gen)
            upper = g.pop("upper", False)
            if upper:

                return GeneratorSpec(**g, value="upper")
            return GeneratorSpec(**g)
    return GeneratorSpec(kind="faker", provider="word")
