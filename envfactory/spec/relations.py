"""The foreign-key graph of an EnvSpec: which entities must exist before which."""

from __future__ import annotations

import heapq

from ..errors import SpecError
from .model import EntitySpec, EnvSpec

__all__ = ["entity_order"]


def entity_order(spec: EnvSpec) -> list[EntitySpec]:
    """Entities in an order where every referenced entity comes first (self-refs ignored).

    Among entities whose references are all placed, the alphabetically first comes next, so
    the order depends on the spec alone. A cycle of foreign keys is a SpecError naming it.
    """
    by_name = {e.name: e for e in spec.entities}
    parents = {
        e.name: {f.ref for f in e.fields if f.ref and f.ref != e.name and f.ref in by_name}
        for e in spec.entities
    }
    children: dict[str, set[str]] = {n: set() for n in by_name}
    for child, refs in parents.items():
        for p in refs:
            children[p].add(child)
    waiting = {n: len(refs) for n, refs in parents.items()}
    ready = [n for n, k in waiting.items() if k == 0]
    heapq.heapify(ready)
    order: list[EntitySpec] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(by_name[name])
        for child in children[name]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    if len(order) < len(by_name):
        cycle = _find_cycle({n: sorted(parents[n]) for n in by_name if waiting[n] > 0})
        raise SpecError(
            f"{spec.name}: foreign keys form a cycle ({' -> '.join(cycle)}); make one of them nullable"
        )
    return order


def _find_cycle(parents: dict[str, list[str]]) -> list[str]:
    """One cycle among entities each of which waits on another of them (every node has a parent
    in ``parents``): walk to a parent until a name repeats."""
    node = min(parents)
    seen: list[str] = []
    while node not in seen:
        seen.append(node)
        node = next(p for p in parents[node] if p in parents)
    return [*seen[seen.index(node) :], node]
