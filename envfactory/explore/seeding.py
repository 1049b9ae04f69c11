"""The seed recipe: rows per entity (parents fewer than children) and realistic generators.

Fields without a generator are left to the runtime's name-based defaults
(``envfactory.spec.default_generator``); we only add what the documentation knows
better: code-like examples become ``bothify`` patterns, documented ranges bound numbers,
status values an action moves away from are seeded more often than terminal ones.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import networkx as nx

from ..spec import EntitySeed, EntitySpec, FieldType, GeneratorSpec, SeedSpec, default_generator
from .actions import TERMINAL
from .entities import EntityDraft

__all__ = ["seed_recipe", "row_counts", "MIN_ROWS", "MAX_ROWS"]

MIN_ROWS, MAX_ROWS = 2000, 10000
_BASE = {0: 60, 1: 200, 2: 500}
_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{1,15}$")


def row_counts(entities: list[EntitySpec], stubs: set[str], scale: float = 1.0) -> dict[str, int]:
    """Rows per entity by depth in the foreign-key graph, scaled so the env holds MIN..MAX rows."""
    g = nx.DiGraph()
    for e in entities:
        g.add_node(e.name)
        for f in e.fields:
            if f.ref and f.ref != e.name:
                g.add_edge(f.ref, e.name)
    depth: dict[str, int] = {}
    for n in nx.topological_sort(g):
        preds = list(g.predecessors(n))
        depth[n] = 0 if not preds else 1 + max(depth[p] for p in preds)
    counts = {e.name: (40 if e.name in stubs else _BASE[min(2, depth[e.name])]) for e in entities}
    total = sum(counts.values())
    if total < MIN_ROWS:
        factor = MIN_ROWS / total
        counts = {k: min(4000, round(v * factor + 0.5)) for k, v in counts.items()}
    elif total > MAX_ROWS:
        factor = MAX_ROWS / total
        counts = {k: max(20, int(v * factor)) for k, v in counts.items()}
    if scale != 1.0:
        counts = {k: max(5, int(v * scale)) for k, v in counts.items()}
    return counts


def _pattern(example: str) -> str:
    return "".join("#" if c.isdigit() else "?" if c.isalpha() else c for c in example)


def _generator(ent: EntitySpec, draft: EntityDraft | None, fname: str, clock: dt.datetime) -> GeneratorSpec | None:
    f = ent.field(fname)
    if f.name == ent.primary_key or f.ref:
        return None
    d = draft.fields.get(fname) if draft else None
    default = default_generator(ent, f, clock)
    if f.type == FieldType.enum and f.enum and (f.name in ("status", "state") or f.name.endswith(("_status", "_state"))):
        weights = [1.0 if v in TERMINAL else 3.0 for v in f.enum]
        if len(set(weights)) > 1:
            return GeneratorSpec(kind="choice", values=list(f.enum), weights=weights)
        return None
    if d is None:
        return None
    ex = d.example
    if f.type == FieldType.string and isinstance(ex, str) and default.kind == "faker" and default.provider == "word" \
            and _CODE.match(ex) and (any(c.isdigit() for c in ex) or ex.isupper()):
        return GeneratorSpec(kind="pattern", pattern=_pattern(ex), value="upper" if ex.upper() == ex else None)
    if f.type in (FieldType.integer, FieldType.number) and (d.minimum is not None or d.maximum is not None):
        lo = d.minimum if d.minimum is not None else min(0, (d.maximum or 0) - 100)
        hi = d.maximum if d.maximum is not None else lo + 1000
        if hi >= lo and hi - lo < 1e9:
            return GeneratorSpec(kind="int" if f.type == FieldType.integer else "float", min=lo, max=hi)
    if f.type in (FieldType.object, FieldType.array) and ex is not None:
        ok = isinstance(ex, dict) if f.type == FieldType.object else isinstance(ex, list)
        if ok:
            try:
                if len(json.dumps(ex)) <= 400:
                    return GeneratorSpec(kind="const", value=ex)
            except (TypeError, ValueError):
                return None
    return None


def seed_recipe(entities: list[EntitySpec], drafts: dict[str, EntityDraft], *, seed: int, clock: str,
                scale: float = 1.0) -> SeedSpec:
    now = dt.datetime.fromisoformat(clock)
    stubs = {n for n, d in drafts.items() if d.stub}
    counts = row_counts(entities, stubs, scale)
    out: dict[str, EntitySeed] = {}
    for e in entities:
        gens = {}
        for f in e.fields:
            g = _generator(e, drafts.get(e.name), f.name, now)
            if g is not None:
                gens[f.name] = g
        out[e.name] = EntitySeed(rows=counts[e.name], fields=gens)
    return SeedSpec(seed=seed, entities=out)
