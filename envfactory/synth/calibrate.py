"""Difficulty calibration, Envs-FORGE style: estimate, choose an edit per task by MILP, edit.

Pass-rate estimate without a model (documented proxy): a logistic in structural features

    logit p = 3.0 - 0.45 (chain - 1) - 0.25 ids - 0.5 (goals - 1) - 0.2 (branches - 1)
              - 0.02 distractors - 0.3 hidden - 0.35 constraints - 0.15 writes

chain: steps on the longest dependency path; ids: references (values the agent must discover);
goals: goal steps; branches: independent root steps; distractors: env tools the plan does not
use; hidden: facts the user only reveals when asked; constraints: picks resolved by an
implicit constraint ("the cheapest one"); writes: state-changing calls.

With a solver model (``measure_pass_rate``), the estimate is measured instead: k independent
rollouts of the task with the model as the assistant (``TeacherPolicy``, temperature > 0, a
fresh session from the task's initial state each time, the rule-based user simulator, the
task's turn limit), p^ = successes / k where success is reward 1.0. A model error ends that
rollout as a failure (counted). The measured rate then replaces the proxy as the MILP's p^.

Six actions {harder, easier, different} x {depth, breadth}. Predicted rate after an action
p~ = clip(p + D*g, 0, 1) with D = -0.25 (harder) / +0.25 (easier) / 0 (different) and
g = 1 (depth) / 0.65 (breadth); score = exp(-(p~ - tau)^2 / (2 sigma^2)), tau = 0.5,
sigma = 0.2. One action per task is chosen by a mixed-integer program (scipy milp) that
maximizes the total score, optionally plus soft tool-coverage targets (with slack); ties go
to the earlier action in ``ACTIONS`` (a tiny order-dependent epsilon).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..graph import Plan, Step
from ..graph.plan import REF, is_ref, iter_refs
from ..spec import EnvSpec, ToolKind

__all__ = [
    "ACTIONS",
    "TAU",
    "SIGMA",
    "action_score",
    "predicted_after",
    "estimate_pass_rate",
    "difficulty_features",
    "choose_actions",
    "edit_plan",
    "level_of",
    "pick_partner",
    "shares_step",
    "SolverMeasurement",
    "measure_pass_rate",
]

ACTIONS = (
    "harder-depth",
    "harder-breadth",
    "easier-depth",
    "easier-breadth",
    "different-depth",
    "different-breadth",
)
TAU, SIGMA = 0.5, 0.2
_DELTA = {"harder": -0.25, "easier": 0.25, "different": 0.0}
_GAMMA = {"depth": 1.0, "breadth": 0.65}
_TIE_EPS = 1e-7
_W = {
    "bias": 3.0,
    "chain": 0.45,
    "ids": 0.25,
    "goals": 0.5,
    "branches": 0.2,
    "distractors": 0.02,
    "hidden": 0.3,
    "constraints": 0.35,
    "writes": 0.15,
}


def predicted_after(p_hat: float, action: str) -> float:
    d, g = action.split("-")
    return min(1.0, max(0.0, p_hat + _DELTA[d] * _GAMMA[g]))


def action_score(p_hat: float, action: str) -> float:
    p = predicted_after(p_hat, action)
    return math.exp(-((p - TAU) ** 2) / (2 * SIGMA**2))


def difficulty_features(
    plan: Plan, spec: EnvSpec, *, hidden: int = 0, constraints: int = 0
) -> dict[str, float]:
    return {
        "chain": float(plan.chain_length()),
        "ids": float(sum(1 for s in plan.steps for _ in iter_refs(s.args))),
        "goals": float(len(plan.goal_steps)),
        "branches": float(plan.branching()),
        "distractors": float(len(spec.tools) - len(set(plan.tools))),
        "hidden": float(hidden),
        "constraints": float(constraints),
        "writes": float(sum(1 for s in plan.steps if spec.tool(s.tool).writes)),
    }


def estimate_pass_rate(features: dict[str, float]) -> float:
    f = features
    z = (
        _W["bias"]
        - _W["chain"] * (f["chain"] - 1)
        - _W["ids"] * f["ids"]
        - _W["goals"] * (f["goals"] - 1)
        - _W["branches"] * (f["branches"] - 1)
        - _W["distractors"] * f["distractors"]
        - _W["hidden"] * f["hidden"]
        - _W["constraints"] * f["constraints"]
        - _W["writes"] * f["writes"]
    )
    return round(1 / (1 + math.exp(-z)), 4)


def level_of(p: float) -> str:
    return "easy" if p >= 0.7 else ("hard" if p < 0.4 else "medium")


def choose_actions(
    p_hats: Sequence[float],
    *,
    feasible: Sequence[Sequence[bool]] | None = None,
    tools: Sequence[Sequence[set[str]]] | None = None,
    targets: dict[str, int] | None = None,
    coverage_weight: float = 0.5,
) -> list[tuple[str, float]]:
    """One action per task maximizing total score (+ soft coverage); returns (action, score).

    ``feasible[i][a]``: whether action ``a`` can be applied to task ``i``. ``tools[i][a]``: tools
    the task would use after action ``a``; with ``targets`` (tool -> at least this many tasks)
    each unmet unit costs ``coverage_weight`` (a slack variable per tool).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    n, m = len(p_hats), len(ACTIONS)
    if n == 0:
        return []
    scores = np.array([[action_score(p, a) for a in ACTIONS] for p in p_hats])
    feas = np.ones((n, m), bool) if feasible is None else np.array(feasible, bool)
    targets = {t: c for t, c in (targets or {}).items() if c > 0} if tools is not None else {}
    tnames = sorted(targets)
    nv = n * m + len(tnames)
    c = np.zeros(nv)
    c[: n * m] = -(scores - _TIE_EPS * np.arange(m)[None, :]).ravel()
    c[n * m :] = coverage_weight
    # tnames is empty unless ``tools`` is given, so the empty fallback is never indexed
    tool_sets: Sequence[Sequence[set[str]]] = tools if tools is not None else []
    rows: list[np.ndarray] = []
    lb: list[float] = []
    ub: list[float] = []
    for i in range(n):
        r = np.zeros(nv)
        r[i * m : (i + 1) * m] = 1
        rows.append(r)
        lb.append(1)
        ub.append(1)
    for k, t in enumerate(tnames):
        r = np.zeros(nv)
        for i in range(n):
            for a in range(m):
                if t in tool_sets[i][a]:
                    r[i * m + a] = 1
        r[n * m + k] = 1
        rows.append(r)
        lb.append(targets[t])
        ub.append(np.inf)
    upper = np.concatenate([feas.ravel().astype(float), np.full(len(tnames), np.inf)])
    integrality = np.concatenate([np.ones(n * m), np.zeros(len(tnames))])
    res = milp(
        c,
        constraints=LinearConstraint(np.array(rows), lb, ub),
        integrality=integrality,
        bounds=Bounds(np.zeros(nv), upper),
        options={"mip_rel_gap": 0.0},
    )
    if not res.success:  # e.g. a task with no feasible action: fall back to the best feasible per task
        out = []
        for i in range(n):
            best = max((a for a in range(m) if feas[i, a]), key=lambda a: (scores[i, a], -a), default=4)
            out.append((ACTIONS[best], float(scores[i, best])))
        return out
    x = res.x[: n * m].reshape(n, m)
    out = []
    for i in range(n):
        a = int(np.argmax(x[i]))
        # Deterministic ties: the earliest action with the same score and no less target coverage.
        need = (tool_sets[i][a] & set(tnames)) if tnames else set()
        for e in range(a):
            if feas[i, e] and scores[i, e] >= scores[i, a] - 1e-12 and (not need or need <= tool_sets[i][e]):
                a = e
                break
        out.append((ACTIONS[a], float(scores[i, a])))
    return out


