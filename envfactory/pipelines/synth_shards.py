"""Sharded synthesis (``synth --workers N`` / ``--backend ray``): bounded memory, any number of workers.

The run is cut into shards by a plan that depends only on the environments, ``n`` and the seed,
never on the workers: ``n`` is split evenly over the APIs (environments sharing a source document;
sorted, the first ones take the remainder), each API's share evenly over its environments, and
each environment's share into blocks of at most ``SHARD_TASKS`` tasks.
An environment that builds fewer tasks than its share (few plans pass the checks, or none can be
grounded) leaves a shortfall; top-up rounds give it to the environments that delivered their whole
share, in new blocks (at most ``TOPUP_ROUNDS``), so a run asked for ``n`` keeps ``n`` wherever the
environments allow. A top-up round is planned from the finished shards alone, which the seeds
determine, so it too is the same for any number of workers.
A shard builds its own tasks (``build_tasks`` on its one environment, with a seed derived from
the run's seed, the environment and the block), rolls them out and replays them exactly as the
one-process path does, and returns its records and its Parquet parts as bytes. The parent writes
each shard's files as it arrives (``.synth/parts/<shard>/``, its summary last), so a killed run
redoes only the shards in flight, and memory holds one shard per worker plus a few counters per
row for the card. The dataset is then assembled in plan order: part files become
``data/<split>-0000i-of-0000N.parquet`` (and ``rl/``, ``sharegpt/``), the card and the audit are
computed from the parts, streamed. Same plan, same bytes: 1 worker, N workers, or Ray.

Differences from one process (``synth`` without ``--workers``): tasks are built and calibrated
per shard rather than over the whole pool, and only the oracle policy runs sharded.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from ..errors import EnvFactoryError
from ..runtime import Environment
from .backend import Backend, JobFailed
from .shard_plan import SHARD_TASKS, TOPUP_ROUNDS, ShardJob, plan_shards, plan_topup
from .swap import write_atomic

__all__ = [
    "SHARD_TASKS",
    "TOPUP_ROUNDS",
    "ShardJob",
    "plan_shards",
    "plan_topup",
    "run_shard",
    "synthesize_sharded",
]

_CARD_KEYS = ("domain", "env_id", "num_turns", "num_tool_calls", "difficulty", "task_id")
_PARTS: tuple[tuple[str, str], ...] = (
    ("default", "sft"),
    ("default", "rl"),
    ("default", "eval"),
    ("rl", "rl"),
    ("sharegpt", "sft"),
    ("sharegpt", "eval"),
)


# ---- one shard (in a worker) --------------------------------------------------------------------

_INDEX: list[Any] = []  # the decontamination index, loaded once per worker process


def _index() -> Any:
    if not _INDEX:
        from ..synth.decontam import load_benchmark_index

        _INDEX.append(load_benchmark_index())
    return _INDEX[0]


def _parquet_bytes(rows: list[dict[str, Any]], features: Any, tmp: Path, name: str) -> bytes:
    from ..export.hf import write_parquet

    return write_parquet(rows, features, tmp / name).read_bytes()


def run_shard(job: ShardJob) -> dict[str, Any]:
    """Build, roll out and replay one shard's tasks; its records and Parquet parts, as bytes."""
    from ..export.hf import default_features, rl_features, sharegpt_features
    from ..runtime import load_environment
    from ..spec import load_tasks, write_tasks
    from ..synth import (
        McpConnector,
        OraclePolicy,
        TaskConfig,
        assign_split,
        build_rl_row,
        build_sharegpt_row,
        build_tasks,
    )
    from .synthesize import _roll_out_one

    env = load_environment(job.env_dir)
    config = TaskConfig(**job.task_config) if job.task_config else None
    try:
        built = build_tasks([env], n=job.n, seed=job.task_seed, config=config, index=_index()).tasks
    except EnvFactoryError as e:  # an environment no task can be built on: data, not a crash
        reason = f"{job.env_key}: no task built ({' '.join(str(e).split())[:200]})"
        return {**_empty(job), "skipped": {reason: job.n}}
    held_out = set(job.held_out)
    policy = OraclePolicy(seed=job.seed)
    connector = McpConnector(job.via_mcp) if job.via_mcp else None
    with tempfile.TemporaryDirectory(prefix="envfactory-shard-") as d:
        tmp = Path(d)
        # the tasks as a file holds them (writing normalises them), as the one-process path does
        tasks = list(load_tasks(write_tasks(built, tmp / "tasks.jsonl")))
        try:
            recs = [
                _roll_out_one(
                    t,
                    env,
                    policy=policy,
                    connector=connector,
                    user_model=None,
                    seed=job.seed,
                    split=assign_split(t, held_out, rl_fraction=job.rl_fraction),
                )
                for t in tasks
            ]
        finally:
            if connector is not None:
                connector.close()
        rows: dict[str, list[dict[str, Any]]] = {"sft": [], "rl": [], "eval": []}
        for r in recs:
            if r["status"] == "ok":
                rows[r["split"]].append(r["row"])
        parts: dict[str, bytes] = {}
        for split in ("sft", "rl", "eval"):
            if rows[split]:
                parts[f"default-{split}"] = _parquet_bytes(
                    rows[split], default_features(), tmp, f"d-{split}.parquet"
                )
        if rows["rl"]:
            parts["rl-rl"] = _parquet_bytes(
                [build_rl_row(r) for r in rows["rl"]], rl_features(), tmp, "rl.parquet"
            )
        for split in ("sft", "eval"):
            if rows[split]:
                sg = [build_sharegpt_row(r) for r in rows[split]]
                parts[f"sharegpt-{split}"] = _parquet_bytes(
                    sg, sharegpt_features(), tmp, f"sg-{split}.parquet"
                )
    return {
        "shard_id": job.shard_id,
        "records": "".join(json.dumps(r, sort_keys=True) + "\n" for r in recs),
        "parts": parts,
        "card": {s: [_card_row(r) for r in rows[s]] for s in rows},
        "first": {s: rows[s][0] for s in rows if rows[s]},
        "states": sorted({t.initial_state for t in tasks}),
        "task_ids": [t.task_id for t in tasks],
        "skipped": {},
    }


