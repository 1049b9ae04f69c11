"""The results store: every eval run and its per-entry verdicts in one SQLite database (SQLModel).

``eval/results/results.db`` under the project root (git ignores ``eval/results/``) holds:

- ``evalrun``: one row per run -- agent or model, endpoint, mode, suite, suite digest,
  settings (JSON), start and finish times, status (``running`` until the run finishes, so a
  killed run stays visible as such), wall time;
- ``entryverdict``: one row per finished entry -- category, valid, error type, per-trial
  verdicts, tokens, latency, and the full result as JSON.

Each entry is committed as it finishes (:meth:`ResultsStore.add_result`, the runner's
``on_result``), so a run killed half-way keeps every entry it finished. :func:`compare_runs`
puts runs side by side per category (``envfactory eval compare``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Text
from sqlmodel import Field, Session, SQLModel, create_engine, select

from ..errors import SuiteError
from .conversation import EntryResult, EvalConfig
from .stats import wilson_interval

__all__ = ["EvalRun", "EntryVerdict", "ResultsStore", "compare_runs", "wilson_interval", "RESULTS_DB"]

RESULTS_DB = "results.db"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class EvalRun(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    agent: str = Field(index=True)
    endpoint: str = ""
    mode: str = "fc"
    suite: str = Field(index=True)
    suite_digest: str = ""
    settings: str = Field(default="{}", sa_column=Column(Text))
    started_at: str = Field(default_factory=_now)
    finished_at: str | None = None
    status: str = "running"
    wall_s: float = 0.0


class EntryVerdict(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="evalrun.id", index=True)
    entry_id: str
    category: str = Field(index=True)
    valid: bool
    error_type: str | None = None
    trials: str = "[]"  # JSON list of per-trial verdicts (multi-turn with --trials k)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    result: str = Field(default="{}", sa_column=Column(Text))


class ResultsStore:
    """A results database; ``path`` is the SQLite file (created with its tables on first use)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Entries finish on the runner's worker threads: one lock serializes the writes.
        self.engine = create_engine(f"sqlite:///{self.path}", connect_args={"check_same_thread": False})
        self._lock = threading.Lock()
        SQLModel.metadata.create_all(self.engine, tables=[EvalRun.__table__, EntryVerdict.__table__])  # type: ignore[attr-defined]

    def close(self) -> None:
        self.engine.dispose()

    def start_run(
        self, *, agent: str, suite: str, suite_digest: str, config: EvalConfig, endpoint: str = ""
    ) -> int:
        settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(config).items()}
        run = EvalRun(
            agent=agent,
            endpoint=endpoint,
            mode=config.mode,
            suite=suite,
            suite_digest=suite_digest,
            settings=json.dumps(settings, sort_keys=True),
        )
        with Session(self.engine) as session:
            session.add(run)
            session.commit()
            session.refresh(run)
            assert run.id is not None
            return run.id

    def add_result(self, run_id: int, result: EntryResult) -> None:
        """Write one finished entry (its own transaction: a killed run keeps it)."""
        row = EntryVerdict(
            run_id=run_id,
            entry_id=result.id,
            category=result.category,
            valid=result.valid,
            error_type=result.error_type,
            trials=json.dumps(result.trial_valid),
            requests=result.requests,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_s=result.latency_s,
            result=json.dumps(result.to_dict(), default=repr),
        )
        with self._lock, Session(self.engine) as session:
            session.add(row)
            session.commit()

    def finish_run(self, run_id: int, wall_s: float) -> None:
        with Session(self.engine) as session:
            run = session.get(EvalRun, run_id)
            if run is not None:
                run.status, run.finished_at, run.wall_s = "done", _now(), wall_s
                session.add(run)
                session.commit()

    def runs(
        self, ids: Sequence[int] = (), suite: str | None = None, last: int | None = None
    ) -> list[EvalRun]:
        with Session(self.engine) as session:
            query = select(EvalRun)
            if ids:
                query = query.where(EvalRun.id.in_(list(ids)))  # type: ignore[union-attr]
            if suite:
                query = query.where(EvalRun.suite == suite)
            rows = list(session.exec(query.order_by(EvalRun.id)))  # type: ignore[arg-type,attr-defined]
        if ids:
            missing = sorted(set(ids) - {r.id for r in rows})
            if missing:
                raise SuiteError(f"{self.path}: no run with id {', '.join(map(str, missing))}")
        return rows[-last:] if last else rows

    def verdicts(self, run_id: int) -> list[EntryVerdict]:
        with Session(self.engine) as session:
            query = select(EntryVerdict).where(EntryVerdict.run_id == run_id).order_by(EntryVerdict.id)  # type: ignore[arg-type]
            return list(session.exec(query))  # type: ignore[attr-defined]


def _cell(rows: list[EntryVerdict]) -> dict[str, Any]:
    correct = sum(r.valid for r in rows)
    low, high = wilson_interval(correct, len(rows))
    return {
        "correct": correct,
        "total": len(rows),
        "accuracy": correct / len(rows) if rows else 0.0,
        "ci": (low, high),
    }


def compare_runs(store: ResultsStore, runs: Sequence[EvalRun]) -> dict[str, Any]:
    """Per category (rows) and run (columns): correct, total, accuracy, 95% CI; plus ``overall``."""
    from .categories import CATEGORIES

    columns: list[dict[str, Any]] = []
    for run in runs:
        assert run.id is not None
        verdicts = store.verdicts(run.id)
        by_category: dict[str, list[EntryVerdict]] = {}
        for v in verdicts:
            by_category.setdefault(v.category, []).append(v)
        cells = {c: _cell(rows) for c, rows in by_category.items()}
        cells["overall"] = _cell(verdicts)
        label = f"#{run.id} {run.agent} {run.suite} ({run.mode}{'' if run.status == 'done' else ', ' + run.status})"
        columns.append(
            {
                "run": run.id,
                "label": label,
                "suite": run.suite,
                "digest": run.suite_digest[:12],
                "cells": cells,
                "tokens": sum(v.prompt_tokens + v.completion_tokens for v in verdicts),
            }
        )
    present = {c for col in columns for c in col["cells"]}
    rows = (
        [c for c in CATEGORIES if c in present]
        + sorted(present - set(CATEGORIES) - {"overall"})
        + ["overall"]
    )
    return {"rows": rows, "columns": columns}
