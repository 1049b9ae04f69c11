"""Samplers: deterministic for a seed, grounded, weighted toward what is covered least."""

from __future__ import annotations

import json

import pytest

from envfactory.graph import (
    Coverage,
    Plan,
    RandomWalkSampler,
    SamplerConfig,
    Step,
    TopologySampler,
    order_plan,
)
from envfactory.graph.plan import iter_refs


def _dump(plans):
    return [json.dumps(p.to_dict(), sort_keys=True) for p in plans]


def test_same_seed_same_plans(shop_env, trip_desk_env):
    for envs in ([shop_env], [trip_desk_env]):
        a = TopologySampler(envs, seed=11).sample_many(60)
        b = TopologySampler(envs, seed=11).sample_many(60)
        c = TopologySampler(envs, seed=12).sample_many(60)
        assert _dump(a) == _dump(b)
        assert _dump(a) != _dump(c)
    w1 = RandomWalkSampler([trip_desk_env], seed=5).sample_many(50)
    w2 = RandomWalkSampler([trip_desk_env], seed=5).sample_many(50)
    assert _dump(w1) == _dump(w2)


def test_plans_are_topologically_ordered_dags_with_goals(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=2).sample_many(150)
    for p in plans:
        assert p.goal_tools and [p.steps[i].tool for i in p.goal_steps] == p.goal_tools
        for i, s in enumerate(p.steps):
            for r in iter_refs(s.args):
                assert 0 <= r[0] < i and r[0] in s.deps
            assert all(d < i for d in s.deps)
        assert 1 <= p.chain_length() <= len(p.steps)
    # the sampler uses what the graph offers: discovery chains, branches, second goals
    assert max(p.chain_length() for p in plans) >= 3
    assert any(len(p.goal_tools) == 2 for p in plans)
    assert any(s.role == "branch" for p in plans for s in p.steps)
    assert any(p.branching() >= 2 for p in plans)


def test_user_facts_come_from_the_initial_state(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=4).sample_many(200)
    with trip_desk_env.new_session() as s:
        emails = {r[0] for r in s.query("SELECT email FROM traveler")}
    used = [v for p in plans for k, v in p.user_facts.items() if k.split("#")[0] == "traveler.email"]
    assert used and all(e in emails for e in used)
    # a new traveller's email must not collide with an existing one (the field is unique)
    new = [v for p in plans for k, v in p.user_facts.items() if k.split("#")[0] == "create_traveler.email"]
    assert new and not any(e in emails for e in new)


def test_under_covered_tool_share_rises(shop_env):
    def share(cov, n=300):
        s = TopologySampler(
            [shop_env], seed=7, coverage=cov, config=SamplerConfig(p_second_goal=0.0, p_branch=0.0)
        )
        plans = s.sample_many(n)
        return sum(p.goal_tools[0] == "refund_order" for p in plans) / n

    baseline = share(Coverage())
    skewed = Coverage()
    for t in shop_env.spec.tools:
        if t.name != "refund_order":
            skewed.tools[("store", t.name)] = 2000
    assert share(skewed) > 2 * baseline


def test_goal_weights_fall_with_coverage(shop_env):
    s = TopologySampler([shop_env], seed=0)
    before = {t.name: w for _, t, w in s.goal_weights()}
    s.coverage.tools[("store", "get_order")] += 9
    after = {t.name: w for _, t, w in s.goal_weights()}
    assert after["get_order"] < before["get_order"] and after["pay_order"] == before["pay_order"]


def test_every_tool_is_a_goal_within_a_few_hundred_plans(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=9).sample_many(300)
    assert {t for p in plans for t in p.tools} == set(trip_desk_env.tool_names)


def test_order_plan_puts_reads_before_writes_and_renumbers_refs():
    steps = [
        Step("create_order", {"customer_id": "CU1", "total": 5.0}, [], "setup"),
        Step("list_orders", {"status": "open"}, [], "discover"),
        Step("pay_order", {"order_id": {"$ref": [0, "order_id"]}}, [0], "goal"),
    ]
    out, goals = order_plan(steps, [2], {"create_order", "pay_order"})
    assert [s.tool for s in out] == ["list_orders", "create_order", "pay_order"]
    assert out[2].args == {"order_id": {"$ref": [1, "order_id"]}} and out[2].deps == [1]
    assert goals == [2]