# --- plan edits -------------------------------------------------------------------------


def _renumber(v: Any, mapping: dict[int, int]) -> Any:
    if is_ref(v):
        s, *path = v[REF]
        return {REF: [mapping[s], *path]}
    if isinstance(v, dict):
        return {k: _renumber(x, mapping) for k, x in v.items()}
    if isinstance(v, list):
        return [_renumber(x, mapping) for x in v]
    return v


def _prune(
    plan: Plan, steps: list[Step], goals: list[int], facts: dict[str, Any], spec: EnvSpec
) -> Plan | None:
    """Drop steps nothing needs (not goals, not writes, no consumers); renumber references."""
    keep = set(goals) | {i for i, s in enumerate(steps) if spec.tool(s.tool).writes}
    changed = True
    while changed:
        changed = False
        for i in sorted(keep):
            for d in set(steps[i].deps) | set(steps[i].ref_steps()):
                if d not in keep:
                    keep.add(d)
                    changed = True
    order = sorted(keep)
    mp = {old: new for new, old in enumerate(order)}
    new_steps = [
        Step(
            steps[i].tool,
            _renumber(steps[i].args, mp),
            sorted(mp[d] for d in steps[i].deps if d in mp),
            steps[i].role,
        )
        for i in order
    ]
    if not new_steps:
        return None
    ents = {spec.tool(s.tool).entity for s in new_steps}
    tools = {s.tool for s in new_steps}
    kept_facts = {}
    for k, v in facts.items():
        head = k.split("#", 1)[0].split(".", 1)[0]
        if head in ents or head in tools or head == "prefer":
            kept_facts[k] = v
    ng = [mp[g] for g in goals if g in mp]
    return Plan(
        plan.env,
        plan.domain,
        new_steps,
        [new_steps[g].tool for g in ng],
        ng,
        kept_facts,
        plan.sampler,
        plan.seed,
        plan.index,
    )


