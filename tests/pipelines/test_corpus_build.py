"""Corpus builds (issue 21): a pool of workers, budgets per document, resume after a kill."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envfactory.errors import ConfigError
from envfactory.pipelines.corpus import CORPUS_FILE, CORPUS_STATE_FILE, Budget, build_corpus

from ..conftest import REPO
from ..ingest._corpus import CORPUS, needs_corpus

# three small real documents in two folders: two OpenAPI, one Markdown page
DOCS = (
    "travel/amadeus__HotelList_v1.yaml",
    "travel/amadeus__TransferManagement_v1.yaml",
    "project_management/basecamp__todolists.md",
)
BIG = Budget(seconds=None, memory_mb=None)
BOX = "file_storage/box__openapi.json"


# a page in the folder that documents no API: it must be recorded as failed, with a reason, and the run go on
# (every real corpus document now yields an environment; TransferManagement used to be the failing one)
NOT_AN_API = "notes/release_notes.md"


def _corpus(tmp_path: Path, docs: tuple[str, ...] = DOCS, *, not_an_api: bool = False) -> Path:
    src = tmp_path / "src"
    for rel in docs:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / rel, src / rel)
    if not_an_api:
        (src / NOT_AN_API).parent.mkdir(parents=True, exist_ok=True)
        (src / NOT_AN_API).write_text("# Release notes\n\nWe fixed some typos in the guides.\n")
    return src


def _tree(out: Path) -> dict[str, bytes]:
    """Every result file's bytes; timings and the resume state are not results."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith((".corpus-", ".build-times"))
    }


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus1")
    src = _corpus(tmp, not_an_api=True)
    report = build_corpus(src, out_dir=tmp / "out", workers=1, budget=BIG, row_scale=0.1)
    return src, tmp / "out", report


@needs_corpus
@pytest.mark.slow
def test_one_and_two_workers_give_the_same_bytes(one_worker, tmp_path):
    src, out1, report = one_worker
    assert [d.source for d in report.documents] == sorted((*DOCS, NOT_AN_API))
    assert [d.source for d in report.failed] == [NOT_AN_API]
    assert len(report.built) == len(DOCS)
    assert all(d.reason for d in report.failed) and all(d.envs and d.tools for d in report.built)
    corpus = json.loads((out1 / CORPUS_FILE).read_text())
    assert corpus["totals"]["documents"] == 4 and corpus["fidelity"]["operations"] > 0
    report2 = build_corpus(src, out_dir=tmp_path / "out", workers=2, budget=BIG, row_scale=0.1)
    assert report2.skipped == 0
    tree1, tree2 = _tree(out1), _tree(tmp_path / "out")
    assert any(k.endswith("env.yaml") for k in tree1) and any(k.endswith("template.db") for k in tree1)
    assert tree1 == tree2


@needs_corpus
def test_a_document_over_its_budget_is_failed_and_the_run_goes_on(tmp_path):
    # two documents that build
    src = _corpus(tmp_path, (DOCS[0], DOCS[2]))
    out = tmp_path / "out"
    # neither build finishes in 50 ms (each takes seconds): both are killed and recorded
    report = build_corpus(
        src, out_dir=out, workers=2, budget=Budget(seconds=0.05, memory_mb=None), row_scale=0.1
    )
    assert [d.status for d in report.documents] == ["failed"] * 2
    assert report.failure_reasons() == {"time budget exceeded": 2}
    assert json.loads((out / CORPUS_FILE).read_text())["totals"]["failed"] == 2
    # a rerun under the same budget does not retry them
    again = build_corpus(
        src, out_dir=out, workers=2, budget=Budget(seconds=0.05, memory_mb=None), row_scale=0.1
    )
    assert again.skipped == 2 and [d.reason for d in again.documents] == [d.reason for d in report.documents]
    # 100 MiB of address space is less than the interpreter already maps
    mem = build_corpus(
        src, out_dir=tmp_path / "mem", workers=2, budget=Budget(seconds=None, memory_mb=100), row_scale=0.1
    )
    assert mem.failure_reasons() == {"memory budget exceeded": 2}


