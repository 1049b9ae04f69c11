"""An action goal that writes only what its arguments say is sampled with one of those arguments."""

from __future__ import annotations

from pathlib import Path

from envfactory.graph import run_sampling
from envfactory.runtime import load_environment

ROOT = Path(__file__).resolve().parents[2]


def test_an_action_driven_only_by_arguments_is_never_sampled_without_them():
    # PowerDNS POST /zones/{zone_id}/metadata: the action writes the 'metadata' argument and nothing else
    env = load_environment(ROOT / "domains" / "utilities" / "power_dns_authoritative")
    tool = env.spec.tool("metadata_zone")
    driven = {e.param for e in tool.effects}
    assert driven and all(driven)
    steps = [
        s
        for g in run_sampling([env], 200, seed=11).kept
        for s in g.plan.steps
        if s.tool == tool.name and s.role == "goal"
    ]
    assert steps, "the sampler never chose the action"
    assert all(driven & set(s.args) for s in steps)