def _harder_depth(plan: Plan, outputs: list[Any], spec: EnvSpec) -> Plan | None:
    """Add a dependent look-up: a goal's row references another entity; ask about that too."""
    gets = {t.entity: t for t in spec.tools if t.kind == ToolKind.get}
    have = {(s.tool, repr(s.args)) for s in plan.steps}
    # a row the user describes is one they know: asking to look it up again is no request a person
    # makes ('create an item in my shop at acme.com ... then look up the shop of that item')
    seen = {k.split("#", 1)[0].split(".", 1)[0] for k in plan.user_facts}
    # ... or one the user picked out of a list (by a detail the realizer states): they know it too
    seen |= {spec.tool(s.tool).entity for s in plan.steps if spec.tool(s.tool).kind == ToolKind.list}
    for g in reversed(plan.goal_steps):
        out = outputs[g] if g < len(outputs) else None
        if not isinstance(out, dict) or "items" in out or "deleted" in out:
            continue
        ent = spec.entity(spec.tool(plan.steps[g].tool).entity)
        for f in ent.fields:
            if f.ref and f.ref in gets and f.ref not in seen and out.get(f.name) is not None:
                gt = gets[f.ref]
                key = gt.key_param
                if key is None:  # a singleton's get takes no id
                    continue
                args = {key.name: {REF: [g, f.name]}}
                if (gt.tool if hasattr(gt, "tool") else gt.name, repr(args)) in have:
                    continue
                steps = list(plan.steps) + [Step(gt.name, args, [g], "goal")]
                goals = list(plan.goal_steps) + [len(steps) - 1]
                return Plan(
                    plan.env,
                    plan.domain,
                    steps,
                    [steps[i].tool for i in goals],
                    goals,
                    dict(plan.user_facts),
                    plan.sampler,
                    plan.seed,
                    plan.index,
                )
    return None


def _easier_depth(plan: Plan, calls: list[Any], spec: EnvSpec) -> Plan | None:
    """State a discovered id directly (a booking reference the user has), dropping the hop."""
    for g in plan.goal_steps:
        st = plan.steps[g]
        t = spec.tool(st.tool)
        kp = t.key_param
        if kp is None or not is_ref(st.args.get(kp.name)) or g >= len(calls):
            continue
        src = st.args[kp.name][REF][0]
        if plan.steps[src].role not in ("discover",):
            continue
        value = calls[g].args[kp.name]
        steps = [Step(s.tool, dict(s.args), list(s.deps), s.role) for s in plan.steps]
        steps[g].args[kp.name] = value
        steps[g].deps = sorted(set(steps[g].ref_steps()))
        facts = dict(plan.user_facts)
        facts[f"{t.entity}.{spec.entity(t.entity).primary_key}"] = value
        return _prune(plan, steps, list(plan.goal_steps), facts, spec)
    return None


