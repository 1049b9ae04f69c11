"""A synth run killed at any stage (tasks, rollouts, export) and run again writes the bytes of an uninterrupted run.

Tasks built in the run (not read from a --tasks file) used to keep their arguments' insertion
order in a fresh run but came back with sorted keys from ``tasks.jsonl`` on a resume.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
N = 8

# The child dies with os._exit (no clean-up, as SIGKILL) at a chosen point of the run.
RUN = """
import os, sys
from pathlib import Path
import envfactory.pipelines.synthesize as syn
import envfactory.export.hf as hf
from envfactory.runtime import load_environment

stage, out, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if stage == "tasks":  # tasks built, not yet written
    syn.write_tasks = lambda *a, **k: os._exit(9)
elif stage == "rollouts":  # three tasks rolled out
    append, seen = syn.ShardWriter.append, []
    def dying_append(self, rec):
        append(self, rec)
        seen.append(1)
        if len(seen) == 3:
            os._exit(9)
    syn.ShardWriter.append = dying_append
elif stage == "export":  # the first Parquet file written
    write = hf.write_parquet
    def dying_write(*a, **k):
        write(*a, **k)
        os._exit(9)
    hf.write_parquet = dying_write
syn.synthesize_dataset([load_environment(Path("domains/travel/trip_desk"))], out, n=n, seed=0)
"""


def _synth(stage: str, out: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO), "ENVFACTORY_ROOT": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RUN), stage, str(out), str(N)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 9), proc.stderr[-2000:]
    return proc.returncode


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("clean") / "ds"
    assert _synth("none", out) == 0
    return _files(out)


@pytest.mark.slow  # runs synth in subprocesses: killed, then resumed
@pytest.mark.parametrize("stage", ["tasks", "rollouts", "export"])
def test_a_run_killed_at_any_stage_resumes_to_the_same_bytes(tmp_path, clean, stage):
    out = tmp_path / "ds"
    assert _synth(stage, out) == 9
    assert _synth("none", out) == 0
    got = _files(out)
    assert sorted(got) == sorted(clean)
    assert [f for f in clean if got[f] != clean[f]] == []
    assert any(f.endswith(".parquet") for f in got) and ".synth/tasks.jsonl" in got
