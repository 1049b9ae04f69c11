"""Crash safety: a synth run killed with SIGKILL and started again gives the same dataset, byte for byte."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envfactory.errors import ConfigError
from envfactory.export.shards import ShardWriter, read_shard
from envfactory.spec import write_tasks

from ._fixtures import REPO, synth_two_envs, trip_desk_tasks

N = 200


def _cmd(tasks: Path, root: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "envfactory",
        "synth",
        "--domain",
        "travel",
        "--env",
        "trip_desk",
        "--tasks",
        str(tasks),
        "--n",
        str(N),
        "--out-root",
        str(root),
        "--name",
        "resume",
    ]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENVFACTORY_ROOT": str(REPO), "COLUMNS": "120"}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)


def _lines(p: Path) -> int:
    try:
        return p.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _dataset_files(root: Path) -> dict[str, bytes]:
    d = root / "resume"
    files = sorted(d.glob("data/*.parquet")) + sorted(d.glob("sharegpt/*.parquet")) + [d / "README.md"]
    return {f.relative_to(d).as_posix(): f.read_bytes() for f in files}


@pytest.mark.slow  # SIGKILLs a real synth process and resumes it
def test_killed_and_resumed_run_equals_an_uninterrupted_run(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    write_tasks(trip_desk_tasks(N)[:N], tasks)
    killed_root, clean_root = tmp_path / "killed", tmp_path / "clean"
    shard = killed_root / "resume" / ".synth" / "shards" / "travel__trip_desk.jsonl"
    env = {**os.environ, "ENVFACTORY_ROOT": str(REPO)}
    proc = subprocess.Popen(
        _cmd(tasks, killed_root), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while _lines(shard) < 10:  # bounded wait for the run to be part way through
            assert proc.poll() is None, "synth ended before it could be killed"
            assert time.monotonic() < deadline, "no rows written within 120 s"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    written = _lines(shard)
    assert 10 <= written < N, written
    assert not (killed_root / "resume" / "data").exists()
    with shard.open("ab") as fh:  # and a torn last line, as a kill in the middle of a write leaves
        fh.write(b'{"task_id": "trip_desk-0019')

    again = _run(_cmd(tasks, killed_root))
    assert again.returncode == 0, again.stdout + again.stderr
    recs = read_shard(shard)
    assert len(recs) == shard.read_bytes().count(b"\n") == len({r["task_id"] for r in recs})
    clean = _run(_cmd(tasks, clean_root))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    a, b = _dataset_files(killed_root), _dataset_files(clean_root)
    assert a.keys() == b.keys() and "data/sft-00000-of-00001.parquet" in a
    assert a == b
    report = json.loads((killed_root / "resume" / ".synth" / "report.json").read_text())
    assert report["kept"] + report["rollout_failures"] + report["replay_failures"] == len(recs)


def test_a_torn_tail_is_cut_off_and_a_repeated_key_ignored(tmp_path):
    p = tmp_path / "s.jsonl"
    with ShardWriter(p) as w:
        for i in range(3):
            w.append({"task_id": f"t{i}", "v": i})
        w.append({"task_id": "t1", "v": 99})
    with p.open("ab") as fh:
        fh.write(b'{"task_id": "t3", "v"')
    recs = read_shard(p)
    assert [(r["task_id"], r["v"]) for r in recs] == [("t0", 0), ("t1", 1), ("t2", 2)]
    assert p.read_bytes().endswith(b"\n") and p.read_bytes().count(b"\n") == 4


def test_resuming_with_other_settings_is_refused(tmp_path):
    out = tmp_path / "ds"
    synth_two_envs(out, 8)
    with pytest.raises(ConfigError, match="other settings.*seed"):
        synth_two_envs(out, 8, seed=1)
    res = synth_two_envs(out, 8, seed=1, overwrite=True)
    assert res.resumed == 0 and res.kept == res.tasks
    again = synth_two_envs(out, 8, seed=1)
    assert again.resumed == res.tasks and again.rolled_out_now == 0