def _step_signatures(plan: Plan) -> list[str]:
    """Each step as its tool and arguments, references replaced by the signature of the step
    they point into: equal signatures are the same call (the same row read the same way)."""
    sigs: list[str] = []

    def canon(v: Any) -> Any:
        if is_ref(v):
            s, *path = v[REF]
            return ["@", sigs[s] if s < len(sigs) else s, *path]
        if isinstance(v, dict):
            return {k: canon(x) for k, x in sorted(v.items())}
        if isinstance(v, list):
            return [canon(x) for x in v]
        return v

    for st in plan.steps:
        sigs.append(repr((st.tool, canon(st.args))))
    return sigs


def shares_step(plan: Plan, partner: Plan) -> bool:
    """Whether ``partner`` repeats a call of ``plan`` (merged, the request would say it twice)."""
    return bool(set(_step_signatures(plan)) & set(_step_signatures(partner)))


def pick_partner(plan: Plan, pool: Sequence[Plan], start: int) -> Plan | None:
    """The first plan of ``pool`` from ``start`` (cyclically) that harder-breadth can merge:
    same env, not ``plan`` itself and sharing no call with it."""
    n = len(pool)
    for k in range(n):
        cand = pool[(start + k) % n]
        if cand.env == plan.env and cand is not plan and not shares_step(plan, cand):
            return cand
    return None


def _harder_breadth(plan: Plan, partner: Plan | None, spec: EnvSpec) -> Plan | None:
    """Add a second, independent goal (another sampled read-only plan of the same env)."""
    if partner is None or partner.env != plan.env or shares_step(plan, partner):
        return None
    off = len(plan.steps)
    mp = {i: i + off for i in range(len(partner.steps))}
    steps = list(plan.steps) + [
        Step(s.tool, _renumber(s.args, mp), [d + off for d in s.deps], s.role) for s in partner.steps
    ]
    goals = list(plan.goal_steps) + [g + off for g in partner.goal_steps]
    facts = dict(plan.user_facts)
    for k, v in partner.user_facts.items():
        base, n = k, 2
        while k in facts:
            k = f"{base.split('#', 1)[0]}#{n}"
            n += 1
        facts[k] = v
    return Plan(
        plan.env,
        plan.domain,
        steps,
        [steps[g].tool for g in goals],
        goals,
        facts,
        plan.sampler,
        plan.seed,
        plan.index,
    )


def _easier_breadth(plan: Plan, spec: EnvSpec) -> Plan | None:
    """Drop the last goal (with what only it needed), or side look-ups nothing depends on."""
    if len(plan.goal_steps) >= 2:
        last = plan.goal_steps[-1]
        needed = set()
        for g in plan.goal_steps[:-1]:
            stack = [g]
            while stack:
                j = stack.pop()
                if j in needed:
                    continue
                needed.add(j)
                stack.extend(set(plan.steps[j].deps) | set(plan.steps[j].ref_steps()))
        if last in needed:
            return None
        steps = [s for i, s in enumerate(plan.steps)]
        keep = sorted(
            needed
            | {
                i
                for i, s in enumerate(steps)
                if spec.tool(s.tool).writes and i != last and not (set(s.deps) | set(s.ref_steps())) & {last}
            }
        )
        sub = [steps[i] for i in keep]
        mp = {old: new for new, old in enumerate(keep)}
        try:
            sub = [Step(s.tool, _renumber(s.args, mp), [mp[d] for d in s.deps], s.role) for s in sub]
        except KeyError:
            return None
        return _prune(plan, sub, [mp[g] for g in plan.goal_steps[:-1]], dict(plan.user_facts), spec)
    if any(s.role == "branch" for s in plan.steps):
        keep_steps = list(plan.steps)
        return (
            _prune(
                plan,
                [s if s.role != "branch" else s for s in keep_steps],
                list(plan.goal_steps),
                dict(plan.user_facts),
                spec,
            )
            if _has_droppable_branch(plan, spec)
            else None
        )
    return None


