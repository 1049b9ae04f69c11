"""Build tasks from sampled, executed plans: realize, check, rewrite or drop, calibrate.

    result = build_tasks(envs, n=1000, seed=0)          # no model: template realizer
    result.tasks   -> list[Task]; result.report -> TaskReport

Pipeline per seed plan: realize the goal (``realize.py``), run the checks (``checks.py``);
a failed check gets up to two rewrites (other phrasing, other constraint choice, dropping
the fact that leaked) before the task is dropped; counts per check go to the report. Then
difficulty calibration (``calibrate.py``): a pass-rate estimate per task, one of six edit
actions per task chosen by a MILP, the edited plan re-executed (gold execution) and the task
realized and checked again; an edit that no longer executes or passes is reverted.
With a ``ChatModel``, each goal is also rewritten by the model and the text checks re-run on
the rewrite (rejected rewrites keep the template goal).

Measured pass rates (``model`` and ``solver_rollouts=k > 0``): every seed task that passed the
checks is rolled out k times with the model as the solver (``calibrate.measure_pass_rate``);
p^ = successes / k goes to ``Difficulty.measured_pass_rate`` and is the p^ the MILP uses. The
structural estimate stays in ``predicted_pass_rate`` (and ``level``) for comparison. Since
``Difficulty.features`` holds numbers only, the source is recorded as numbers there:
``pass_rate_from_solver`` (1.0: the MILP used the measured rate), ``p_hat`` (the rate it used),
``solver_k``, ``solver_successes`` and ``solver_model_errors``. A task that calibration edits
(any applied action, 'different-*' included) is a new task that was not measured: its
``measured_pass_rate`` is None (no second round of rollouts, which would double the cost), and
its features keep ``measured_before`` and ``predicted_target`` (the MILP's target, on the
measured scale). A reverted edit leaves the measured seed task as it was, rate included.
Without a model, or with k = 0, nothing changes: same tasks, same bytes.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ModelError
from ..graph import GoldResult, execute_plan, run_sampling
from ..graph.plan import is_ref, iter_refs
from ..spec import Difficulty, GoldStep, RewardSpec, Task
from .calibrate import (
    ACTIONS,
    SolverMeasurement,
    choose_actions,
    difficulty_features,
    edit_plan,
    estimate_pass_rate,
    level_of,
    measure_pass_rate,
    pick_partner,
    predicted_after,
)
from .checks import (
    CHECKS,
    Finding,
    run_checks,
)
from .config import TaskConfig
from .decontam import NgramIndex, load_benchmark_index
from .realize import Realization, realize_goal

__all__ = ["TaskReport", "TaskBuildResult", "build_tasks", "task_from_gold", "rewrite_goal_with_model"]

_TEXT_CHECKS = ("complete", "not_overspecified", "decontaminated")


@dataclass
class TaskReport:
    """What happened to the candidates. ``checks[check]``: failed / rewritten / dropped counts.

    ``solver`` (only when pass rates were measured): rollouts per task, tasks measured, outcome
    counts (successes, wrong, turn_limit, model_errors, errors), mean measured vs mean predicted
    (structural) over the measured tasks, the measured histogram, the mean MILP target after
    calibration, and the solver stage's model usage (``UsageLedger`` summary: calls, tokens,
    latency). ``model_usage``: the ledger summary of every model call of the build (rewrites
    and solver). Histograms and ``mean_pass_rate_*`` stay on the structural estimate.
    """

    requested: int
    plans_sampled: int = 0
    plans_executed_ok: int = 0
    candidates: int = 0
    kept: int = 0
    checks: dict[str, dict[str, int]] = field(
        default_factory=lambda: {c: {"failed": 0, "rewritten": 0, "dropped": 0} for c in CHECKS}
    )
    actions: dict[str, int] = field(default_factory=dict)
    edits_reverted: dict[str, int] = field(default_factory=dict)
    histogram_before: dict[str, int] = field(default_factory=dict)
    histogram_after: dict[str, int] = field(default_factory=dict)
    mean_pass_rate_before: float = 0.0
    mean_pass_rate_after: float = 0.0
    rules: dict[str, int] = field(default_factory=dict)
    decontam_sources: dict[str, int] = field(default_factory=dict)
    decontam_unavailable: dict[str, str] = field(default_factory=dict)
    llm: dict[str, int] = field(default_factory=dict)
    solver: dict[str, Any] = field(default_factory=dict)
    model_usage: dict[str, Any] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TaskBuildResult:
    tasks: list[Task]
    report: TaskReport


def _hist(ps: Sequence[float]) -> dict[str, int]:
    c = Counter(min(9, int(p * 10)) for p in ps)
    return {f"{b / 10:.1f}-{(b + 1) / 10:.1f}": c.get(b, 0) for b in range(10)}


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
            from ..graph.state import StateIndex

            env = self.envs[env_name]
            with env.new_session() as s:
                self._states[env_name] = StateIndex(env.spec, s)
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
            if bad.check in ("solvable", "not_presatisfied", "needed", "provenance") or (
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


def _ledger_summary(records: Sequence[Any]) -> dict[str, Any]:
    from ..llm import UsageLedger

    led = UsageLedger()
    for r in records:
        led.record(r)
    return led.summary().model_dump()


def _measure_seeds(
    seeds: list[tuple[GoldResult, Task]],
    by_name: Mapping[str, Any],
    model: Any,
    *,
    k: int,
    seed: int,
    temperature: float,
    max_turns: int | None,
    workers: int,
    on_progress: Callable[[str, int, int], None] | None,
) -> list[SolverMeasurement]:
    """k solver rollouts per seed task, tasks in parallel (``workers`` threads; every rollout has
    its own session), results in task order."""
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> SolverMeasurement:
        g, t = seeds[i]
        return measure_pass_rate(
            t,
            by_name[g.plan.env],
            model,
            k=k,
            seed=seed * 1009 + i,
            temperature=temperature,
            max_turns=max_turns,
        )

    out: list[SolverMeasurement] = []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(seeds)))) as pool:
        for i, m in enumerate(pool.map(one, range(len(seeds)))):
            out.append(m)
            if on_progress:
                on_progress("solve", i + 1, len(seeds))
    return out


def _solver_report(
    ms: list[SolverMeasurement], tasks: list[Task], *, k: int, temperature: float, usage: dict[str, Any]
) -> dict[str, Any]:
    measured = [m.pass_rate for m in ms]
    predicted = [t.difficulty.predicted_pass_rate for t in tasks]
    count = Counter(o for m in ms for o in m.outcomes)
    n = len(ms)
    return {
        "rollouts_per_task": k,
        "temperature": temperature,
        "tasks_measured": n,
        "rollouts": n * k,
        "successes": count.get("success", 0),
        "wrong": count.get("wrong", 0),
        "turn_limit": count.get("turn_limit", 0),
        "model_errors": count.get("model_error", 0),
        "errors": count.get("error", 0),
        "mean_measured": round(sum(measured) / n, 4) if n else 0.0,
        "mean_predicted": round(sum(predicted) / n, 4) if n else 0.0,
        "mean_abs_gap": round(sum(abs(a - b) for a, b in zip(measured, predicted)) / n, 4) if n else 0.0,
        "histogram_measured": _hist(measured),
        "error_samples": [e for m in ms for e in m.errors][:5],
        "usage": usage,
    }


ProgressFn = Callable[[str, int, int], None]


@dataclass
class _Seeds:
    """Seed tasks with the executed plans behind them, and every kept plan of the sampling rounds."""

    pairs: list[tuple[GoldResult, Task]] = field(default_factory=list)
    results: list[GoldResult] = field(default_factory=list)
    sample_seconds: float = 0.0


def _seed_tasks(b: _Builder, n: int, seed: int, on_progress: ProgressFn | None) -> _Seeds:
    """Sample and execute plans in rounds, realizing and checking each kept one, until ``n`` tasks
    pass (or the rounds run out)."""
    cfg, report = b.config, b.report
    out = _Seeds()
    want = max(1, math.ceil(n * cfg.oversample) + cfg.extra_plans)
    from ..graph import build_tool_graph

    graphs = {name: build_tool_graph(e.spec) for name, e in b.envs.items()}  # once for every round
    for round_ in range(cfg.rounds):
        if len(out.pairs) >= n:
            break
        ts = time.perf_counter()
        run = run_sampling(
            list(b.envs.values()),
            want,
            seed=seed + cfg.round_seed_stride * round_,
            config=cfg.sampler,
            graphs=graphs,
            # ignored: mypy cannot infer a lambda that binds ``want`` as a default argument
            on_progress=(lambda i, want=want: on_progress("sample", i, want)) if on_progress else None,  # type: ignore[misc]
        )
        out.sample_seconds += time.perf_counter() - ts
        report.plans_sampled += len(run.results)
        kept = run.kept
        report.plans_executed_ok += len(kept)
        out.results.extend(kept)
        for g in kept:
            if len(out.pairs) >= n:
                break
            report.candidates += 1
            t = b.make(g, task_id=f"{g.plan.env}-s{seed}-{len(out.pairs):05d}")
            if t is not None:
                out.pairs.append((g, t))
            if on_progress:
                on_progress("check", len(out.pairs), n)
        want = max(cfg.refill_min, math.ceil((n - len(out.pairs)) * cfg.oversample * cfg.refill_factor))
    return out


def _measure(
    b: _Builder,
    seeds: list[tuple[GoldResult, Task]],
    k: int,
    seed: int,
    p_hat: list[float],
    on_progress: ProgressFn | None,
) -> list[SolverMeasurement | None]:
    """Measured pass rates (k solver rollouts per seed task): written onto the tasks and into
    ``p_hat``, the rates the MILP uses; the solver figures go to the report."""
    cfg, model = b.config, b.model
    ts = time.perf_counter()
    ledger = getattr(model, "ledger", None)
    n0 = len(ledger) if ledger is not None else 0
    workers = (
        cfg.solver_workers if cfg.solver_workers is not None else int(getattr(model, "concurrency", 1) or 1)
    )
    ms = _measure_seeds(
        seeds,
        b.envs,
        model,
        k=k,
        seed=seed,
        temperature=cfg.solver_temperature,
        max_turns=cfg.solver_max_turns,
        workers=workers,
        on_progress=on_progress,
    )
    for i, ((_, t), m) in enumerate(zip(seeds, ms)):
        p_hat[i] = m.pass_rate
        d = t.difficulty
        d.measured_pass_rate = m.pass_rate
        d.features.update(
            {
                "pass_rate_from_solver": 1.0,
                "p_hat": m.pass_rate,
                "solver_k": float(k),
                "solver_successes": float(m.successes),
                "solver_model_errors": float(m.model_errors),
            }
        )
    if ledger is not None:
        usage = _ledger_summary(ledger.records[n0:])
    else:  # a model without a ledger: the tokens the rollouts saw
        usage = {
            "prompt_tokens": sum(m.prompt_tokens for m in ms),
            "completion_tokens": sum(m.completion_tokens for m in ms),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    b.report.solver = _solver_report(
        ms, [t for _, t in seeds], k=k, temperature=cfg.solver_temperature, usage=usage
    )
    b.report.timings["solver"] = round(time.perf_counter() - ts, 3)
    return list(ms)


def _action_candidates(
    b: _Builder, sd: _Seeds, seed: int
) -> tuple[list[list[Any]], list[list[bool]], list[list[set[str]]]]:
    """Per seed task and calibration action: the edited plan (None: not feasible) and the tools it uses."""
    read_only: dict[str, list[Any]] = {}
    for g in sd.results:
        spec = b.envs[g.plan.env].spec
        # Read-only means no writes at all: a create-then-delete plan leaves the state as
        # it was but still asks for two changes.
        if (
            not g.changed_state
            and len(g.plan.steps) <= 3
            and not any(spec.tool(s.tool).writes for s in g.plan.steps)
        ):
            read_only.setdefault(g.plan.env, []).append(g.plan)
    cands: list[list[Any]] = []
    feas: list[list[bool]] = []
    tools: list[list[set[str]]] = []
    for i, (g, _) in enumerate(sd.pairs):
        spec = b.envs[g.plan.env].spec
        pool = read_only.get(g.plan.env, [])
        # A partner that repeats one of this plan's calls would make the request say it twice. With
        # intent-first plans no unrelated partner is merged in (one person's request stays one errand).
        partner = (
            pick_partner(g.plan, pool, i * 7 + seed) if pool and not b.config.sampler.intent_first else None
        )
        row, frow, trow = [], [], []
        for a in ACTIONS:
            p = edit_plan(a, g.plan, g.calls, spec, partner=partner)
            row.append(p)
            frow.append(p is not None)
            trow.append({f"{g.plan.env}/{s.tool}" for s in (p or g.plan).steps})
        cands.append(row)
        feas.append(frow)
        tools.append(trow)
    return cands, feas, tools


def _calibrate(
    b: _Builder,
    sd: _Seeds,
    p_hat: list[float],
    measured: list[SolverMeasurement | None],
    seed: int,
    coverage_targets: dict[str, int] | None,
    on_progress: ProgressFn | None,
) -> tuple[list[Task], list[float]]:
    """One MILP-chosen edit per seed task, applied and re-checked (reverted when it fails).
    Returns the final tasks and the pass rate each is expected to have."""
    report = b.report
    cands, feas, tools = _action_candidates(b, sd, seed)
    targets = coverage_targets
    if targets is None:
        targets = {f"{name}/{tl.name}": 1 for name, e in b.envs.items() for tl in e.spec.tools}
    chosen = choose_actions(p_hat, feasible=feas, tools=tools, targets=targets)
    tasks: list[Task] = []
    targets_after: list[float] = []
    for i, ((g, t), (action, _score)) in enumerate(zip(sd.pairs, chosen)):
        report.actions[action] = report.actions.get(action, 0) + 1
        plan = cands[i][ACTIONS.index(action)]
        final = None
        if action.startswith("different"):
            final = b.make(
                g, t.task_id, action=action, variant=1 + (action == "different-breadth"), count=False
            )
        elif plan is not None:
            ng = execute_plan(b.envs[plan.env], plan, initial_hash=g.initial_hash)
            if ng.ok:
                final = b.make(ng, t.task_id, action=action, count=False)
        if final is None:
            report.edits_reverted[action] = report.edits_reverted.get(action, 0) + 1
            t.difficulty.calibration_action = f"{action} (reverted)"
            final = t
        else:
            final.difficulty.features["predicted_before"] = t.difficulty.predicted_pass_rate
            final.difficulty.features["predicted_target"] = predicted_after(p_hat[i], action)
            seed_measured = measured[i]
            if seed_measured is not None:
                # An edited task is a new task: the seed's measured rate does not apply to it.
                final.difficulty.measured_pass_rate = None
                final.difficulty.features["measured_before"] = seed_measured.pass_rate
                final.difficulty.features["pass_rate_from_solver"] = 1.0
        targets_after.append(p_hat[i] if final is t else predicted_after(p_hat[i], action))
        tasks.append(final)
        if on_progress:
            on_progress("calibrate", i + 1, len(sd.pairs))
    return tasks, targets_after


def _load_index(index: NgramIndex | None | bool, report: TaskReport) -> NgramIndex | None:
    if index is True:
        index = load_benchmark_index()
    elif index is False:
        index = None
    if index is not None:
        report.decontam_sources = dict(index.counts)
        report.decontam_unavailable = dict(index.unavailable)
    else:
        report.decontam_unavailable = {"bfcl": "bfcl index unavailable (decontamination skipped)"}
    return index


def build_tasks(
    envs: Sequence[Any] | Mapping[str, Any],
    *,
    n: int,
    seed: int = 0,
    model: Any = None,
    on_progress: ProgressFn | None = None,
    calibrate: bool = True,
    coverage_targets: dict[str, int] | None = None,
    index: NgramIndex | None | bool = True,
    solver_rollouts: int = 0,
    config: TaskConfig | None = None,
) -> TaskBuildResult:
    """Sample, execute, realize, check and calibrate ``n`` tasks over ``envs`` (``Environment``s).

    ``on_progress(stage, done, total)`` is called as stages advance. ``index``: True loads the
    cached BFCL / tau2-bench n-gram index, an ``NgramIndex`` is used as given, None/False skips
    decontamination (reported as unavailable). ``coverage_targets`` maps 'env/tool' to the number
    of tasks that should use it (default: every tool of every env at least once). ``config``:
    rounds, oversampling, hide rate, turn limits, solver settings and the sampler's settings
    (default ``TaskConfig()``).

    ``solver_rollouts=k > 0`` with a ``model``: each seed task's pass rate is measured from k
    rollouts with the model as the solver (``config.solver_temperature``, at most
    ``config.solver_max_turns`` assistant messages when given, else the task's turn limit;
    ``config.solver_workers`` tasks at a time, default the model's ``concurrency``) and that
    rate, not the structural proxy, is the MILP's p^ (see the module docstring). Cost: up to
    n * k * turn_limit model calls. Ignored without a model.
    """
    cfg = config or TaskConfig()
    by_name = dict(envs) if isinstance(envs, Mapping) else {e.spec.name: e for e in envs}
    report = TaskReport(requested=n)
    t0 = time.perf_counter()
    b = _Builder(by_name, seed, _load_index(index, report), model, report, cfg)
    report.timings["index"] = round(time.perf_counter() - t0, 3)

    # 1. seed tasks
    t1 = time.perf_counter()
    sd = _seed_tasks(b, n, seed, on_progress)
    report.timings["sample_execute"] = round(sd.sample_seconds, 3)
    report.timings["realize_check"] = round(time.perf_counter() - t1 - sd.sample_seconds, 3)
    before = [t.difficulty.predicted_pass_rate for _, t in sd.pairs]
    report.histogram_before = _hist(before)
    report.mean_pass_rate_before = round(sum(before) / len(before), 4) if before else 0.0

    # 1b. measured pass rates (solver rollouts): the MILP's p^ where available
    p_hat = list(before)
    measured: list[SolverMeasurement | None] = [None] * len(sd.pairs)
    k = solver_rollouts if model is not None else 0
    if k > 0 and sd.pairs:
        measured = _measure(b, sd.pairs, k, seed, p_hat, on_progress)

    # 2. calibration
    t2 = time.perf_counter()
    targets_after: list[float] = []
    if calibrate and sd.pairs:
        tasks, targets_after = _calibrate(b, sd, p_hat, measured, seed, coverage_targets, on_progress)
    else:
        tasks = [t for _, t in sd.pairs]
    report.timings["calibrate"] = round(time.perf_counter() - t2, 3)
    after = [t.difficulty.predicted_pass_rate for t in tasks]
    report.histogram_after = _hist(after)
    report.mean_pass_rate_after = round(sum(after) / len(after), 4) if after else 0.0
    report.kept = len(tasks)
    if report.solver:
        ta = targets_after or p_hat
        report.solver["mean_target_after"] = round(sum(ta) / len(ta), 4) if ta else 0.0
    ledger = getattr(model, "ledger", None) if model is not None else None
    if ledger is not None:
        report.model_usage = ledger.summary().model_dump()
    shown = cfg.samples_shown
    report.samples = [t.goal for t in tasks[:: max(1, len(tasks) // shown)][:shown]] if shown else []
    report.timings["total"] = round(time.perf_counter() - t0, 3)
    return TaskBuildResult(tasks, report)
