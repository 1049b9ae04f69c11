"""The results store: every run and its verdicts in SQLite (SQLModel), kept through a kill."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.evaluation import ResultsStore, compare_runs, load_suite, write_suite

from ._fixtures import REPO, trip_desk_suite

runner = CliRunner()

# Run in a child process: score a suite entry by entry into the store, and SIGKILL itself when the
# sixth entry is asked for -- no cleanup, no finally, as when a machine or a user kills a run.
_KILLED_RUN = textwrap.dedent("""
    import os, signal, sys
    from envfactory.evaluation import (EvalConfig, OracleAgent, ResultsStore, load_suite, run_eval,
                                       suite_digest)

    class KilledAtSix(OracleAgent):
        name = "killed"
        seen = 0
        def act(self, ctx):
            KilledAtSix.seen += 1
            if KilledAtSix.seen == 6:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().act(ctx)

    suite_dir, db = sys.argv[1], sys.argv[2]
    store = ResultsStore(db)
    config = EvalConfig(categories=("simple_python",), concurrency=1)
    run_id = store.start_run(agent="killed", suite="travel", suite_digest=suite_digest(suite_dir), config=config)
    run_eval(load_suite(suite_dir), KilledAtSix(), config=config,
             on_result=lambda result: store.add_result(run_id, result))
""")


def test_a_killed_run_keeps_every_entry_it_finished_and_compare_shows_runs_side_by_side(tmp_path):
    suite_dir = write_suite(trip_desk_suite(), tmp_path / "travel")
    db = tmp_path / "results.db"
    done = runner.invoke(
        app,
        [
            "eval",
            "--agent",
            "oracle",
            "--suite",
            str(suite_dir),
            "--categories",
            "simple_python,irrelevance",
            "--db",
            str(db),
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert done.exit_code == 0, done.output
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(suite_dir), str(db)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]

    store = ResultsStore(db)
    try:
        first, killed = store.runs()
        assert (first.status, killed.status) == ("done", "running")
        assert first.suite_digest == killed.suite_digest != ""
        assert json.loads(first.settings)["categories"] == ["simple_python", "irrelevance"]
        verdicts = store.verdicts(killed.id)
        assert [v.entry_id for v in verdicts] == [f"simple_python_{i}" for i in range(5)]
        assert all(v.valid for v in verdicts)
        table = compare_runs(store, [first, killed])
    finally:
        store.close()
    cells = [c["cells"]["simple_python"] for c in table["columns"]]
    n_simple = sum(e.category == "simple_python" for e in load_suite(suite_dir).entries)
    assert n_simple > 5
    assert [(c["correct"], c["total"]) for c in cells] == [(n_simple, n_simple), (5, 5)]

    shown = runner.invoke(app, ["eval", "compare", "--db", str(db), "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith("| category | #1 oracle travel (fc) | #2 killed travel (fc, running) |")
    assert any(
        line.startswith(f"| simple_python | 100.0% ({n_simple}/{n_simple};") and "(5/5;" in line
        for line in lines
    )
    missing = runner.invoke(app, ["eval", "compare", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "no results database" in missing.output
