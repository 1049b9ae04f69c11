"""envfactory bench ...: speed figures against floors measured in the same run."""

from __future__ import annotations

import typer

from ._app import app, console, env_dirs, handle_errors

bench_app = typer.Typer(
    help="Benchmarks: figures and ratios against a floor measured in the same run.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(bench_app, name="bench")


@bench_app.command("runtime")
@handle_errors
def bench_runtime(
    domain: str = typer.Option("travel", "--domain", "-d", help="Domain holding the reference environment."),
    env: str = typer.Option(
        "trip_desk", "--env", "-e", help="Reference environment (needs the trip_desk tools)."
    ),
    n: int = typer.Option(2000, "--n", help="Calls per operation."),
    sessions: int = typer.Option(1000, "--sessions", help="Idle sessions to open for the memory figure."),
) -> None:
    """Latency of tool calls through the runtime vs the same SQL on raw sqlite3; sessions, hashing, memory."""
    from rich.table import Table

    from ..bench.runtime import run_runtime_bench
    from ..runtime import load_environment

    environment = load_environment(env_dirs(domain, env)[0])
    with console.status("benchmarking the runtime ..."):
        rep = run_runtime_bench(environment, n=n, sessions=sessions)
    t = Table(title=f"bench runtime: {rep.env} ({rep.rows:,} rows), {n} calls per operation")
    for c in (
        "operation",
        "runtime p50 µs",
        "runtime p99 µs",
        "raw sqlite3 p50 µs",
        "raw p99 µs",
        "ratio p50",
        "target",
    ):
        t.add_column(c, justify="left" if c == "operation" else "right")
    for op in rep.ops:
        ok = op.ratio <= 3.0
        t.add_row(
            op.name,
            f"{op.runtime_us[0]:.1f}",
            f"{op.runtime_us[1]:.1f}",
            f"{op.floor_us[0]:.1f}",
            f"{op.floor_us[1]:.1f}",
            f"{op.ratio:.2f}x",
            "[green]<= 3x[/]" if ok else "[red]> 3x[/]",
        )
    console.print(t)
    t2 = Table(title="sessions and state")
    t2.add_column("figure")
    t2.add_column("value", justify="right")
    t2.add_column("target", justify="right")
    t2.add_row(
        "new session p50 / p99", f"{rep.new_session_us[0]:.0f} / {rep.new_session_us[1]:.0f} µs", "<= 1000 µs"
    )
    t2.add_row(
        "state hash after one write p50 / p99",
        f"{rep.hash_after_write_us[0]:.1f} / {rep.hash_after_write_us[1]:.1f} µs",
        "<= 1000 µs",
    )
    t2.add_row(
        "full rehash of every row (what incremental hashing avoids)", f"{rep.full_hash_us:,.0f} µs", ""
    )
    total_mb = rep.session_mem_kib * rep.sessions_opened / 1024
    t2.add_row(
        f"RSS per idle session ({rep.sessions_opened} open)",
        f"{rep.session_mem_kib:,.1f} KiB ({total_mb:,.1f} MiB total)",
        "< 2 GiB total",
    )
    t2.add_row(
        "new session + first write (its copy) p50 / p99",
        f"{rep.first_write_us[0]:.0f} / {rep.first_write_us[1]:.0f} µs",
        "",
    )
    t2.add_row(
        f"RSS per session after one read ({rep.sessions_opened} open, sharing)",
        f"{rep.read_session_mem_kib:,.1f} KiB",
        "",
    )
    t2.add_row(
        f"RSS per session after one write ({rep.write_sessions} open, own copies)",
        f"{rep.write_session_mem_kib:,.0f} KiB",
        "",
    )
    t2.add_row(
        f"RSS growth of one session after {rep.inlist_calls} in-lists of distinct lengths",
        f"{rep.inlist_growth_kib:,.0f} KiB",
        "bounded",
    )
    console.print(t2)


@bench_app.command("cli")
@handle_errors
def bench_cli(
    repeats: int = typer.Option(15, "--repeats", "-n", min=1, help="Runs of each command (median reported)."),
) -> None:
    """Start-up time of the command line: --help and inspect --help against a bare 'python -c pass'."""
    from rich.table import Table

    from ..bench.cli import TARGET_RATIO, run_cli_bench

    with console.status("timing the command line ..."):
        rep = run_cli_bench(repeats=repeats)
    t = Table(title=f"bench cli: median of {rep.repeats} runs each, interleaved with the floor")
    for c in ("command", "median ms", "p90 ms", "ratio to floor", "target"):
        t.add_column(c, justify="left" if c == "command" else "right")
    t.add_row(
        rep.floor.name + " (floor)", f"{rep.floor.median_ms:.0f}", f"{rep.floor.p90_ms:.0f}", "1.0x", ""
    )
    for fig in rep.commands:
        r = rep.ratio(fig)
        ok = r <= TARGET_RATIO
        t.add_row(
            fig.name,
            f"{fig.median_ms:.0f}",
            f"{fig.p90_ms:.0f}",
            f"{r:.1f}x",
            f"[green]<= {TARGET_RATIO:g}x[/]" if ok else f"[red]> {TARGET_RATIO:g}x[/]",
        )
    console.print(t)
