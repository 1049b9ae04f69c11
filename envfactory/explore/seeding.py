"""The seed recipe: rows per entity (parents fewer than children), field roles and cross-field
constraints read from the document, and generators where the document knows better.

``annotate_entities`` writes what each field means into the spec (``envfactory.spec.roles``):
its role (from its name, type, description and example), the document's examples (seed values
for labels and statuses), a code's pattern (from an example such as ``BK-1042``), documented
ranges, and the entity's constraints (start before end, past stamps, adults' birth dates,
completed rows in the past, totals = quantity x price). Fields without a generator are then
left to the runtime's role-based defaults (``envfactory.spec.default_generator``); the recipe
only adds status weights (values an action moves away from are seeded more often than
terminal ones) and object/array values shaped like the document's examples.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import networkx as nx

from ..spec import (
    DEFAULT_CLOCK,
    EntitySeed,
    EntitySpec,
    FieldRole,
    FieldSpec,
    FieldType,
    GeneratorSpec,
    SeedSpec,
    identifiable,
    infer_role,
)
from .actions import TERMINAL
from .entities import EntityDraft, FieldDraft

__all__ = ["seed_recipe", "row_counts", "annotate_entities", "generator_from_example", "MIN_ROWS", "MAX_ROWS"]

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


# Roles whose documented example may stand for every row (a category, a currency, a status).
_REPEATABLE = {
    FieldRole.label,
    FieldRole.status,
    FieldRole.currency,
    FieldRole.country_code,
    FieldRole.airport_code,
    FieldRole.time,
    FieldRole.duration,
}
_CODED = {FieldRole.code, FieldRole.reference, FieldRole.internal_id}


def _scalar_fits(f: FieldSpec, v: Any) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if f.type == FieldType.string:
        return isinstance(v, str) and 0 < len(v) <= 120
    if f.type in (FieldType.integer, FieldType.number):
        return isinstance(v, (int, float))
    return False


def _annotate_field(ent: EntitySpec, f: FieldSpec, d: FieldDraft | None) -> FieldSpec:
    ex = d.example if d else None
    role = infer_role(
        ent.name,
        f.name,
        f.type.value,
        enum=f.enum,
        description=f.description,
        example=ex,
        primary_key=f.name == ent.primary_key,
        ref=f.ref is not None,
        siblings=[g.name for g in ent.fields],
    )
    upd: dict[str, Any] = {"role": role}
    if f.name != ent.primary_key and not f.ref and _scalar_fits(f, ex):
        if (
            role in _CODED
            and isinstance(ex, str)
            and _CODE.match(ex)
            and (any(c.isdigit() for c in ex) or ex.isupper())
        ):
            upd["pattern"] = _pattern(ex)
        elif role in _REPEATABLE and not f.enum and not f.unique:
            upd["examples"] = [ex]
    if d is not None and f.type in (FieldType.integer, FieldType.number):
        if d.minimum is not None and d.maximum is not None and d.minimum > d.maximum:
            return f.model_copy(update=upd)
        if d.minimum is not None:
            upd["minimum"] = float(d.minimum)
        if d.maximum is not None:
            upd["maximum"] = float(d.maximum)
    return f.model_copy(update=upd)


def annotate_entities(entities: list[EntitySpec], drafts: dict[str, EntityDraft]) -> list[EntitySpec]:
    """The entities with each field's role, examples, pattern and range, and the entity's
    cross-field constraints, stated in the spec (where a person reviewing it can see them)."""
    out = []
    for e in entities:
        draft = drafts.get(e.name)
        fields = [_annotate_field(e, f, draft.fields.get(f.name) if draft else None) for f in e.fields]
        ent = e.model_copy(update={"fields": fields, "constraints": None})
        out.append(ent.model_copy(update={"constraints": ent.inferred_constraints()}))
    return out


def generator_from_example(value: Any, name: str, depth: int = 0) -> GeneratorSpec | None:
    """A generator whose values have the shape of a documented example: an object's keys each get a
    generator from their own name and example value, a list repeats its first item's shape."""
    if depth > 3:
        return None
    if isinstance(value, dict):
        props: dict[str, GeneratorSpec] = {}
        for k, v in list(value.items())[:12]:
            if not isinstance(k, str) or not k:
                continue
            g = generator_from_example(v, k, depth + 1)
            if g is not None:
                props[k] = g
        return GeneratorSpec(kind="object", properties=props) if props else None
    if isinstance(value, list):
        inner = generator_from_example(value[0], _singular(name), depth + 1) if value else None
        return GeneratorSpec(kind="list", inner=inner, min=1, max=3) if inner is not None else None
    return _scalar_generator(value, name)


