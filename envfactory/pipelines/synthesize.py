"""Synthesis to a dataset folder: tasks -> rollouts -> replayed rows -> Parquet + card. Crash-safe.

``synthesize_dataset`` works in ``<out>/.synth/`` while it runs:

- ``manifest.json``: the settings; a resume with other settings is refused (``overwrite=True`` starts over);
- ``tasks.jsonl``: the tasks, written once (atomically) so a resume rolls out the very same tasks;
- ``shards/<domain>__<env>.jsonl``: one fsync-ed line per finished task (kept row, or why it was
  dropped), keyed by task id. A kill at any point loses at most the task in flight; on restart a
  torn last line is cut off and redone, finished tasks are skipped.

At the end it reads the shards back, orders rows by task order, and writes the Parquet files and
the card (``envfactory.export``), so an interrupted-and-resumed run writes the same bytes as an
uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..audit.dataset import audit_rows, audit_table
from ..errors import ConfigError
from ..export import ShardWriter, read_shards, write_bundles, write_dataset
from ..llm import ChatModel
from ..runtime import Environment
from ..spec import Task, load_tasks, write_tasks
from ..synth import (
    McpConnector,
    OraclePolicy,
    Policy,
    TaskConfig,
    assign_split,
    build_rl_row,
    build_row,
    build_sharegpt_row,
    build_tasks,
    env_id_of,
    eval_envs,
    replay_calls,
    run_task,
)

__all__ = ["SynthResult", "synthesize_dataset", "WORK_DIR"]

WORK_DIR = ".synth"
_FORMAT = 1


@dataclass
class SynthResult:
    """What a synthesis run wrote. ``seconds``: tasks / rollouts / export (this run only)."""

    out_dir: Path
    tasks: int
    kept: int
    resumed: int
    rollout_failures: int
    replay_failures: int
    split_counts: dict[str, int]
    failures: dict[str, int] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    rolled_out_now: int = 0


def _env_key(env: Environment) -> str:
    return env_id_of(env.spec.domain, env.spec.name)


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _reset(out: Path) -> None:
    for sub in (WORK_DIR, "data", "sharegpt"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    if (out / "README.md").exists():
        (out / "README.md").unlink()


def _shard_name(task: Task) -> str:
    return f"{task.domain}__{task.env}.jsonl".replace("/", "_")


def _start(out: Path, settings: dict[str, Any], overwrite: bool) -> Path:
    """The work folder, with the manifest of ``settings``; refuses to resume other settings."""
    work = out / WORK_DIR
    manifest = work / "manifest.json"
    if overwrite:
        _reset(out)
    elif manifest.exists():
        old = json.loads(manifest.read_text(encoding="utf-8"))
        if old != settings:
            diff = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
            raise ConfigError(
                f"{out} was synthesized with other settings ({', '.join(diff)}); "
                "pass --overwrite to start over or choose another --name"
            )
    elif out.exists() and any((out / p).exists() for p in ("data", "README.md")):
        raise ConfigError(f"{out} holds a dataset this command did not start; pass --overwrite to replace it")
    work.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        tmp = manifest.with_suffix(".tmp")
        tmp.write_text(json.dumps(settings, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, manifest)
    return work


def _tasks_once(
    work: Path,
    tasks: Sequence[Task] | None,
    envs: Sequence[Environment],
    by_key: dict[str, Environment],
    n: int,
    seed: int,
    model: ChatModel | None,
    on_progress: Callable[..., None] | None,
    config: TaskConfig | None = None,
) -> list[Task]:
    """The run's tasks: read back on a resume, else built (or given) and written once."""
    tasks_file = work / "tasks.jsonl"
    if tasks_file.exists():
        return list(load_tasks(tasks_file))
    if tasks is not None:
        task_list = list(tasks)
    else:
        progress = (
            (lambda stage, done, total: on_progress(f"tasks: {stage}", done, total)) if on_progress else None
        )
        task_list = list(
            build_tasks(list(envs), n=n, seed=seed, model=model, config=config, on_progress=progress).tasks
        )
    ids = Counter(t.task_id for t in task_list)
    dup = [k for k, c in ids.items() if c > 1]
    if dup:
        raise ConfigError(f"task ids must be unique; repeated: {', '.join(dup[:5])}")
    missing = sorted({env_id_of(t.domain, t.env) for t in task_list} - set(by_key))
    if missing:
        raise ConfigError(f"tasks name environments that were not loaded: {', '.join(missing)}")
    write_tasks(task_list, tasks_file)
    # Roll out the tasks as the file holds them, as a resume will: writing normalises them (key
    # order of arguments, floats), so fresh and reloaded tasks must take the same bytes.
    return list(load_tasks(tasks_file))


