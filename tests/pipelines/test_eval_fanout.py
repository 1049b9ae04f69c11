"""eval on a fan-out backend: a job per suite entry, the same results as the threads (timings aside)."""

from __future__ import annotations

import functools
import json

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.evaluation import EvalConfig, build_reference_agent, load_suite, run_eval, write_suite
from envfactory.pipelines.backend import LocalBackend

from ..evaluation._fixtures import REPO, trip_desk_suite

_TIMING = {"latency_s", "wall_s"}


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in _TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    return write_suite(trip_desk_suite(n_tasks=30, per_category=3), tmp_path_factory.mktemp("s") / "travel")


def _results(report):
    return [_untimed(r.to_dict()) for r in report.results]


def test_entries_as_backend_jobs_give_the_results_of_the_threads(suite_dir):
    suite, config = load_suite(suite_dir), EvalConfig(seed=1)
    factory = functools.partial(build_reference_agent, "random", seed=1)
    threads = run_eval(suite, factory(), config=config, domains_root=REPO / "domains")
    seen: list[str] = []
    jobs = run_eval(
        suite,
        factory(),
        config=config,
        domains_root=REPO / "domains",
        backend=LocalBackend(1),
        agent_factory=factory,
        on_result=lambda r: seen.append(r.id),
    )
    assert any(r.turns for r in jobs.results)  # multi-turn entries ran on the environment
    assert _results(jobs) == _results(threads)
    assert sorted(seen) == sorted(r.id for r in threads.results)


def test_backend_ray_with_a_model_is_refused_in_one_line(suite_dir):
    r = CliRunner().invoke(app, ["eval", "--model", "m", "--suite", str(suite_dir), "--backend", "ray"])
    assert r.exit_code == 2 and "--backend ray runs reference agents" in " ".join(r.output.split())


@pytest.mark.slow
def test_eval_on_a_local_ray_writes_the_files_of_the_local_run(suite_dir, tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("ENVFACTORY_ROOT", str(REPO))  # the suite's environments: the bundled domains
    runs = {}
    for backend in ("local", "ray"):
        out = tmp_path / backend
        args = ["eval", "--agent", "drop-one", "--suite", str(suite_dir), "--out", str(out)]
        args += ["--db", str(tmp_path / f"{backend}.db"), "--backend", backend, "--workers", "2"]
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, r.output
        assert sorted(p.name for p in out.iterdir()) == ["results.jsonl", "summary.json"]
        lines = (out / "results.jsonl").read_text().splitlines()
        runs[backend] = (
            [_untimed(json.loads(line)) for line in lines],
            _untimed(json.loads((out / "summary.json").read_text())),
        )
    assert len(runs["ray"][0]) > 5
    assert runs["ray"] == runs["local"]
