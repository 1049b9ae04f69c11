"""Selections: a plan that picks one row among several list results, and how the user pins it.

When a later step uses ``items[k]`` of a list step, the user must say which row they mean.
The realizer states what singles it out: an implicit constraint ("the cheapest one") when the
row is the unique extreme of a field, else a fact unique to it among the results; when
neither exists the selection is recorded as unresolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..graph import GoldResult
from ..graph.plan import iter_refs
from ..spec import EnvSpec, FieldType, is_stamp, names_row
from ..text import english
from .phrasing import id_like, parse_fact_key, superlative, usable

__all__ = ["Selection", "find_selections", "candidates_after_facts"]


@dataclass
class Selection:
    """Step ``step`` picked ``items[index]`` of list step ``source``; how the user pins it."""

    source: int
    index: int
    entity: str
    row: dict[str, Any]
    how: str = "only"  # only | facts | constraint | fact | unresolved
    fact_key: str | None = None
    fact_value: Any = None
    phrase: str = ""


def find_selections(
    spec: EnvSpec, gold: GoldResult, known: dict[str, Any] | None = None, prefer_constraints: bool = True
) -> list[Selection]:
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
            if known and candidates_after_facts(spec, entity, items, r[2], known) == [r[2]]:
                sel.how = "facts"
                out.append(sel)
                continue
            _pin(spec, sel, items, has_more, prefer_constraints)
            out.append(sel)
    return out


def candidates_after_facts(
    spec: EnvSpec, entity: str, items: list[dict], idx: int, facts: dict[str, Any]
) -> list[int]:
    """Indices of ``items`` consistent with the facts that describe ``items[idx]``."""
    row = items[idx]
    cand = list(range(len(items)))
    for k, v in facts.items():
        pk = parse_fact_key(spec, k)
        if pk is None or pk[1] != entity:
            continue
        kind, _, f = pk
        if kind == "prefer":
            raw = [it.get(f) for it in items]
            if any(x is None for x in raw):
                continue
            vals = [x for x in raw if x is not None]
            ext = min(vals) if v == "lowest" else max(vals)
            if row.get(f) == ext:
                cand = [i for i in cand if items[i].get(f) == ext]
        elif kind == "entity" and f in row and row[f] == v:
            cand = [i for i in cand if items[i].get(f) == v]
    return cand


def _extreme(spec: EnvSpec, ent: Any, row: dict[str, Any], items: list[dict]) -> tuple[str, str, str] | None:
    """(field, "lowest"/"highest", phrase) when ``row`` is the one row with a field's extreme value."""
    for f in ent.fields:
        if f.type not in (FieldType.number, FieldType.integer, FieldType.date, FieldType.datetime):
            continue
        if id_like(spec, ent.name, f.name) or is_stamp(f.name):
            continue
        raw = [it.get(f.name) for it in items]
        if any(v is None for v in raw) or row.get(f.name) is None:
            continue
        vals = [v for v in raw if v is not None]
        for low in (True, False):
            ext = min(vals) if low else max(vals)
            if row[f.name] == ext and vals.count(ext) == 1:
                return f.name, "lowest" if low else "highest", superlative(f.name, low, spec, ent.name)
    return None


def _unique_fact(spec: EnvSpec, ent: Any, row: dict[str, Any], items: list[dict]) -> tuple[str, Any] | None:
    """A (field, value) of ``row`` that no other listed row shares; identifying fields first."""
    first = english().fields.identifying + (ent.display_field or "",)
    order = sorted(ent.fields, key=lambda f: (f.name not in first, f.type in (FieldType.boolean,)))
    for f in order:
        if id_like(spec, ent.name, f.name) or not names_row(spec, ent.name, f.name):
            continue
        v = row.get(f.name)
        if v is None or not usable(v):
            continue
        if sum(1 for it in items if it.get(f.name) == v) == 1:
            return f.name, v
    return None


def _pin(spec: EnvSpec, sel: Selection, items: list[dict], has_more: bool, prefer_constraints: bool) -> None:
    ent = spec.entity(sel.entity)
    constraint = None if has_more else _extreme(spec, ent, sel.row, items)
    fact = _unique_fact(spec, ent, sel.row, items)
    if constraint and (prefer_constraints or fact is None):
        sel.how, sel.fact_key, sel.fact_value, sel.phrase = (
            "constraint",
            f"prefer.{ent.name}.{constraint[0]}",
            constraint[1],
            constraint[2],
        )
    elif fact:
        sel.how, sel.fact_key, sel.fact_value = "fact", f"{ent.name}.{fact[0]}", fact[1]
    else:
        sel.how = "unresolved"
