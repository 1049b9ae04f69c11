"""Documented limits of an EnvSpec: a spec inside them materializes in bounded time and memory.

A spec may come from an untrusted document or a model, so its sizes are bounded here, at
validation, with a one-line error naming the field, rather than discovered by SQLite or
Faker as a traceback (2,001 columns), a ``MemoryError`` (``width: 1e9``) or an hour of seeding
(``rows: 1e9``). Every figure is a module constant; ``spec_limits()`` lists them.

The checks take the models duck-typed, so this module does not import ``model``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

__all__ = ["SPEC_LIMITS", "check_generator", "check_entity_limits", "check_seed_limits", "check_names"]

MAX_NAME_CHARS = 64  # entity, field, tool and parameter names (MCP tool names allow 64)
MAX_ENTITIES = 200
MAX_FIELDS = 500  # per entity; SQLite's own limit is 2,000 columns
MAX_TOOLS = 1_000
MAX_PARAMS = 100  # per tool
MAX_IN_ITEMS = 500  # values in one ``in`` filter argument (the tool's input schema says so)
MAX_SEED_ROWS = 200_000  # per entity
MAX_TOTAL_SEED_ROWS = 1_000_000
MAX_PATTERN_CHARS = 200  # a ``pattern`` generator's pattern
MAX_PREFIX_CHARS = 32  # ``sequence`` prefix and a field's ``id_prefix``
MAX_WIDTH = 32  # ``sequence`` zero-padding
MAX_CHOICES = 10_000  # values of a ``choice`` generator
MAX_VALUE_CHARS = 4_096  # JSON size of one constant, choice value or field default
MAX_BOUND = 1e15  # |min|, |max| of int/float/offset generators and parameter bounds
MAX_DECIMALS = 12
MAX_OFFSET = 100_000  # |min|, |max| of an ``offset`` from a date (days) or datetime (hours)
MAX_GENERATOR_DEPTH = 8  # ``null_or`` nesting
MIN_YEAR, MAX_YEAR = 1000, 8999  # dates a generator or the clock may name (offsets stay representable)
RESERVED_PREFIXES = ("sqlite_",)  # SQLite's own tables (sqlite_master, sqlite_sequence ...)

SPEC_LIMITS: dict[str, Any] = {k: v for k, v in dict(globals()).items() if k.startswith(("MAX_", "MIN_"))}
"""Every limit by name (for documentation and error messages)."""


def _json_chars(v: Any) -> int:
    try:
        return len(json.dumps(v, default=str))
    except (ValueError, TypeError, RecursionError):
        return MAX_VALUE_CHARS + 1


def check_value_size(v: Any, what: str) -> None:
    if v is not None and _json_chars(v) > MAX_VALUE_CHARS:
        raise ValueError(f"{what}: the value is longer than {MAX_VALUE_CHARS:,} characters as JSON")


def _finite_bound(v: float | None, what: str, limit: float = MAX_BOUND) -> None:
    if v is None:
        return
    if not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {v}")
    if abs(v) > limit:
        raise ValueError(f"{what} must be between -{limit:g} and {limit:g}, got {v:g}")


def parse_when(text: Any, what: str, *, datetime: bool) -> dt.date:
    """A generator's ``start``/``end`` (or the clock) as a date/datetime within the year limits."""
    try:
        v: dt.date = dt.datetime.fromisoformat(text) if datetime else dt.date.fromisoformat(text)
    except (TypeError, ValueError):
        shape = "an ISO date-time (YYYY-MM-DDTHH:MM:SS)" if datetime else "an ISO date (YYYY-MM-DD)"
        raise ValueError(f"{what} {str(text)[:40]!r} is not {shape}") from None
    if not MIN_YEAR <= v.year <= MAX_YEAR:
        raise ValueError(f"{what} {text!r}: the year must be from {MIN_YEAR} to {MAX_YEAR}")
    return v


