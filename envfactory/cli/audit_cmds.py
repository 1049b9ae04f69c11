"""audit: measured meaning (``envfactory.audit``).

``envfactory audit ENV_OR_DOMAIN``: would a person believe an environment's rows (roles and constraints)?
``envfactory audit DATASET``: a dataset folder written by synth (Parquet files under data/): invented
arguments, unused calls, goal/gold mismatches, ids, turn-taking and language.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ._app import app, console, env_dirs, fail, handle_errors

_LABELS = {
    "constraint": "constraint violations",
    "non_date": "non-dates in date fields",
    "status_word": "random words in status fields",
    "id_word": "words in non-key *_id fields",
    "shape": "values of the wrong shape",
    "person_name": "person names on non-person fields",
    "lorem": "single-word lorem text",
    "empty": "empty object/array values",
}


def _targets(target: str) -> list[Path]:
    p = Path(target)
    if p.is_dir():
        if (p / "env.yaml").is_file():
            return [p]
        found = sorted(
            q.parent
            for q in p.rglob("env.yaml")
            if not any(part.startswith(".") for part in q.relative_to(p).parts)
        )
        if not found:
            fail(f"{target}: no env.yaml under this folder")
        return found
    if "/" in target:
        domain, _, env = target.partition("/")
        return env_dirs(domain, env)
    from ..config import project_paths

    if (project_paths().domains_dir / target).is_dir():
        return env_dirs(target)
    return env_dirs(None, target)


def _print_report(rep: Any, verbose: bool) -> None:
    from rich.table import Table

    table = Table(title=f"{rep.env}: {rep.rows} rows, {rep.calls} calls")
    for col in ("check", "seeded", "checked", "after calls"):
        table.add_column(col, justify="left" if col == "check" else "right")
    examples: list[str] = []
    for k, label in _LABELS.items():
        c, a = rep.seed[k], rep.after_calls[k]
        seeded = f"{c.violations} ({c.rate:.1%})" if k == "empty" else str(c.violations)
        bad = c.violations and not (k == "empty" and c.rate <= 0.05)
        table.add_row(label, f"[red]{seeded}[/]" if bad else seeded, str(c.checked), str(a.violations))
        examples += [f"{k}: {e}" for e in c.examples[: 3 if verbose else 1]]
        examples += [f"{k} (after calls): {e}" for e in a.examples[: 2 if verbose else 0]]
    console.print(table)
    for e in examples:
        console.print(f"  {e}", highlight=False, markup=False, soft_wrap=True)


def _line(name: str, reports: list[Any], checks: tuple[str, ...]) -> str:
    parts = []
    for k in checks:
        seeded = sum(r.seed[k].violations for r in reports)
        if k == "empty":
            checked = sum(r.seed[k].checked for r in reports)
            parts.append(f"empty={seeded / checked if checked else 0:.1%}")
            continue
        after = sum(r.after_calls[k].violations for r in reports)
        parts.append(f"{k}={seeded}" + (f"(+{after})" if after else ""))
    ok = "ok" if all(r.ok for r in reports) else "FINDINGS"
    return f"  {ok:8} {name}: " + " ".join(parts)


@app.command()
@handle_errors
def audit(
    target: str = typer.Argument(
        ...,
        help="An environment folder, a folder of them, a domain, DOMAIN/ENV, an env name, "
        "or a dataset folder written by 'envfactory synth' (trajectories/NAME).",
    ),
    calls: int = typer.Option(
        2, "--calls", help="Valid calls per write tool before auditing the state after calls (0: none)."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the calls' arguments (with --show: of the rows picked)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the full reports as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="More examples per check."),
    examples: int = typer.Option(3, "--examples", min=0, help="Dataset audit: examples shown per defect."),
    show: int = typer.Option(
        0,
        "--show",
        min=0,
        help="Dataset: print N whole rows picked by --seed, as stored, instead of the audit.",
    ),
) -> None:
    """Environments: check seeded rows (and rows after tool calls) against field roles and constraints,
    exit 1 on findings. Datasets: measure the invariants of the tasks issue, with examples."""
    from ..audit import CHECKS, audit_environment
    from ..audit.dataset import is_dataset_dir

    if is_dataset_dir(Path(target)) and show:
        _show_rows(Path(target), show, seed)
        return
    if is_dataset_dir(Path(target)):
        _audit_dataset(Path(target), as_json=as_json, examples=examples)
        return
    from ..runtime import load_environment

    reports = []
    for d in _targets(target):
        reports.append(audit_environment(load_environment(d), seed=seed, calls_per_tool=calls))
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in reports], indent=2))
    else:
        for r in reports:
            _print_report(r, verbose)
        console.print(
            f"Seed audit of {len(reports)} environment(s): violations in seeded rows (+ after calls)",
            highlight=False,
        )
        for r in reports:
            console.print(_line(r.env, [r], CHECKS), highlight=False, markup=False, soft_wrap=True)
        if len(reports) > 1:
            console.print(_line("all", reports, CHECKS), highlight=False, markup=False, soft_wrap=True)
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


def _show_rows(target: Path, n: int, seed: int) -> None:
    """Whole rows (id, environment, goal, every message with its tool calls and results), unedited."""
    from ..audit.dataset import load_rows, pick_rows

    keep = ("id", "env_id", "user", "messages")
    for row in pick_rows(load_rows(target), n, seed):
        typer.echo(json.dumps({k: row[k] for k in keep if k in row}, indent=1, ensure_ascii=False))


def _audit_dataset(target: Path, *, as_json: bool, examples: int) -> None:
    from rich.table import Table

    from ..audit.dataset import DEFECTS, SHARES, audit_rows, audit_table, load_rows
    from ..config import project_paths

    with console.status("auditing ..."):
        a = audit_rows(load_rows(target), project_paths().root, path=str(target), examples=examples)
    if as_json:
        typer.echo(json.dumps(a.to_dict(), indent=1))
        return
    t = Table(title=f"audit of {target} ({a.rows:,} rows)")
    for c in ("figure", "value", "target"):
        t.add_column(c, justify="right" if c != "figure" else "left")
    for row in audit_table(a):
        t.add_row(*row)
    console.print(t)
    for k, label, _ in DEFECTS + SHARES:
        for e in a.examples.get(k, [])[:examples]:
            console.print(f"  {label}: {e}", highlight=False, markup=False)
    for name, dist in a.distributions.items():
        console.print(f"  {name}: " + ", ".join(f"{k} {v:,}" for k, v in dist.items()), highlight=False)
    if a.skipped:
        console.print(f"  skipped (environment not found): {a.skipped}", highlight=False)
