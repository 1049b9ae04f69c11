from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.llm import OpenAICompatModel, Reply, ScriptedOpenAIServer
from envfactory.runtime import load_environment
from envfactory.spec import load_tasks, write_tasks
from envfactory.synth.decontam import build_ngram_index
from envfactory.synth.tasks import build_tasks

ROOT = Path(__file__).resolve().parents[2]
IDX = build_ngram_index(
    {"bfcl": ["Find the area of a triangle with a base of 10 units and height of 5 units."]}
)


@pytest.fixture(scope="module")
def env():
    return load_environment(ROOT / "domains" / "travel" / "trip_desk")


def test_same_seed_gives_the_same_task_bytes(env, tmp_path):
    a = build_tasks([env], n=40, seed=9, index=IDX)
    b = build_tasks([env], n=40, seed=9, index=IDX)
    pa, pb = write_tasks(a.tasks, tmp_path / "a.jsonl"), write_tasks(b.tasks, tmp_path / "b.jsonl")
    assert pa.read_bytes() == pb.read_bytes()
    assert len(a.tasks) == 40
    c = build_tasks([env], n=40, seed=10, index=IDX)
    assert [t.goal for t in c.tasks] != [t.goal for t in a.tasks]
    assert [t.model_dump() for t in load_tasks(pa)] == [t.model_dump() for t in a.tasks]


def test_report_counts_checks_actions_and_histograms(env):
    r = build_tasks([env], n=60, seed=1, index=IDX)
    rep = r.report
    assert rep.kept == 60 == len(r.tasks)
    assert sum(rep.histogram_before.values()) == sum(rep.histogram_after.values()) == 60
    assert sum(rep.actions.values()) == 60
    dropped = sum(c["dropped"] for c in rep.checks.values())
    assert rep.candidates == rep.kept + dropped
    for t in r.tasks:
        assert t.checks_passed and t.reward.gold_calls and t.difficulty.calibration_action
        assert 0 <= t.difficulty.predicted_pass_rate <= 1
        assert len(t.reward.masked_args) == len(t.gold)
        assert t.reward.required_facts == t.answer_facts


def test_calibration_moves_predicted_pass_rates_toward_the_target(env):
    rep = build_tasks([env], n=120, seed=2, index=IDX).report

    def spread(h):
        return sum(v * abs(float(k.split("-")[0]) + 0.05 - 0.5) for k, v in h.items())

    assert spread(rep.histogram_after) < spread(rep.histogram_before)


def test_scripted_llm_rewrites_are_checked(env):
    # Replies are written by this test (a test double), not by a model.
    seen = []

    def reply(req):
        seen.append(req)
        n = len(seen)
        if n == 1:
            return Reply(json.dumps({"goal": "Please run search_flights and cancel_booking."}))  # leaks tools
        if n == 2:
            return Reply("not json at all")
        goal = req["messages"][0]["content"].split("Request: ", 1)[1]
        return Reply(json.dumps({"goal": "Honestly, " + goal}))

    with ScriptedOpenAIServer(fallback=reply) as srv:
        model = OpenAICompatModel(srv.base_url, "scripted", max_retries=0)
        r = build_tasks([env], n=6, seed=4, index=IDX, model=model, calibrate=False)
    llm = r.report.llm
    assert llm["attempted"] == 6 and llm["rejected"] == 1 and llm["unusable"] == 1 and llm["accepted"] == 4
    assert sum(t.goal.startswith("Honestly, ") for t in r.tasks) == 4
    assert not any("search_flights" in t.goal for t in r.tasks)


def test_cli_writes_jsonl_and_prints_the_report(tmp_path, monkeypatch):
    from envfactory.cli import app

    monkeypatch.chdir(ROOT)
    out = tmp_path / "t.jsonl"
    res = CliRunner().invoke(
        app, ["tasks", "--domain", "travel", "--env", "trip_desk", "--n", "25", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "dropped" in res.output and "sample goals" in res.output and "before" in res.output
    assert len(list(load_tasks(out))) == 25
