from __future__ import annotations

import pytest

from envfactory.spec import parse_spec

SMALL = {
    "name": "shop",
    "domain": "test",
    "clock": "2026-01-10T12:00:00",
    "entities": [
        {
            "name": "customer",
            "primary_key": "customer_id",
            "fields": [
                {"name": "customer_id", "type": "string", "id_prefix": "CU"},
                {"name": "name", "type": "string"},
                {"name": "email", "type": "string", "unique": True},
                {"name": "vip", "type": "boolean", "default": False},
            ],
        },
        {
            "name": "product",
            "primary_key": "product_id",
            "fields": [
                {"name": "product_id", "type": "string", "id_prefix": "PR"},
                {"name": "title", "type": "string"},
                {"name": "price", "type": "number"},
                {"name": "stock", "type": "integer"},
                {"name": "tags", "type": "array", "nullable": True},
            ],
        },
        {
            "name": "order",
            "primary_key": "order_id",
            "fields": [
                {"name": "order_id", "type": "string", "id_prefix": "OR"},
                {"name": "customer_id", "type": "string", "ref": "customer"},
                {"name": "product_id", "type": "string", "ref": "product"},
                {"name": "quantity", "type": "integer"},
                {"name": "total", "type": "number"},
                {"name": "status", "type": "enum", "enum": ["placed", "shipped", "cancelled"]},
                {"name": "placed_on", "type": "date"},
            ],
        },
    ],
    "tools": [
        {
            "name": "get_customer",
            "kind": "get",
            "entity": "customer",
            "description": "Get a customer.",
            "params": [
                {
                    "name": "customer_id",
                    "type": "string",
                    "required": True,
                    "key": True,
                    "field": "customer_id",
                }
            ],
        },
        {
            "name": "search_products",
            "kind": "list",
            "entity": "product",
            "description": "Search products.",
            "params": [
                {"name": "title", "type": "string", "field": "title", "op": "contains"},
                {"name": "max_price", "type": "number", "field": "price", "op": "lte"},
                {"name": "ids", "type": "string", "field": "product_id", "op": "in"},
            ],
            "sort": {"fields": ["price", "title"], "default": "price"},
            "page_size": 5,
        },
        {
            "name": "create_customer",
            "kind": "create",
            "entity": "customer",
            "description": "Register a customer.",
            "params": [
                {"name": "name", "type": "string", "required": True, "field": "name"},
                {"name": "email", "type": "string", "required": True, "field": "email"},
            ],
        },
        {
            "name": "update_customer",
            "kind": "update",
            "entity": "customer",
            "description": "Change a customer.",
            "params": [
                {
                    "name": "customer_id",
                    "type": "string",
                    "required": True,
                    "key": True,
                    "field": "customer_id",
                },
                {"name": "email", "type": "string", "field": "email"},
                {"name": "vip", "type": "boolean", "field": "vip"},
            ],
        },
        {
            "name": "delete_customer",
            "kind": "delete",
            "entity": "customer",
            "description": "Delete a customer.",
            "params": [
                {
                    "name": "customer_id",
                    "type": "string",
                    "required": True,
                    "key": True,
                    "field": "customer_id",
                }
            ],
        },
        {
            "name": "place_order",
            "kind": "create",
            "entity": "order",
            "description": "Order a product.",
            "params": [
                {"name": "customer_id", "type": "string", "required": True, "field": "customer_id"},
                {"name": "product_id", "type": "string", "required": True, "field": "product_id"},
                {"name": "quantity", "type": "integer", "required": True, "field": "quantity", "minimum": 1},
            ],
            "preconditions": [
                {
                    "field": "product_id.stock",
                    "op": "gte",
                    "value_param": "quantity",
                    "message": "not enough stock",
                }
            ],
            "effects": [
                {"field": "status", "set": "placed"},
                {"field": "placed_on", "now": True},
                {"field": "total", "copy_from": "product_id.price", "scale_param": "quantity"},
                {"field": "product_id.stock", "increment_param": "quantity", "negate_param": True},
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
                {"field": "product_id.stock", "increment_from": "quantity"},
            ],
        },
    ],
    "seed": {
        "seed": 3,
        "entities": {
            "customer": {"rows": 30},
            "product": {"rows": 40, "fields": {"stock": {"kind": "int", "min": 0, "max": 20}}},
            "order": {"rows": 60, "fields": {"status": {"kind": "choice", "values": ["placed", "shipped"]}}},
        },
    },
}


@pytest.fixture
def small_spec():
    import copy

    return parse_spec(copy.deepcopy(SMALL))


@pytest.fixture
def small_env(small_spec):
    from envfactory.runtime import Environment

    return Environment.from_spec(small_spec)
