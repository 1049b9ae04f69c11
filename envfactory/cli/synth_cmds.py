"""synth, push: multi-turn trajectories as Hugging Face datasets, and uploading them."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ._app import app, console, env_dirs, fail, handle_errors, nonempty_path
from .tasks_cmds import task_config_option

if TYPE_CHECKING:
    from ..pipelines.synthesize import SynthResult
    from ..synth.config import SynthConfig

_SYNTH_HELP = """Synthesize multi-turn tool-use trajectories and write them as a Hugging Face dataset.

Tasks come from the task builder (or --tasks FILE); each is rolled out with the simulated user and
the assistant policy against live environment sessions, replayed on a fresh session (rows whose tool
results or reward do not reproduce are dropped and counted), and written to
trajectories/NAME/ as Parquet files per split (sft, rl, eval held out by environment) plus a
dataset card. Killed at any point, the same command resumes where it stopped.

No model is needed: the default policy is the oracle (gold calls with natural messages).
--policy teacher --model M --base-url URL uses a model behind an OpenAI-compatible API and keeps
only full-reward rollouts (up to --attempts tries per task)."""


@app.command(help=_SYNTH_HELP)
@handle_errors
def synth(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Domain to synthesize for."),
    all_: bool = typer.Option(False, "--all", help="Every bundled domain."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    n: int = typer.Option(1000, "--n", "-n", min=1, help="Tasks to build and roll out (in total)."),
    seed: int = typer.Option(
        0, "--seed", "-s", help="Seed: the same seed gives the same dataset, byte for byte."
    ),
    name: str | None = typer.Option(
        None, "--name", help="Dataset folder name (default: the domain or 'all', then '-ENV' with --env)."
    ),
    out_root: Path | None = typer.Option(
        None, "--out-root", parser=nonempty_path, help="Parent folder (default ./trajectories)."
    ),
    tasks_file: Path | None = typer.Option(
        None, "--tasks", help="Roll out tasks from this JSONL file instead of building them."
    ),
    policy: str = typer.Option(
        "oracle", "--policy", help="oracle (no model) or teacher (--model, --base-url)."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Teacher model name, as the server serves it."
    ),
    base_url: str = typer.Option(
        "http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible endpoint, with /v1."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."
    ),
    attempts: int = typer.Option(
        3, "--attempts", min=1, help="Teacher: rollouts tried per task (rejection sampling)."
    ),
    temperature: float = typer.Option(0.7, "--temperature", help="Teacher sampling temperature."),
    llm_user: bool = typer.Option(
        False, "--llm-user", help="Teacher: the model also words the simulated user's replies."
    ),
    via_mcp: bool = typer.Option(
        False, "--via-mcp", help="Run tool calls through the MCP server with the SDK client."
    ),
    mcp_transport: str = typer.Option(
        "inproc",
        "--mcp-transport",
        help="With --via-mcp: inproc (in-memory) or stdio (a server process per rollout).",
    ),
    eval_fraction: float = typer.Option(
        0.2, "--eval-fraction", min=0.0, max=1.0, help="Share of environments held out for eval (by hash)."
    ),
    rl_fraction: float = typer.Option(
        0.25, "--rl-fraction", min=0.0, max=1.0, help="Share of training tasks in the rl split (by hash)."
    ),
    license: str = typer.Option("apache-2.0", "--license", help="License in the dataset card."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Start over, replacing an existing dataset folder."
    ),
    task_config: object | None = task_config_option(),
    workers: int | None = typer.Option(
        None,
        "--workers",
        "-j",
        min=1,
        help="Shard by environment over N workers, rows streamed to disk shard by shard (bounded "
        "memory; the same seed gives the same bytes for any N; oracle policy).",
    ),
    backend: str = typer.Option(
        "local",
        "--backend",
        help="Sharded run on local worker processes or ray (Ray tasks; envfactory[ray]).",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="--backend ray: a cluster to join (default: a local Ray on 127.0.0.1)."
    ),
) -> None:
    # the options, by name, to the function that does the work (the command only declares them)
    _synth(**locals())


def _synth(
    *,
    domain: str | None,
    all_: bool,
    env: str | None,
    n: int,
    seed: int,
    name: str | None,
    out_root: Path | None,
    tasks_file: Path | None,
    policy: str,
    model: str | None,
    base_url: str,
    api_key_env: str,
    attempts: int,
    temperature: float,
    llm_user: bool,
    via_mcp: bool,
    mcp_transport: str,
    eval_fraction: float,
    rl_fraction: float,
    license: str,
    overwrite: bool,
    task_config: object | None,
    workers: int | None,
    backend: str,
    ray_address: str | None,
) -> None:
    from ..config import project_paths
    from ..pipelines import synthesize_dataset
    from ..runtime import load_environment

    if all_ == bool(domain):
        fail("give exactly one of --domain DOMAIN or --all")
    cfg = _config(
        n,
        seed,
        policy,
        attempts,
        temperature,
        via_mcp,
        mcp_transport,
        eval_fraction,
        rl_fraction,
        license,
        task_config,
    )
    dirs = env_dirs(None if all_ else domain, env)
    with console.status("loading environments ..."):
        envs = [load_environment(d) for d in dirs]
    pol, chat_model = _policy(policy, model, base_url, api_key_env, attempts, temperature, seed)
    tasks, source = _read_tasks(tasks_file, envs, n)
    ds_name = name or (domain if domain else "all") + ("" if not env else f"-{env}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", ds_name) or ".." in ds_name:
        fail(f"--name {ds_name!r}: use letters, digits, '_', '-' and '.' (a folder name under trajectories/)")
    out = (out_root or project_paths().root / "trajectories") / ds_name
    command = " ".join(
        ["envfactory synth", "--all" if all_ else f"--domain {domain}"]
        + ([f"--env {env}"] if env else [])
        + [f"--n {n}", f"--seed {seed}"]
        + ([f"--policy teacher --model {model} --attempts {attempts}"] if policy == "teacher" else [])
        + (["--via-mcp"] if via_mcp else [])
    )
    if workers is not None or backend != "local" or ray_address:
        if policy != "oracle" or tasks_file is not None or llm_user:
            fail("--workers/--backend: sharded runs build their own tasks with the oracle policy")
        res = _sharded(envs, out, cfg, ds_name, command, overwrite, workers, backend, ray_address)
        return _print_result(res, f"trajectories/{ds_name}" if out_root is None else str(out), out)
    with _progress() as on_progress:
        res = synthesize_dataset(
            envs,
            out,
            n=cfg.n,
            seed=cfg.seed,
            name=ds_name,
            tasks=tasks,
            tasks_source=source,
            policy=pol,
            via_mcp=cfg.via_mcp,
            user_model=chat_model if llm_user else None,
            eval_fraction=cfg.eval_fraction,
            rl_fraction=cfg.rl_fraction,
            overwrite=overwrite,
            license=cfg.license,
            command=command,
            on_progress=on_progress,
            task_config=cfg.tasks,
        )
    _print_result(res, f"trajectories/{ds_name}" if out_root is None else str(out), out)


def _sharded(
    envs: list,
    out: Path,
    cfg: SynthConfig,
    ds_name: str,
    command: str,
    overwrite: bool,
    workers: int | None,
    backend: str,
    ray_address: str | None,
) -> SynthResult:
    """``--workers`` / ``--backend ray``: the sharded run (``pipelines.synth_shards``)."""
    from ..pipelines.backend import make_backend
    from ..pipelines.synth_shards import synthesize_sharded

    runner = make_backend(
        backend, workers=workers, address=ray_address, preload=["envfactory.pipelines.synth_shards"]
    )
    try:
        with _progress() as on_progress:
            return synthesize_sharded(
                envs,
                out,
                n=cfg.n,
                backend=runner,
                seed=cfg.seed,
                name=ds_name,
                via_mcp=cfg.via_mcp,
                eval_fraction=cfg.eval_fraction,
                rl_fraction=cfg.rl_fraction,
                overwrite=overwrite,
                license=cfg.license,
                command=command,
                on_progress=on_progress,
                task_config=cfg.tasks,
            )
    finally:
        runner.close()


def _config(
    n: int,
    seed: int,
    policy: str,
    attempts: int,
    temperature: float,
    via_mcp: bool,
    mcp_transport: str,
    eval_fraction: float,
    rl_fraction: float,
    license: str,
    task_config: object | None,
) -> SynthConfig:
    """The options as the settings' one definition (SynthConfig); a bad value is a one-line error."""
    from pydantic import ValidationError

    if policy not in ("oracle", "teacher"):
        fail(f"unknown policy {policy!r}; choose oracle or teacher")
    if via_mcp and mcp_transport not in ("inproc", "stdio"):
        fail(f"unknown --mcp-transport {mcp_transport!r}; choose inproc or stdio")
    from ..synth.config import SynthConfig, TaskConfig

    try:  # its defaults match the options of synth
        return SynthConfig(
            n=n,
            seed=seed,
            policy=policy,
            attempts=attempts,
            temperature=temperature,
            via_mcp=mcp_transport if via_mcp else None,
            eval_fraction=eval_fraction,
            rl_fraction=rl_fraction,
            license=license,
            tasks=task_config or TaskConfig(),
        )
    except ValidationError as e:
        fail("; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()))
        raise  # not reached: fail() exits


@contextmanager
def _progress() -> Iterator[Callable[..., None]]:
    """A rich progress display, one bar per stage with its rate; yields the on_progress callback."""
    import time

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[bold]{task.description}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as prog:
        bars: dict[str, TaskID] = {}
        started: dict[str, tuple[float, int]] = {}

        def on_progress(stage: str, done: int = 0, total: int | None = None, *rest: object) -> None:
            if not isinstance(done, int):
                return
            if stage not in bars:
                bars[stage] = prog.add_task(stage, total=total, rate="")
                started[stage] = (time.perf_counter(), done)
            t0, d0 = started[stage]
            dt = time.perf_counter() - t0
            rate = f"{(done - d0) / dt:,.0f}/s" if dt > 0.2 and done > d0 else ""
            prog.update(bars[stage], completed=done, total=total, rate=rate)

        yield on_progress


def _policy(
    policy: str,
    model: str | None,
    base_url: str,
    api_key_env: str,
    attempts: int,
    temperature: float,
    seed: int,
) -> tuple[Any, Any]:
    """(the assistant policy, the chat model or None)."""
    from ..synth.policy import OraclePolicy, TeacherPolicy

    if policy != "teacher":
        return OraclePolicy(seed=seed), None
    if not model:
        fail("--policy teacher needs --model (and --base-url)")
    from ..llm import OpenAICompatModel

    chat_model = OpenAICompatModel(base_url, str(model), api_key=os.environ.get(api_key_env) or None)
    return TeacherPolicy(
        chat_model, attempts=attempts, temperature=temperature, seed=seed, model_name=model
    ), chat_model


def _read_tasks(tasks_file: Path | None, envs: list, n: int) -> tuple[list | None, str]:
    """(tasks from --tasks for the chosen environments, their source) or (None, "build_tasks")."""
    if tasks_file is None:
        return None, "build_tasks"
    import hashlib

    from ..spec import load_tasks

    if not tasks_file.is_file():
        fail(f"{tasks_file}: no such tasks file")
    tasks = list(load_tasks(tasks_file))
    source = "file:" + hashlib.sha256(tasks_file.read_bytes()).hexdigest()[:16]
    wanted = {(e.spec.domain, e.spec.name) for e in envs}
    total = len(tasks)
    tasks = [t for t in tasks if (t.domain, t.env) in wanted][:n]
    if not tasks:
        # rolling out nothing would write an empty dataset (a card without Parquet files)
        fail(f"{tasks_file}: none of its {total} tasks is for the chosen environments")
    return tasks, source


def _print_result(res: SynthResult, title: str, out: Path) -> None:
    from rich.table import Table

    t = Table(title=title)
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_row("tasks", f"{res.tasks:,}")
    t.add_row("kept (verified by replay)", f"{res.kept:,}")
    for s, c in res.split_counts.items():
        t.add_row(f"  {s}", f"{c:,}")
    t.add_row("no full-reward rollout", f"{res.rollout_failures:,}")
    t.add_row("replay failures (dropped)", f"{res.replay_failures:,}")
    t.add_row("resumed from earlier run", f"{res.resumed:,}")
    t.add_row(
        "seconds: tasks / rollouts / export",
        " / ".join(f"{res.seconds[k]:.1f}" for k in ("tasks", "rollouts", "export")),
    )
    console.print(t)
    for reason, c in list(res.failures.items())[:5]:
        console.print(f"  dropped {c}x: {reason}", highlight=False)
    console.print(f"wrote {len(res.files)} files under {out}", highlight=False)


@app.command()
@handle_errors
def push(
    path: Path = typer.Argument(..., help="A dataset folder written by 'envfactory synth'."),
    repo_id: str = typer.Option(..., "--repo-id", help="ORG/NAME of the dataset repository on the Hub."),
    private: bool = typer.Option(False, "--private", help="Create the repository as private."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the files that would be uploaded; needs no token or network."
    ),
) -> None:
    """Upload a dataset folder (card + Parquet files) to the Hugging Face Hub (token: HF_TOKEN or 'hf auth login')."""
    from rich.table import Table

    from ..export import push_dataset

    if not path.is_dir():
        fail(f"{path}: not a folder")
    res = push_dataset(path, repo_id, private=private, dry_run=dry_run)
    t = Table(
        title=("would upload to " if dry_run else "uploaded to ")
        + f"datasets/{repo_id}"
        + (" (private)" if private else "")
    )
    t.add_column("file")
    t.add_column("bytes", justify="right")
    for f, size in res.files:
        t.add_row(f, f"{size:,}")
    t.add_row("total", f"{res.total_bytes:,}")
    console.print(t)
    if not dry_run:
        console.print(f"done: {res.url}", highlight=False)
