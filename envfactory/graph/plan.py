"""Plans: a DAG of tool calls whose arguments are literals or references to earlier outputs.

A plan is data (JSON-ready) and says nothing about how it was sampled::

    Plan(env="trip_desk", domain="travel",
         steps=[Step("search_travelers", {"email": "ann@x.org"}, role="discover"),
                Step("list_bookings", {"traveler_id": {"$ref": [0, "items", 0, "traveler_id"]},
                                       "status": "confirmed"}, deps=[0], role="discover"),
                Step("cancel_booking", {"booking_id": {"$ref": [1, "items", 2, "booking_id"]}},
                     deps=[1], role="goal")],
         goal_tools=["cancel_booking"], goal_steps=[2],
         user_facts={"traveler.email": "ann@x.org", "booking.status": "confirmed"})

A reference ``{"$ref": [i, k1, k2, ...]}`` is the output of step ``i`` indexed by the keys
(str) and list positions (int) that follow. Steps are in topological order: every reference
and every ``deps`` entry points to an earlier step.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx

from ..errors import RefError

__all__ = ["Step", "Plan", "RefError", "ref", "is_ref", "iter_refs", "resolve_args", "order_plan"]

REF = "$ref"


def ref(step: int, *path: str | int) -> dict[str, list[Any]]:
    """A reference to ``outputs[step][path[0]][path[1]]...``."""
    return {REF: [step, *path]}


def is_ref(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and REF in v


def iter_refs(v: Any) -> Iterator[list[Any]]:
    """Every reference (as its ``[step, *path]`` list) inside an argument value."""
    if is_ref(v):
        yield v[REF]
    elif isinstance(v, dict):
        for x in v.values():
            yield from iter_refs(x)
    elif isinstance(v, list):
        for x in v:
            yield from iter_refs(x)


def _resolve(v: Any, outputs: list[Any]) -> Any:
    if is_ref(v):
        step, *path = v[REF]
        if not isinstance(step, int) or step < 0 or step >= len(outputs) or outputs[step] is None:
            raise RefError(f"reference to step {step}, which has no output")
        cur = outputs[step]
        for k in path:
            try:
                cur = cur[k]
            except (KeyError, IndexError, TypeError):
                raise RefError(f"step {step} output has no {'/'.join(map(str, path))}") from None
        return cur
    if isinstance(v, dict):
        return {k: _resolve(x, outputs) for k, x in v.items()}
    if isinstance(v, list):
        return [_resolve(x, outputs) for x in v]
    return v


def resolve_args(args: dict[str, Any], outputs: list[Any]) -> dict[str, Any]:
    """Concrete arguments: every reference replaced by the value it points at (or RefError)."""
    return {k: _resolve(v, outputs) for k, v in args.items()}


@dataclass
class Step:
    """One tool call of a plan.

    ``role``: ``goal`` (what the task is about), ``discover`` (finds an input of a later
    step), ``setup`` (creates or changes state a later step needs), ``branch`` (a side
    look-up nothing depends on).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    deps: list[int] = field(default_factory=list)
    role: str = "discover"

    def ref_steps(self) -> list[int]:
        return sorted({r[0] for r in iter_refs(self.args)})


@dataclass
class Plan:
    """A sampled plan: steps in topological order, its goals and what the user knows.

    ``user_facts`` maps ``entity.field`` (facts about rows of the initial state the user
    can state, e.g. ``traveler.email``) or ``tool.param`` (new values the user wants
    written, e.g. ``create_traveler.first_name``) to the literal used in the plan.
    """

    env: str
    domain: str
    steps: list[Step]
    goal_tools: list[str]
    goal_steps: list[int]
    user_facts: dict[str, Any] = field(default_factory=dict)
    sampler: str = "topology"
    seed: int = 0
    index: int = 0

    @property
    def tools(self) -> list[str]:
        return [s.tool for s in self.steps]

    def dag(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.steps)))
        for i, s in enumerate(self.steps):
            for d in s.deps:
                g.add_edge(d, i)
        return g

    def pairs(self) -> list[tuple[str, str]]:
        """(producer tool, consumer tool) for each dependency edge."""
        return sorted({(self.steps[d].tool, s.tool) for s in self.steps for d in s.deps})

    def chain_length(self) -> int:
        """Steps on the longest dependency path."""
        return nx.dag_longest_path_length(self.dag()) + 1 if self.steps else 0

    def branching(self) -> int:
        """Independent root steps (parallel branches that start the plan)."""
        return sum(1 for s in self.steps if not s.deps)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        d = dict(d)
        d["steps"] = [Step(**s) for s in d["steps"]]
        return cls(**d)


def order_plan(steps: list[Step], goal_steps: list[int], writes: set[str]) -> tuple[list[Step], list[int]]:
    """Topological order, reads before writes where dependencies allow; references renumbered.

    Reads first keeps each read seeing the initial state it was planned against.
    """
    preds = [set(s.deps) | set(s.ref_steps()) for s in steps]
    succs: list[list[int]] = [[] for _ in steps]
    for i, ps in enumerate(preds):
        for d in ps:
            succs[d].append(i)
    waiting = [len(ps) for ps in preds]
    ready = [((steps[i].tool in writes), i) for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for j in succs[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, ((steps[j].tool in writes), j))
    if len(order) != len(steps):
        raise ValueError("plan steps have a dependency cycle")
    new = {old: k for k, old in enumerate(order)}

    def renumber(v: Any) -> Any:
        if is_ref(v):
            step, *path = v[REF]
            return {REF: [new[step], *path]}
        if isinstance(v, dict):
            return {k: renumber(x) for k, x in v.items()}
        if isinstance(v, list):
            return [renumber(x) for x in v]
        return v

    out = []
    for old in order:
        s = steps[old]
        out.append(
            Step(
                s.tool,
                {k: renumber(v) for k, v in s.args.items()},
                sorted({new[d] for d in set(s.deps) | set(s.ref_steps())}),
                s.role,
            )
        )
    return out, [new[i] for i in goal_steps]
