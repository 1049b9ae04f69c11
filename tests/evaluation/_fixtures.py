"""Test-only: tasks made from gold runs with templated sentences (no task builder, no model).

``tasks_from_gold`` stands in for ``envfactory.synth.tasks.build_tasks`` so the evaluation
harness can be tested on its own: one sub-goal per goal step (the discover / setup steps before
it join it), the sentence says the literal values the plan used.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from envfactory.graph import GoldResult, run_sampling
from envfactory.runtime import Environment, load_environment
from envfactory.spec import Task

from ..synth._fixtures import task_from_gold as _synth_task_from_gold

REPO = Path(__file__).resolve().parents[2]
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


def task_from_gold(result: GoldResult, index: int) -> Task:
    # every value stated (nothing hidden): single-call questions must carry what the call needs
    return _synth_task_from_gold(result, index, hide=0)


@lru_cache(maxsize=1)
def trip_desk() -> Environment:
    return load_environment(TRIP_DESK)


def trip_desk_tasks(n: int = 60, seed: int = 0) -> list[Task]:
    run = run_sampling([trip_desk()], n, seed=seed)
    return [task_from_gold(r, i) for i, r in enumerate(run.results) if r.ok]


@lru_cache(maxsize=4)
def trip_desk_suite(n_tasks: int = 60, per_category: int = 15, seed: int = 0):
    from envfactory.evaluation import build_suite

    return build_suite(trip_desk_tasks(n_tasks, seed), [trip_desk()], n_per_category=per_category, seed=seed)
