"""Names: snake_case, singular/plural nouns, entity names from path segments, tool names."""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import plural as text_plural

__all__ = ["snake", "singular", "plural", "entity_name", "env_name", "first_sentence", "is_ident"]

_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
_UNCOUNTABLE = {
    "data",
    "media",
    "news",
    "status",
    "series",
    "species",
    "analysis",
    "metadata",
    "info",
    "information",
    "settings",
    "equipment",
    "feedback",
    "inventory",
    "software",
    "staff",
    "sms",
    "mms",
    "address",
    "access",
    "business",
    "class",
    "process",
    "alias",
    "campus",
    "bus",
    "canvas",
    "basis",
    "axis",
    "billing",
    "shipping",
    "pricing",
    "availability",
    "weather",
    "search",
    "history",
    "money",
    "audio",
    "content",
    "progress",
    "analytics",
    "stats",
    "statistics",
    "insights",
    "logs",
    "uk",
    "us",
}
_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "criteria": "criterion",
    "leaves": "leaf",
    "wolves": "wolf",
    "knives": "knife",
    "lives": "life",
    "halves": "half",
    "quizzes": "quiz",
    "statuses": "status",
    "addresses": "address",
    "aliases": "alias",
    "analyses": "analysis",
    "businesses": "business",
    "classes": "class",
    "processes": "process",
    "buses": "bus",
    "taxes": "tax",
    "boxes": "box",
    "movies": "movie",
    "cookies": "cookie",
    "series": "series",
    "todos": "todo",
    "photos": "photo",
    "videos": "video",
    "logos": "logo",
    "heroes": "hero",
    "potatoes": "potato",
    "tomatoes": "tomato",
    "playlists": "playlist",
}


@lru_cache(maxsize=65536)
def snake(text: str) -> str:
    """``flightOffers`` / ``Flight-Offers`` / ``flight offers`` -> ``flight_offers``; valid identifier."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(text))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_").lower()
    s = re.sub(r"_+", "_", s)
    if not s:
        return "x"
    if not s[0].isalpha():
        s = "n_" + s
    return s


def is_ident(s: str) -> bool:
    return bool(_IDENT.match(s))


def _sing_word(w: str) -> str:
    if w in _UNCOUNTABLE or len(w) <= 3:
        return w
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return w[:-2]
    if w.endswith(("ss", "us", "is", "os")):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def singular(name: str) -> str:
    """Singularize the last word of a snake_case name (``flight_offers`` -> ``flight_offer``)."""
    parts = name.split("_")
    parts[-1] = _sing_word(parts[-1])
    return "_".join(parts)


def plural(name: str) -> str:
    """Pluralize the last word of a snake_case name (``flight_offer`` -> ``flight_offers``)."""
    return text_plural(name)


@lru_cache(maxsize=16384)
def entity_name(segment: str) -> str:
    """Entity name from a path segment: ``flight-offers`` -> ``flight_offer``."""
    segment = re.sub(r"\.(json|xml|yaml|html)$", "", segment)
    return singular(snake(segment))


_TITLE_NOISE = re.compile(
    r"\b(api|apis|rest|restful|openapi|swagger|http|web\s*api|reference|spec|specification|"
    r"service|v\d+(\.\d+)*|\d+(\.\d+)+)\b",
    re.I,
)


def env_name(title: str, fallback: str = "env") -> str:
    """An environment name from a document title: ``Flight Offers Search API v2`` -> ``flight_offers_search``."""
    t = _TITLE_NOISE.sub(" ", title or "")
    s = snake(t) if t.strip() else ""
    if not s or s == "x":
        s = snake(fallback)
    parts = s.split("_")[:5]
    s = "_".join(parts)
    return s[:40].rstrip("_") or "env"


def first_sentence(text: str | None, limit: int = 200) -> str:
    """First sentence of a documentation text, markup stripped, at most ``limit`` characters."""
    if not text:
        return ""
    t = re.sub(r"<[^>]+>", " ", str(text))
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"[`*_#>]+", "", t)
    t = " ".join(t.split())
    m = re.search(r"(?<=[a-z0-9\)][.!?])\s", t)
    if m:
        t = t[: m.start()]
    if len(t) > limit:
        t = t[: limit - 1].rsplit(" ", 1)[0] + "…"
    return t.strip()
