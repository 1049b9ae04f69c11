"""Test-only: tasks made from gold runs with templated sentences (no task builder, no model).

``tasks_from_gold`` stands in for ``envfactory.synth.tasks.build_tasks`` so the evaluation
harness can be tested on its own: one sub-goal per goal step (the discover / setup steps before
it join it), the sentence says the literal values the plan used.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from envfactory.graph import GoldResult, run_sampling
from envfactory.graph.plan import is_ref
from envfactory.reward import RewardSpec
from envfactory.runtime import Environment, load_environment
from envfactory.synth.task import Difficulty, GoldStep, Persona, SubGoal, Task

REPO = Path(__file__).resolve().parents[2]
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


def _sentence(tool: str, literal: dict) -> str:
    words = tool.replace("_", " ")
    if not literal:
        return f"Please {words}."
    parts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in literal.items())
    return f"Please {words} with {parts}."


def _facts(output) -> list[str]:
    # A read-only task is answered in words: the first text value of what the goal call returned.
    row = output["items"][0] if isinstance(output, dict) and output.get("items") else output
    if isinstance(row, dict):
        for value in row.values():
            if isinstance(value, str) and value:
                return [value]
    return []


def task_from_gold(result: GoldResult, index: int) -> Task:
    plan = result.plan
    gold = [GoldStep(tool=c.tool, args=c.args, output=c.output, role=plan.steps[i].role)
            for i, c in enumerate(result.calls)]
    subgoals: list[SubGoal] = []
    pending: list[int] = []
    for i, step in enumerate(plan.steps):
        pending.append(i)
        if step.role == "goal":
            literal = {k: v for k, v in step.args.items() if not is_ref(v)}
            subgoals.append(SubGoal(text=_sentence(step.tool, literal), steps=pending))
            pending = []
    if pending and subgoals:
        subgoals[-1].steps.extend(pending)
    goal = " ".join(s.text for s in subgoals)
    facts = [] if result.changed_state else _facts(result.calls[plan.goal_steps[-1]].output)
    spec = RewardSpec(
        gold_state_hash=result.final_hash,
        initial_state_hash=result.initial_hash,
        gold_diff=result.diff,
        gold_calls=[{"tool": c.tool, "args": c.args} for c in result.calls],
        masked_args=[[] for _ in result.calls],
        required_facts=facts,
    )
    return Task(
        task_id=f"{plan.env}-{index:04d}", domain=plan.domain, env=plan.env, seed=plan.seed,
        persona=Persona(name="Test User"), goal=goal, subgoals=subgoals, gold=gold, reward=spec, answer_facts=facts,
        difficulty=Difficulty(predicted_pass_rate=0.5),
    )


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
