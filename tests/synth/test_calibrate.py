from __future__ import annotations

import pytest

from envfactory.synth.calibrate import ACTIONS, action_score, choose_actions, estimate_pass_rate


@pytest.mark.parametrize(
    "p, action, score",
    [
        (0.747, "harder-depth", 0.9999),
        (0.0, "easier-depth", 0.458),
        (1.0, "harder-depth", 0.458),
    ],
)
def test_milp_worked_cases(p, action, score):
    [(a, s)] = choose_actions([p])
    assert a == action
    assert s == pytest.approx(score, abs=1e-3)


def test_middle_pass_rate_gets_a_different_action():
    [(a, s)] = choose_actions([0.533])
    assert a.startswith("different")
    assert s == pytest.approx(0.986, abs=1e-3)


def test_ties_break_by_fixed_action_order():
    # different-depth and different-breadth score the same; the earlier one in ACTIONS wins
    assert ACTIONS.index("different-depth") < ACTIONS.index("different-breadth")
    assert choose_actions([0.5, 0.5, 0.5]) == [("different-depth", 1.0)] * 3
    assert choose_actions([0.533]) == choose_actions([0.533])


def test_infeasible_actions_are_never_chosen():
    feas = [[False, True, True, True, True, True]]
    [(a, _)] = choose_actions([0.747], feasible=feas)
    assert a == "harder-breadth"
    assert action_score(0.747, "harder-breadth") == pytest.approx(0.915, abs=1e-3)


def test_coverage_target_changes_the_choice_where_it_should():
    p = [0.533, 0.533]
    tools = [[{"a"}] * 6, [{"a"}] * 6]
    tools[1][0] = {"a", "rare_tool"}  # only harder-depth of task 1 would use rare_tool
    plain = choose_actions(p, tools=tools)
    assert [a for a, _ in plain] == ["different-depth", "different-depth"]
    covered = choose_actions(p, tools=tools, targets={"rare_tool": 1}, coverage_weight=1.0)
    assert [a for a, _ in covered] == ["different-depth", "harder-depth"]
    # a target no action can meet is soft: slack absorbs it and the best-score choice stays
    assert choose_actions(p, tools=tools, targets={"nowhere": 1}) == plain


def test_pass_rate_estimate_falls_with_structure():
    base = {
        "chain": 2,
        "ids": 1,
        "goals": 1,
        "branches": 1,
        "distractors": 20,
        "hidden": 0,
        "constraints": 0,
        "writes": 1,
    }
    harder = dict(base, chain=5, ids=4, goals=2)
    assert 0 < estimate_pass_rate(harder) < estimate_pass_rate(base) < 1
