"""Reference agents prove the metrics discriminate, and BFCL's own checker agrees with ours.

Scores are exact: the suite and the agents are deterministic for a seed.
"""

from __future__ import annotations

import pytest

from envfactory.evaluation import (
    CATEGORIES,
    EvalConfig,
    bfcl_compat,
    build_reference_agent,
    run_eval,
    summarize,
)

from ._fixtures import trip_desk, trip_desk_suite
from .test_bfcl_agreement import bfcl_data  # noqa: F401 - the fixture that installs bfcl-eval

EXPECTED = {
    # category:              oracle noop random drop-one bare
    "simple_python": (1.0, 0.0, 0.0, 1.0, 0.0),
    "multiple": (1.0, 0.0, 0.0, 1.0, 0.0),
    "parallel": (1.0, 0.0, 0.0, 0.0, 0.0),
    "parallel_multiple": (1.0, 0.0, 0.0, 0.0, 0.0),
    "irrelevance": (1.0, 1.0, 0.0, 1.0, 1.0),
    # relevance: any call passes (BFCL's rule), so random and bare pass and noop fails
    "live_relevance": (1.0, 0.0, 1.0, 1.0, 1.0),
    "multi_turn_base": (1.0, 0.0, 0.0, 0.0, 0.0),
    "multi_turn_miss_func": (1.0, 0.0, 0.0, 0.0, 0.0),
    "multi_turn_miss_param": (1.0, 0.0, 0.0, 0.0, 0.0),
}
AGENTS = ("oracle", "noop", "random", "drop-one", "bare")


def _run(agent: str, mode: str):
    return run_eval(
        trip_desk_suite(),
        build_reference_agent(agent, seed=0),
        config=EvalConfig(mode=mode, concurrency=4),
        envs={"trip_desk": trip_desk()},
    )


@pytest.mark.parametrize("mode", ["fc", "prompt"])
@pytest.mark.parametrize("agent", AGENTS)
def test_reference_agent_scores_are_exact(agent, mode):
    summary = summarize(_run(agent, mode))
    column = AGENTS.index(agent)
    assert set(summary["categories"]) == set(CATEGORIES)
    got = {c: s["accuracy"] for c, s in summary["categories"].items()}
    assert got == {c: row[column] for c, row in EXPECTED.items()}


def test_multi_turn_reward_follows_state_and_facts():
    rewards = {a: summarize(_run(a, "fc"))["categories"]["multi_turn_base"]["mean_reward"] for a in AGENTS}
    assert rewards["oracle"] == 1.0
    assert rewards["noop"] == rewards["random"] == 0.0
    # Dropping a read leaves the state right (reward can stay 1); dropping a write does not.
    assert 0.0 < rewards["drop-one"] < 1.0


def test_error_types_name_what_went_wrong():
    by_agent = {a: summarize(_run(a, "fc"))["categories"] for a in ("noop", "drop-one", "random")}
    # a text reply in fc mode does not decode, as in BFCL's FC handlers
    assert set(by_agent["noop"]["simple_python"]["error_types"]) == {"ast_decoder:decoder_failed"}
    assert set(by_agent["noop"]["multi_turn_base"]["error_types"]) == {"multi_turn:empty_turn_model_response"}
    assert set(by_agent["drop-one"]["parallel"]["error_types"]) == {
        "parallel_function_checker_no_order:wrong_count"
    }
    assert set(by_agent["random"]["irrelevance"]["error_types"]) == {"irrelevance_error:decoder_success"}


def test_random_and_drop_one_are_deterministic_for_a_seed():
    first = [(r.id, r.model_calls, r.turns) for r in _run("random", "fc").results]
    again = [(r.id, r.model_calls, r.turns) for r in _run("random", "fc").results]
    assert first == again


@pytest.mark.slow  # bfcl-eval comes from the package registry on first use
@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_bfcl_checker_gives_our_verdicts_on_reference_agents_outputs(bfcl_data, mode):  # noqa: F811
    suite = trip_desk_suite()
    entries = {e.id: e for e in suite.entries}
    compared = 0
    disagreements = []
    for agent in AGENTS:
        for result in _run(agent, mode).results:
            entry = entries[result.id]
            if entry.is_multi_turn:
                continue  # BFCL's multi-turn checker needs its own backend classes
            theirs = bfcl_compat.bfcl_check_ast(
                entry.functions, result.model_calls, entry.ground_truth, entry.category
            )
            compared += 1
            if theirs.valid != result.valid:
                disagreements.append(
                    (agent, entry.id, result.error_type, theirs.error_type, theirs.errors[:1])
                )
    assert compared == len(AGENTS) * sum(1 for e in suite.entries if not e.is_multi_turn)
    assert disagreements == []
