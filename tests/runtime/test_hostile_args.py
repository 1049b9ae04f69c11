"""Issue 17 #11 (non-finite and out-of-range numbers are argument errors) and #1 (``in``-lists
are bounded and do not grow a session's statement cache)."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from envfactory.errors import ArgumentError
from envfactory.spec import MAX_IN_ITEMS, tool_input_schema

from ..conftest import REPO


@pytest.mark.parametrize(
    "tool, args, arg",
    [
        ("search_products", {"max_price": float("nan")}, "max_price"),
        ("search_products", {"max_price": float("inf")}, "max_price"),
        ("search_products", {"max_price": -math.inf}, "max_price"),
        ("search_products", {"max_price": json.loads("1e309")}, "max_price"),
        ("search_products", {"max_price": 10**400}, "max_price"),
        ("search_products", {"offset": 2**64}, "offset"),
        ("place_order", {"customer_id": "CU00001", "product_id": "PR00001", "quantity": 2**64}, "quantity"),
        (
            "place_order",
            {"customer_id": "CU00001", "product_id": "PR00001", "quantity": -(2**63) - 1},
            "quantity",
        ),
        ("create_customer", {"name": "Ada \ud800", "email": "ada@example.com"}, "name"),
        ("search_products", {"ids": ["PR00001", "\udfff"]}, "ids"),
        ("create_customer", {"name": "x" * (65 << 20), "email": "ada@example.com"}, "name"),
        ("search_products", {"title": "x" * (2 << 20)}, "title"),
    ],
)
def test_non_finite_huge_or_unencodable_values_are_argument_errors(small_env, tool, args, arg):
    s = small_env.new_session()
    before = s.state_hash()
    with pytest.raises(ArgumentError) as info:
        s.call(tool, args)
    assert info.value.argument == arg and f"'{arg}'" in str(info.value)
    json.dumps(info.value.to_dict(), allow_nan=False)  # the error itself is valid JSON
    assert s.state_hash() == before


def test_the_largest_64_bit_integers_still_pass(small_env):
    s = small_env.new_session()
    out = s.call("search_products", {"offset": 2**63 - 1})
    assert out["items"] == []


def test_call_json_prints_valid_json_for_hostile_numbers():
    from envfactory.cli import app

    runner = CliRunner()
    for args in (
        '{"flight_id": "FL00001", "traveler_id": "TR00001", "passengers": 18446744073709551616}',
        '{"max_price": NaN}',
        '{"max_price": 1e309}',
        '{"max_price": -Infinity}',
    ):
        tool = "create_booking" if "passengers" in args else "search_flights"
        r = runner.invoke(
            app,
            ["call", tool, "--domain", "travel", "--env", "trip_desk", "--args", args, "--json"],
            catch_exceptions=False,
            env={"ENVFACTORY_ROOT": str(REPO)},
        )
        out = json.loads(r.output, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))
        assert r.exit_code == 1 and out["ok"] is False and out["error"] == "invalid_argument", r.output


# ---- #1: in-lists ----------------------------------------------------------------------------


def test_in_lists_are_bounded_and_the_schema_says_so(small_env):
    s = small_env.new_session()
    with pytest.raises(ArgumentError, match=f"at most {MAX_IN_ITEMS} values"):
        s.call("search_products", {"ids": [f"PR{i:05d}" for i in range(MAX_IN_ITEMS + 1)]})
    schema = tool_input_schema(small_env.spec.tool("search_products"))
    assert schema["properties"]["ids"]["maxItems"] == MAX_IN_ITEMS


def test_in_lists_of_every_length_give_a_few_statement_texts_and_the_same_rows(small_env):
    s = small_env.new_session()
    ids = sorted(r[0] for r in s.query("SELECT product_id FROM product"))
    tool = small_env._tools["search_products"]
    tool._sql_cache.clear()
    for n in range(1, MAX_IN_ITEMS + 1):
        wanted = [f"PR{i:05d}" for i in range(1, n + 1)]  # ids past the 40 seeded rows match nothing
        out = s.call("search_products", {"ids": wanted, "limit": 100})
        got = sorted(r["product_id"] for r in out["items"])
        assert got == sorted(set(wanted) & set(ids)), n
    # 1, 2, 4, 8, 16 marks, then one JSON array: six texts, not 500
    assert len(tool._sql_cache) == 6


def test_repeated_values_in_a_padded_list_match_once(small_env):
    s = small_env.new_session()
    out = s.call("search_products", {"ids": ["PR00001", "PR00002", "PR00001"], "limit": 100})
    assert sorted(r["product_id"] for r in out["items"]) == ["PR00001", "PR00002"]
