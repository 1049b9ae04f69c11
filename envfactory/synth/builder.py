"""One executed plan -> a checked Task: realize the goal, run the checks, reword or drop.

``_Builder.make`` realizes a plan (``realize.py``), builds the Task (``task_from_gold``) and runs
the checks (``checks.py``), rewording up to ``TaskConfig.realize_attempts - 1`` times; with a
``ChatModel`` the goal is also rewritten by the model and the text checks re-run on the rewrite.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ModelError
from ..graph import GoldResult
from ..graph.plan import is_ref, iter_refs
from ..spec import Difficulty, GoldStep, RewardSpec, Task
from .calibrate import difficulty_features, estimate_pass_rate, level_of
from .checks import (
    Finding,
    run_checks,
)
from .config import TaskConfig
from .decontam import NgramIndex
from .phrasing import sayable_noun
from .realize import Realization, realize_goal

if TYPE_CHECKING:
    from .tasks import TaskReport

__all__ = ["task_from_gold", "rewrite_goal_with_model"]


def _unit(key: str) -> float:
    """A stable number in [0, 1) for a key."""
    import hashlib

    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


def _refs(args: dict[str, Any]) -> dict[str, list[Any]]:
    return {k: list(next(iter_refs(v))) for k, v in args.items() if is_ref(v)}


def task_from_gold(
    env: Any,
    gold: GoldResult,
    z: Realization,
    *,
    task_id: str,
    seed: int,
    difficulty: Difficulty,
    config: TaskConfig | None = None,
) -> Task:
    """A Task (gold steps, reward spec) from an executed plan and its realization."""
    spec = env.spec
    steps = []
    calls = []
    for i, (st, c) in enumerate(zip(gold.plan.steps, gold.calls)):
        m = z.masked_args[i] if i < len(z.masked_args) else []
        steps.append(GoldStep(tool=c.tool, args=c.args, output=c.output, role=st.role, masked_args=m))
        calls.append({"tool": c.tool, "args": c.args, "refs": _refs(st.args)})
    reward = RewardSpec(
        gold_state_hash=gold.final_hash,
        initial_state_hash=gold.initial_hash,
        gold_diff=gold.diff or {},
        gold_calls=calls,
        masked_args=list(z.masked_args),
        required_facts=list(z.answer_facts),
    )
    return Task(
        task_id=task_id,
        domain=spec.domain,
        env=spec.name,
        source_docs=list(spec.sources),
        seed=seed,
        persona=z.persona,
        goal=z.goal,
        intent=z.intent,
        subgoals=z.subgoals,
        gold=steps,
        answer_facts=list(z.answer_facts),
        reward=reward,
        difficulty=difficulty,
        tools=[t.name for t in spec.tools],
        turn_limit=(config or TaskConfig()).turn_limit(len(steps)),
    )


_REWRITE_PROMPT = (
    "Rewrite the customer's request below so it reads like a real person wrote it. Keep every fact "
    "(names, emails, dates, amounts, numbers) exactly as given, keep every request, add nothing, and do not "
    'mention tools, APIs, ids or steps. Reply with JSON: {"goal": "..."}.\n\nRequest: '
)


def rewrite_goal_with_model(model: Any, goal: str, *, seed: int = 0, temperature: float = 0.7) -> str | None:
    """The model's rewrite of ``goal`` (None when the reply is unusable)."""
    try:
        r = model.complete(
            [{"role": "user", "content": _REWRITE_PROMPT + goal}],
            temperature=temperature,
            seed=seed,
            response_format={"type": "json_object"},
        )
    except ModelError:  # HTTP and transport failures too (backends wrap them): keep the template goal
        return None
    text = (r.content or "").strip()
    try:
        out = json.loads(text[text.find("{") : text.rfind("}") + 1])
        g = out.get("goal") if isinstance(out, dict) else None
    except (ValueError, AttributeError):
        g = None
    return g.strip() if isinstance(g, str) and g.strip() else None


