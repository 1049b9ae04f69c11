"""Each level catches a defect the levels before it miss."""

from envfactory.runtime import Environment
from envfactory.spec import parse_spec
from envfactory.verify import check_l1, check_l2, fk_violations, smoke_check
from envfactory.verify.mutants import Mutant, MutantEnvironment

from ._tiny import tiny_dict, tiny_env, tool_index


def _mutant(edit, tools):
    """The tiny env with a mutated spec (same template), checked against the original spec."""
    base = tiny_env()
    d = tiny_dict()
    edit(d)
    return base, MutantEnvironment(base, Mutant("test", "test", tools, parse_spec(d)))


def _verdict(checks, tool):
    return next(c for c in checks if c.tool == tool)


def test_a_correct_env_passes_l1_and_l2():
    env = tiny_env()
    assert all(c.ok for c in check_l1(env)), [c for c in check_l1(env) if not c.ok]
    assert all(c.ok for c in check_l2(env)), [c for c in check_l2(env) if not c.ok]


def test_l1_catches_a_skipped_precondition_that_smoke_misses():
    base, m = _mutant(
        lambda d: tool_index(d, "cancel_order").__setitem__("preconditions", []), ["cancel_order"]
    )
    assert _verdict(smoke_check(m, expected=base.spec), "cancel_order").ok
    v = _verdict(check_l1(m, expected=base.spec), "cancel_order")
    assert not v.ok and "precondition status eq" in v.message


def test_l1_catches_a_dropped_foreign_key_that_smoke_misses():
    def edit(d):
        d["entities"][2]["fields"][2].pop("ref")  # order.customer_id

    base, m = _mutant(edit, ["place_order"])
    assert _verdict(smoke_check(m, expected=base.spec), "place_order").ok
    v = _verdict(check_l1(m, expected=base.spec), "place_order")
    assert not v.ok and "customer_id" in v.message


def test_l2_catches_a_dropped_effect_that_smoke_and_l1_miss():
    def edit(d):
        tool_index(d, "cancel_order")["effects"].pop()  # the stock goes back

    base, m = _mutant(edit, ["cancel_order"])
    assert _verdict(smoke_check(m, expected=base.spec), "cancel_order").ok
    assert _verdict(check_l1(m, expected=base.spec), "cancel_order").ok
    v = _verdict(check_l2(m, expected=base.spec), "cancel_order")
    assert not v.ok and "item" in v.message


def test_l2_catches_a_wrong_filter_that_l1_misses():
    def edit(d):
        tool_index(d, "list_items")["params"][1]["op"] = "lt"  # max_price: lte -> lt

    base, m = _mutant(edit, ["list_items"])
    assert _verdict(check_l1(m, expected=base.spec), "list_items").ok
    v = _verdict(check_l2(m, expected=base.spec), "list_items")
    assert not v.ok and "max_price" in v.message


def test_l2_catches_a_page_off_by_one():
    base = tiny_env()

    from envfactory.verify.mutants import _page_off_by_one

    more = _page_off_by_one(5, 100)  # one row more than asked for
    m = MutantEnvironment(base, Mutant("page", "test", ["list_items"], base.spec, wrap_args=more))
    assert _verdict(check_l1(m), "list_items").ok
    assert not _verdict(check_l2(m), "list_items").ok


def test_l2_flags_an_action_that_can_be_repeated():
    d = tiny_dict()
    tool_index(d, "cancel_order")["preconditions"] = []
    env = Environment.from_spec(parse_spec(d))
    v = _verdict(check_l2(env), "cancel_order")
    assert not v.ok and "repeated" in v.message


def test_foreign_keys_hold_in_the_seeded_state():
    with tiny_env().new_session() as s:
        assert fk_violations(s) == []