def _has_droppable_branch(plan: Plan, spec: EnvSpec) -> bool:
    used = {d for s in plan.steps for d in set(s.deps) | set(s.ref_steps())}
    return any(
        s.role == "branch" and i not in used and i not in plan.goal_steps and not spec.tool(s.tool).writes
        for i, s in enumerate(plan.steps)
    )


def edit_plan(
    action: str, plan: Plan, calls: list[Any], spec: EnvSpec, *, partner: Plan | None = None
) -> Plan | None:
    """The plan after ``action``, or None when the action does not apply. 'different-*' keeps
    the plan (the task is re-realized with other phrasing / constraint choices)."""
    outputs = [c.output for c in calls]
    if action == "harder-depth":
        return _harder_depth(plan, outputs, spec)
    if action == "easier-depth":
        return _easier_depth(plan, calls, spec)
    if action == "harder-breadth":
        return _harder_breadth(plan, partner, spec)
    if action == "easier-breadth":
        return _easier_breadth(plan, spec)
    return plan


SolverFn = Callable[[Any], float]


# --- measured pass rate (solver rollouts) -------------------------------------------------


@dataclass
class SolverMeasurement:
    """k solver rollouts of one task. ``outcomes[j]``: 'success', 'wrong' (reward < 1),
    'turn_limit', 'model_error' (the model call failed) or 'error' (anything else raised)."""

    k: int
    outcomes: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def successes(self) -> int:
        return self.outcomes.count("success")

    @property
    def model_errors(self) -> int:
        return self.outcomes.count("model_error")

    @property
    def pass_rate(self) -> float:
        return round(self.successes / self.k, 4) if self.k else 0.0


def measure_pass_rate(
    task: Any,
    env: Any,
    model: Any,
    *,
    k: int,
    seed: int = 0,
    temperature: float = 0.7,
    max_turns: int | None = None,
) -> SolverMeasurement:
    """p^ = successes / k over ``k`` rollouts of ``task`` with ``model`` as the assistant.

    Each rollout is ``run_rollout`` on a fresh in-process session from ``task.initial_state``,
    with ``TeacherPolicy(model, temperature=temperature, seed=seed)`` and attempt index j (so
    rollout j sends seeds ``seed * 1000 + 100 j + call``), the rule-based user simulator, and at
    most ``min(task.turn_limit, max_turns)`` assistant messages. Never raises: a model error or
    any other exception is a failed rollout, recorded in ``outcomes`` (and the first messages
    in ``errors``).
    """
    from .policy import TeacherPolicy
    from .rollout import run_rollout

    m = SolverMeasurement(k=k)
    if max_turns is not None and max_turns < task.turn_limit:
        task = task.model_copy(update={"turn_limit": max(1, max_turns)})
    policy = TeacherPolicy(model, attempts=1, temperature=temperature, seed=seed)
    for j in range(k):
        try:
            tr = run_rollout(task, env, policy=policy, seed=seed, attempt=j)
        except Exception as e:  # never crash the build: a broken rollout is a failed one
            m.outcomes.append("error")
            if len(m.errors) < 3:
                m.errors.append(f"{type(e).__name__}: {e}"[:300])
            continue
        m.prompt_tokens += int(tr.usage.get("prompt_tokens", 0))
        m.completion_tokens += int(tr.usage.get("completion_tokens", 0))
        if tr.ok:
            m.outcomes.append("success")
        elif tr.failure and tr.failure.startswith("model error"):
            m.outcomes.append("model_error")
            if len(m.errors) < 3:
                m.errors.append(tr.failure[:300])
        elif tr.failure and tr.failure.startswith("turn limit"):
            m.outcomes.append("turn_limit")
        else:
            m.outcomes.append("wrong")
    return m
