"""The tool graph of a hand-made spec equals the dependencies worked out by hand."""

from __future__ import annotations

import json

import pytest

from envfactory.graph import (
    build_domain_graph,
    build_tool_graph,
    classify_param,
    graph_to_json,
    load_tool_graph,
    save_tool_graph,
)

from ._shop import shop_spec


def _edges(g, kind, **match):
    return {
        (u, v)
        for u, v, a in g.edges(data=True)
        if a["edge"] == kind and all(a.get(k) == w for k, w in match.items())
    }


CUSTOMER_ID_PARAMS = ["get_customer.customer_id", "create_order.customer_id", "list_orders.customer_id"]
ORDER_ID_PARAMS = ["get_order.order_id", "pay_order.order_id", "refund_order.order_id"]


def test_parameter_labels_user_or_discover():
    g = build_tool_graph(shop_spec())
    labels = {n: (a["source"], a["entity"]) for n, a in g.nodes(data=True) if a["node"] == "param"}
    assert labels == {
        "search_customers.email": ("user", None),
        "search_customers.name": ("user", None),
        "get_customer.customer_id": ("discover", "customer"),
        "create_order.customer_id": ("discover", "customer"),
        "create_order.total": ("user", None),
        "list_orders.customer_id": ("discover", "customer"),
        "list_orders.status": ("user", None),
        "get_order.order_id": ("discover", "order"),
        "pay_order.order_id": ("discover", "order"),
        "pay_order.payment_token": ("discover", None),
        "refund_order.order_id": ("discover", "order"),
    }


def test_input_edges_join_every_parameter_to_its_tool():
    spec = shop_spec()
    g = build_tool_graph(spec)
    expected = {(f"{t.name}.{p.name}", t.name) for t in spec.tools for p in t.params}
    assert _edges(g, "input") == expected
    assert g.edges["create_order.total", "create_order"]["required"] is True
    assert g.edges["list_orders.status", "list_orders"]["required"] is False


def test_strong_supplies_follow_keys_and_foreign_keys():
    g = build_tool_graph(shop_spec())
    pk = _edges(g, "supplies", strength="strong", via="pk")
    fk = _edges(g, "supplies", strength="strong", via="fk")
    assert pk == (
        {("search_customers", p) for p in CUSTOMER_ID_PARAMS}
        | {("list_orders", p) for p in ORDER_ID_PARAMS}
        | {("create_order", p) for p in ORDER_ID_PARAMS}
    )
    # every tool returning order rows carries customer_id, a foreign key to customer
    fk_expected = {
        (u, p)
        for u in ("create_order", "list_orders", "get_order", "pay_order", "refund_order")
        for p in CUSTOMER_ID_PARAMS
        if not p.startswith(u + ".")
    }
    assert fk == fk_expected
    assert g.edges["list_orders", "pay_order.order_id"]["output_field"] == "order_id"
    assert g.edges["get_order", "get_customer.customer_id"]["output_field"] == "customer_id"


def test_weak_supplies_come_from_similar_fields_of_reads():
    g = build_tool_graph(shop_spec())
    assert _edges(g, "supplies", strength="weak") == {
        ("get_customer", "search_customers.email"),
        ("get_customer", "search_customers.name"),
        ("list_orders", "create_order.total"),
        ("get_order", "create_order.total"),
        ("get_order", "list_orders.status"),
    }
    a = g.edges["get_customer", "search_customers.email"]
    assert a["via"] == "similar" and a["output_field"] == "email" and 0.6 <= a["score"] <= 1.0


def test_state_edges_from_creates_and_status_effects():
    g = build_tool_graph(shop_spec())
    state = {(u, v): a for u, v, a in g.edges(data=True) if a["edge"] == "state"}
    assert set(state) == {
        ("create_order", "pay_order"),
        ("create_order", "refund_order"),
        ("create_order", "get_order"),
        ("pay_order", "refund_order"),
    }
    assert state["create_order", "pay_order"]["reasons"] == ["creates order", 'sets order.status="open"']
    assert state["create_order", "pay_order"]["satisfies"] is True
    assert state["create_order", "refund_order"]["reasons"] == ["creates order"]
    assert state["create_order", "refund_order"]["satisfies"] is False
    assert state["pay_order", "refund_order"]["reasons"] == ['sets order.status="paid"']
    assert state["pay_order", "refund_order"]["creates"] is False


