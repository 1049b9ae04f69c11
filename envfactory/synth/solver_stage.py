"""Measured pass rates: k solver rollouts per seed task, the rates the difficulty MILP uses.

See ``tasks.py`` (module docstring) for what is recorded on the tasks and in the report.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..graph import GoldResult
from ..spec import Task
from .calibrate import SolverMeasurement, measure_pass_rate

if TYPE_CHECKING:
    from .builder import _Builder

__all__: list[str] = []


def _hist(ps: Sequence[float]) -> dict[str, int]:
    c = Counter(min(9, int(p * 10)) for p in ps)
    return {f"{b / 10:.1f}-{(b + 1) / 10:.1f}": c.get(b, 0) for b in range(10)}


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


def _measure(
    b: _Builder,
    seeds: list[tuple[GoldResult, Task]],
    k: int,
    seed: int,
    p_hat: list[float],
    on_progress: Callable[[str, int, int], None] | None,
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