def test_plan_round_trips_through_dict():
    p = Plan(
        env="e",
        domain="d",
        steps=[Step("a", {"x": 1}), Step("b", {"y": {"$ref": [0, "x"]}}, [0], "goal")],
        goal_tools=["b"],
        goal_steps=[1],
        user_facts={"t.f": 1},
    )
    assert Plan.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    assert p.pairs() == [("a", "b")] and p.chain_length() == 2 and p.branching() == 1


def test_every_satisfiable_tool_is_covered_in_each_window(trip_desk_env):
    from envfactory.graph import SamplerConfig, TopologySampler

    sampler = TopologySampler([trip_desk_env], seed=3, config=SamplerConfig(window=100))
    try:
        plans = sampler.sample_many(300)
    finally:
        sampler.close()
    every = {t.name for t in trip_desk_env.spec.tools}
    for w in range(3):
        seen = {t for p in plans[w * 100 : (w + 1) * 100] for t in p.tools}
        assert seen == every, (w, every - seen)


def test_restore_undoes_every_trace_of_a_failed_try():
    from envfactory.graph.draft import PlanDraft

    draft = PlanDraft(dry_run=lambda tool, args: {"items": [{"id": 1}]}, writes={"pay"})
    draft.add("find", {"q": "a"}, "discover")
    draft.fact("order.total", 5.0)
    draft.used.add(("order", "OR1"))
    draft.goal_steps.append(0)
    before = (list(draft.steps), list(draft.sim), dict(draft.facts), set(draft.used), set(draft.new_values))
    mark = draft.checkpoint()
    draft.add("pay", {"order_id": {"$ref": [0, "items", 0, "id"]}}, "goal")
    draft.fact("order.total", 7.0)  # a second value of one key: 'order.total#2'
    draft.fact("pay.note", "x")
    draft.used.add(("order", "OR2"))
    draft.new_values.add("fresh-1")
    draft.goal_steps.append(1)
    assert "order.total#2" in draft.facts and len(draft.steps) == 2
    draft.restore(mark)
    assert (draft.steps, draft.sim, draft.facts, draft.used, draft.new_values) == before
    assert draft.goal_steps == [0]


def test_a_failed_dry_run_is_a_sample_error_and_adds_no_step():
    from envfactory.graph import SampleError
    from envfactory.graph.draft import PlanDraft

    def failing(tool, args):
        raise SampleError("booking_id 'BK0' not found")

    draft = PlanDraft(dry_run=failing, writes=set())
    try:
        draft.add("get_booking", {"booking_id": "BK0"}, "discover")
    except SampleError as e:
        assert "not found" in str(e)
    else:
        raise AssertionError("expected SampleError")
    assert draft.steps == [] and draft.sim == []


def test_plans_carry_no_private_keys_in_rows_or_facts(trip_desk_env):
    plans = TopologySampler([trip_desk_env], seed=13).sample_many(200)
    for p in plans:
        assert not any(k.startswith("__") for k in p.user_facts)
        for st in p.steps:
            assert not any(str(k).startswith("__") for k in st.args)


def test_sampler_settings_come_from_the_config(shop_env):
    flat = TopologySampler(
        [shop_env], seed=1, config=SamplerConfig(p_second_goal=0.0, p_branch=0.0, p_create=0.0, max_depth=1)
    )
    plans = flat.sample_many(80)
    assert all(len(p.goal_tools) == 1 for p in plans)
    assert all(p.chain_length() <= 2 for p in plans)
    with pytest.raises(ValueError):
        SamplerConfig(p_branch=1.5)


def test_goals_are_drawn_document_by_document_not_tool_by_tool(trip_desk_env, shop_env):
    # trip_desk documents 30-odd tools, the shop 7: drawn by tool, the shop would get a fifth of the
    # plans; drawn by document, each gets about half
    assert len(trip_desk_env.spec.tools) > 3 * len(shop_env.spec.tools)
    sampler = TopologySampler([trip_desk_env, shop_env], seed=4)
    try:
        plans = sampler.sample_many(300)
    finally:
        sampler.close()
    share = sum(p.env == shop_env.spec.name for p in plans) / len(plans)
    assert 0.4 <= share <= 0.6, share


