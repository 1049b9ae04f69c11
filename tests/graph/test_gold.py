"""Gold execution: references resolved from earlier outputs, bad plans recorded as data."""

from __future__ import annotations

import json

from envfactory.graph import (
    GoldResult,
    Plan,
    Step,
    TopologySampler,
    execute_plan,
    execute_plans,
    run_sampling,
)


def test_sampled_plans_execute_on_trip_desk(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=21).sample_many(400)
    results = execute_plans([trip_desk_env], plans)
    ok = [r for r in results if r.ok]
    assert len(ok) / len(results) >= 0.95, [r.failure for r in results if not r.ok][:5]
    writes = [r for r in ok if r.changed_state]
    assert writes and all(r.diff and r.final_hash != r.initial_hash for r in writes)
    for r in ok:
        assert len(r.calls) == len(r.plan.steps) and all(c.ok for c in r.calls)
        assert "$ref" not in json.dumps([c.args for c in r.calls])


def test_gold_result_replays_to_the_same_final_state(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=8).sample_many(40)
    for r in execute_plans([trip_desk_env], plans):
        if not r.ok or not r.changed_state:
            continue
        with trip_desk_env.new_session() as s:
            for c in r.calls:
                s.call(c.tool, c.args)
            assert s.state_hash() == r.final_hash


def _an_email(env):
    with env.new_session() as s:
        return s.query("SELECT email FROM traveler ORDER BY traveler_id LIMIT 1")[0][0]


def test_references_resolve_from_earlier_outputs(trip_desk_env):
    email = _an_email(trip_desk_env)
    plan = Plan(
        env="trip_desk",
        domain="travel",
        goal_tools=["get_traveler"],
        goal_steps=[1],
        steps=[
            Step("search_travelers", {"email": email}),
            Step("get_traveler", {"traveler_id": {"$ref": [0, "items", 0, "traveler_id"]}}, [0], "goal"),
        ],
    )
    r = execute_plan(trip_desk_env, plan)
    assert r.ok and not r.changed_state and r.diff == {}
    assert r.calls[1].args["traveler_id"] == r.calls[0].output["items"][0]["traveler_id"]
    assert r.calls[1].output["email"] == email
    back = GoldResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r


def test_failures_are_recorded_not_raised(trip_desk_env):
    bad_ref = Plan(
        env="trip_desk",
        domain="travel",
        goal_tools=["get_traveler"],
        goal_steps=[1],
        steps=[
            Step("search_travelers", {"email": "nobody@nowhere.invalid"}),
            Step("get_traveler", {"traveler_id": {"$ref": [0, "items", 0, "traveler_id"]}}, [0], "goal"),
        ],
    )
    r = execute_plan(trip_desk_env, bad_ref)
    assert not r.ok and r.failed_step == 1 and r.failure.startswith("unresolved reference")
    tool_error = Plan(
        env="trip_desk",
        domain="travel",
        goal_tools=["cancel_booking"],
        goal_steps=[0],
        steps=[Step("cancel_booking", {"booking_id": "BK99999"}, [], "goal")],
    )
    r = execute_plan(trip_desk_env, tool_error)
    assert not r.ok and r.failed_step == 0 and r.calls[0].error == "not_found"
    empty = Plan(
        env="trip_desk",
        domain="travel",
        goal_tools=["search_travelers"],
        goal_steps=[0],
        steps=[Step("search_travelers", {"email": "nobody@nowhere.invalid"}, [], "goal")],
    )
    r = execute_plan(trip_desk_env, empty)
    assert not r.ok and r.failure == "no state change and an empty goal result"


def test_topology_beats_random_walk_on_the_small_shop(shop_env):
    topo = run_sampling([shop_env], 300, sampler="topology", seed=1)
    walk = run_sampling([shop_env], 300, sampler="random_walk", seed=1)
    rate = lambda run: len(run.kept) / len(run.results)  # noqa: E731
    assert rate(topo) >= 0.95
    assert rate(topo) > rate(walk)


def test_parallel_execution_gives_the_same_results(shop_env):
    inline = run_sampling([shop_env], 150, seed=4, workers=0)
    forked = run_sampling([shop_env], 150, seed=4, workers=2, chunk=40)
    dump = lambda run: json.dumps([r.to_dict() for r in run.results], sort_keys=True, default=str)  # noqa: E731
    assert dump(inline) == dump(forked)
