"""Test-only: tasks made from gold runs with templated sentences (stands in for the task builder).

``tasks_from_gold`` follows the ``Task`` contract: one sub-goal per goal step (the steps before it
join it), literal values the plan used are stated, and up to two of them are held back as hidden
facts (keyed like the realizer's: ``entity.field`` / ``tool.param``) that the user reveals only when
asked; read-only tasks require the first text value the last goal call returned as an answer fact.
"""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

from envfactory.graph import GoldResult, run_sampling
from envfactory.graph.plan import is_ref
from envfactory.runtime import Environment, load_environment
from envfactory.spec import Difficulty, GoldStep, Persona, RewardSpec, SubGoal, Task

REPO = Path(__file__).resolve().parents[2]
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


def _facts(output) -> list[str]:
    row = output["items"][0] if isinstance(output, dict) and output.get("items") else output
    if isinstance(row, dict):
        for value in row.values():
            if isinstance(value, str) and value:
                return [value]
    return []


def _hideable(result: GoldResult) -> dict[str, object]:
    """user_facts whose literal value some step argument uses (so the agent needs it)."""
    out = {}
    for k, v in result.plan.user_facts.items():
        if isinstance(v, (bool, float)) or "{{" in str(v):
            continue
        if any(not is_ref(a) and a == v for s in result.plan.steps for a in s.args.values()):
            out[k] = v
    return out


def task_from_gold(result: GoldResult, index: int, *, hide: int = 1) -> Task:
    plan = result.plan
    rng = random.Random(index)
    hideable = _hideable(result)
    hidden = dict(rng.sample(sorted(hideable.items()), min(hide, len(hideable))))
    hidden_values = list(hidden.values())
    gold = [
        GoldStep(tool=c.tool, args=c.args, output=c.output, role=plan.steps[i].role)
        for i, c in enumerate(result.calls)
    ]
    subgoals: list[SubGoal] = []
    pending: list[int] = []
    for i, step in enumerate(plan.steps):
        pending.append(i)
        if step.role == "goal":
            lit = {k: v for k, v in step.args.items() if not is_ref(v) and v not in hidden_values}
            words = step.tool.replace("_", " ")
            text = (
                f"Please {words}"
                + (" with " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in lit.items()) if lit else "")
                + "."
            )
            used = [
                k
                for k, v in hidden.items()
                if any(v == a for j in pending for a in plan.steps[j].args.values())
            ]
            subgoals.append(SubGoal(text=text, steps=pending, reveals=used))
            pending = []
    if pending and subgoals:
        subgoals[-1].steps.extend(pending)
    goal = " ".join(s.text for s in subgoals)
    facts = [] if result.changed_state else _facts(result.calls[plan.goal_steps[-1]].output)
    known = {k: v for k, v in plan.user_facts.items() if k not in hidden}
    spec = RewardSpec(
        gold_state_hash=result.final_hash,
        initial_state_hash=result.initial_hash,
        gold_diff=result.diff,
        gold_calls=[{"tool": c.tool, "args": c.args} for c in result.calls],
        masked_args=[[] for _ in result.calls],
        required_facts=facts,
    )
    return Task(
        task_id=f"{plan.env}-{index:05d}",
        domain=plan.domain,
        env=plan.env,
        seed=plan.seed,
        source_docs=["hand-written"],
        persona=Persona(
            name="Test User",
            style=rng.choice(["terse", "polite", "chatty", "hurried"]),
            known_facts=known,
            hidden_facts=hidden,
        ),
        goal=goal,
        subgoals=subgoals,
        gold=gold,
        reward=spec,
        answer_facts=facts,
        difficulty=Difficulty(predicted_pass_rate=0.5),
        checks_passed=["executes", "fixture"],
    )


@lru_cache(maxsize=1)
def trip_desk() -> Environment:
    return load_environment(TRIP_DESK)


def tasks_from_gold(envs, n: int, seed: int = 0) -> list[Task]:
    run = run_sampling(list(envs), n, seed=seed)
    return [task_from_gold(r, i) for i, r in enumerate(run.results) if r.ok]


@lru_cache(maxsize=4)
def _trip_desk_tasks(n: int, seed: int) -> tuple[Task, ...]:
    return tuple(tasks_from_gold([trip_desk()], n, seed))


def trip_desk_tasks(n: int = 40, seed: int = 0) -> list[Task]:
    return [t.model_copy(deep=True) for t in _trip_desk_tasks(n, seed)]


@lru_cache(maxsize=1)
def trip_desk_twin() -> Environment:
    """trip_desk under another name: a second environment for held-out-by-environment splits."""
    env = trip_desk()
    spec = env.spec.model_copy(update={"name": "trip_desk_twin"})
    return Environment(spec, env.template, path=env.path)


def two_env_tasks(n: int = 40) -> list[Task]:
    out = []
    for t in trip_desk_tasks(n):
        out.append(t)
        twin = t.model_copy(deep=True)
        twin.env, twin.task_id = "trip_desk_twin", t.task_id.replace("trip_desk", "trip_desk_twin")
        out.append(twin)
    return out


def synth_two_envs(out, n: int = 40, **kw):
    from envfactory.pipelines import synthesize_dataset

    return synthesize_dataset(
        [trip_desk(), trip_desk_twin()], out, n=n, tasks=two_env_tasks(n), tasks_source="fixture", **kw
    )
