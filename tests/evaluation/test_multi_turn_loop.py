"""The multi-turn loop follows BFCL's inference loop by default; the earlier loop is ``loop="lenient"``.

BFCL (bfcl_eval/model_handler/base_handler.py, eval_checker/eval_runner.py): a reply that does
not decode ends the turn and is dropped from scoring; more than 20 steps in a turn force-quits
the episode, and an episode with fewer turns than the ground truth is
``multi_turn:force_terminated``.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from envfactory.evaluation import (
    EvalConfig,
    OracleAgent,
    bfcl_compat,
    expected_calls,
    load_jsonl,
    pass_hat_k,
    run_eval,
    summarize,
    wilson_interval,
)
from envfactory.evaluation.conversation import BFCL_MAX_STEPS
from envfactory.llm import ChatMessage, ChatResponse, ToolCall

from ._fixtures import trip_desk, trip_desk_suite
from .test_bfcl_agreement import bfcl_data  # noqa: F401 - the fixture that installs bfcl-eval


def _entries(n: int = 3):
    suite = trip_desk_suite()
    chosen = [e for e in suite.by_category("multi_turn_base") if len(e.question) >= 2][:n]
    assert chosen
    return dataclasses.replace(suite, entries=chosen)


class _NeverStops:
    """Calls a read tool at every step, forever."""

    name = "never-stops"

    def __init__(self) -> None:
        self.steps = 0

    def act(self, ctx):
        self.steps += 1
        ((name, args),) = expected_calls(ctx.entry, 0)[0].items()
        call = ToolCall(id=f"c{self.steps}", name=name, arguments=args, raw_arguments="{}")
        return ChatResponse(message=ChatMessage.assistant(None, [call]))


class _MalformedFirst(OracleAgent):
    """At the first step of each turn, a tool call whose arguments are not JSON; then the oracle."""

    name = "malformed-first"

    def act(self, ctx):
        if ctx.step == 0:
            ((name, _),) = (expected_calls(ctx.entry, ctx.turn) or [{"noop": {}}])[0].items()
            bad = ToolCall.from_raw("bad", name, '{"x": ')
            return ChatResponse(message=ChatMessage.assistant(None, [bad]))
        shifted = dataclasses.replace(ctx, step=ctx.step - 1)
        return super().act(shifted)


def _run(agent, loop: str):
    return run_eval(
        _entries(),
        agent,
        envs={"trip_desk": trip_desk()},
        config=EvalConfig(categories=("multi_turn_base",), loop=loop, concurrency=1),
    )


def test_a_model_that_never_stops_is_force_quit_and_scored_invalid():
    agent = _NeverStops()
    report = _run(agent, "bfcl")
    assert [r.error_type for r in report.results] == ["multi_turn:force_terminated"] * len(report.results)
    # one turn of BFCL_MAX_STEPS + 1 steps per entry, then the episode stops
    assert agent.steps == (BFCL_MAX_STEPS + 1) * len(report.results)
    assert all(len(r.turns) == 0 and "force-quit" in " ".join(r.errors) for r in report.results)


def test_the_lenient_loop_cuts_each_turn_and_scores_what_stands():
    agent = _NeverStops()
    report = run_eval(
        _entries(),
        agent,
        envs={"trip_desk": trip_desk()},
        config=EvalConfig(
            categories=("multi_turn_base",), loop="lenient", max_steps_per_turn=3, concurrency=1
        ),
    )
    assert all(r.error_type != "multi_turn:force_terminated" for r in report.results)
    assert all(len(r.turns) == len(e.question) for r, e in zip(report.results, _entries().entries))


def test_malformed_arguments_end_the_turn_as_a_decode_failure():
    report = _run(_MalformedFirst(), "bfcl")
    # nothing of the malformed reply runs and the turn ends: BFCL's empty turn
    assert [r.error_type for r in report.results] == ["multi_turn:empty_turn_model_response"] * len(
        report.results
    )
    assert all(r.turns[0]["calls"] == [] for r in report.results)
    lenient = _run(_MalformedFirst(), "lenient")
    # the earlier loop sends the error back; the model then makes the gold calls
    assert all(r.valid for r in lenient.results), [r.error_type for r in lenient.results]


def test_trials_give_pass_k():
    report = run_eval(
        _entries(2),
        OracleAgent(),
        envs={"trip_desk": trip_desk()},
        config=EvalConfig(categories=("multi_turn_base",), trials=3, concurrency=1),
    )
    assert all(r.valid and r.trial_valid == [True, True, True] for r in report.results)
    stats = summarize(report)["categories"]["multi_turn_base"]
    assert (stats["trials"], stats["pass^1"], stats["pass^3"]) == (3, 1.0, 1.0)


def test_pass_hat_k_is_taus_estimator():
    # one entry passing 2 of 3 trials: pass^1 = 2/3, pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0
    assert [pass_hat_k([[True, True, False]], k) for k in (1, 2, 3)] == [0.6667, 0.3333, 0.0]
    assert wilson_interval(0, 20) == (0.0, 0.1611) and wilson_interval(20, 20) == (0.8389, 1.0)


# ----------------------------------------------------------------------------- against BFCL's own runner


@pytest.mark.slow  # bfcl-eval comes from the package registry on first use
def test_bfcl_scores_our_force_quit_episode_as_we_do(bfcl_data):  # noqa: F811
    runner = bfcl_compat.bfcl_eval_runner()
    handler = bfcl_compat.bfcl_handler("fc")
    agent = _NeverStops()
    suite = _entries(1)
    (ours,) = run_eval(
        suite,
        agent,
        envs={"trip_desk": trip_desk()},
        config=EvalConfig(categories=("multi_turn_base",), concurrency=1),
    ).results
    (entry,) = suite.entries
    # What BFCL's inference loop records for the same run: the steps of the one turn reached.
    ((name, args),) = expected_calls(entry, 0)[0].items()
    steps = [[{name: json.dumps(args)}]] * agent.steps
    prompt_entry = {"id": entry.id, "question": entry.question, "involved_classes": [entry.env]}
    theirs = runner._evaluate_single_multi_turn_entry(
        handler, entry.id, [steps], entry.ground_truth, prompt_entry, "ours", entry.category
    )
    assert (ours.valid, ours.error_type) == (theirs["valid"], theirs["error"]["error_type"])


@pytest.mark.slow
def test_bfcl_drops_a_malformed_reply_and_fails_the_turn_as_our_loop_does(bfcl_data):  # noqa: F811
    # On BFCL's own data and backends: a turn whose only reply has malformed arguments.
    runner = bfcl_compat.bfcl_eval_runner()
    handler = bfcl_compat.bfcl_handler("fc")
    question = load_jsonl(bfcl_data / "BFCL_v4_multi_turn_base.json")[0]
    answer = load_jsonl(bfcl_data / "possible_answer" / "BFCL_v4_multi_turn_base.json")[0]
    malformed = [[[{"cd": '{"folder": '}]] for _ in answer["ground_truth"]]
    theirs = runner._evaluate_single_multi_turn_entry(
        handler,
        question["id"],
        malformed,
        answer["ground_truth"],
        question,
        "envfactory_loop_check",
        "multi_turn_base",
    )
    ours = _run(_MalformedFirst(), "bfcl").results[0]
    assert theirs["error"]["error_type"] == ours.error_type == "multi_turn:empty_turn_model_response"
