"""Fan-out backends (issue 21): sharded synth and corpus builds give the same bytes on 1 or N local
workers and on Ray; a sharded run resumes shard by shard; bad backend options are one-line errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.errors import ConfigError
from envfactory.pipelines.backend import JobFailed, LocalBackend, make_backend
from envfactory.pipelines.synth_shards import SHARD_TASKS, plan_shards, plan_topup, synthesize_sharded
from envfactory.runtime import load_environment

from ..conftest import REPO
from ..ingest._corpus import CORPUS

ENVS = ("travel/trip_desk", "travel/traccar_commands")
N = 6


def _envs():
    return [load_environment(REPO / "domains" / e) for e in ENVS]


def _tree(out: Path, skip: tuple[str, ...] = (".synth",)) -> dict[str, bytes]:
    """Every dataset file's bytes (the work folder and timings are not results)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not any(part in skip for part in p.relative_to(out).parts)
    }


def _synth(out: Path, backend) -> object:
    try:
        return synthesize_sharded(_envs(), out, n=N, backend=backend, seed=3)
    finally:
        backend.close()


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    out = tmp_path_factory.mktemp("sharded1") / "ds"
    res = _synth(out, LocalBackend(1))
    return out, res


def test_the_plan_depends_on_envs_n_and_seed_only_and_splits_n_evenly():
    by_key = {f"{e.spec.domain}/{e.spec.name}": e for e in _envs()}
    plan = plan_shards(by_key, n=2 * SHARD_TASKS + 3, seed=1, eval_fraction=0.5, rl_fraction=0.25)
    per_env: dict[str, int] = {}
    for j in plan:
        per_env[j.env_key] = per_env.get(j.env_key, 0) + j.n
        assert j.n <= SHARD_TASKS
    assert sorted(per_env.values()) == [SHARD_TASKS + 1, SHARD_TASKS + 2]
    assert len({j.task_seed for j in plan}) == len(plan)  # blocks of one env do not repeat tasks
    again = plan_shards(by_key, n=2 * SHARD_TASKS + 3, seed=1, eval_fraction=0.5, rl_fraction=0.25)
    assert again == plan
    other = plan_shards(by_key, n=2 * SHARD_TASKS + 3, seed=2, eval_fraction=0.5, rl_fraction=0.25)
    assert [j.task_seed for j in other] != [j.task_seed for j in plan]


def test_shares_are_per_api_then_per_environment():
    from types import SimpleNamespace

    def env(name, *docs):
        return SimpleNamespace(spec=SimpleNamespace(sources=list(docs)), path=Path("/x") / name)

    # one document split into four environments is one API, as much as a document of one environment
    envs = {f"c/stripe_{i}": env(f"s{i}", "stripe.json") for i in range(4)}
    envs["t/trips"] = env("trips", "traccar.yaml")
    plan = plan_shards(envs, n=100, seed=0, eval_fraction=0.0, rl_fraction=0.25)
    per: dict[str, int] = {}
    for j in plan:
        per[j.env_key] = per.get(j.env_key, 0) + j.n
    assert per == {"c/stripe_0": 13, "c/stripe_1": 13, "c/stripe_2": 12, "c/stripe_3": 12, "t/trips": 50}
    assert {j.api for j in plan} == {"stripe.json", "traccar.yaml"}
    # a shortfall of one of the API's environments goes to its siblings first
    done = [{"task_ids": ["t"] * (0 if j.env_key == "c/stripe_0" else j.n)} for j in plan]
    extra = plan_topup(plan, done, n=100)
    assert sum(j.n for j in extra) == 13 and {j.env_key for j in extra} == {
        f"c/stripe_{i}" for i in (1, 2, 3)
    }


def test_a_shortfall_goes_to_the_environments_that_delivered_their_share():
    by_key = {f"{e.spec.domain}/{e.spec.name}": e for e in _envs()}
    short_key, full_key = sorted(by_key)
    plan = plan_shards(by_key, n=2 * SHARD_TASKS + 3, seed=1, eval_fraction=0.5, rl_fraction=0.25)
    # the first environment's two shards (250 + 2 tasks) build 10 tasks each; the other builds all 251
    done = [{"task_ids": [f"t{i}" for i in range(10 if j.env_key == short_key else j.n)]} for j in plan]
    extra = plan_topup(plan, done, n=2 * SHARD_TASKS + 3)
    assert {j.env_key for j in extra} == {full_key}
    assert sum(j.n for j in extra) == (SHARD_TASKS + 2) - 20  # exactly what is missing
    assert all(j.n <= SHARD_TASKS for j in extra)
    assert not {j.shard_id for j in extra} & {j.shard_id for j in plan}  # new blocks, new seeds
    assert not {j.task_seed for j in extra} & {j.task_seed for j in plan}
    assert extra == plan_topup(plan, done, n=2 * SHARD_TASKS + 3)  # planned from the results alone
    # the next round counts what the top-up delivered, not the first shortfall again: all of it, nothing
    # more to do; short of it, the helper has run out of tasks too, and the run stops short
    got = done + [{"task_ids": [f"x{j.shard_id}{i}" for i in range(j.n)]} for j in extra]
    assert plan_topup(plan + extra, got, n=2 * SHARD_TASKS + 3) == []
    got = done + [{"task_ids": [f"x{j.shard_id}{i}" for i in range(j.n - 2)]} for j in extra]
    assert plan_topup(plan + extra, got, n=2 * SHARD_TASKS + 3) == []
    # nothing short, or nobody full: no top-up
    full = [{"task_ids": ["t"] * j.n} for j in plan]
    assert plan_topup(plan, full, n=2 * SHARD_TASKS + 3) == []
    assert plan_topup(plan, [{"task_ids": []} for _ in plan], n=2 * SHARD_TASKS + 3) == []


