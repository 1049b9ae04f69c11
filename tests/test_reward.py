"""Reward sanity cases on the travel reference environment."""

from __future__ import annotations

from envfactory.reward import score_trajectory
from envfactory.spec import RewardSpec


def _run(env, calls):
    s = env.new_session()
    recs = []
    for tool, args in calls:
        out = s.try_call(tool, args)
        recs.append(
            {
                "tool": tool,
                "args": args,
                "ok": out["ok"],
                "error": out.get("error"),
                "writes": env.spec.tool(tool).writes if tool in env.tool_names else False,
            }
        )
    return s, recs


def _gold(env):
    s = env.new_session()
    flight = s.query(
        "SELECT flight_id FROM flight WHERE status='scheduled' AND seats_available >= 2 ORDER BY flight_id LIMIT 1"
    )[0][0]
    calls = [
        ("search_travelers", {"email": s.get_row("traveler", "TR00005")["email"]}),
        ("create_booking", {"traveler_id": "TR00005", "flight_id": flight, "passengers": 2}),
        ("pay_booking", {"booking_id": "BK02501", "method": "card"}),
    ]
    init = s.state_hash()
    gs, recs = _run(env, calls)
    assert all(r["ok"] for r in recs)
    spec = RewardSpec(
        gold_state_hash=gs.state_hash(),
        initial_state_hash=init,
        gold_diff=gs.diff().to_dict(),
        gold_calls=[{"tool": t, "args": a} for t, a in calls],
        masked_args=[[], [], ["method"]],
        required_facts=["BK02501"],
    )
    return spec, calls


def _score(env, spec, calls, answer):
    s, recs = _run(env, calls)
    return score_trajectory(
        spec, final_state_hash=s.state_hash(), final_diff=s.diff().to_dict(), calls=recs, final_answer=answer
    )


def test_oracle_earns_one(trip_desk_env):
    spec, calls = _gold(trip_desk_env)
    r = _score(trip_desk_env, spec, calls, "Booked: reference BK02501, paid by card.")
    assert r.reward == 1.0 and r.partial == 1.0 and r.state_match


def test_doing_nothing_earns_zero(trip_desk_env):
    spec, _ = _gold(trip_desk_env)
    r = _score(trip_desk_env, spec, [], "")
    assert r.reward == 0.0 and r.partial == 0.0


def test_missing_one_write_earns_less_than_one(trip_desk_env):
    spec, calls = _gold(trip_desk_env)
    r = _score(trip_desk_env, spec, calls[:2], "Booked BK02501")
    assert r.reward == 0.0 and 0.0 < r.partial < 1.0


def test_extra_delete_earns_less_than_one(trip_desk_env):
    spec, calls = _gold(trip_desk_env)
    s = trip_desk_env.new_session()
    lonely = s.query(
        "SELECT traveler_id FROM traveler WHERE traveler_id NOT IN (SELECT traveler_id FROM booking) "
        "AND traveler_id NOT IN (SELECT traveler_id FROM hotel_reservation) ORDER BY traveler_id LIMIT 1"
    )[0][0]
    r = _score(trip_desk_env, spec, calls + [("delete_traveler", {"traveler_id": lonely})], "BK02501")
    assert r.reward == 0.0 and r.partial < 1.0 and r.extra_writes == 1


def test_masked_argument_does_not_cost_trace_credit(trip_desk_env):
    spec, calls = _gold(trip_desk_env)
    other = calls[:2] + [("pay_booking", {"booking_id": "BK02501", "method": "paypal"})]
    r = _score(trip_desk_env, spec, other, "BK02501")
    assert r.trace == 1.0
    assert r.reward == 0.0  # but the state differs (method is stored), so the outcome is wrong


def test_missing_fact_in_answer_fails_the_reward(trip_desk_env):
    spec, calls = _gold(trip_desk_env)
    r = _score(trip_desk_env, spec, calls, "All done!")
    assert r.reward == 0.0 and r.missing_facts == ["BK02501"]


def test_exact_gold_calls_match_when_calls_of_one_tool_mask_different_arguments():
    gold = [
        {"tool": "pay_booking", "args": {"booking_id": "BK1", "method": "card"}},
        {"tool": "pay_booking", "args": {"booking_id": "BK2", "method": "cash"}},
    ]
    spec = RewardSpec(
        gold_state_hash="g", initial_state_hash="i", gold_calls=gold, masked_args=[["method"], ["booking_id"]]
    )
    calls = [{"tool": g["tool"], "args": g["args"], "writes": True} for g in gold]
    r = score_trajectory(spec, final_state_hash="g", final_diff={}, calls=calls)
    assert r.trace == 1.0
