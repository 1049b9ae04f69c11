"""``envfactory bench cli``: command-line start-up time against a bare interpreter start.

Each command runs as a fresh subprocess, ``repeats`` times, interleaved with the floor
(``python -c pass`` with the same interpreter) so that load on a shared machine hits both
alike; the figure is the ratio of medians. What the commands import is guarded by a test
(``tests/cli/test_startup.py``); how long that takes is measured here.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CliBenchReport", "CliFigure", "run_cli_bench", "cli_launcher", "TARGET_RATIO"]

TARGET_RATIO = 5.0  # the --help budget, in bare interpreter starts


@dataclass
class CliFigure:
    name: str
    argv: list[str]
    seconds: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p90_ms(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1000


@dataclass
class CliBenchReport:
    floor: CliFigure
    commands: list[CliFigure]
    repeats: int

    def ratio(self, fig: CliFigure) -> float:
        return fig.median_ms / self.floor.median_ms if self.floor.median_ms else float("inf")


def cli_launcher() -> list[str]:
    """The installed ``envfactory`` script beside this interpreter (what a user runs), else ``-m envfactory``."""
    script = Path(sys.executable).parent / "envfactory"
    if script.is_file():
        return [str(script)]
    found = shutil.which("envfactory")
    return [found] if found else [sys.executable, "-m", "envfactory"]


def _time(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}"
        )
    return elapsed


def run_cli_bench(repeats: int = 15, commands: list[list[str]] | None = None) -> CliBenchReport:
    """Median wall time of each command (default: ``--help``, ``inspect --help``) and of the floor."""
    launcher = cli_launcher()
    wanted = commands or [["--help"], ["inspect", "--help"]]
    floor = CliFigure("python -c pass", [sys.executable, "-c", "pass"])
    figs = [CliFigure("envfactory " + " ".join(args), launcher + args) for args in wanted]
    for fig in [floor, *figs]:  # warm the OS file cache and the bytecode caches; not measured
        _time(fig.argv)
    for _ in range(repeats):
        for fig in [floor, *figs]:
            fig.seconds.append(_time(fig.argv))
    return CliBenchReport(floor=floor, commands=figs, repeats=repeats)
