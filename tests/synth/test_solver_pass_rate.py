"""Measured pass rates: k solver rollouts per seed task replace the structural p^ in the MILP.

Every model reply in this file is written by the test and served by ``ScriptedOpenAIServer``
on 127.0.0.1 (a test double, not a model): a "solver" that replays a task's gold calls, one
that gives up with a plain text answer, one that answers HTTP 500, and one that alternates
between replaying and giving up by attempt. Nothing here says anything about a real model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.graph import SamplerConfig
from envfactory.llm import (
    ErrorReply,
    OpenAICompatModel,
    Reply,
    ScriptedOpenAIServer,
    ScriptedToolCall,
)
from envfactory.runtime import load_environment
from envfactory.spec import write_tasks
from envfactory.synth import TaskConfig
from envfactory.synth.calibrate import measure_pass_rate, predicted_after
from envfactory.synth.decontam import build_ngram_index
from envfactory.synth.tasks import build_tasks

ROOT = Path(__file__).resolve().parents[2]
IDX = build_ngram_index(
    {"bfcl": ["Find the area of a triangle with a base of 10 units and height of 5 units."]}
)
SEED, N, K = 0, 4, 2
# The topology sampler without intent-first plans (long chains): tasks whose structural estimate is low.
CFG = TaskConfig(sampler=SamplerConfig())
# Without a solver the MILP chooses from the structural estimates; with one, from the measured rates. Scripted solver behaviour per task, by position:
MODES = ["gold", "alternate", "error", "give_up"]
EXPECTED = {"gold": 1.0, "alternate": 0.5, "error": 0.0, "give_up": 0.0}


@pytest.fixture(scope="module")
def env():
    return load_environment(ROOT / "domains" / "travel" / "trip_desk")


@pytest.fixture(scope="module")
def seed_tasks(env):
    # Same seed, no model: the seed tasks the model build starts from (the scripted rewriter
    # below always returns an unusable reply, so goals stay the template goals).
    return build_tasks([env], n=N, seed=SEED, index=IDX, config=CFG, calibrate=False).tasks


def _opening_key(task) -> str:
    return task.subgoals[0].text if task.subgoals else task.goal


def scripted_solver(tasks, modes):
    """A responder (test double): finds the task by the first user message and answers by mode."""
    table = [(_opening_key(t), t, m) for t, m in zip(tasks, modes)]
    assert len({k for k, _, _ in table}) == len(table)

    def respond(req):
        if not req.get("tools"):  # the goal rewriter's request: unusable on purpose
            return Reply("no rewrite today")
        first_user = next(m["content"] for m in req["messages"] if m["role"] == "user")
        hits = [(t, m) for key, t, m in table if key in first_user]
        assert len(hits) == 1, first_user
        task, mode = hits[0]
        # TeacherPolicy seeds attempt j's calls with seed*1000 + 100*j + call (see measure_pass_rate)
        attempt = (req["seed"] % 1000) // 100
        if mode == "alternate":
            mode = "gold" if attempt % 2 == 0 else "give_up"
        if mode == "error":
            return ErrorReply(500, "scripted outage")
        if mode == "give_up":
            return Reply("Sorry, I can't help with that.")
        done = sum(1 for m in req["messages"] if m["role"] == "tool")
        if done < len(task.gold):
            g = task.gold[done]
            return Reply(content="Let me do that.", tool_calls=(ScriptedToolCall(g.tool, g.args),))
        return Reply("All done. " + "; ".join(task.answer_facts))

    return respond


def _build(env, seed_tasks, **kw):
    with ScriptedOpenAIServer(fallback=scripted_solver(seed_tasks, MODES)) as srv:
        model = OpenAICompatModel(srv.base_url, "scripted-solver", max_retries=0)
        return build_tasks(
            [env], n=N, seed=SEED, index=IDX, config=CFG, model=model, solver_rollouts=K, **kw
        ), srv


def test_measured_rates_come_from_the_rollouts(env, seed_tasks):
    res, _ = _build(env, seed_tasks, calibrate=False)
    assert [t.task_id for t in res.tasks] == [t.task_id for t in seed_tasks]
    for t, mode, base in zip(res.tasks, MODES, seed_tasks):
        d = t.difficulty
        assert d.measured_pass_rate == EXPECTED[mode], (t.task_id, mode)
        assert d.predicted_pass_rate == base.difficulty.predicted_pass_rate  # the structural estimate is kept
        assert d.features["pass_rate_from_solver"] == 1.0 and d.features["p_hat"] == EXPECTED[mode]
        assert d.features["solver_k"] == K and d.features["solver_successes"] == EXPECTED[mode] * K
    s = res.report.solver
    assert s["tasks_measured"] == N and s["rollouts"] == N * K
    assert s["successes"] == 3 and s["model_errors"] == K and s["errors"] == 0
    assert s["successes"] + s["wrong"] + s["turn_limit"] + s["model_errors"] == N * K
    assert s["mean_measured"] == pytest.approx(sum(EXPECTED[m] for m in MODES) / N, abs=1e-4)
    assert s["mean_predicted"] == pytest.approx(
        sum(t.difficulty.predicted_pass_rate for t in seed_tasks) / N, abs=1e-4
    )
    assert "scripted outage" in " ".join(s["error_samples"])
    u = s["usage"]
    assert u["calls"] > N * K and u["failed"] == K and u["prompt_tokens"] > 0 and u["completion_tokens"] > 0
    assert res.report.model_usage["calls"] == u["calls"] + N  # plus the N rewrite requests


def test_the_milp_uses_the_measured_rates(env, seed_tasks):
    plain = build_tasks([env], n=N, seed=SEED, index=IDX, config=CFG, coverage_targets={})
    res, _ = _build(env, seed_tasks, coverage_targets={})
    acts = [t.difficulty.calibration_action for t in res.tasks]
    # the measured rates, not the structural estimates, decide: the choices differ from the plain run's
    assert acts != [t.difficulty.calibration_action for t in plain.tasks]
    assert acts[0].startswith("harder"), acts  # measured 1.0
    assert acts[1].startswith("different"), acts  # measured 0.5
    # measured 0.0: never made harder by a kept edit (these two plans have no feasible easier-* edit)
    assert not any(a.startswith("harder") and not a.endswith("(reverted)") for a in acts[2:]), acts
    for t, mode in zip(res.tasks, MODES):
        d = t.difficulty
        if d.calibration_action.endswith("(reverted)"):
            assert d.measured_pass_rate == EXPECTED[mode]  # unchanged task, measured rate stands
            continue
        # edited: a new task, not measured again; the MILP's target is on the measured scale
        assert d.measured_pass_rate is None
        assert d.features["measured_before"] == EXPECTED[mode]
        assert d.features["predicted_target"] == pytest.approx(
            predicted_after(EXPECTED[mode], d.calibration_action)
        )
    assert "mean_target_after" in res.report.solver


def test_model_errors_are_failures_not_crashes(env, seed_tasks):
    with ScriptedOpenAIServer([]) as srv:  # every request answers HTTP 500
        model = OpenAICompatModel(srv.base_url, "down", max_retries=0)
        m = measure_pass_rate(seed_tasks[0], env, model, k=K)
    assert m.pass_rate == 0.0 and m.outcomes == ["model_error"] * K and m.model_errors == K

    class Broken:  # not even a ModelError
        def complete(self, *a, **kw):
            raise RuntimeError("boom")

    m = measure_pass_rate(seed_tasks[0], env, Broken(), k=K)
    assert m.pass_rate == 0.0 and m.outcomes == ["error"] * K and "boom" in m.errors[0]


def test_no_model_path_is_unchanged(env, tmp_path):
    a = build_tasks([env], n=N, seed=SEED, index=IDX, config=CFG)
    b = build_tasks(
        [env], n=N, seed=SEED, index=IDX, config=CFG, solver_rollouts=K
    )  # ignored without a model
    pa, pb = write_tasks(a.tasks, tmp_path / "a.jsonl"), write_tasks(b.tasks, tmp_path / "b.jsonl")
    assert pa.read_bytes() == pb.read_bytes()
    assert not a.report.solver and not b.report.solver and not b.report.model_usage
    for t in b.tasks:
        assert t.difficulty.measured_pass_rate is None
        assert "pass_rate_from_solver" not in t.difficulty.features


def test_cli_solver_rollouts(tmp_path, monkeypatch):
    from envfactory.cli import app

    monkeypatch.chdir(ROOT)
    res = CliRunner().invoke(
        app,
        [
            "tasks",
            "--domain",
            "travel",
            "--env",
            "trip_desk",
            "--n",
            "2",
            "--solver-rollouts",
            "2",
            "--out",
            str(tmp_path / "x.jsonl"),
        ],
    )
    assert res.exit_code != 0 and "needs a model" in res.output
    give_up = Reply("Sorry, I can't help with that.")  # scripted: every request, rewrites included
    with ScriptedOpenAIServer(fallback=give_up) as srv:
        res = CliRunner().invoke(
            app,
            [
                "tasks",
                "--domain",
                "travel",
                "--env",
                "trip_desk",
                "--n",
                str(N),
                "--seed",
                str(SEED),
                "--model",
                "scripted-solver",
                "--base-url",
                srv.base_url,
                "--solver-rollouts",
                str(K),
                "--no-calibrate",
                "--out",
                str(tmp_path / "t.jsonl"),
            ],
            env={"COLUMNS": "200"},
        )
    assert res.exit_code == 0, res.output
    assert "solver pass rate (k=2" in res.output and "tasks measured" in res.output
    assert "model usage (whole build)" in res.output and "model errors" in res.output
    assert "mean measured 0.000" in res.output
