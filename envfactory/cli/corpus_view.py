"""``envfactory build --source DIR --out DIR --workers N``: a corpus build and its table (called by build)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import ConfigError
from ._app import console

if TYPE_CHECKING:
    from ..pipelines.corpus import CorpusReport

__all__ = ["run_corpus", "print_corpus"]


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.1f}%)" if b else "0/0"


def _frac(a: int, b: int) -> str:
    return f"{a}/{b}"


def print_corpus(report: CorpusReport) -> None:
    """Per document: status, environments, tools, fidelity and seconds; then totals and failure reasons."""
    from rich.table import Table

    table = Table(title=f"Corpus build: {report.source}")
    # verified: verified tools / documented operations; body, required, enums: kept (agreeing) / documented
    for col in ("document", "status", "envs", "tools", "verified", "body", "required", "enums", "s"):
        if col == "document":  # the path is what a reader copies: fold, never cut off
            table.add_column(
                col,
                overflow="fold",
                min_width=min(24, max((len(d.source) for d in report.documents), default=8)),
            )
        else:
            table.add_column(col, justify="left" if col == "status" else "right", no_wrap=True)
    for d in report.documents:
        f = d.fidelity
        table.add_row(
            d.source,
            d.status,
            str(len(d.envs)),
            str(d.tools),
            _frac(f.get("verified", 0), f.get("operations", 0)),
            _frac(f.get("body_kept", 0), f.get("body_documented", 0)),
            _frac(f.get("required_agree", 0), f.get("required_checked", 0)),
            _frac(f.get("enums_kept", 0), f.get("enums_documented", 0)),
            f"{d.seconds:.1f}",
        )
    console.print(table)
    t = report.fidelity_total()
    console.print(
        f"corpus: {len(report.built)}/{len(report.documents)} documents built ({len(report.failed)} failed, "
        f"{report.skipped} resumed); {sum(len(d.envs) for d in report.documents)} environments, "
        f"{sum(d.tools for d in report.documents)} tools; {_pct(t['verified'], t['operations'])} documented "
        f"operations are verified tools; body properties kept {_pct(t['body_kept'], t['body_documented'])}; "
        f"required flags agree {_pct(t['required_agree'], t['required_checked'])}; enums kept "
        f"{_pct(t['enums_kept'], t['enums_documented'])}, {t['enums_invented']} invented; "
        f"in {report.seconds:.1f}s (documents: {sum(d.seconds for d in report.documents):.1f}s)",
        highlight=False,
    )
    for reason, n in report.failure_reasons().items():
        console.print(f"  failed {n:>5}  {reason}", highlight=False)


def run_corpus(
    source: str | None,
    out: Path | None,
    *,
    workers: int | None,
    backend: tuple[str, str | None] = ("local", None),
    timeout: float | None,
    memory: int | None,
    seed: int,
    cpu: float | None = None,
    verify: bool,
    row_scale: float,
    max_envs: int | None,
    name: str,
    agent: Any,
    view: tuple[Any, Any],
    sample: int | None = None,
) -> None:
    """``view``: (a rich Progress factory, the progress-bar adapter) of the build command."""
    if not source or out is None or source.startswith(("http://", "https://")):
        raise ConfigError(
            "--workers (or --backend ray) builds a corpus: give --source FOLDER (or file) and --out FOLDER"
        )
    if agent is not None:
        raise ConfigError(
            "--workers (or --backend ray) builds with the rules explorer only (--explorer rules)"
        )
    from ..pipelines.backend import make_backend
    from ..pipelines.corpus import Budget, build_corpus

    make_progress, make_bar = view
    runner = make_backend(backend[0], workers=workers, address=backend[1])
    try:
        with make_progress() as p:
            report = build_corpus(
                source,
                out_dir=out,
                workers=runner.workers,
                backend=runner,
                budget=Budget(timeout, memory, cpu),
                seed=seed,
                verify=verify,
                row_scale=row_scale,
                max_envs_per_doc=max_envs,
                domain=name if name != "custom" else "corpus",
                progress=make_bar(p),
                sample=sample,
            )
    finally:
        runner.close()
    print_corpus(report)
    if not report.built:
        raise typer.Exit(1)
