"""A small hand-made environment for the verifier tests: items and orders of items."""

from __future__ import annotations

import copy
from typing import Any

from envfactory.runtime import Environment
from envfactory.spec import EnvSpec, parse_spec

TINY: dict[str, Any] = {
    "name": "tiny_shop",
    "domain": "test",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "item",
            "primary_key": "item_id",
            "fields": [
                {"name": "item_id", "type": "string", "id_prefix": "IT"},
                {"name": "name", "type": "string"},
                {"name": "category", "type": "enum", "enum": ["book", "toy", "food"]},
                {"name": "price", "type": "number"},
                {"name": "stock", "type": "integer"},
                {"name": "status", "type": "enum", "enum": ["active", "retired"]},
            ],
        },
        {
            "name": "customer",
            "primary_key": "customer_id",
            "fields": [
                {"name": "customer_id", "type": "string", "id_prefix": "CU"},
                {"name": "email", "type": "string", "unique": True},
                {"name": "tags", "type": "array", "nullable": True},
            ],
        },
        {
            "name": "order",
            "primary_key": "order_id",
            "fields": [
                {"name": "order_id", "type": "string", "id_prefix": "OR"},
                {"name": "item_id", "type": "string", "ref": "item"},
                {"name": "customer_id", "type": "string", "ref": "customer"},
                {"name": "quantity", "type": "integer"},
                {"name": "total", "type": "number"},
                {"name": "status", "type": "enum", "enum": ["placed", "shipped", "cancelled"]},
                {"name": "note", "type": "string", "nullable": True},
                {"name": "cancelled_at", "type": "datetime", "nullable": True},
            ],
        },
    ],
    "tools": [
        {
            "name": "get_item",
            "kind": "get",
            "entity": "item",
            "description": "Get an item.",
            "params": [
                {"name": "item_id", "type": "string", "required": True, "key": True, "field": "item_id"}
            ],
        },
        {
            "name": "list_items",
            "kind": "list",
            "entity": "item",
            "description": "List items.",
            "params": [
                {"name": "category", "type": "enum", "enum": ["book", "toy", "food"], "field": "category"},
                {"name": "max_price", "type": "number", "field": "price", "op": "lte"},
                {"name": "name", "type": "string", "field": "name", "op": "contains"},
            ],
            "sort": {"fields": ["price", "name"], "default": "price"},
            "page_size": 5,
        },
        {
            "name": "create_customer",
            "kind": "create",
            "entity": "customer",
            "description": "Add a customer.",
            "params": [{"name": "email", "type": "string", "required": True, "field": "email"}],
        },
        {
            "name": "get_order",
            "kind": "get",
            "entity": "order",
            "description": "Get an order.",
            "params": [
                {"name": "order_id", "type": "string", "required": True, "key": True, "field": "order_id"}
            ],
        },
        {
            "name": "list_orders",
            "kind": "list",
            "entity": "order",
            "description": "List orders.",
            "params": [
                {"name": "customer_id", "type": "string", "field": "customer_id"},
                {
                    "name": "status",
                    "type": "enum",
                    "enum": ["placed", "shipped", "cancelled"],
                    "field": "status",
                },
            ],
        },
        {
            "name": "place_order",
            "kind": "create",
            "entity": "order",
            "description": "Order an active item in stock.",
            "params": [
                {"name": "item_id", "type": "string", "required": True, "field": "item_id"},
                {"name": "customer_id", "type": "string", "required": True, "field": "customer_id"},
                {
                    "name": "quantity",
                    "type": "integer",
                    "required": True,
                    "field": "quantity",
                    "minimum": 1,
                    "maximum": 5,
                },
                {"name": "note", "type": "string", "field": "note"},
            ],
            "preconditions": [
                {"field": "item_id.status", "op": "eq", "value": "active", "message": "the item is retired"},
                {
                    "field": "item_id.stock",
                    "op": "gte",
                    "value_param": "quantity",
                    "message": "not enough stock",
                },
            ],
            "effects": [
                {"field": "status", "set": "placed"},
                {"field": "total", "copy_from": "item_id.price", "scale_param": "quantity"},
                {"field": "item_id.stock", "increment_param": "quantity", "negate_param": True},
            ],
        },
        {
            "name": "update_order_note",
            "kind": "update",
            "entity": "order",
            "description": "Change an order's note.",
            "params": [
                {"name": "order_id", "type": "string", "required": True, "key": True, "field": "order_id"},
                {"name": "note", "type": "string", "required": True, "field": "note"},
            ],
        },
        {
            "name": "cancel_order",
            "kind": "action",
            "entity": "order",
            "description": "Cancel a placed order.",
            "params": [
                {"name": "order_id", "type": "string", "required": True, "key": True, "field": "order_id"}
            ],
            "preconditions": [{"field": "status", "op": "eq", "value": "placed"}],
            "effects": [
                {"field": "status", "set": "cancelled"},
                {"field": "cancelled_at", "now": True},
                {"field": "item_id.stock", "increment_from": "quantity"},
            ],
        },
        {
            "name": "delete_order",
            "kind": "delete",
            "entity": "order",
            "description": "Delete a cancelled order.",
            "params": [
                {"name": "order_id", "type": "string", "required": True, "key": True, "field": "order_id"}
            ],
            "preconditions": [{"field": "status", "op": "eq", "value": "cancelled"}],
        },
    ],
    "seed": {
        "seed": 3,
        "entities": {
            "item": {
                "rows": 30,
                "fields": {
                    "stock": {"kind": "int", "min": 0, "max": 20},
                    "price": {"kind": "float", "min": 1, "max": 50},
                    "status": {"kind": "choice", "values": ["active", "retired"], "weights": [3, 1]},
                    "name": {"kind": "pattern", "pattern": "??? widget"},
                },
            },
            "customer": {"rows": 15},
            "order": {
                "rows": 40,
                "fields": {
                    "quantity": {"kind": "int", "min": 1, "max": 3},
                    "cancelled_at": {"kind": "const", "value": None},
                },
            },
        },
    },
}


def tiny_dict() -> dict[str, Any]:
    return copy.deepcopy(TINY)


def tiny_spec(edit=None) -> EnvSpec:
    d = tiny_dict()
    if edit is not None:
        edit(d)
    return parse_spec(d)


_ENVS: dict[str, Environment] = {}


def tiny_env() -> Environment:
    if "tiny" not in _ENVS:
        _ENVS["tiny"] = Environment.from_spec(tiny_spec())
    return _ENVS["tiny"]


def tool_index(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in d["tools"] if t["name"] == name)