def test_depth_and_satisfiable():
    g = build_tool_graph(shop_spec())
    depth = {n: a["depth"] for n, a in g.nodes(data=True) if a["node"] == "tool"}
    assert depth == {
        "search_customers": 0,
        "list_orders": 0,
        "get_customer": 1,
        "create_order": 1,
        "get_order": 1,
        "pay_order": 1,
        "refund_order": 1,
    }
    g2 = build_tool_graph(shop_spec(drop_tools=("list_orders", "create_order")))
    assert g2.nodes["pay_order"]["satisfiable"] is False
    assert g2.nodes["get_customer"]["satisfiable"] is True


@pytest.mark.parametrize(
    "tool,param,expected",
    [
        ("create_order", "customer_id", ("discover", "foreign key to customer", "customer")),
        ("pay_order", "payment_token", ("discover", "internal identifier", None)),
        ("create_order", "total", ("user", "amount a person can state", None)),
        ("list_orders", "status", ("user", "choice a person can state", None)),
    ],
)
def test_classify_param(tool, param, expected):
    spec = shop_spec()
    t = spec.tool(tool)
    assert classify_param(spec, t, t.param(param)) == expected


def test_trip_desk_search_flights_supplies_create_booking(trip_desk_env):
    g = build_tool_graph(trip_desk_env.spec)
    a = g.edges["search_flights", "create_booking.flight_id"]
    assert (a["strength"], a["via"], a["output_field"]) == ("strong", "pk", "flight_id")
    assert g.edges["search_airports", "search_flights.origin"]["output_field"] == "code"
    assert g.nodes["create_booking.passengers"]["source"] == "user"
    assert 'sets booking.status="confirmed"' in g.edges["create_booking", "pay_booking"]["reasons"]
    assert g.edges["pay_booking", "refund_payment"]["satisfies"] is True


def test_save_and_load_round_trip_is_byte_stable(tmp_path):
    g = build_tool_graph(shop_spec())
    p = save_tool_graph(g, tmp_path)
    assert p.name == "tool_graph.json"
    first = p.read_bytes()
    g2 = load_tool_graph(p)
    assert set(g2.edges) == set(g.edges) and dict(g2.nodes(data=True)) == dict(g.nodes(data=True))
    save_tool_graph(g2, p)
    assert p.read_bytes() == first
    assert json.loads(first)["graph"]["env"] == "store"


def test_domain_graph_prefixes_nodes_per_environment():
    a = shop_spec()
    b = shop_spec().model_copy(update={"name": "outlet"})
    g = build_domain_graph([a, b])
    assert "store/pay_order" in g and "outlet/pay_order" in g
    assert g.has_edge("store/list_orders", "store/pay_order.order_id")
    assert not any(
        u.split("/")[0] != v.split("/")[0] for u, v, e in g.edges(data=True) if e["edge"] != "shared_fact"
    )
    assert g.has_edge("outlet/search_customers.email", "store/search_customers.email")
    assert graph_to_json(g)["graph"]["envs"] == ["store", "outlet"]


def test_a_key_the_document_marks_optional_is_still_an_input_each_call_needs():
    # (Intercom PUT /visitors {id?}: the tool keeps the key optional; a call without it selects no row)
    spec = shop_spec()
    for t in spec.tools:
        if t.name in ("get_order", "pay_order", "refund_order"):
            t.key_param.required = False
    g, plain = build_tool_graph(spec), build_tool_graph(shop_spec())

    def view(graph):
        return (
            {(u, v) for u, v, a in graph.edges(data=True) if a["edge"] == "state"},
            {n: a["depth"] for n, a in graph.nodes(data=True) if a["node"] == "tool"},
            {n: a["required"] for n, a in graph.nodes(data=True) if a["node"] == "param"},
        )

    assert view(g) == view(plain)
    assert g.nodes["pay_order.order_id"]["required"] is True
