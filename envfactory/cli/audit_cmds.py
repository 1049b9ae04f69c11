"""audit: measured meaning. ``envfactory audit DATASET`` measures a dataset folder written by synth.

(The environment/domain audit of seeded state lives beside it; this module dispatches a dataset
folder -- one with Parquet files under data/ -- to ``envfactory.audit.dataset``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ._app import app, console, fail, handle_errors


@app.command()
@handle_errors
def audit(
    target: Path = typer.Argument(..., help="A dataset folder written by 'envfactory synth' (trajectories/NAME)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write every figure and example as JSON here."),
    examples: int = typer.Option(3, "--examples", min=0, help="Examples shown per defect."),
) -> None:
    """Measure a dataset: invented arguments, unused calls, goal/gold mismatches, ids, turn-taking, language."""
    from rich.table import Table

    from ..audit.dataset import DEFECTS, SHARES, audit_rows, audit_table, is_dataset_dir, load_rows
    from ..config import project_paths

    if not is_dataset_dir(target):
        fail(f"{target}: not a dataset folder (no Parquet files under data/); give trajectories/NAME")
    with console.status("auditing ..."):
        a = audit_rows(load_rows(target), project_paths().root, path=str(target), examples=examples)
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
    if json_out is not None:
        json_out.write_text(json.dumps(a.to_dict(), indent=1), encoding="utf-8")
        console.print(f"wrote {json_out}", highlight=False)