def _roll_out_one(
    task: Task,
    env: Environment,
    *,
    policy: Policy,
    connector: McpConnector | None,
    user_model: ChatModel | None,
    seed: int,
    split: str,
) -> dict[str, Any]:
    """One task's shard record: the kept row, or why it was dropped."""
    tr = run_task(task, env, policy=policy, connector=connector, user_model=user_model, seed=seed)
    rec: dict[str, Any] = {"task_id": task.task_id, "split": split}
    if not tr.ok:
        return rec | {
            "status": "rollout_failed",
            "reason": tr.failure or "no full-reward rollout",
            "row": None,
        }
    row = build_row(tr)
    ok, _, problems = replay_calls(
        row["messages"], env, initial_state=row["initial_state"], reward_spec=row["reward_spec"]
    )
    if ok:
        return rec | {"status": "ok", "reason": None, "row": row}
    return rec | {"status": "replay_failed", "reason": "; ".join(problems)[:500], "row": None}


def _roll_out(
    work: Path,
    task_list: list[Task],
    by_key: dict[str, Environment],
    *,
    policy: Policy,
    via_mcp: str | None,
    user_model: ChatModel | None,
    seed: int,
    eval_fraction: float,
    rl_fraction: float,
    on_progress: Callable[..., None] | None,
) -> tuple[int, int]:
    """Roll out every task not in the shards yet; returns (resumed, rolled out now)."""
    shard_dir = work / "shards"
    done = {r["task_id"] for r in read_shards(shard_dir)}
    resumed = len(done)
    held_out = eval_envs(
        list(by_key), fraction=eval_fraction, sources={k: list(e.spec.sources) for k, e in by_key.items()}
    )
    writers: dict[str, ShardWriter] = {}
    connector = McpConnector(via_mcp) if via_mcp else None
    now = 0
    try:
        if on_progress:
            on_progress("rollouts", len(done), len(task_list))
        for task in task_list:
            if task.task_id in done:
                continue
            rec = _roll_out_one(
                task,
                by_key[env_id_of(task.domain, task.env)],
                policy=policy,
                connector=connector,
                user_model=user_model,
                seed=seed,
                split=assign_split(task, held_out, rl_fraction=rl_fraction),
            )
            w = writers.get(_shard_name(task))
            if w is None:
                w = writers[_shard_name(task)] = ShardWriter(shard_dir / _shard_name(task))
            w.append(rec)
            done.add(task.task_id)
            now += 1
            if on_progress:
                on_progress("rollouts", len(done), len(task_list))
    finally:
        for w in writers.values():
            w.close()
        if connector is not None:
            connector.close()
    return resumed, now


def _settings(
    by_key: dict[str, Environment],
    out: Path,
    *,
    n: int,
    seed: int,
    name: str | None,
    policy: Policy,
    user_model: ChatModel | None,
    via_mcp: str | None,
    tasks_source: str,
    eval_fraction: float,
    rl_fraction: float,
    license: str,
    task_config: TaskConfig | None,
) -> dict[str, Any]:
    """The run's settings, as its manifest records them (a resume must match them)."""
    settings = {
        "format": _FORMAT,
        "name": name or out.name,
        "envs": {k: _digest(e.spec.model_dump(mode="json")) for k, e in sorted(by_key.items())},
        "n": n,
        "seed": seed,
        "policy": policy.name,
        "attempts": policy.attempts,
        "user_model": getattr(user_model, "model", None) if user_model is not None else None,
        "via": f"mcp-{via_mcp}" if via_mcp else "in-process",
        "tasks_source": tasks_source,
        "eval_fraction": eval_fraction,
        "rl_fraction": rl_fraction,
        "license": license,
    }
    if task_config is not None and task_config != TaskConfig():
        settings["task_config"] = task_config.model_dump(mode="json")
    return settings


