"""A small hand-made environment whose dependencies are known exactly."""

from __future__ import annotations

import yaml

from envfactory.spec import EnvSpec, parse_spec

SHOP_YAML = """
name: store
domain: shop
clock: "2026-06-01T09:00:00"
entities:
  - name: customer
    primary_key: customer_id
    fields:
      - {name: customer_id, type: string, id_prefix: CU, description: Customer id.}
      - {name: name, type: string, description: Full name.}
      - {name: email, type: string, unique: true, description: Email address.}
      - {name: tier, type: enum, enum: [basic, gold], description: Loyalty tier.}
  - name: order
    primary_key: order_id
    fields:
      - {name: order_id, type: string, id_prefix: OR, description: Order id.}
      - {name: customer_id, type: string, ref: customer, description: Customer who ordered.}
      - {name: total, type: number, description: Order total in USD.}
      - {name: status, type: enum, enum: [open, paid, cancelled], description: Order status.}
tools:
  - name: search_customers
    kind: list
    entity: customer
    description: Find customers by email or name.
    params:
      - {name: email, type: string, field: email, description: Exact email address.}
      - {name: name, type: string, field: name, op: contains, description: Part of the name.}
  - name: get_customer
    kind: get
    entity: customer
    description: Get a customer by id.
    params:
      - {name: customer_id, type: string, required: true, key: true, field: customer_id}
  - name: create_order
    kind: create
    entity: order
    description: Open an order for a customer.
    params:
      - {name: customer_id, type: string, required: true, field: customer_id}
      - {name: total, type: number, required: true, field: total, minimum: 1, description: Order total in USD.}
    effects:
      - {field: status, set: open}
  - name: list_orders
    kind: list
    entity: order
    description: List orders by customer or status.
    params:
      - {name: customer_id, type: string, field: customer_id}
      - {name: status, type: enum, enum: [open, paid, cancelled], field: status, description: Order status.}
  - name: get_order
    kind: get
    entity: order
    description: Get an order by id.
    params:
      - {name: order_id, type: string, required: true, key: true, field: order_id}
  - name: pay_order
    kind: action
    entity: order
    description: Pay an open order.
    params:
      - {name: order_id, type: string, required: true, key: true, field: order_id}
      - {name: payment_token, type: string, description: Token from the payment form.}
    preconditions:
      - {field: status, op: eq, value: open}
    effects:
      - {field: status, set: paid}
  - name: refund_order
    kind: action
    entity: order
    description: Refund a paid order.
    params:
      - {name: order_id, type: string, required: true, key: true, field: order_id}
    preconditions:
      - {field: status, op: eq, value: paid}
    effects:
      - {field: status, set: cancelled}
seed:
  seed: 3
  entities:
    customer: {rows: 40}
    order: {rows: 120}
"""


def shop_spec(drop_tools: tuple[str, ...] = ()) -> EnvSpec:
    data = yaml.safe_load(SHOP_YAML)
    data["tools"] = [t for t in data["tools"] if t["name"] not in drop_tools]
    return parse_spec(data, source="shop")