def _empty(job: ShardJob) -> dict[str, Any]:
    card: dict[str, list[Any]] = {"sft": [], "rl": [], "eval": []}
    return {
        "shard_id": job.shard_id,
        "records": "",
        "parts": {},
        "card": card,
        "first": {},
        "states": [],
        "task_ids": [],
    }


def _card_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row[k] for k in _CARD_KEYS}
    out["user"] = {"intent": (row.get("user") or {}).get("intent")}
    return out


# ---- the parent: write shards as they come, then assemble -------------------------------------


def _write_shard(work: Path, got: dict[str, Any]) -> None:
    """A shard's files, its summary last (a shard without a summary is redone on resume)."""
    folder = work / "parts" / got["shard_id"]
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in got["parts"].items():
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, folder / f"{name}.parquet")
    write_atomic(folder / "records.jsonl", got["records"])
    summary = {k: got[k] for k in ("shard_id", "card", "first", "states", "task_ids", "skipped")}
    summary["parts"] = sorted(got["parts"])
    write_atomic(folder / "summary.json", json.dumps(summary, sort_keys=True))


def _summary(work: Path, job: ShardJob) -> dict[str, Any] | None:
    path = work / "parts" / job.shard_id / "summary.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _run_shards(
    work: Path,
    plan: list[ShardJob],
    backend: Backend,
    on_progress: Callable[..., None] | None,
) -> tuple[int, int]:
    """Run the shards not finished before; (tasks resumed, tasks rolled out now)."""
    todo = [j for j in plan if _summary(work, j) is None]
    total = sum(j.n for j in plan)
    done = total - sum(j.n for j in todo)
    resumed, now = done, 0
    failed: list[str] = []
    if on_progress:
        on_progress("rollouts", done, total)

    def arrived(i: int, got: Any) -> None:
        nonlocal done, now
        if isinstance(got, JobFailed):
            failed.append(f"{todo[i].shard_id}: {got.reason}")
            return
        _write_shard(work, got)
        done += todo[i].n
        now += len(got["task_ids"])
        if on_progress:
            on_progress("rollouts", done, total)

    backend.run(run_shard, todo, arrived)
    if failed:  # a shard is our code on our environments: a failure is a bug, say which
        raise EnvFactoryError(f"{len(failed)} shard(s) failed; rerun to retry them: {failed[0]}")
    return resumed, now


