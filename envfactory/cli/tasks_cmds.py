"""tasks: implicit-intent tasks with verifiable rewards, checked and difficulty-calibrated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ._app import app, console, env_dirs, fail, handle_errors, nonempty_path
from ._settings import settings_parser

if TYPE_CHECKING:  # the task builder loads inside the command (start-up time: see _app)
    from ..synth.tasks import TaskReport

DEFAULT_SOLVER_ROLLOUTS = 4  # with a model

TASK_CONFIG_HELP = (
    'Task-building settings (TaskConfig) as JSON, e.g. \'{"rounds": 6, "hide_rate": 0.5, '
    '"sampler": {"p_branch": 0.5}}\'; in a config file: task_config: {rounds: 6}.'
)


def task_config_option():
    """``--task-config``: a TaskConfig from JSON, or from a config file's mapping (see TASK_CONFIG_HELP)."""
    return typer.Option(
        None,
        "--task-config",
        metavar="JSON",
        show_default=False,
        help=TASK_CONFIG_HELP,
        parser=settings_parser("envfactory.synth.config:TaskConfig", '{"rounds": 6}'),
    )


def _usage_line(u: dict) -> str:
    return (
        f"{u.get('calls', 0)} calls ({u.get('ok', 0)} ok, {u.get('failed', 0)} failed), "
        f"{u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion tokens, "
        f"{u.get('latency_total_s', 0.0):.1f} s"
    )


def print_solver_report(s: dict, usage: dict) -> None:
    if s:
        console.print(
            f"solver pass rate (k={s['rollouts_per_task']} rollouts/task, temperature {s['temperature']}): "
            f"{s['tasks_measured']} tasks measured; mean measured {s['mean_measured']:.3f} vs predicted "
            f"(structural) {s['mean_predicted']:.3f}, mean |gap| {s['mean_abs_gap']:.3f}; MILP target after "
            f"calibration {s.get('mean_target_after', 0.0):.3f}",
            highlight=False,
        )
        console.print(
            f"solver rollouts: {s['rollouts']} ({s['successes']} full reward, {s['wrong']} wrong, "
            f"{s['turn_limit']} turn limit, {s['model_errors']} model errors, {s['errors']} other errors)",
            highlight=False,
        )
        u = s.get("usage") or {}
        console.print(
            "solver model usage: "
            + (
                _usage_line(u)
                if "calls" in u
                else f"{u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion tokens"
            ),
            highlight=False,
        )
        if s["model_errors"] or s["errors"]:
            console.print(
                f"[yellow]{s['model_errors'] + s['errors']} solver rollouts failed on errors and count as "
                "failures (lower measured rates)[/]"
            )
            for e in s.get("error_samples", [])[:3]:
                console.print(f"  [yellow]{e}[/]", highlight=False)
    if usage:
        console.print("model usage (whole build): " + _usage_line(usage), highlight=False)


def print_task_report(rep: TaskReport) -> None:
    from rich.table import Table

    t = Table(
        title=f"tasks: {rep.kept} kept of {rep.candidates} candidates ({rep.plans_sampled} plans sampled)"
    )
    for c in ("check", "failed", "rewritten", "dropped"):
        t.add_column(c, justify="left" if c == "check" else "right")
    for name, counts in rep.checks.items():
        t.add_row(name, str(counts["failed"]), str(counts["rewritten"]), str(counts["dropped"]))
    console.print(t)
    h = Table(
        title=f"predicted pass rate: mean {rep.mean_pass_rate_before:.3f} before, "
        f"{rep.mean_pass_rate_after:.3f} after calibration"
    )
    for c in ("bucket", "before", "after"):
        h.add_column(c, justify="right")
    for k in rep.histogram_before:
        h.add_row(k, str(rep.histogram_before[k]), str(rep.histogram_after.get(k, 0)))
    console.print(h)
    a = Table(title="calibration actions (MILP)")
    for c in ("action", "chosen", "reverted"):
        a.add_column(c, justify="left" if c == "action" else "right")
    for k in sorted(rep.actions):
        a.add_row(k, str(rep.actions[k]), str(rep.edits_reverted.get(k, 0)))
    console.print(a)
    console.print("refinement rules applied: " + ", ".join(f"{k} {v}" for k, v in sorted(rep.rules.items())))
    srcs = ", ".join(f"{k} ({v} questions)" for k, v in rep.decontam_sources.items() if v) or "none"
    console.print(f"decontamination index: {srcs}")
    for why in rep.decontam_unavailable.values():
        console.print(f"[yellow]{why}[/]")
    if rep.llm:
        console.print("model rewrites: " + ", ".join(f"{k} {v}" for k, v in sorted(rep.llm.items())))
    print_solver_report(rep.solver, rep.model_usage)
    console.print("timings (s): " + ", ".join(f"{k} {v}" for k, v in rep.timings.items()))
    console.print("[bold]sample goals[/]")
    for s in rep.samples:
        console.print(f"  - {s}", highlight=False)


