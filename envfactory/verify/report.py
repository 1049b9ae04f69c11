"""Run every level on an environment and collect one report (``verification.json``)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cassette import (
    cassette_path,
    check_doc_examples,
    load_cassette,
    record_cassette,
    replay_cassette,
    save_cassette,
)
from .levels import check_l1, check_l2
from .smoke import ToolCheck, smoke_check

__all__ = ["ToolReport", "VerificationReport", "verify_environment", "LEVEL_NAMES"]

LEVEL_NAMES = ("L1", "L2", "L3")


@dataclass
class ToolReport:
    """Per-level status of one tool: 'pass', 'fail' or 'n/a' (L3: not exercised by the cassette)."""

    tool: str
    status: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(v != "fail" for v in self.status.values())

    def first_failure(self) -> str:
        for lv in ("smoke", *LEVEL_NAMES):
            if self.status.get(lv) == "fail":
                return f"{lv}: {self.messages.get(lv, '')}"
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "messages": {k: v for k, v in self.messages.items() if v and v != "ok"},
        }


@dataclass
class VerificationReport:
    """What verification found for one environment; ``seconds`` is kept in memory only."""

    env: str
    domain: str = ""
    tools: dict[str, ToolReport] = field(default_factory=dict)
    env_messages: list[str] = field(default_factory=list)
    excluded: list[dict[str, str]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    mutation: dict[str, Any] | None = None
    seconds: float = 0.0
    rounds: int = 1

    @property
    def ok(self) -> bool:
        return not self.env_messages and all(t.ok for t in self.tools.values())

    @property
    def failing(self) -> list[str]:
        return [n for n, t in self.tools.items() if not t.ok]

    def to_dict(self) -> dict[str, Any]:
        """What ``verification.json`` holds: the findings, no timings (the file is committed
        beside env.yaml, and the same environment must give the same bytes)."""
        mutation = (
            None if self.mutation is None else {k: v for k, v in self.mutation.items() if k != "seconds"}
        )
        return {
            "env": self.env,
            "domain": self.domain,
            "ok": self.ok,
            "rounds": self.rounds,
            "tools": {n: t.to_dict() for n, t in self.tools.items()},
            "env_messages": self.env_messages,
            "excluded": self.excluded,
            "repairs": self.repairs,
            "mutation": mutation,
        }

    def save(self, path: str | os.PathLike) -> Path:
        p = Path(path)
        if p.suffix != ".json":
            p = p / "verification.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
        return p


def _fold(report: VerificationReport, checks: list[ToolCheck]) -> None:
    for c in checks:
        if c.tool == "*":
            if not c.ok:
                report.env_messages.append(f"{c.level}: {c.message}")
            continue
        tr = report.tools.setdefault(c.tool, ToolReport(c.tool))
        prev = tr.status.get(c.level)
        if prev == "fail":
            continue
        tr.status[c.level] = "pass" if c.ok else "fail"
        tr.messages[c.level] = c.message


def verify_environment(
    env: Any,
    *,
    seed: int = 0,
    cassettes_dir: str | os.PathLike | None = None,
    record: bool = False,
    doc_examples: list | None = None,
    mutants: bool = False,
) -> VerificationReport:
    """Smoke, L1, L2 and L3 (replaying ``cassettes_dir``'s cassette; recorded there when missing
    and ``record``; otherwise recorded in memory) on ``env``; the mutation score when ``mutants``."""
    t0 = time.perf_counter()
    spec = env.spec
    report = VerificationReport(env=spec.name, domain=spec.domain)
    for t in spec.tools:
        report.tools[t.name] = ToolReport(t.name, {lv: "n/a" for lv in ("smoke", *LEVEL_NAMES)})
    _fold(report, smoke_check(env, seed=seed))
    _fold(report, check_l1(env, seed=seed))
    _fold(report, check_l2(env, seed=seed))
    cas = None
    if cassettes_dir is not None and cassette_path(cassettes_dir, spec.name).is_file():
        cas = load_cassette(cassette_path(cassettes_dir, spec.name))
        if cas.spec_digest != _digest(spec):
            report.env_messages.append(
                "L3: the cassette was recorded for another version of the spec; "
                "record it again (envfactory verify --record)"
            )
            cas = None
    elif cassettes_dir is not None and not record:
        report.env_messages.append(
            f"L3: no cassette at {cassette_path(cassettes_dir, spec.name)}; "
            f"record one (envfactory verify --record)"
        )
    if cas is None and not report.env_messages:
        cas = record_cassette(env, seed=seed)
        if cassettes_dir is not None and record:
            save_cassette(cas, cassettes_dir)
    if cas is not None:
        _fold(report, replay_cassette(env, cas))
    if doc_examples:
        _fold(report, check_doc_examples(env, doc_examples))
    if mutants:
        from .mutants import run_mutants

        report.mutation = run_mutants(env, seed=seed, cassette=cas).to_dict()
    report.seconds = time.perf_counter() - t0
    return report


def _digest(spec: Any) -> str:
    from ..spec import spec_digest

    return spec_digest(spec)