@pytest.mark.slow
def test_a_sharded_run_writes_a_loadable_dataset_and_resumes_shard_by_shard(one_worker, tmp_path):
    from envfactory.export import load_trajectories

    out, res = one_worker
    assert res.kept > 0 and res.kept == sum(res.split_counts.values())
    ds = load_trajectories(out)
    assert sum(len(ds[s]) for s in ds) == res.kept
    assert (out / "README.md").read_text(encoding="utf-8").count("envfactory") > 0
    # a rerun finds every shard's summary: nothing is rolled out again, the same bytes come out
    copy = tmp_path / "ds"
    shutil.copytree(out, copy)
    before = _tree(copy)
    again = synthesize_sharded(_envs(), copy, n=N, backend=LocalBackend(1), seed=3)
    assert again.rolled_out_now == 0 and again.resumed == N
    assert _tree(copy) == before
    # a shard whose summary is gone (killed before it was written) is redone, to the same bytes
    shard = sorted((copy / ".synth" / "parts").iterdir())[0]
    (shard / "summary.json").unlink()
    third = synthesize_sharded(_envs(), copy, n=N, backend=LocalBackend(1), seed=3)
    assert third.rolled_out_now > 0
    assert _tree(copy) == before


@pytest.mark.slow
def test_two_local_workers_give_the_bytes_of_one(one_worker, tmp_path):
    out1, _ = one_worker
    _synth(tmp_path / "ds", LocalBackend(2, preload=["envfactory.pipelines.synth_shards"]))
    assert _tree(tmp_path / "ds") == _tree(out1)


@pytest.mark.slow
def test_ray_gives_the_bytes_of_the_local_backend_for_synth_and_corpus_builds(one_worker, tmp_path):
    pytest.importorskip("ray")
    from envfactory.pipelines.corpus import Budget, build_corpus

    out1, _ = one_worker
    ray = make_backend("ray", workers=2)
    try:
        synthesize_sharded(_envs(), tmp_path / "ds", n=N, backend=ray, seed=3)
        assert _tree(tmp_path / "ds") == _tree(out1)
        if not CORPUS.is_dir():
            return
        src = tmp_path / "src"
        for rel in ("travel/amadeus__HotelList_v1.yaml", "travel/amadeus__TransferManagement_v1.yaml"):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(CORPUS / rel, src / rel)
        budget = Budget(seconds=None, memory_mb=None)
        on_ray = build_corpus(src, out_dir=tmp_path / "ray", backend=ray, budget=budget, row_scale=0.1)
        # a CPU-seconds budget stops a Ray task as it stops a pool worker, with the same reason
        big = tmp_path / "big" / "file_storage" / "box__openapi.json"  # about 7 CPU seconds to build
        big.parent.mkdir(parents=True)
        shutil.copy(CORPUS / "file_storage" / "box__openapi.json", big)
        cpu = Budget(seconds=None, memory_mb=None, cpu_seconds=3.0)
        over = build_corpus(
            big.parents[1], out_dir=tmp_path / "ray-cpu", backend=ray, budget=cpu, row_scale=0.1
        )
        assert [d.reason for d in over.documents] == ["CPU budget exceeded (3 s)"]
    finally:
        ray.close()
    local = build_corpus(src, out_dir=tmp_path / "local", workers=1, budget=budget, row_scale=0.1)
    assert [d.status for d in on_ray.documents] == [d.status for d in local.documents]
    assert any(d.status == "built" for d in local.documents)
    skip = (".corpus-state.json", ".corpus-times.json", ".build-times.json")
    assert _tree(tmp_path / "ray", skip) == _tree(tmp_path / "local", skip)


def test_a_job_that_raises_comes_back_as_data_from_the_pool():
    got: dict[int, object] = {}
    LocalBackend(2).run(_tenth, [2, 0, 5], got.__setitem__)
    assert got[0] == 5 and got[2] == 2
    assert isinstance(got[1], JobFailed) and "ZeroDivisionError" in got[1].reason


def _tenth(x: int) -> int:
    return 10 // x


def test_bad_backend_options_are_config_errors():
    with pytest.raises(ConfigError, match="--backend must be one of local, ray"):
        make_backend("dask")
    with pytest.raises(ConfigError, match="--ray-address needs --backend ray"):
        make_backend("local", address="ray://10.0.0.1:10001")
    with pytest.raises(ConfigError, match="at least 1"):
        LocalBackend(0)


def test_synth_sharded_refuses_a_teacher_in_one_line(tmp_path):
    from envfactory.cli import app

    r = CliRunner().invoke(
        app,
        ["synth", "--domain", "travel", "--n", "2", "--workers", "2", "--policy", "teacher", "--model", "m"],
        env={"ENVFACTORY_ROOT": str(REPO)},
    )
    assert r.exit_code == 2
    assert "sharded runs build their own tasks with the oracle policy" in " ".join(r.output.split())
    assert "Traceback" not in r.output


def test_build_backend_ray_needs_a_corpus_source():
    from envfactory.cli import app

    r = CliRunner().invoke(app, ["build", "--domain", "travel", "--backend", "ray"])
    assert r.exit_code == 2 and "--backend ray) builds a corpus" in " ".join(r.output.split())
