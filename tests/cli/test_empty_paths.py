"""An empty path option would silently mean the current folder: every command refuses it (issue 17, #13)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from envfactory.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    "args",
    [
        ["tasks", "--domain", "travel", "--n", "1", "--out", ""],
        ["synth", "--domain", "travel", "--n", "1", "--out-root", ""],
        ["graph", "--domain", "travel", "--out", ""],
        ["sample", "--domain", "travel", "--n", "1", "--out", ""],
        ["eval", "--agent", "oracle", "--suite", "travel", "--out", ""],
        ["eval-suite", "--domain", "travel", "--out", ""],
        ["build", "--domain", "travel", "--out", ""],
    ],
)
def test_an_empty_out_option_is_refused_before_anything_runs(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert "empty" in r.output
    assert list(tmp_path.iterdir()) == []  # nothing was written into the current folder
