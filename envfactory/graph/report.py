"""Sample-and-execute runs and their coverage report (tools, tool pairs, shapes, per env)."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx

from .config import SamplerConfig
from .gold import GoldResult, execute_plan
from .plan import Plan
from .sample import TopologySampler
from .walk import RandomWalkSampler

__all__ = [
    "SAMPLERS",
    "SamplingRun",
    "SamplerReport",
    "run_sampling",
    "build_sampler_report",
    "possible_pairs",
]

SAMPLERS: dict[str, type[TopologySampler] | type[RandomWalkSampler]] = {
    "topology": TopologySampler,
    "random_walk": RandomWalkSampler,
}


@dataclass
class SamplingRun:
    """Every plan a sampler produced, executed; timings in seconds."""

    sampler: str
    seed: int
    results: list[GoldResult]
    sample_seconds: float
    execute_seconds: float
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    config: SamplerConfig = field(default_factory=SamplerConfig)

    @property
    def kept(self) -> list[GoldResult]:
        return [r for r in self.results if r.ok]


_WORKER: dict[str, Any] = {}


def _worker_init(envs: dict[str, Any], hashes: dict[str, str], with_diff: bool) -> None:
    _WORKER.update(envs=envs, hashes=hashes, with_diff=with_diff)


def _worker_execute(plans: list[Plan]) -> tuple[list[GoldResult], float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = [
        execute_plan(
            _WORKER["envs"][p.env], p, initial_hash=_WORKER["hashes"][p.env], with_diff=_WORKER["with_diff"]
        )
        for p in plans
    ]
    return out, time.perf_counter() - t, time.process_time() - c


def run_sampling(
    envs: Sequence[Any],
    n: int,
    *,
    sampler: str = "topology",
    seed: int = 0,
    graphs: dict[str, nx.DiGraph] | None = None,
    with_diff: bool = True,
    workers: int = 0,
    chunk: int = 100,
    on_progress: Callable[[int], None] | None = None,
    config: SamplerConfig | None = None,
) -> SamplingRun:
    """Sample ``n`` plans over ``envs`` (``Environment``s) and gold-execute each one.

    Sampling is sequential (each plan shifts the coverage weights); with ``workers > 0``
    execution runs in that many forked processes while sampling goes on, in chunks of
    ``chunk`` plans. Results come back in sampling order either way, so the output does not
    depend on ``workers``. ``execute_seconds`` is the execution time summed over workers.
    ``config``: the sampler's settings (default ``SamplerConfig()``).
    """
    cls = SAMPLERS[sampler]
    config = config or SamplerConfig()
    by_name = {e.spec.name: e for e in envs}
    t0, c0 = time.perf_counter(), time.process_time()
    worker_cpu = 0.0
    smp = cls(envs, seed=seed, graphs=graphs, config=config)
    hashes = {}
    for name, e in by_name.items():
        with e.new_session() as s:
            hashes[name] = s.state_hash()
    t_sample = time.perf_counter() - t0
    t_exec = 0.0
    results: list[GoldResult] = []
    use_pool = workers > 0 and "fork" in mp.get_all_start_methods()
    try:
        if not use_pool:
            for i in range(n):
                t = time.perf_counter()
                plan = smp.sample()
                t2 = time.perf_counter()
                results.append(
                    execute_plan(by_name[plan.env], plan, initial_hash=hashes[plan.env], with_diff=with_diff)
                )
                t_sample += t2 - t
                t_exec += time.perf_counter() - t2
                if on_progress is not None:
                    on_progress(i + 1)
        else:
            with mp.get_context("fork").Pool(workers, _worker_init, (by_name, hashes, with_diff)) as pool:
                pending: list[Any] = []
                batch: list[Plan] = []

                def collect(block: bool) -> None:
                    nonlocal t_exec, worker_cpu
                    while pending and (block or pending[0].ready()):
                        res, secs, cpu = pending.pop(0).get()
                        results.extend(res)
                        t_exec += secs
                        worker_cpu += cpu
                        if on_progress is not None:
                            on_progress(len(results))

                for i in range(n):
                    t = time.perf_counter()
                    batch.append(smp.sample())
                    t_sample += time.perf_counter() - t
                    if len(batch) == chunk or i == n - 1:
                        pending.append(pool.apply_async(_worker_execute, (batch,)))
                        batch = []
                        collect(False)
                collect(True)
    finally:
        smp.close()
    return SamplingRun(
        sampler,
        seed,
        results,
        t_sample,
        t_exec,
        time.perf_counter() - t0,
        time.process_time() - c0 + worker_cpu,
        config,
    )


def possible_pairs(graphs: dict[str, nx.DiGraph]) -> set[tuple[str, str, str]]:
    """(env, producer, consumer) tool pairs the graphs allow: strong supplies and state edges."""
    out = set()
    for env, g in graphs.items():
        for u, v, a in g.edges(data=True):
            if a["edge"] == "supplies" and a["strength"] == "strong":
                out.add((env, u, g.nodes[v]["tool"]))
            elif a["edge"] == "state":
                out.add((env, u, v))
    return out


@dataclass
class SamplerReport:
    """Coverage of one sampler's run. Tools are named ``env/tool``; counts are over kept plans."""

    sampler: str
    plans: int
    kept: int
    success_rate: float
    sample_seconds: float
    execute_seconds: float
    wall_seconds: float
    cpu_seconds: float
    tools_total: int
    satisfiable_tools: int
    tools_covered: dict[str, int] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    pairs_possible: int = 0
    pairs_covered: int = 0
    pairs_seen: int = 0
    chain_length: dict[int, int] = field(default_factory=dict)
    branching: dict[int, int] = field(default_factory=dict)
    steps: dict[int, int] = field(default_factory=dict)
    goals_per_plan: dict[int, int] = field(default_factory=dict)
    per_env: dict[str, dict[str, int]] = field(default_factory=dict)
    window: int = 1000
    windows: int = 0
    window_misses: dict[str, int] = field(default_factory=dict)
    state_changing: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    @property
    def plans_per_second(self) -> float:
        return self.plans / self.wall_seconds if self.wall_seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["plans_per_second"] = round(self.plans_per_second, 1)
        return d


