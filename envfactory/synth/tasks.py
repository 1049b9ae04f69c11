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

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..graph import GoldResult, execute_plan, run_sampling
from ..spec import Task
from .builder import _Builder, rewrite_goal_with_model, task_from_gold
from .calibrate import (
    ACTIONS,
    SolverMeasurement,
    choose_actions,
    edit_plan,
    pick_partner,
    predicted_after,
)
from .checks import CHECKS
from .config import TaskConfig
from .decontam import NgramIndex, load_benchmark_index
from .solver_stage import _hist, _measure

__all__ = ["TaskReport", "TaskBuildResult", "build_tasks", "task_from_gold", "rewrite_goal_with_model"]


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
