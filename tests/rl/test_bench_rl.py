"""envfactory bench rl prints steps per second per batch size against the tool-call floor."""

from __future__ import annotations

from typer.testing import CliRunner

import envfactory.rl as rl
from envfactory.bench.rl import run_rl_bench
from envfactory.cli import app

from ._data import dataset


def test_bench_rl_figures_replay_at_full_reward(tmp_path_factory):
    ds = dataset(tmp_path_factory)
    rows = rl.load_rows(ds)
    rep = run_rl_bench(rows, ds, sizes=(1, 3), min_seconds=0.0)
    assert [f.envs for f in rep.figures] == [1, 3]
    assert rep.floor_calls == sum(
        len(m.get("tool_calls") or []) for r in rows for m in r["messages"] if m["role"] == "assistant"
    )
    for f in rep.figures:
        assert f.rewards == 1.0 and f.steps >= f.episodes and f.tool_calls > 0


def test_bench_rl_command(tmp_path_factory):
    ds = dataset(tmp_path_factory)
    res = CliRunner().invoke(
        app,
        ["bench", "rl", "--dataset", str(ds), "--sizes", "1,2", "--min-seconds", "0"],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "Session.try_call" in res.output and "steps/s" in res.output
    bad = CliRunner().invoke(app, ["bench", "rl", "--dataset", str(ds), "--sizes", "a,b"])
    assert bad.exit_code != 0 and "whole numbers" in bad.output
