"""Every LLM path end to end against the real small model (issue 20), each on a few tasks.

Gemma 3 270M is a base model on a shared CPU: the tests bound every call (small max_tokens, a
hard timeout, no retries) and assert what must hold whatever it writes: the command ends, its
counts add up, and nothing it wrote is kept unless it passed the checks. The counts are printed
(``pytest -m model tests/llm -s``) and quoted in docs/models.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.runtime import load_environment

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "resources" / "office" / "basecamp" / "todolists.md"

pytestmark = [pytest.mark.slow, pytest.mark.model]


@pytest.fixture(scope="module")
def trip_desk():
    return load_environment(REPO / "domains" / "travel" / "trip_desk")


@pytest.fixture(scope="module")
def servers():
    """traccar_current_servers: 4 tools, so a solver's prompt (its tool schemas) stays short on CPU."""
    return load_environment(REPO / "domains" / "travel" / "traccar_current_servers")


def _record_simulators(monkeypatch) -> list:
    """Every UserSimulator the rollouts create (to read their llm_stats)."""
    import envfactory.synth.rollout as rollout_mod
    from envfactory.synth.user_sim import UserSimulator

    made: list[UserSimulator] = []

    class Recording(UserSimulator):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(rollout_mod, "UserSimulator", Recording)
    return made


@pytest.mark.timeout(900)
def test_llm_user_simulator_on_5_tasks(trip_desk, local_client, monkeypatch):
    from envfactory.synth.invariants import GoldView, internal_ids
    from envfactory.synth.policy import OraclePolicy
    from envfactory.synth.rollout import run_rollout
    from envfactory.synth.tasks import build_tasks
    from envfactory.text import format_plain

    tasks = build_tasks([trip_desk], n=5, seed=0).tasks
    assert len(tasks) == 5
    sims = _record_simulators(monkeypatch)
    user_model = local_client(max_tokens=32)
    for task in tasks:
        tr = run_rollout(task, trip_desk, policy=OraclePolicy(seed=0), user_model=user_model, seed=0)
        # the state machine owns what happens; the model only words it: the oracle still succeeds
        assert tr.failure is None and tr.reward.reward == 1.0, (tr.failure, tr.reward)
        sim = sims[-1]
        said: list[str] = []
        for m in tr.messages:
            text = m.get("content") or ""
            if m["role"] == "user":
                unrevealed = [v for k, v in sim.hidden.items() if k not in sim.revealed]
                assert not any(len(format_plain(v)) >= 3 and format_plain(v) in text for v in unrevealed)
                ids = internal_ids(trip_desk.spec, GoldView.of_task(task), text)
                assert not [i for i in ids if not any(i in s for s in said)], text  # only ids it was told
            said.append(text)
    stats: dict[str, int] = {}
    for sim in sims:
        for k, v in sim.llm_stats.items():
            stats[k] = stats.get(k, 0) + v
    assert stats["turns"] == sum(v for k, v in stats.items() if k != "turns") > 0
    assert user_model.ledger.summary().ok > 0  # the model answered (a dead server must not pass)
    print(f"LLM user simulator on 5 tasks: {stats}; usage: {user_model.ledger.summary()}")


@pytest.fixture(scope="module")
def built_with_model(servers, local_server):
    """build_tasks with the model as goal rewriter and as the solver (k = 2 rollouts per task).

    The rewriter asks for JSON mode, which llama.cpp enforces with a grammar: over Gemma's 262k-token
    vocabulary that costs seconds per token on this CPU, hence 48 tokens and 2 tasks."""
    from envfactory.llm import OpenAICompatModel
    from envfactory.synth.config import TaskConfig
    from envfactory.synth.tasks import build_tasks

    model = OpenAICompatModel(
        local_server.base_url, local_server.model, timeout=300, max_retries=0, max_tokens=48
    )
    cfg = TaskConfig(solver_max_turns=2)
    return build_tasks([servers], n=2, seed=0, model=model, solver_rollouts=2, config=cfg), model


@pytest.mark.timeout(1800)
def test_llm_goal_realizer_output_is_gated_by_every_check(built_with_model, servers):
    from envfactory.graph.state import StateIndex
    from envfactory.synth.checks import run_checks

    res, model = built_with_model
    assert model.ledger.summary().ok > 0  # the model answered (a dead server must not pass)
    llm = res.report.llm
    assert llm["attempted"] == llm.get("accepted", 0) + llm.get("rejected", 0) + llm.get("unusable", 0) > 0
    assert llm.get("rejected", 0) == sum(v for k, v in llm.items() if k.startswith("rejected_"))
    with servers.new_session() as s:
        state = StateIndex(servers.spec, s)
    for task in res.tasks:  # every kept goal, the model's or the template's, passes every check
        bad = [f for f in run_checks(task, servers, None, state) if f.ran and not f.ok]
        assert not bad, (task.goal, bad)
    print(f"LLM goal realizer on {len(res.tasks)} tasks: {dict(sorted(llm.items()))}")


@pytest.mark.timeout(1800)
def test_calibration_with_k2_solver_rollouts(built_with_model):
    res, _ = built_with_model
    s = res.report.solver
    assert s["rollouts_per_task"] == 2 and s["tasks_measured"] >= 1
    assert s["rollouts"] == 2 * s["tasks_measured"]
    assert s["rollouts"] == s["successes"] + s["wrong"] + s["turn_limit"] + s["model_errors"] + s["errors"]
    assert s["model_errors"] + s["errors"] < s["rollouts"]  # some rollouts ran on the model's replies
    for t in res.tasks:
        assert 0.0 <= t.difficulty.predicted_pass_rate <= 1.0
    keys = ("tasks_measured", "rollouts", "successes", "wrong", "turn_limit", "model_errors", "errors")
    print(
        "calibration k=2:",
        {k: s[k] for k in keys},
        f"mean measured {s['mean_measured']:.3f} vs predicted {s['mean_predicted']:.3f}",
    )


@pytest.mark.timeout(900)
def test_explorer_agent_on_a_real_document_keeps_the_draft_unless_the_model_does_no_worse(local_client):
    from envfactory.explore import explore
    from envfactory.ingest import load_apidoc
    from envfactory.pipelines import ExplorerAgentConfig, run_explorer_agent

    doc = load_apidoc(DOC)
    draft = explore([doc], domain="office").envs
    assert draft
    # one model call (the prompt carries the EnvSpec schema and the draft: ~8k tokens); without JSON
    # mode, whose grammar costs seconds per token here (the reply is parsed as JSON all the same)
    cfg = ExplorerAgentConfig(
        max_validation_rounds=0, max_repair_rounds=0, max_model_calls=1, json_mode=False, max_tokens=256
    )
    model = local_client(max_tokens=256, timeout=600)
    res = run_explorer_agent([doc], domain="office", model=model, config=cfg, draft=draft)
    assert res.usage.ok == res.usage.calls == 1  # the model answered (a dead server must not pass)
    (outcome,) = res.outcomes
    (spec,) = res.envs
    accepted = not outcome.fell_back and spec.model_dump() != draft[0].model_dump()
    if not accepted:  # the model's spec was invalid or worse: the deterministic draft, unchanged
        assert spec.model_dump() == draft[0].model_dump()
    else:
        assert outcome.passing_tools >= len(draft[0].tools) or outcome.fallback_reason is None
    kinds = [e.kind for e in res.transcript]
    print(
        f"explorer agent on {DOC.name}: accepted {int(accepted)}, rejected {int(not accepted)} "
        f"(fell back: {outcome.fell_back}, reason: {outcome.fallback_reason}); transcript {kinds}; "
        f"cost {res.cost}"
    )