def check_generator(g: Any, depth: int = 0) -> None:
    """A GeneratorSpec's own sizes and shapes (those that need no other part of the spec)."""
    k = g.kind
    if depth > MAX_GENERATOR_DEPTH:
        raise ValueError(f"generators nest deeper than {MAX_GENERATOR_DEPTH} (null_or inside null_or ...)")
    _finite_bound(g.min, "min")
    _finite_bound(g.max, "max")
    if k in ("int", "float") and g.min is not None and g.max is not None and g.min > g.max:
        raise ValueError(f"min {g.min:g} is greater than max {g.max:g}")
    if k == "offset":
        _finite_bound(g.min, "offset min", MAX_OFFSET)
        _finite_bound(g.max, "offset max", MAX_OFFSET)
    if not 0 <= g.decimals <= MAX_DECIMALS:
        raise ValueError(f"decimals must be from 0 to {MAX_DECIMALS}, got {g.decimals}")
    if not 1 <= g.width <= MAX_WIDTH:
        raise ValueError(f"width must be from 1 to {MAX_WIDTH}, got {g.width}")
    if g.prefix is not None and len(g.prefix) > MAX_PREFIX_CHARS:
        raise ValueError(f"prefix is longer than {MAX_PREFIX_CHARS} characters")
    if g.pattern is not None and len(g.pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"pattern is longer than {MAX_PATTERN_CHARS} characters ({len(g.pattern):,})")
    if not (math.isfinite(g.p_null) and 0.0 <= g.p_null <= 1.0):
        raise ValueError(f"p_null must be from 0 to 1, got {g.p_null}")
    check_value_size(g.value, "value")
    if g.values is not None:
        if len(g.values) > MAX_CHOICES:
            raise ValueError(f"a choice has more than {MAX_CHOICES:,} values ({len(g.values):,})")
        for v in g.values:
            check_value_size(v, "a choice value")
    if g.weights is not None:
        _check_weights(g)
    for key in ("start", "end"):
        text = getattr(g, key)
        if text is not None and k in ("date", "datetime"):
            parse_when(text, key, datetime=(k == "datetime"))
    if g.inner is not None:
        check_generator(g.inner, depth + 1)


def _check_weights(g: Any) -> None:
    n = len(g.values or [])
    if len(g.weights) != n:
        raise ValueError(
            f"weights has {len(g.weights)} entries but values has {n}; give one weight per value"
        )
    if any(not math.isfinite(w) or w < 0 for w in g.weights):
        raise ValueError("weights must be finite numbers >= 0")
    if n and sum(g.weights) <= 0:
        raise ValueError("weights must not all be 0")


def check_names(kind: str, name: str) -> None:
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(
            f"{kind} name {name[:MAX_NAME_CHARS]!r}... is longer than {MAX_NAME_CHARS} characters"
        )
    if name.startswith(RESERVED_PREFIXES):
        raise ValueError(f"{kind} name {name!r}: names starting with 'sqlite_' are reserved by SQLite")


def check_entity_limits(ent: Any) -> None:
    if len(ent.fields) > MAX_FIELDS:
        raise ValueError(
            f"entity {ent.name!r} has {len(ent.fields):,} fields; at most {MAX_FIELDS} are allowed"
        )


def check_seed_limits(spec: Any) -> None:
    """Sizes over the whole spec: counts, total seed rows, table/index name clashes."""
    if len(spec.entities) > MAX_ENTITIES:
        raise ValueError(f"{len(spec.entities):,} entities; at most {MAX_ENTITIES} are allowed")
    if len(spec.tools) > MAX_TOOLS:
        raise ValueError(f"{len(spec.tools):,} tools; at most {MAX_TOOLS} are allowed")
    total = sum(es.rows for es in spec.seed.entities.values())
    if total > MAX_TOTAL_SEED_ROWS:
        raise ValueError(f"seed: {total:,} rows in all; at most {MAX_TOTAL_SEED_ROWS:,} are allowed")
    # Tables and indexes share SQLite's namespace; the template names each foreign-key index
    # ix_<entity>_<field>, so 'a_b.c' and 'a.b_c' (or an entity named ix_a_b) would clash.
    owner: dict[str, str] = {e.name: f"entity {e.name!r}" for e in spec.entities}
    for e in spec.entities:
        for f in e.fields:
            if f.ref and f.name != e.primary_key:
                ix = f"ix_{e.name}_{f.name}"
                if ix in owner:
                    raise ValueError(
                        f"{e.name}.{f.name}: its index name {ix!r} clashes with {owner[ix]}; rename one"
                    )
                owner[ix] = f"the index of {e.name}.{f.name}"