@app.command()
@handle_errors
def tasks(
    domain: str = typer.Option(..., "--domain", "-d", help="Domain to build tasks for."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    n: int = typer.Option(1000, "--n", "-n", min=1, help="Number of tasks."),
    seed: int = typer.Option(0, "--seed", help="Seed (same seed, same tasks)."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        parser=nonempty_path,
        help="JSON Lines file (default trajectories/tasks/<domain>.jsonl).",
    ),
    model: str | None = typer.Option(
        None, "--model", help="Model name for the LLM goal rewriter and the solver."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint (e.g. vllm serve)."
    ),
    calibrate: bool = typer.Option(
        True, "--calibrate/--no-calibrate", help="Difficulty calibration (MILP edits)."
    ),
    solver_rollouts: int | None = typer.Option(
        None,
        "--solver-rollouts",
        min=0,
        show_default=False,
        help=(
            f"With --model: measure each task's pass rate from K rollouts with the model as the solver "
            f"(default {DEFAULT_SOLVER_ROLLOUTS}; 0 uses the structural estimate) and calibrate on it. Costly: "
            "every rollout is a whole conversation, up to the task's turn limit (10 + 4 per gold step, at "
            "most 40) model calls, so up to n x K x 40 calls; the call and token totals are printed. "
            "Without a model the structural estimate is used and K must be 0."
        ),
    ),
    task_config: object | None = task_config_option(),
) -> None:
    """Build implicit-intent tasks (goal, persona, hidden facts, gold run, reward) and write JSON Lines."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from ..config import project_paths
    from ..runtime import load_environment
    from ..spec import write_tasks
    from ..synth.config import TaskConfig
    from ..synth.tasks import build_tasks

    assert task_config is None or isinstance(task_config, TaskConfig)  # what --task-config parses to

    if bool(model) != bool(base_url):
        # one without the other used to be a traceback (--base-url) or silently no model (--model)
        fail("--model and --base-url go together (a model behind an OpenAI-compatible endpoint)")
    envs = [load_environment(d) for d in env_dirs(domain, env)]
    chat = None
    if base_url or model:
        from ..llm import ModelConfig, build_chat_model

        chat = build_chat_model(ModelConfig(base_url=base_url, model=model))
    from ..llm import NoModel

    has_model = chat is not None and not isinstance(chat, NoModel)
    if not has_model and solver_rollouts:
        fail("--solver-rollouts needs a model: pass --model and --base-url (an OpenAI-compatible endpoint)")
    k = (DEFAULT_SOLVER_ROLLOUTS if solver_rollouts is None else solver_rollouts) if has_model else 0
    with Progress(
        TextColumn("[bold]{task.description}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as prog:
        bars: dict[str, TaskID] = {}

        def tick(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                bars[stage] = prog.add_task(stage, total=total)
            if done == total or done % 20 == 0:
                prog.update(bars[stage], completed=done, total=total)

        res = build_tasks(
            envs,
            n=n,
            seed=seed,
            model=chat,
            on_progress=tick,
            calibrate=calibrate,
            solver_rollouts=k,
            config=task_config,
        )
    path = write_tasks(res.tasks, out or project_paths().root / "trajectories" / "tasks" / f"{domain}.jsonl")
    print_task_report(res.report)
    console.print(f"wrote {len(res.tasks)} tasks to {path}")