class _RecordRows:
    """The kept rows of every shard, in plan order, read from disk one shard at a time (for the audit)."""

    def __init__(self, folders: list[Path], count: int):
        self.folders, self.count = folders, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for folder in self.folders:
            with (folder / "records.jsonl").open(encoding="utf-8") as fh:
                for line in fh:
                    r = json.loads(line)
                    if r["status"] == "ok":
                        yield r["row"]


def _place_parts(out: Path, work: Path, plan: list[ShardJob], summaries: list[dict[str, Any]]) -> dict:
    """Part files to ``<config dir>/<split>-0000i-of-0000N.parquet`` in plan order; {(config, split): (files, bytes)}."""
    from ..export.hf import CONFIGS

    placed: dict[tuple[str, str], tuple[list[Path], int]] = {}
    for config, split in _PARTS:
        name = f"{config}-{split}"
        srcs = [
            work / "parts" / j.shard_id / f"{name}.parquet"
            for j, s in zip(plan, summaries)
            if name in s["parts"]
        ]
        files, size = [], 0
        for k, src in enumerate(srcs):
            dst = out / CONFIGS[config] / f"{split}-{k:05d}-of-{len(srcs):05d}.parquet"
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(f".{dst.name}.tmp")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
            files.append(dst)
            size += dst.stat().st_size
        if files:
            placed[(config, split)] = (files, size)
    written = {p.resolve() for files, _ in placed.values() for p in files}
    for sub in CONFIGS.values():  # no part of an older, larger run lingers
        for old in (out / sub).glob("*.parquet") if (out / sub).is_dir() else []:
            if old.resolve() not in written:
                old.unlink()
    return placed


def synthesize_sharded(
    envs: Sequence[Environment],
    out_dir: str | os.PathLike,
    *,
    n: int,
    backend: Backend,
    seed: int = 0,
    name: str | None = None,
    via_mcp: str | None = None,
    eval_fraction: float = 0.2,
    rl_fraction: float = 0.25,
    overwrite: bool = False,
    license: str = "apache-2.0",
    command: str | None = None,
    on_progress: Callable[..., None] | None = None,
    task_config: Any = None,
) -> Any:
    """``synthesize_dataset`` over shards run by ``backend`` (oracle policy); a ``SynthResult``."""
    from ..synth import OraclePolicy, TaskConfig
    from .synthesize import _env_key, _settings, _start

    out = Path(out_dir)
    by_key = {_env_key(e): e for e in envs}
    policy = OraclePolicy(seed=seed)
    cfg = (
        task_config.model_dump(mode="json")
        if task_config is not None and task_config != TaskConfig()
        else None
    )
    settings = _settings(
        by_key,
        out,
        n=n,
        seed=seed,
        name=name,
        policy=policy,
        user_model=None,
        via_mcp=via_mcp,
        tasks_source="build_tasks",
        eval_fraction=eval_fraction,
        rl_fraction=rl_fraction,
        license=license,
        task_config=task_config,
    )
    settings["sharding"] = {"plan": "api-env-blocks-v3-topup", "shard_tasks": SHARD_TASKS}
    work = _start(out, settings, overwrite)
    plan = plan_shards(
        by_key,
        n=n,
        seed=seed,
        eval_fraction=eval_fraction,
        rl_fraction=rl_fraction,
        via_mcp=via_mcp,
        task_config=cfg,
    )
    t0 = time.perf_counter()
    resumed, now = _run_shards(work, plan, backend, on_progress)
    for _ in range(TOPUP_ROUNDS):  # shortfalls go to the environments that delivered
        extra = plan_topup(plan, [cast(dict, _summary(work, j)) for j in plan], n=n)
        if not extra:
            break
        r, w = _run_shards(work, extra, backend, on_progress)
        resumed, now = resumed + r, now + w
        plan = plan + extra
    t1 = time.perf_counter()
    result = export_sharded(
        out, work, plan, settings, by_key, command=command or f"envfactory synth --n {n} --seed {seed}"
    )
    result.resumed, result.rolled_out_now = resumed, now
    result.seconds = {"tasks": 0.0, "rollouts": t1 - t0, "export": time.perf_counter() - t1}
    return result


