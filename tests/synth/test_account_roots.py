"""The account's own rows (a root seeded once that no tool creates, deletes or lists, whose key
other rows' tools ask for: Basecamp's to-do set) are stated by the system prompt, so tasks on them can be built without
anyone saying an internal id."""

from __future__ import annotations

from envfactory.runtime import load_environment
from envfactory.spec import account_roots
from envfactory.synth import OraclePolicy, build_tasks, run_rollout
from envfactory.synth.invariants import GoldView, arg_provenance
from envfactory.synth.policy import build_system_prompt

from ._fixtures import REPO

BASECAMP = REPO / "domains" / "office" / "basecamp"


def test_basecamp_s_project_and_to_do_set_are_the_account_s_and_its_tasks_build():
    env = load_environment(BASECAMP)
    assert account_roots(env.spec) == {"todoset"}
    tasks = build_tasks([env], n=8, seed=0, index=False).tasks
    assert len(tasks) == 8  # before: 'every tool failed to ground' (no tool lists a todoset)
    system = build_system_prompt(tasks[0], env)
    assert "This account has one todoset (id " in system
    for t in tasks:
        assert "todoset" not in t.goal  # nobody says it
        tr = run_rollout(t, env, policy=OraclePolicy())
        assert tr.reward.reward == 1.0
        assert system.splitlines()[2] == tr.messages[0]["content"].splitlines()[2]


def test_a_key_of_an_account_root_has_context_provenance_and_no_other_key_does():
    env = load_environment(BASECAMP)
    t = build_tasks([env], n=4, seed=1, index=False).tasks
    kinds = set()
    for task in t:
        view = GoldView.of_task(task)
        for _i, arg, how in arg_provenance(env.spec, view, task.goal):
            kinds.add(how)
            if arg == "todoset_id":
                assert how in ("context", "ref"), (arg, how)
            else:
                assert how != "context", (arg, how)
    assert "context" in kinds


def test_a_lookup_by_its_own_key_or_a_singleton_is_no_account_root():
    sinao = load_environment(REPO / "domains" / "finance" / "sinao_accesses")  # 'vie': VIES by SIREN
    assert "vie" not in account_roots(sinao.spec)
    stripe = load_environment(REPO / "domains" / "commerce" / "stripe_cards")  # GET /v1/balance
    assert "balance" not in account_roots(stripe.spec)


def test_an_eval_suite_takes_no_task_that_needs_the_account_s_key():
    import pytest

    from envfactory.evaluation.suite_build import SuiteError, build_suite
    from envfactory.spec import account_key_args

    env = load_environment(BASECAMP)
    tasks = build_tasks([env], n=6, seed=0, index=False).tasks
    # every Basecamp path names the to-do set: each task needs its key, which BFCL's entries cannot state
    assert all(account_key_args(env.spec, t.reward.gold_calls) for t in tasks)
    with pytest.raises(SuiteError, match="no tasks"):
        build_suite(tasks, [env], n_per_category=20)
    tasks_env = load_environment(REPO / "domains" / "office" / "google_tasks")
    other = build_tasks([tasks_env], n=6, seed=0, index=False).tasks
    assert not any(account_key_args(tasks_env.spec, t.reward.gold_calls) for t in other)
    suite = build_suite(tasks + other, [env, tasks_env], n_per_category=20)
    assert suite.entries and all(e.env != "basecamp" for e in suite.entries if e.is_multi_turn)
