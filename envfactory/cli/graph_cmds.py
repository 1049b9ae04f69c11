"""graph, sample: tool-dependency graphs, and plans sampled on them and executed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ._app import app, console, env_dirs, fail, handle_errors, nonempty_path
from ._settings import settings_parser

SAMPLER_CONFIG_HELP = (
    'Sampler settings (SamplerConfig) as JSON, e.g. \'{"p_branch": 0.5, "max_depth": 4}\'; '
    "in a config file: sampler_config: {p_branch: 0.5}."
)

if TYPE_CHECKING:  # networkx, numpy and matplotlib load inside the commands (start-up time: see _app)
    from ..graph import SamplerReport

# Named here rather than read from graph.SAMPLERS so that --help does not import networkx;
# tests/cli/test_startup.py checks that the two agree.
SAMPLER_NAMES = ("topology", "random_walk")


@app.command()
@handle_errors
def graph(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Domain (default: every domain)."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    out: Path = typer.Option(
        Path("tool_graph.html"),
        "--out",
        "-o",
        parser=nonempty_path,
        help="Drawing to write: FILE.html (interactive, offline) and FILE.png.",
    ),
    png: bool = typer.Option(True, "--png/--no-png", help="Also draw a PNG (needs matplotlib)."),
    weak: bool = typer.Option(False, "--weak", help="Draw weak (similarity) edges in the PNG too."),
) -> None:
    """Build each environment's tool graph (saved as <env>/tool_graph.json) and draw the domain's."""
    from rich.table import Table

    from ..graph import build_domain_graph, build_tool_graph, render_html, render_png, save_tool_graph
    from ..spec import load_spec

    specs = []
    t = Table(title="tool graphs")
    for c in (
        "environment",
        "tools",
        "params (user / discover)",
        "supplies strong",
        "weak",
        "state",
        "unsatisfiable",
        "file",
    ):
        t.add_column(c, justify="left" if c in ("environment", "file", "unsatisfiable") else "right")
    for d in env_dirs(domain, env):
        spec = load_spec(d)
        specs.append(spec)
        g = build_tool_graph(spec)
        path = save_tool_graph(g, d)
        nodes = dict(g.nodes(data=True))
        params = [a for a in nodes.values() if a["node"] == "param"]
        user = sum(1 for a in params if a["source"] == "user")
        kinds = [
            a.get("strength", a["edge"])
            for _, _, a in g.edges(data=True)
            if a["edge"] in ("supplies", "state")
        ]
        unsat = [n for n, a in nodes.items() if a["node"] == "tool" and not a["satisfiable"]]
        t.add_row(
            f"{spec.domain}/{spec.name}",
            str(len(spec.tools)),
            f"{user} / {len(params) - user}",
            str(kinds.count("strong")),
            str(kinds.count("weak")),
            str(kinds.count("state")),
            ", ".join(unsat) or "-",
            str(path),
        )
    console.print(t)
    dg = build_domain_graph(specs)
    html_path = render_html(dg, out.with_suffix(".html"))
    console.print(f"interactive graph: {html_path}")
    if png:
        png_path = render_png(dg, out.with_suffix(".png"), weak=weak)
        console.print(f"picture: {png_path} ({png_path.stat().st_size / 1024:.0f} KiB)")


def _run(envs, n: int, sampler: str, seed: int, graphs, label: str, workers: int, config=None):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..graph import run_sampling

    with Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as prog:
        task = prog.add_task(label, total=n)
        step = max(1, n // 200)

        def tick(i: int) -> None:
            if i % step == 0 or i == n:
                prog.update(task, completed=i)

        return run_sampling(
            envs,
            n,
            sampler=sampler,
            seed=seed,
            graphs=graphs,
            workers=workers,
            on_progress=tick,
            config=config,
        )


def _print_reports(reps: list[SamplerReport]) -> None:
    from rich.table import Table

    t = Table(title="sampling and gold execution")
    t.add_column("figure")
    for r in reps:
        t.add_column(r.sampler, justify="right")
    rows = [
        ("plans", lambda r: f"{r.plans:,}"),
        ("kept (every call ok, and a state change or a non-empty goal result)", lambda r: f"{r.kept:,}"),
        ("success rate", lambda r: f"{100 * r.success_rate:.2f}%"),
        ("state-changing kept plans", lambda r: f"{r.state_changing:,}"),
        (
            "seconds: sampling / executing (summed over workers) / wall",
            lambda r: f"{r.sample_seconds:.1f} / {r.execute_seconds:.1f} / {r.wall_seconds:.1f}",
        ),
        (
            "CPU seconds, all processes (wall time suffers on a busy machine)",
            lambda r: f"{r.cpu_seconds:.1f}",
        ),
        ("plans per second (wall)", lambda r: f"{r.plans_per_second:,.0f}"),
        (
            "tools covered / satisfiable / all",
            lambda r: f"{r.satisfiable_tools - len(r.uncovered)} / {r.satisfiable_tools} / {r.tools_total}",
        ),
        ("tool pairs covered / possible (graph edges)", lambda r: f"{r.pairs_covered} / {r.pairs_possible}"),
        (
            f"tools missed in some {reps[0].window:,}-plan window",
            lambda r: (
                (", ".join(f"{k} ({v}/{r.windows})" for k, v in r.window_misses.items()) or "none")
                if r.windows
                else "n/a (fewer plans than a window)"
            ),
        ),
        (
            "chain length (longest path): count",
            lambda r: "  ".join(f"{k}:{v}" for k, v in r.chain_length.items()),
        ),
        ("root branches per plan: count", lambda r: "  ".join(f"{k}:{v}" for k, v in r.branching.items())),
        ("goals per plan: count", lambda r: "  ".join(f"{k}:{v}" for k, v in r.goals_per_plan.items())),
        ("top failures", lambda r: ", ".join(f"{k} ({v})" for k, v in r.failures.items()) or "none"),
    ]
    for name, fn in rows:
        t.add_row(name, *[fn(r) for r in reps])
    console.print(t)
    envs = sorted({e for r in reps for e in r.per_env})
    te = Table(title="per environment: kept / plans")
    te.add_column("environment")
    for r in reps:
        te.add_column(r.sampler, justify="right")
    for e in envs:
        te.add_row(
            e,
            *[
                f"{r.per_env.get(e, {}).get('kept', 0):,} / {r.per_env.get(e, {}).get('plans', 0):,}"
                for r in reps
            ],
        )
    console.print(te)
    tt = Table(title="tool coverage (kept plans using the tool)")
    tt.add_column("tool")
    for r in reps:
        tt.add_column(r.sampler, justify="right")
    for tool in sorted({k for r in reps for k in r.tools_covered} | {k for r in reps for k in r.uncovered}):
        tt.add_row(tool, *[f"{r.tools_covered.get(tool, 0):,}" for r in reps])
    console.print(tt)


@app.command()
@handle_errors
def sample(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Domain (default: every domain)."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    n: int = typer.Option(1000, "--n", "-n", min=1, help="Plans to sample and execute."),
    seed: int = typer.Option(0, "--seed", "-s", help="Sampling seed: the same seed gives the same plans."),
    sampler: str = typer.Option("topology", "--sampler", help=f"One of: {', '.join(SAMPLER_NAMES)}."),
    report: bool = typer.Option(
        False, "--report", help="Print coverage tables, with the random-walk baseline beside."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", parser=nonempty_path, help="Write kept plans with their gold calls as JSONL."
    ),
    keep_failed: bool = typer.Option(
        False, "--keep-failed", help="With --out, write failed plans too (ok: false)."
    ),
    workers: int = typer.Option(
        1,
        "--workers",
        "-w",
        min=0,
        help="Processes executing plans while sampling goes on (0: execute inline).",
    ),
    sampler_config: object | None = typer.Option(
        None,
        "--sampler-config",
        metavar="JSON",
        show_default=False,
        help=SAMPLER_CONFIG_HELP,
        parser=settings_parser("envfactory.graph.config:SamplerConfig", '{"p_branch": 0.5}'),
    ),
) -> None:
    """Sample plans on the tool graph, execute each on a fresh session, keep the ones that succeed."""
    from ..graph import SAMPLERS, build_sampler_report, build_tool_graph
    from ..runtime import load_environment

    if sampler not in SAMPLERS:
        fail(f"unknown sampler {sampler!r}; choose one of: {', '.join(SAMPLERS)}")
    dirs = env_dirs(domain, env)
    with console.status("loading environments ..."):
        envs = [load_environment(d) for d in dirs]
        graphs = {e.spec.name: build_tool_graph(e.spec) for e in envs}
    run = _run(envs, n, sampler, seed, graphs, sampler, workers, sampler_config)
    reps = [build_sampler_report(run, graphs)]
    if report:
        other = "random_walk" if sampler != "random_walk" else "topology"
        base = _run(envs, n, other, seed, graphs, other, workers, sampler_config)
        reps.append(build_sampler_report(base, graphs))
        _print_reports(reps)
    else:
        r = reps[0]
        console.print(
            f"{r.sampler}: kept {r.kept:,} of {r.plans:,} plans ({100 * r.success_rate:.2f}%) in "
            f"{r.wall_seconds:.1f} s; tools covered "
            f"{r.satisfiable_tools - len(r.uncovered)}/{r.satisfiable_tools}",
            highlight=False,
        )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        tmp = out.with_name(out.name + ".tmp")  # a failure mid-write must not leave a truncated file
        try:
            with tmp.open("w", encoding="utf-8") as f:
                for res in run.results:
                    if res.ok or keep_failed:
                        f.write(json.dumps(res.to_dict(), sort_keys=True, default=str) + "\n")
                        written += 1
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
        console.print(f"wrote {written:,} plans to {out}")
