"""Membership effects through every verification level, and their mutants caught."""

from __future__ import annotations

from envfactory.verify import run_mutants, verify_environment

from ..runtime.test_membership import _env


def test_membership_actions_pass_every_level_and_dropping_them_is_caught():
    env = _env()
    report = verify_environment(env, seed=0)
    for name in ("add_task_tag", "remove_task_tag", "modify_task"):
        assert report.tools[name].status == {"smoke": "pass", "L1": "pass", "L2": "pass", "L3": "pass"}, (
            name,
            report.tools[name].messages,
        )
    mutants = run_mutants(env, seed=0)
    survivors = [r.name for r in mutants.survivors() if r.kind == "drop_effect"]
    assert not survivors, survivors
