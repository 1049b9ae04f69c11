"""What a build produced: per document, per environment, and for the whole domain.

``BuildReport.to_dict()`` is ``build.json``, which is committed beside the environments: it
holds no timings, so rebuilding the same documents gives the same bytes. Timings go to
``BuildReport.timings()``, written to the ignored ``.build-times.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..explore import FidelityReport

__all__ = ["BUILD_FILE", "TIMES_FILE", "BuildReport", "DocReport", "EnvReport"]

BUILD_FILE = "build.json"
TIMES_FILE = ".build-times.json"  # gitignored: the seconds of the last build, for people and benchmarks


@dataclass
class EnvReport:
    name: str
    source: str  # the first of ``sources``
    tools: int
    entities: int
    rows: int
    check: str  # verify_and_repair, or none (--no-verify)
    dropped_tools: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    seconds: float = 0.0  # not in build.json (see the module docstring)
    sources: list[str] = field(default_factory=list)
    verify_seconds: float = 0.0  # not in build.json
    seed_audit: dict[str, Any] = field(default_factory=dict)  # envfactory audit: violations per check

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in ("seconds", "verify_seconds")}


@dataclass
class DocReport:
    source: str
    ok: bool
    envs: list[str] = field(default_factory=list)
    error: str | None = None
    excluded: int = 0
    warnings: int = 0
    seconds: float = 0.0  # not in build.json

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "seconds"}


@dataclass
class BuildReport:
    """What one build produced; ``to_dict()`` is what ``build.json`` holds."""

    domain: str
    out_dir: str
    envs: list[EnvReport] = field(default_factory=list)
    documents: list[DocReport] = field(default_factory=list)
    dropped_envs: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # file (relative to the project root) -> sha256
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    fidelity: FidelityReport = field(default_factory=FidelityReport)

    @property
    def failed_documents(self) -> list[DocReport]:
        return [d for d in self.documents if not d.ok]

    @property
    def tools(self) -> int:
        return sum(e.tools for e in self.envs)

    @property
    def rows(self) -> int:
        return sum(e.rows for e in self.envs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "envs": [e.name for e in self.envs],
            "sources": self.sources,
            "totals": {
                "envs": len(self.envs),
                "tools": self.tools,
                "rows": self.rows,
                "documents": len(self.documents),
                "failed_documents": len(self.failed_documents),
            },
            "environments": [e.to_dict() for e in self.envs],
            "documents": [d.to_dict() for d in self.documents],
            "dropped_envs": self.dropped_envs,
            "warnings": self.warnings,
            "fidelity": self.fidelity.to_dict(),
        }

    def timings(self) -> dict[str, Any]:
        """Seconds of the whole build, per environment (and its verification) and per document."""
        return {
            "domain": self.domain,
            "seconds": round(self.seconds, 3),
            "environments": {
                e.name: {"seconds": round(e.seconds, 3), "verify_seconds": round(e.verify_seconds, 3)}
                for e in self.envs
            },
            "documents": {d.source: round(d.seconds, 3) for d in self.documents},
        }