def build_sampler_report(
    run: SamplingRun, graphs: dict[str, nx.DiGraph], *, window: int | None = None
) -> SamplerReport:
    """Coverage figures for one run; ``graphs`` maps env name to its tool graph. ``window``:
    plans per coverage window (default: the run's ``SamplerConfig.window``)."""
    window = run.config.window if window is None else window
    sat = sorted(
        f"{env}/{n}"
        for env, g in graphs.items()
        for n, a in g.nodes(data=True)
        if a["node"] == "tool" and a.get("satisfiable")
    )
    total = sum(1 for g in graphs.values() for _, a in g.nodes(data=True) if a["node"] == "tool")
    kept = run.kept
    tools: Counter = Counter()
    pairs: set[tuple[str, str, str]] = set()
    chain: Counter = Counter()
    branch: Counter = Counter()
    nsteps: Counter = Counter()
    ngoals: Counter = Counter()
    per_env: dict[str, dict[str, int]] = {}
    for r in run.results:
        e = per_env.setdefault(r.plan.env, {"plans": 0, "kept": 0})
        e["plans"] += 1
        e["kept"] += int(r.ok)
    for r in kept:
        p = r.plan
        for t in set(p.tools):
            tools[f"{p.env}/{t}"] += 1
        pairs.update((p.env, a, b) for a, b in p.pairs())
        chain[p.chain_length()] += 1
        branch[p.branching()] += 1
        nsteps[len(p.steps)] += 1
        ngoals[len(p.goal_tools)] += 1
    possible = possible_pairs(graphs)
    misses: Counter = Counter()
    windows = 0
    if window and len(run.results) >= window:
        for start in range(0, len(run.results) - window + 1, window):
            windows += 1
            seen = {
                f"{r.plan.env}/{t}" for r in run.results[start : start + window] if r.ok for t in r.plan.tools
            }
            for t in sat:
                if t not in seen:
                    misses[t] += 1
    fails = Counter((r.failure or "").split(":")[0] for r in run.results if not r.ok)
    return SamplerReport(
        sampler=run.sampler,
        plans=len(run.results),
        kept=len(kept),
        success_rate=len(kept) / len(run.results) if run.results else 0.0,
        sample_seconds=run.sample_seconds,
        execute_seconds=run.execute_seconds,
        wall_seconds=run.wall_seconds,
        cpu_seconds=run.cpu_seconds,
        tools_total=total,
        satisfiable_tools=len(sat),
        tools_covered=dict(sorted(tools.items())),
        uncovered=[t for t in sat if t not in tools],
        pairs_possible=len(possible),
        pairs_covered=len(pairs & possible),
        pairs_seen=len(pairs),
        chain_length=dict(sorted(chain.items())),
        branching=dict(sorted(branch.items())),
        steps=dict(sorted(nsteps.items())),
        goals_per_plan=dict(sorted(ngoals.items())),
        per_env=per_env,
        window=window,
        windows=windows,
        window_misses=dict(sorted(misses.items())),
        state_changing=sum(1 for r in kept if r.changed_state),
        failures=dict(fails.most_common(10)),
    )
