"""envfactory bench rl: episodes stepped through envfactory.rl from one process."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import console, env_dirs, fail, handle_errors
from .bench_cmds import bench_app


@bench_app.command("rl")
@handle_errors
def bench_rl(
    dataset: Path | None = typer.Option(
        None,
        "--dataset",
        help="A dataset folder (its rl split and envs/ bundles); default: a small one synthesized now from --domain/--env.",
    ),
    domain: str = typer.Option(
        "travel", "--domain", "-d", help="Domain to synthesize the default dataset from."
    ),
    env: str = typer.Option(
        "trip_desk", "--env", "-e", help="Environment to synthesize the default dataset from."
    ),
    n: int = typer.Option(32, "--n", min=1, help="Tasks in the default dataset."),
    sizes: str = typer.Option(
        "1,16,256", "--sizes", help="Batch sizes: episodes stepped together, comma-separated."
    ),
    min_seconds: float = typer.Option(1.0, "--min-seconds", min=0.0, help="Least time measured per figure."),
) -> None:
    """Steps per second for batches of episodes (reset, replay each RL row's assistant messages, reward) vs the same tool calls made straight on runtime sessions."""
    import tempfile

    from rich.table import Table

    from ..bench.rl import run_rl_bench
    from ..rl import load_rows

    try:
        batch_sizes = tuple(int(x) for x in sizes.split(",") if x.strip())
    except ValueError:
        fail(f"--sizes {sizes!r}: give whole numbers separated by commas")
    if not batch_sizes or min(batch_sizes) < 1:
        fail("--sizes: every batch size must be at least 1")
    with tempfile.TemporaryDirectory(prefix="envfactory-bench-rl-") as tmp:
        if dataset is None:
            from ..pipelines import synthesize_dataset
            from ..runtime import load_environment

            with console.status(f"synthesizing {n} RL tasks for {domain}/{env} ..."):
                synthesize_dataset(
                    [load_environment(env_dirs(domain, env)[0])],
                    Path(tmp) / "ds",
                    n=n,
                    seed=0,
                    rl_fraction=1.0,
                )
            dataset = Path(tmp) / "ds"
        rows = load_rows(dataset)
        with console.status("stepping episodes ..."):
            rep = run_rl_bench(rows, dataset, sizes=batch_sizes, min_seconds=min_seconds)
    floor = rep.floor_calls_per_s
    t = Table(
        title=f"bench rl: {rep.rows} RL rows of {', '.join(rep.env_ids)}, replayed through envfactory.rl"
    )
    for c in (
        "episodes stepped together",
        "steps/s",
        "tool calls/s",
        "vs in-process calls",
        "episodes",
        "mean reward",
    ):
        t.add_column(c, justify="right")
    t.add_row("floor: Session.try_call", "", f"{floor:,.0f}", "1.00x", "", "")
    for f in rep.figures:
        t.add_row(
            str(f.envs),
            f"{f.steps_per_s:,.0f}",
            f"{f.calls_per_s:,.0f}",
            f"{f.calls_per_s / floor:.2f}x" if floor else "-",
            f"{f.episodes:,}",
            f"{f.rewards:.2f}",
        )
    console.print(t)
