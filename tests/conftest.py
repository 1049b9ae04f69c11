from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


@pytest.fixture(scope="session")
def trip_desk_env():
    from envfactory.runtime import load_environment

    return load_environment(TRIP_DESK)


# ---- the checkout stays clean: tests write to tmp_path, never into the repository -------------------

_GENERATED = ("template.db", "__pycache__", ".pyc", ".pytest_cache", ".egg-info")  # rebuilt caches


def _checkout_entries() -> set[str] | None:
    """What ``git status`` reports (untracked and ignored too) plus the top-level folder listing
    (git does not show an empty folder, such as a stray ``results/``); None outside a git checkout."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--ignored"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    entries = {line for line in out.stdout.splitlines() if line.strip()}
    entries |= {f"dir {p.name}" for p in REPO.iterdir()}
    return {e for e in entries if not any(g in e for g in _GENERATED)}


def pytest_sessionstart(session):
    session.config._checkout_before = _checkout_entries()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_checkout_before", None)
    after = _checkout_entries()
    if before is None or after is None:
        return
    left = sorted(after - before)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                "tests left files in the checkout (write to tmp_path instead): " + "; ".join(left), red=True
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