def synthesize_dataset(
    envs: Sequence[Environment],
    out_dir: str | os.PathLike,
    *,
    n: int,
    seed: int = 0,
    name: str | None = None,
    tasks: Sequence[Task] | None = None,
    tasks_source: str = "build_tasks",
    policy: Policy | None = None,
    via_mcp: str | None = None,
    user_model: ChatModel | None = None,
    task_model: ChatModel | None = None,
    eval_fraction: float = 0.2,
    rl_fraction: float = 0.25,
    overwrite: bool = False,
    license: str = "apache-2.0",
    command: str | None = None,
    on_progress: Callable[..., None] | None = None,
    task_config: TaskConfig | None = None,
) -> SynthResult:
    """Synthesize verified trajectories for ``envs`` into ``out_dir`` (resumes a killed run).

    ``tasks``: use these instead of ``build_tasks(envs, n=n, seed=seed)``. ``policy``: default the
    oracle (no model). ``via_mcp``: ``"inproc"`` or ``"stdio"`` to run tool calls through the MCP
    server. ``on_progress(stage, done, total)`` is called with stage ``"tasks"`` or ``"rollouts"``.
    ``task_config``: how tasks are built (default ``TaskConfig()``; recorded in the manifest when not
    the default).
    """
    out = Path(out_dir)
    policy = policy or OraclePolicy(seed=seed)
    by_key = {_env_key(e): e for e in envs}
    settings = _settings(
        by_key,
        out,
        n=n,
        seed=seed,
        name=name,
        policy=policy,
        user_model=user_model,
        via_mcp=via_mcp,
        tasks_source=tasks_source,
        eval_fraction=eval_fraction,
        rl_fraction=rl_fraction,
        license=license,
        task_config=task_config,
    )
    work = _start(out, settings, overwrite)
    t0 = time.perf_counter()
    task_list = _tasks_once(work, tasks, envs, by_key, n, seed, task_model, on_progress, task_config)
    t1 = time.perf_counter()
    resumed, now = _roll_out(
        work,
        task_list,
        by_key,
        policy=policy,
        via_mcp=via_mcp,
        user_model=user_model,
        seed=seed,
        eval_fraction=eval_fraction,
        rl_fraction=rl_fraction,
        on_progress=on_progress,
    )
    t2 = time.perf_counter()
    result = _export(
        out,
        work,
        task_list,
        settings,
        policy=policy,
        command=command or f"envfactory synth --n {n} --seed {seed}",
        root=_root_of(envs),
        envs=by_key,
    )
    result.resumed, result.rolled_out_now = resumed, now
    result.files += _bundles(out, task_list, by_key)
    result.seconds = {"tasks": t1 - t0, "rollouts": t2 - t1, "export": time.perf_counter() - t2}
    return result


def _bundles(out: Path, task_list: list[Task], by_key: dict[str, Environment]) -> list[Path]:
    """An environment bundle (envfactory.export.bundle) per environment the tasks use, with their states."""
    states: dict[str, set[str]] = {}
    for t in task_list:
        states.setdefault(env_id_of(t.domain, t.env), set()).add(t.initial_state)
    return write_bundles(out, [by_key[k] for k in sorted(states)], states)


def _root_of(envs: Sequence[Environment]) -> Path | None:
    """The project root the environments were loaded from (``<root>/domains/<domain>/<env>``), for the audit."""
    for e in envs:
        if e.path is not None and Path(e.path).parent.parent.name == "domains":
            return Path(e.path).parent.parent.parent
    return None


def _export(
    out: Path,
    work: Path,
    task_list: list[Task],
    settings: dict[str, Any],
    *,
    policy: Policy,
    command: str,
    root: Path | None = None,
    envs: dict[str, Environment] | None = None,
) -> SynthResult:
    """The dataset from the shards (the same bytes whether or not the run was interrupted)."""
    recs = {r["task_id"]: r for r in read_shards(work / "shards")}
    rows_by_split: dict[str, list[dict[str, Any]]] = {"sft": [], "rl": [], "eval": []}
    failures: Counter = Counter()
    roll_fail = replay_fail = 0
    for t in task_list:
        r = recs.get(t.task_id)
        if r is None:
            continue
        if r["status"] == "ok":
            rows_by_split[r["split"]].append(r["row"])
        else:
            roll_fail += r["status"] == "rollout_failed"
            replay_fail += r["status"] == "replay_failed"
            failures[(r["reason"] or "")[:120]] += 1
    sharegpt = {s: [build_sharegpt_row(r) for r in rows_by_split[s]] for s in ("sft", "eval")}
    table = audit_table(
        audit_rows(
            [r for rows in rows_by_split.values() for r in rows], root or Path("."), path=str(out), envs=envs
        )
    )
    files = write_dataset(
        out,
        settings["name"],
        rows_by_split,
        sharegpt,
        license=settings["license"],
        audit=table,
        rl_rows=[build_rl_row(r) for r in rows_by_split["rl"]],
        method={
            "policy": "oracle" if policy.name == "oracle" else "teacher",
            "teacher_model": policy.name.split(":", 1)[-1],
            "attempts": policy.attempts,
            "user_model": settings["user_model"],
            "via": settings["via"],
            "seed": settings["seed"],
            "n": settings["n"],
            "eval_fraction": settings["eval_fraction"],
            "rl_fraction": settings["rl_fraction"],
            "replay_failures": replay_fail,
            "rollout_failures": roll_fail,
            "command": command,
        },
    )
    counts = {s: len(v) for s, v in rows_by_split.items()}
    report = {
        "tasks": len(task_list),
        "kept": sum(counts.values()),
        "split_counts": counts,
        "rollout_failures": roll_fail,
        "replay_failures": replay_fail,
        "failures": dict(failures.most_common(20)),
    }
    (work / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return SynthResult(
        out_dir=out,
        tasks=len(task_list),
        kept=sum(counts.values()),
        resumed=0,
        rollout_failures=roll_fail,
        replay_failures=replay_fail,
        split_counts=counts,
        failures=dict(failures.most_common(20)),
        files=files,
    )
