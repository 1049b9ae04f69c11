"""``envfactory bench rl``: episodes stepped from one process vs the in-process tool-call rate.

Workload: RL rows of a dataset, each replayed through ``envfactory.rl`` (reset, then the row's
recorded assistant messages one ``step`` each: tool calls run on the session, text is answered
by the user simulator, the last step scores the reward). Batches of 1, 16 and 256 episodes
are stepped together (``EnvBatch``). The floor, measured in the same run, is the same tool
calls made directly on runtime sessions (``Session.try_call``), so the ratio says what the RL
layer (message parsing, the user simulator, bookkeeping, scoring) costs per tool call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..rl import EnvironmentSource, make_batch, parse_assistant_message

__all__ = ["RLBenchFigure", "RLBenchReport", "run_rl_bench"]


@dataclass
class RLBenchFigure:
    envs: int
    episodes: int
    steps: int
    tool_calls: int
    seconds: float
    rewards: float  # mean final reward (1.0: every replay earned full reward)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    @property
    def calls_per_s(self) -> float:
        return self.tool_calls / self.seconds if self.seconds else 0.0


@dataclass
class RLBenchReport:
    rows: int
    env_ids: list[str]
    floor_calls: int = 0
    floor_seconds: float = 0.0
    figures: list[RLBenchFigure] = field(default_factory=list)

    @property
    def floor_calls_per_s(self) -> float:
        return self.floor_calls / self.floor_seconds if self.floor_seconds else 0.0


def _script(row: dict[str, Any]) -> list[Any]:
    return [m for m in row["messages"] if m.get("role") == "assistant"] or ["Done."]


def _floor(rows: list[dict[str, Any]], src: EnvironmentSource, min_seconds: float) -> tuple[int, float]:
    """The rows' tool calls straight on sessions (one session per row, made outside the timing)."""
    plans = []
    for r in rows:
        calls = [(c.name, c.arguments) for m in _script(r) for c in parse_assistant_message(m)[1]]
        plans.append((src.get(r["env_id"]), calls))
    n, spent = 0, 0.0
    while spent < min_seconds or n == 0:
        for env, calls in plans:
            s = env.new_session()
            t0 = time.perf_counter()
            for name, args in calls:
                s.try_call(name, args)
            spent += time.perf_counter() - t0
            n += len(calls)
            s.close()
    return n, spent


def _run_size(
    rows: list[dict[str, Any]], src: EnvironmentSource, size: int, min_seconds: float
) -> RLBenchFigure:
    items = [rows[i % len(rows)] for i in range(size)]
    batch = make_batch(items, source=src)
    scripts = [_script(r) for r in items]
    episodes = steps = calls = 0
    reward_sum = 0.0
    spent = 0.0
    while spent < min_seconds or episodes == 0:
        t0 = time.perf_counter()
        batch.reset()
        turn = 0
        while not all(batch.done):
            msgs = [sc[turn] if turn < len(sc) else "Done." for sc in scripts]
            live = sum(1 for d in batch.done if not d)
            batch.step(msgs)
            steps += live
            turn += 1
            if turn > 200:  # a row whose script never ends the episode: stop it here
                break
        spent += time.perf_counter() - t0
        episodes += size
        calls += sum(len(e.calls) for e in batch.envs)
        reward_sum += sum(e.result.reward if e.result is not None else 0.0 for e in batch.envs)
    batch.close()
    return RLBenchFigure(
        envs=size,
        episodes=episodes,
        steps=steps,
        tool_calls=calls,
        seconds=spent,
        rewards=reward_sum / episodes if episodes else 0.0,
    )


def run_rl_bench(
    rows: list[dict[str, Any]],
    source: Any = None,
    *,
    sizes: tuple[int, ...] = (1, 16, 256),
    min_seconds: float = 1.0,
) -> RLBenchReport:
    """Steps per second for each batch size in ``sizes``, and the tool-call floor, in this process."""
    src = source if isinstance(source, EnvironmentSource) else EnvironmentSource(source)
    rep = RLBenchReport(rows=len(rows), env_ids=sorted({r["env_id"] for r in rows}))
    for e in rep.env_ids:
        src.get(e)  # compile each environment once, outside the timings
    rep.floor_calls, rep.floor_seconds = _floor(rows, src, min_seconds)
    for size in sizes:
        rep.figures.append(_run_size(rows, src, size, min_seconds))
    return rep