@needs_corpus
def test_a_document_over_its_cpu_seconds_is_failed_whatever_the_wall_clock(tmp_path):
    # Box's document (about 7 CPU seconds to build) and a small one (under a second)
    src = _corpus(tmp_path, (BOX, DOCS[0]))
    cpu = Budget(seconds=None, memory_mb=None, cpu_seconds=3.0)  # the wall-clock budget is off
    report = build_corpus(src, out_dir=tmp_path / "out", workers=2, budget=cpu, row_scale=0.1)
    by = {d.source: d for d in report.documents}
    assert by[BOX].status == "failed" and by[BOX].reason == "CPU budget exceeded (3 s)"
    assert by[DOCS[0]].status == "built"
    # nothing half-built is left where the stopped build was writing
    assert not (tmp_path / "out" / by[BOX].out).exists()
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".") and "build-" in p.name]
    # the same budget does not retry it; a rerun skips both
    again = build_corpus(src, out_dir=tmp_path / "out", workers=2, budget=cpu, row_scale=0.1)
    assert again.skipped == 2


_SWALLOWER = """
import time
from envfactory.pipelines import corpus
corpus._limit_cpu(0.3)
swallowed = 0
t = time.process_time()
while True:  # code that takes every exception for its own (a callback), its loop test included
    try:
        if time.process_time() - t >= 1.0:
            break
        sum(range(10000))
    except BaseException:
        swallowed += 1
while True:  # as the workers do: a signal raised inside the stop itself is followed by a second stop
    try:
        corpus._stop_cpu_timer()
        break
    except BaseException:
        pass
x = 0
t = time.process_time()
while time.process_time() - t < 0.3:  # past the stop, no signal ends the process (SIGPROF's default)
    x += 1
print(swallowed, corpus._cpu_spent())
"""


def test_a_swallowed_cpu_signal_still_fails_the_document():
    # the timer fires again and again, and the verdict is read from the process's CPU time after
    # the build: a document does not pass its budget because the signal landed in a callback
    out = subprocess.run(
        [sys.executable, "-c", _SWALLOWER], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split(maxsplit=1)
    assert int(out[0]) > 1 and out[1].strip() == "CPU budget exceeded (0.3 s)"


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        build_corpus(tmp_path / "nope", out_dir=tmp_path / "out")
    with pytest.raises(ConfigError, match="at least 1"):
        build_corpus(tmp_path, out_dir=tmp_path / "out", workers=0)


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        out |= {int(k) for k in kids}
        todo += [int(k) for k in kids]
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


@needs_corpus
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc to find the workers")
def test_a_run_killed_with_sigkill_resumes_to_the_same_result(one_worker, tmp_path):
    src, out1, _ = one_worker
    out = tmp_path / "out"
    code = (
        "from envfactory.pipelines.corpus import Budget, build_corpus\n"
        f"build_corpus({str(src)!r}, out_dir={str(out)!r}, workers=1, budget=Budget(None, None), row_scale=0.1)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=tmp_path)
    state = out / CORPUS_STATE_FILE
    workers: set[int] = set()
    try:
        while proc.poll() is None:
            workers |= _descendants(proc.pid)
            if state.is_file() and len(json.loads(state.read_text())["documents"]) >= 1:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        workers |= _descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert workers  # the forkserver and the worker it forked
    done = len(json.loads(state.read_text())["documents"])
    assert 1 <= done < 3 and not (out / CORPUS_FILE).exists()
    # the workers notice their parent is gone and exit (none keeps writing into the output)
    for _ in range(600):
        if not any(_alive(p) for p in workers):
            break
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)
    # ... before finishing the document in flight (killed just after it started): an orphan that
    # ran on would have written its folder, unrecorded
    recorded = json.loads(state.read_text())["documents"]
    built = {p.parent.name for p in out.glob("*/build.json")}
    assert built == {v["out"] for v in recorded.values() if v["status"] == "built"}
    resumed = build_corpus(src, out_dir=out, workers=2, budget=BIG, row_scale=0.1)
    assert resumed.skipped == done
    assert _tree(out) == _tree(out1)


@needs_corpus
def test_the_build_command_runs_a_corpus_with_workers(tmp_path):
    from typer.testing import CliRunner

    from envfactory.cli import app

    src = _corpus(tmp_path, (DOCS[0], DOCS[2]))
    runner = CliRunner()
    res = runner.invoke(app, ["build", "--source", str(src), "--workers", "1"])
    assert res.exit_code != 0 and "--out" in res.output
    res = runner.invoke(
        app,
        [
            "build",
            "--source",
            str(src),
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "2",
            "--doc-timeout",
            "0.05",
        ],
    )
    assert res.exit_code == 1  # nothing built
    assert "0/2 documents built (2 failed" in " ".join(res.output.split())
    assert "time budget exceeded" in res.output
    assert (tmp_path / "out" / CORPUS_FILE).is_file()