def _singular(n: str) -> str:
    return n[:-1] if n.endswith("s") and not n.endswith("ss") else n


def _scalar_generator(value: Any, name: str) -> GeneratorSpec | None:
    from ..spec import default_generator

    key = snake_name(name)
    if isinstance(value, bool):
        return GeneratorSpec(kind="choice", values=[True, False])
    if isinstance(value, (int, float)):
        ftype = FieldType.integer if isinstance(value, int) else FieldType.number
    elif isinstance(value, str):
        ftype = FieldType.string
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            ftype = FieldType.date
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-][\d:]+)?", value):
            ftype = FieldType.datetime
    else:
        return None
    f = FieldSpec(name=key, type=ftype)
    ent = EntitySpec(
        name="item", primary_key="item_key", fields=[FieldSpec(name="item_key", type=FieldType.string), f]
    )
    role = ent.role_of(f)
    if isinstance(value, str) and role in _CODED and _CODE.match(value):
        return GeneratorSpec(
            kind="pattern", pattern=_pattern(value), value="upper" if value.upper() == value else None
        )
    if isinstance(value, str) and role in (None, *_REPEATABLE):
        return GeneratorSpec(kind="const", value=value)  # the document's own value: a currency, a type
    return default_generator(ent, f, dt.datetime.fromisoformat(DEFAULT_CLOCK))


def snake_name(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    s = re.sub(r"[^a-z0-9_]+", "_", s).strip("_")
    return s if s and s[0].isalpha() else f"f_{s}" if s else "value"


def _generator(
    ent: EntitySpec, draft: EntityDraft | None, fname: str, clock: dt.datetime
) -> GeneratorSpec | None:
    f = ent.field(fname)
    if f.name == ent.primary_key or f.ref:
        return None
    d = draft.fields.get(fname) if draft else None
    if (
        f.type == FieldType.enum
        and f.enum
        and (f.name in ("status", "state") or f.name.endswith(("_status", "_state")))
    ):
        weights = [1.0 if v in TERMINAL else 3.0 for v in f.enum]
        if len(set(weights)) > 1:
            return GeneratorSpec(kind="choice", values=list(f.enum), weights=weights)
        return None
    if d is None:
        return None
    ex = d.example
    if f.type in (FieldType.object, FieldType.array) and ex is not None:
        ok = isinstance(ex, dict) if f.type == FieldType.object else isinstance(ex, list)
        if ok:
            try:
                if len(json.dumps(ex)) > 4000:
                    return None
            except (TypeError, ValueError):
                return None
            return generator_from_example(ex, f.name)
    return None


def seed_recipe(
    entities: list[EntitySpec],
    drafts: dict[str, EntityDraft],
    *,
    seed: int,
    clock: str,
    scale: float = 1.0,
    written: frozenset[str] | set[str] = frozenset(),
    deleted: frozenset[str] | set[str] = frozenset(),
) -> SeedSpec:
    """The seed recipe. ``written``: entities some tool writes; a root no tool writes and no one
    could tell apart (``identifiable``) is seeded once. ``deleted``: entities a tool deletes; those
    other rows reference keep a tenth of their rows (at least one) unreferenced, so a delete has rows
    it may remove (Box's files, each referenced by comments, tasks and versions, could not be deleted
    at all)."""
    now = dt.datetime.fromisoformat(clock)
    stubs = {n for n, d in drafts.items() if d.stub}
    counts = row_counts(entities, stubs, scale)
    referenced = {f.ref for e in entities for f in e.fields if f.ref and f.ref != e.name}
    out: dict[str, EntitySeed] = {}
    for e in entities:
        gens = {}
        for f in e.fields:
            g = _generator(e, drafts.get(e.name), f.name, now)
            if g is not None:
                gens[f.name] = g
        rows = counts[e.name]
        root = not any(f.ref and f.ref != e.name for f in e.fields)
        if root and e.name not in written and not identifiable(e, gens, now):
            # a root whose rows no one could tell apart (PowerDNS's server: links and a type) is the
            # caller's one: sixty indistinguishable servers make every request about one unsayable
            rows = 1
        spare = max(1, rows // 10) if e.name in deleted and e.name in referenced else 0
        out[e.name] = EntitySeed(rows=rows, fields=gens, spare=spare)
    return SeedSpec(seed=seed, entities=out)
