import random

from envfactory.verify import smoke_check, valid_args
from envfactory.verify.mutants import Mutant, MutantEnvironment

from ._tiny import tiny_env, tiny_spec


def test_smoke_passes_on_every_tool_of_a_correct_env():
    checks = smoke_check(tiny_env(), seed=0)
    assert [c.tool for c in checks] == [t.name for t in tiny_env().spec.tools]
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]


def test_valid_args_satisfy_preconditions_through_a_foreign_key():
    env = tiny_env()
    tool = env.spec.tool("place_order")
    for seed in range(15):
        with env.new_session() as s:
            args = valid_args(s, env, tool, random.Random(seed))
            assert args is not None
            item = s.get_row("item", args["item_id"])
            assert item["status"] == "active" and item["stock"] >= args["quantity"] >= 1
            out = s.try_call("place_order", args)
            assert out["ok"], out


def test_valid_args_is_none_when_no_row_meets_the_precondition():
    spec = tiny_spec(
        lambda d: d["seed"]["entities"]["order"]["fields"].update(
            {"status": {"kind": "const", "value": "shipped"}}
        )
    )
    from envfactory.runtime import Environment

    env = Environment.from_spec(spec)
    with env.new_session() as s:  # no order is cancelled, and a new one is placed, not cancelled
        assert valid_args(s, env, spec.tool("delete_order"), random.Random(0)) is None
    bad = {c.tool: c for c in smoke_check(env)}
    assert not bad["delete_order"].ok and "no valid call" in bad["delete_order"].message
    assert bad["get_order"].ok


def test_a_row_in_the_needed_state_is_made_through_the_create_tool():
    # Resend: no seeded domain is 'pending', but create_domain makes one, and verify_domain acts
    # on it (it used to fail verification with "no valid call found in the seeded state")
    spec = tiny_spec(
        lambda d: d["seed"]["entities"]["order"]["fields"].update(
            {"status": {"kind": "const", "value": "shipped"}}
        )
    )
    from envfactory.runtime import Environment

    env = Environment.from_spec(spec)
    with env.new_session() as s:
        args = valid_args(s, env, spec.tool("cancel_order"), random.Random(0))
        assert args is not None
        placed = s.call("get_order", args)
        assert placed["status"] == "placed" and s.call("cancel_order", args)["status"] == "cancelled"
    assert {c.tool: c for c in smoke_check(env)}["cancel_order"].ok


def test_smoke_catches_a_runtime_that_accepts_unknown_arguments():
    env = tiny_env()

    def drop_unknown(tool, args):
        return {k: v for k, v in args.items() if k != "zz_not_an_argument"}

    m = MutantEnvironment(env, Mutant("lenient", "test", ["get_item"], env.spec, wrap_args=drop_unknown))
    checks = {c.tool: c for c in smoke_check(m)}
    assert not checks["get_item"].ok
    assert "unknown argument" in checks["get_item"].message
    assert checks["get_order"].ok


def test_update_args_change_the_row_they_write():
    # Gmail PUT settings/autoForwarding {enabled: False} on a row already disabled, Discord
    # PATCH widget {enabled: True}: the smoke write changed nothing and the tool was dropped
    def edit(d):
        d["seed"]["entities"]["item"]["fields"].update({"status": {"kind": "const", "value": "active"}})
        d["tools"].append(
            {
                "name": "update_item_status",
                "kind": "update",
                "entity": "item",
                "description": "Retire or reactivate an item.",
                "params": [
                    {"name": "item_id", "type": "string", "required": True, "key": True, "field": "item_id"},
                    {
                        "name": "status",
                        "type": "enum",
                        "enum": ["active", "retired"],
                        "required": True,
                        "field": "status",
                    },
                ],
            }
        )

    from envfactory.runtime import Environment

    spec = tiny_spec(edit)
    env = Environment.from_spec(spec)
    for seed in range(12):
        with env.new_session() as s:
            args = valid_args(s, env, spec.tool("update_item_status"), random.Random(seed))
            assert args is not None and args["status"] == "retired", (seed, args)
    assert {c.tool: c for c in smoke_check(env)}["update_item_status"].ok