class _Builder:
    """Realizes and checks one executed plan at a time, counting into ``report``."""

    def __init__(
        self,
        envs: Mapping[str, Any],
        seed: int,
        index: NgramIndex | None,
        model: Any,
        report: TaskReport,
        config: TaskConfig,
    ):
        self.envs, self.seed, self.index, self.model, self.report = envs, seed, index, model, report
        self.config = config
        self._states: dict[str, Any] = {}

    def state(self, env_name: str) -> Any:
        """The initial state's index (rows by key), built once per environment."""
        if env_name not in self._states:
            from ..graph.state import state_index

            self._states[env_name] = state_index(self.envs[env_name])
        return self._states[env_name]

    def _difficulty(self, gold: GoldResult, z: Realization, action: str | None = None) -> Difficulty:
        spec = self.envs[gold.plan.env].spec
        f = difficulty_features(
            gold.plan,
            spec,
            hidden=len(z.persona.hidden_facts),
            constraints=sum(1 for s in z.selections if s.how == "constraint"),
        )
        p = estimate_pass_rate(f)
        return Difficulty(predicted_pass_rate=p, level=level_of(p), calibration_action=action, features=f)

    def make(
        self,
        gold: GoldResult,
        task_id: str,
        *,
        action: str | None = None,
        variant: int = 0,
        count: bool = True,
    ) -> Task | None:
        """Realize + check, rewriting up to ``realize_attempts - 1`` times; None when dropped."""
        env = self.envs[gold.plan.env]
        if not all(sayable_noun(env.spec.tool(st.tool).entity) for st in gold.plan.steps):
            # no one can ask for a row of an entity they cannot name ('add a x'): incomplete as said
            if count:
                self.report.checks["complete"]["failed"] += 1
                self.report.checks["complete"]["dropped"] += 1
            return None
        failed: list[str] = []
        drop: set[str] = set()
        prefer = variant % 2 == 0 if action == "different-depth" else True
        last: Finding | None = None
        refusal = _unit(f"refusal:{self.seed}:{task_id}") < self.config.p_refusal
        for attempt in range(self.config.realize_attempts):
            z = realize_goal(
                env.spec,
                gold,
                seed=self.seed * 7919 + variant * 31 + attempt,
                prefer_constraints=prefer,
                hide_rate=self.config.hide_rate,
                drop_facts=drop,
                refusal=refusal,
            )
            task = task_from_gold(
                env,
                gold,
                z,
                task_id=task_id,
                seed=self.seed,
                difficulty=self._difficulty(gold, z, action),
                config=self.config,
            )
            findings = run_checks(task, env, self.index, self.state(gold.plan.env), first_failure=True)
            bad = next((f for f in findings if not f.ok), None)
            if bad is None:
                if count:
                    for c in failed:
                        self.report.checks[c]["rewritten"] += 1
                    for r in z.rules:
                        self.report.rules[r] = self.report.rules.get(r, 0) + 1
                task.checks_passed = [f.check for f in findings if f.ran]
                if self.model is not None:
                    task = self._llm(task, env)
                return task
            last = bad
            if count:
                self.report.checks[bad.check]["failed"] += 1
            failed.append(bad.check)
            if bad.check in ("solvable", "not_presatisfied", "needed", "provenance", "sayable") or (
                bad.check == "resolves" and "pick" in bad.message
            ):
                break  # no rewording fixes the gold run itself (measured: rewrites rarely fix these)
            if bad.check in ("not_overspecified", "resolves") and "id " in bad.message:
                leaked = bad.message.rsplit("id ", 1)[1].split(",", 1)[0]
                drop |= {k for k, v in z.persona.known_facts.items() if str(v) == leaked}
            prefer = not prefer
        if count and last is not None:
            self.report.checks[last.check]["dropped"] += 1
        return None

    def _llm(self, task: Task, env: Any) -> Task:
        self.report.llm["attempted"] = self.report.llm.get("attempted", 0) + 1
        g = rewrite_goal_with_model(
            self.model, task.goal, seed=self.seed, temperature=self.config.rewrite_temperature
        )
        if g is None:
            self.report.llm["unusable"] = self.report.llm.get("unusable", 0) + 1
            return task
        cand = task.model_copy(update={"goal": g})
        for f in run_checks(cand, env, self.index, self.state(task.env), first_failure=True):  # every check
            if not f.ok:
                self.report.llm["rejected"] = self.report.llm.get("rejected", 0) + 1
                self.report.llm[f"rejected_{f.check}"] = self.report.llm.get(f"rejected_{f.check}", 0) + 1
                return task
        self.report.llm["accepted"] = self.report.llm.get("accepted", 0) + 1
        return cand
