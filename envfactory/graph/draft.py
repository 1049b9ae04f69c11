"""A plan under construction, with one checkpoint/restore for every grounding that may fail.

Grounding a goal tries options in turn (a list tool, a child's look-up, a setup create...);
each try adds steps, user facts, rows it claims and fresh values it reserved. A failed try
must leave no trace, so every try runs as::

    mark = draft.checkpoint()
    try:
        ...                       # add steps, facts, claims
    except SampleError:
        draft.restore(mark)       # as if the try never happened

``Landing`` is what a goal step leaves behind: the row as predicted after the step, and the
reference path under which later steps find it, kept beside the row rather than inside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RefError, SampleError
from .plan import Step, iter_refs, resolve_args

__all__ = ["PlanDraft", "Checkpoint", "Landing"]


@dataclass
class Landing:
    """The row a goal step acts on or produces, as predicted after the step.

    ``path``: the reference to the row in the plan's outputs (``[step]`` for a write's result,
    ``[step, "items", k]`` for a listed row). ``created``: the row did not exist before this
    plan (a setup or goal create made it).
    """

    row: dict[str, Any]
    path: list[Any]
    created: bool = False


@dataclass(frozen=True)
class Checkpoint:
    """Everything a failed try may have changed, as it was before the try."""

    steps: int
    facts: dict[str, Any]
    used: frozenset[tuple[str, Any]]
    new_values: frozenset[Any]


@dataclass
class PlanDraft:
    """Steps, their dry-run outputs (``sim``; ``None`` for writes), the user's facts, rows
    already claimed by a goal (``used``), fresh values handed out, and which steps are goals.

    ``dry_run(tool, args)`` reads on a pristine session; it raises ``SampleError`` when the
    read fails.
    """

    dry_run: Callable[[str, dict[str, Any]], Any]
    writes: set[str]
    steps: list[Step] = field(default_factory=list)
    sim: list[Any] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    used: set[tuple[str, Any]] = field(default_factory=set)
    new_values: set[Any] = field(default_factory=set)
    goal_steps: list[int] = field(default_factory=list)

    def add(self, tool: str, args: dict[str, Any], role: str, deps: Sequence[int] = ()) -> int:
        """Append a step (dry-running it when it is a read whose inputs are known); its index."""
        refs = {r[0] for r in iter_refs(args)}
        deps_all = sorted(set(deps) | refs)
        out = None
        if tool not in self.writes and all(self.sim[d] is not None for d in refs):
            try:
                concrete = resolve_args(args, self.sim)
            except RefError as e:
                raise SampleError(str(e)) from None
            out = self.dry_run(tool, concrete)
        self.steps.append(Step(tool, args, deps_all, role))
        self.sim.append(out)
        return len(self.steps) - 1

    def fact(self, key: str, value: Any) -> None:
        """Record a fact the user states; a second, different value of one key gets ``key#2``."""
        k, n = key, 2
        while k in self.facts and self.facts[k] != value:
            k = f"{key}#{n}"
            n += 1
        self.facts[k] = value

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(len(self.steps), dict(self.facts), frozenset(self.used), frozenset(self.new_values))

    def restore(self, mark: Checkpoint) -> None:
        """Undo everything added since ``mark`` (steps, outputs, facts, claims, fresh values)."""
        del self.steps[mark.steps :]
        del self.sim[mark.steps :]
        self.goal_steps = [g for g in self.goal_steps if g < mark.steps]
        self.facts = dict(mark.facts)
        self.used = set(mark.used)
        self.new_values = set(mark.new_values)
