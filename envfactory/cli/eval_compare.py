"""eval compare: stored runs side by side per category (a rich table, or a markdown leaderboard)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._app import console, fail


def _text(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "-"
    low, high = cell["ci"]
    return f"{cell['accuracy']:.1%} ({cell['correct']}/{cell['total']}; {low:.0%}-{high:.0%})"


def print_compare(db_path: Path, runs: str | None, suite: str | None, fmt: str) -> None:
    """Print runs of the results store side by side; accuracy with its 95% Wilson interval."""
    if fmt not in ("table", "markdown"):
        fail(f"--format must be table or markdown, got {fmt!r}")
    if not db_path.is_file():
        fail(f"no results database at {db_path}; run 'envfactory eval' first")
    from ..evaluation import ResultsStore, compare_runs

    try:
        ids = [int(x) for x in runs.split(",") if x.strip()] if runs else []
    except ValueError:
        fail(f"--runs takes run ids separated by commas, got {runs!r}")
    store = ResultsStore(db_path)
    try:
        chosen = store.runs(ids, suite=suite, last=None if ids else 5)
        if not chosen:
            fail(f"no runs in {db_path}" + (f" for suite {suite!r}" if suite else ""))
        table = compare_runs(store, chosen)
    finally:
        store.close()
    columns = table["columns"]
    if fmt == "markdown":
        header = "| category | " + " | ".join(c["label"] for c in columns) + " |"
        lines = [header, "|---|" + "---:|" * len(columns)]
        for row in table["rows"]:
            lines.append(f"| {row} | " + " | ".join(_text(c["cells"].get(row)) for c in columns) + " |")
        lines.append("| suite | " + " | ".join(f"{c['suite']} {c['digest']}" for c in columns) + " |")
        console.print("\n".join(lines), highlight=False, markup=False, soft_wrap=True)
        return
    from rich.table import Table

    out = Table(title=f"runs in {db_path}")
    out.add_column("category")
    for c in columns:
        out.add_column(c["label"], justify="right")
    for row in table["rows"]:
        out.add_row(row, *(_text(c["cells"].get(row)) for c in columns))
    out.add_row("suite", *(f"{c['suite']} {c['digest']}" for c in columns))
    console.print(out)