def _failures(work: Path, plan: list[ShardJob]) -> tuple[Counter, int, int]:
    """(failure reasons, rollout failures, replay failures) over every shard's records."""
    failures: Counter = Counter()
    roll = replay = 0
    for j in plan:
        with (work / "parts" / j.shard_id / "records.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r["status"] != "ok":
                    roll += r["status"] == "rollout_failed"
                    replay += r["status"] == "replay_failed"
                    failures[(r["reason"] or "")[:120]] += 1
    return failures, roll, replay


def export_sharded(
    out: Path,
    work: Path,
    plan: list[ShardJob],
    settings: dict[str, Any],
    envs: dict[str, Environment],
    *,
    command: str,
) -> Any:
    """The dataset folder from the finished shards (Parquet parts, card, audit, bundles, report)."""
    from ..audit.dataset import audit_rows, audit_table
    from ..export import write_bundles
    from ..export.card import build_dataset_card
    from ..export.hf import dataset_info_yaml
    from .synthesize import SynthResult, _root_of

    summaries = [_summary(work, j) for j in plan]
    if any(s is None for s in summaries):
        raise EnvFactoryError("a shard is missing its summary; rerun to finish it")
    sums: list[dict[str, Any]] = [s for s in summaries if s is not None]
    ids = Counter(t for s in sums for t in s["task_ids"])
    dup = [k for k, c in ids.items() if c > 1]
    if dup:
        raise EnvFactoryError(f"task ids repeat across shards: {', '.join(dup[:5])}")
    card_rows: dict[str, list[dict[str, Any]]] = {
        s: [r for x in sums for r in x["card"][s]] for s in ("sft", "rl", "eval")
    }
    splits = [s for s in ("sft", "rl", "eval") if card_rows[s]]
    if splits:  # the card shows the first row whole
        card_rows[splits[0]][0] = next(x["first"][splits[0]] for x in sums if splits[0] in x["first"])
    placed = _place_parts(out, work, plan, sums)
    info = []
    for config, names in (("default", ("sft", "rl", "eval")), ("rl", ("rl",)), ("sharegpt", ("sft", "eval"))):
        counts = {s: len(card_rows[s]) for s in names if (config, s) in placed}
        if counts or config == "default":
            info.append(dataset_info_yaml(config, counts, {s: placed[(config, s)][1] for s in counts}))
    kept = sum(len(v) for v in card_rows.values())
    failures, roll_fail, replay_fail = _failures(work, plan)
    made_up = kept >= settings["n"]  # the top-up rounds built the shortfall on other environments
    for x in sums:
        failures.update(
            {(f"{k} (made up on other environments)" if made_up else k): c for k, c in x["skipped"].items()}
        )
    folders = [work / "parts" / j.shard_id for j in plan]
    rows = cast(list, _RecordRows(folders, kept))  # audit_rows iterates once and takes len()
    root = _root_of(list(envs.values())) or Path(".")
    table = audit_table(audit_rows(rows, root, path=str(out), envs=envs))
    card = build_dataset_card(
        name=settings["name"],
        rows_by_split=card_rows,
        sharegpt_counts={s: len(card_rows[s]) for s in ("sft", "eval") if ("sharegpt", s) in placed},
        dataset_info=info,
        method={
            "policy": "oracle",
            "teacher_model": "oracle",
            "attempts": 1,
            "user_model": None,
            "via": settings["via"],
            "seed": settings["seed"],
            "n": settings["n"],
            "eval_fraction": settings["eval_fraction"],
            "rl_fraction": settings["rl_fraction"],
            "replay_failures": replay_fail,
            "rollout_failures": roll_fail,
            "command": command,
        },
        license=settings["license"],
        audit=table,
    )
    write_atomic(out / "README.md", card)
    counts = {s: len(v) for s, v in card_rows.items()}
    report = {
        "tasks": len(ids),
        "kept": kept,
        "split_counts": counts,
        "rollout_failures": roll_fail,
        "replay_failures": replay_fail,
        "failures": dict(failures.most_common(20)),
        "shards": len(plan),
    }
    (work / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    states: dict[str, set[str]] = {}
    for j, x in zip(plan, sums):
        states.setdefault(j.env_key, set()).update(x["states"])
    files = [p for fs, _ in placed.values() for p in fs] + [out / "README.md"]
    files += write_bundles(out, [envs[k] for k in sorted(states)], states)
    return SynthResult(
        out_dir=out,
        tasks=len(ids),
        kept=kept,
        resumed=0,
        rollout_failures=roll_fail,
        replay_failures=replay_fail,
        split_counts=counts,
        failures=dict(failures.most_common(20)),
        files=files,
    )