GADGETS = {
    "name": "gadgets",
    "domain": "test",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "gadget",
            "primary_key": "gadget_id",
            "fields": [
                {"name": "gadget_id", "type": "string", "id_prefix": "GD"},
                {"name": "title", "type": "string"},
                {"name": "code_word", "type": "string"},  # no role: seeded with catch-phrases
                {"name": "status", "type": "enum", "enum": ["draft", "live", "retired"]},
            ],
        }
    ],
    "tools": [
        {
            "name": "list_gadgets",
            "kind": "list",
            "entity": "gadget",
            "description": "List gadgets.",
            "params": [
                {"name": "title", "type": "string", "field": "title"},
                {"name": "code_word", "type": "string", "field": "code_word"},
            ],
        },
        {
            "name": "create_gadget",
            "kind": "create",
            "entity": "gadget",
            "description": "Create a gadget.",
            "params": [
                {"name": "title", "type": "string", "field": "title"},
                {"name": "code_word", "type": "string", "field": "code_word"},
            ],
        },
        {
            "name": "update_gadget",
            "kind": "update",
            "entity": "gadget",
            "description": "Change a gadget.",
            "params": [
                {"name": "gadget_id", "type": "string", "key": True, "required": True, "field": "gadget_id"},
                {"name": "status", "type": "enum", "enum": ["draft", "live", "retired"], "field": "status"},
                {"name": "code_word", "type": "string", "field": "code_word"},
            ],
        },
    ],
    "seed": {"entities": {"gadget": {"rows": 40}}},
}


def _intent_plans(env, n=150, seed=6):
    sampler = TopologySampler([env], seed=seed, config=SamplerConfig(intent_first=True))
    try:
        return [sampler.sample() for _ in range(n)]
    finally:
        sampler.close()


def test_intent_first_plans_say_what_a_person_knows_and_change_what_they_set():
    from envfactory.graph.plan import is_ref
    from envfactory.runtime import Environment
    from envfactory.spec import parse_spec

    env = Environment.from_spec(parse_spec(GADGETS))
    rows = {}
    with env.new_session() as s:
        for r in s.try_call("list_gadgets", {"limit": 100})["result"]["items"]:
            rows[r["gadget_id"]] = r
    kinds = set()
    for p in _intent_plans(env, n=120):
        for st in p.steps:
            literal = {k: v for k, v in st.args.items() if not is_ref(v) and k != "limit"}
            # filler (a field with no role, seeded with catch-phrases) is neither a filter nor a value
            assert "code_word" not in literal, (st.tool, st.args)
            kinds.add(st.tool)
            if st.tool == "create_gadget":
                assert "title" in literal, st.args  # a new row with no detail is no request
            if st.tool == "update_gadget" and not is_ref(st.args["gadget_id"]):
                assert literal["status"] != rows[st.args["gadget_id"]]["status"], st.args
    assert {"create_gadget", "update_gadget", "list_gadgets"} <= kinds


def test_a_new_row_is_named_when_it_has_a_name_and_never_only_a_flag_or_a_kind():
    """'Set up a notification with always no' is no request: a create states its title when the row
    has one, and at least one detail beyond a flag or one of a few documented values."""
    import copy

    from envfactory.graph.plan import is_ref
    from envfactory.runtime import Environment
    from envfactory.spec import parse_spec

    spec = copy.deepcopy(GADGETS)
    fields = spec["entities"][0]["fields"]
    fields += [{"name": "always", "type": "boolean"}, {"name": "kind", "type": "enum", "enum": ["a", "b"]}]
    create = next(t for t in spec["tools"] if t["name"] == "create_gadget")
    create["params"] = [
        {"name": "always", "type": "boolean", "field": "always"},
        {"name": "kind", "type": "enum", "enum": ["a", "b"], "field": "kind"},
        {"name": "status", "type": "enum", "enum": ["draft", "live", "retired"], "field": "status"},
        {"name": "title", "type": "string", "field": "title"},
    ]
    env = Environment.from_spec(parse_spec(spec))
    creates = [
        {k: v for k, v in st.args.items() if not is_ref(v)}
        for p in _intent_plans(env, n=150)
        for st in p.steps
        if st.tool == "create_gadget"
    ]
    assert len(creates) >= 10
    assert all("title" in c for c in creates), [c for c in creates if "title" not in c][:3]


def test_an_ordering_key_is_no_job_title():
    from envfactory.spec.role_inference import infer_role

    tasks = "String indicating the position of the task among its sibling tasks under the same parent task."
    assert infer_role("task", "position", "string", description=tasks) is None
    assert infer_role("employee", "position", "string", description="The job position held.") is not None
