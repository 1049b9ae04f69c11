"""verify: run the verification levels (and optionally the mutation score) on environments."""

from __future__ import annotations

import typer

from ._app import app, console, env_dirs, handle_errors

_STYLE = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "n/a": "[dim]n/a[/]"}


@app.command()
@handle_errors
def verify(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain (default: all)."),
    env: str | None = typer.Option(None, "--env", "-e", help="Only this environment."),
    mutants: bool = typer.Option(False, "--mutants", help="Also compute the mutation score (slower)."),
    record: bool = typer.Option(False, "--record", help="Record the L3 cassette when it is missing."),
    seed: int = typer.Option(0, "--seed", help="Seed of generated calls and sequences."),
    write: bool = typer.Option(False, "--write", help="Write verification.json next to each env.yaml."),
) -> None:
    """Verify environments: smoke + L1 properties, L2 interactions, L3 cassette replay; exit 1 on any failure."""
    from rich.table import Table

    from ..runtime import load_environment
    from ..verify import verify_environment

    failed = False
    summary = Table(title="Verification")
    for col in (
        "environment",
        "tools",
        "L1 pass",
        "L2 pass",
        "L3 pass",
        "mutants caught L1/L2/L3/any",
        "time",
    ):
        summary.add_column(col, justify="left" if col == "environment" else "right")
    for d in env_dirs(domain, env):
        e = load_environment(d)
        rep = verify_environment(e, seed=seed, cassettes_dir=d / "cassettes", record=record, mutants=mutants)
        if write:
            rep.save(d / "verification.json")
        table = Table(title=f"{e.spec.domain}/{e.spec.name}")
        table.add_column("tool")
        table.add_column("kind")
        for lv in ("L1", "L2", "L3"):
            table.add_column(lv)
        table.add_column("first failure", overflow="fold")
        kinds = {t.name: t.kind.value for t in e.spec.tools}
        for name, tr in rep.tools.items():
            l1 = (
                "fail"
                if "fail" in (tr.status.get("smoke"), tr.status.get("L1"))
                else tr.status.get("L1", "n/a")
            )
            table.add_row(
                name,
                kinds.get(name, ""),
                _STYLE[l1],
                _STYLE[tr.status.get("L2", "n/a")],
                _STYLE[tr.status.get("L3", "n/a")],
                tr.first_failure()[:300],
            )
        console.print(table)
        for m in rep.env_messages:
            console.print(f"[bold red]{e.spec.name}[/]: {m}", highlight=False)
        passed = {
            lv: sum(
                1
                for t in rep.tools.values()
                if t.status.get(lv) == "pass" and not (lv == "L1" and t.status.get("smoke") == "fail")
            )
            for lv in ("L1", "L2", "L3")
        }
        mut = "-"
        if rep.mutation:
            pl = rep.mutation["per_level"]
            mut = (
                f"{pl['L1']:.0%}/{pl['L2']:.0%}/{pl['L3']:.0%}/{rep.mutation['score']:.1%} "
                f"of {rep.mutation['total']} ({rep.mutation['seconds']:.1f}s)"
            )
            for s in rep.mutation["survivors"][:10]:
                console.print(f"  surviving mutant: {s['name']}", highlight=False)
        n = len(rep.tools)
        verify_s = rep.seconds - (rep.mutation["seconds"] if rep.mutation else 0.0)
        summary.add_row(
            f"{e.spec.domain}/{e.spec.name}",
            str(n),
            *(f"{passed[lv]}/{n}" for lv in ("L1", "L2", "L3")),
            mut,
            f"{verify_s:.2f}s",
        )
        failed = failed or not rep.ok
    console.print(summary)
    if failed:
        raise typer.Exit(1)
