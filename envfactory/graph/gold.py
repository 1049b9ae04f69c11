"""Gold execution: run a plan on a fresh session, resolving references from earlier outputs.

A plan is kept (``GoldResult.ok``) when every call succeeds and it either changes the state
or its goal steps return non-empty results. The result records the concrete calls, their
outputs, the initial and final state hashes and the diff: what tasks and rewards are built
from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import RuntimeToolError
from .plan import Plan, RefError, resolve_args

__all__ = ["GoldCall", "GoldResult", "execute_plan", "execute_plans"]


@dataclass
class GoldCall:
    """One executed call: concrete arguments and the tool's JSON result (or its error)."""

    tool: str
    args: dict[str, Any]
    ok: bool
    output: Any = None
    error: str | None = None
    message: str | None = None


@dataclass
class GoldResult:
    """A plan as executed. ``failure`` says why it was not kept (``None`` when ``ok``).

    ``failed_step`` is the index of the step that failed (a tool error or an unresolvable
    reference). ``diff`` is ``StateDiff.to_dict()`` (added/removed/changed rows per table).
    """

    plan: Plan
    ok: bool
    calls: list[GoldCall] = field(default_factory=list)
    initial_hash: str = ""
    final_hash: str = ""
    changed_state: bool = False
    diff: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None
    failed_step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GoldResult:
        d = dict(d)
        d["plan"] = Plan.from_dict(d["plan"])
        d["calls"] = [GoldCall(**c) for c in d["calls"]]
        return cls(**d)


def _non_empty(out: Any) -> bool:
    if isinstance(out, dict) and "items" in out:
        return bool(out["items"])
    return bool(out)


def execute_plan(
    env: Any, plan: Plan, *, initial_hash: str | None = None, with_diff: bool = True
) -> GoldResult:
    """Run ``plan`` on ``env.new_session()`` (an ``Environment``); never raises for a bad plan."""
    res = GoldResult(plan=plan, ok=False)
    outputs: list[Any] = []
    with env.new_session() as s:
        res.initial_hash = initial_hash or s.state_hash()
        for i, step in enumerate(plan.steps):
            try:
                args = resolve_args(step.args, outputs)
            except RefError as e:
                res.failure, res.failed_step = f"unresolved reference: {e}", i
                break
            try:
                out = s.call(step.tool, args)
            except RuntimeToolError as e:
                d = e.to_dict()
                res.calls.append(GoldCall(step.tool, args, False, None, d.get("error"), d.get("message")))
                res.failure, res.failed_step = f"{d.get('error')}: {d.get('message')}", i
                break
            res.calls.append(GoldCall(step.tool, args, True, out))
            outputs.append(out)
        res.final_hash = s.state_hash()
        res.changed_state = res.final_hash != res.initial_hash
        if res.failure is None:
            if res.changed_state:
                res.ok = True
            elif all(_non_empty(outputs[g]) for g in plan.goal_steps):
                res.ok = True
            else:
                res.failure = "no state change and an empty goal result"
        if with_diff and res.changed_state:
            res.diff = s.diff().to_dict()
    return res


def execute_plans(
    envs: Mapping[str, Any] | Iterable[Any], plans: Iterable[Plan], *, with_diff: bool = True
) -> list[GoldResult]:
    """Execute many plans; ``envs`` maps environment name to ``Environment`` (or is a list)."""
    env_map: Mapping[str, Any]
    if isinstance(envs, Mapping):
        env_map = envs
    else:
        env_list: Iterable[Any] = envs  # environments, not a mapping's keys
        env_map = {e.spec.name: e for e in env_list}
    hashes: dict[str, str] = {}
    out = []
    for p in plans:
        env = env_map[p.env]
        if p.env not in hashes:
            with env.new_session() as s:
                hashes[p.env] = s.state_hash()
        out.append(execute_plan(env, p, initial_hash=hashes[p.env], with_diff=with_diff))
    return out
