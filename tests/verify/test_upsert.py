"""An upsert (an update whose key is optional and which creates the row the call names none of)
through smoke, L1, L2, L3 and the mutants. Shaped after BigCommerce ``PUT
/customers/attribute-values`` ("Upserts Customer Attribute Values ... If there is none, it
creates the record"), whose items document ``id`` as optional."""

from __future__ import annotations

import random

from envfactory.runtime import Environment
from envfactory.spec import EnvSpec
from envfactory.verify import build_mutants, run_mutants, valid_args, verify_environment
from envfactory.verify.oracle import creates

SPEC = {
    "name": "attribute_values",
    "domain": "commerce",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "customer",
            "primary_key": "id",
            "fields": [{"name": "id", "type": "integer"}, {"name": "email", "type": "string"}],
        },
        {
            "name": "attribute_value",
            "primary_key": "id",
            "fields": [
                {"name": "id", "type": "integer"},
                {"name": "customer_id", "type": "integer", "ref": "customer"},
                {"name": "attribute_id", "type": "integer"},
                {"name": "value", "type": "string"},
            ],
        },
    ],
    "tools": [
        {
            "name": "list_attribute_values",
            "kind": "list",
            "entity": "attribute_value",
            "description": "List attribute values.",
            "params": [{"name": "customer_id", "type": "integer", "field": "customer_id"}],
        },
        {
            "name": "get_attribute_value",
            "kind": "get",
            "entity": "attribute_value",
            "description": "Get one attribute value.",
            "params": [{"name": "id", "type": "integer", "required": True, "key": True, "field": "id"}],
        },
        {
            "name": "upsert_attribute_value",
            "kind": "update",
            "upsert": True,
            "entity": "attribute_value",
            "description": "Create an attribute value, or change the one its id names.",
            "params": [
                {"name": "id", "type": "integer", "key": True, "field": "id"},
                {"name": "customer_id", "type": "integer", "required": True, "field": "customer_id"},
                {"name": "attribute_id", "type": "integer", "required": True, "field": "attribute_id"},
                {"name": "value", "type": "string", "required": True, "field": "value"},
            ],
        },
    ],
    "seed": {"seed": 1, "entities": {"customer": {"rows": 8}, "attribute_value": {"rows": 20}}},
}


def _env() -> Environment:
    return Environment.from_spec(EnvSpec.model_validate(SPEC))


def test_the_verifier_calls_both_branches_of_an_upsert():
    env = _env()
    tool = env.spec.tool("upsert_attribute_value")
    ent = env.spec.entity("attribute_value")
    seen = set()
    with env.new_session() as s:
        for i in range(12):
            args = valid_args(s, env, tool, random.Random(i))
            assert args is not None
            seen.add(creates(s, ent, tool, args))
    assert seen == {True, False}


def test_an_upsert_passes_every_level_and_its_mutants_are_caught():
    env = _env()
    report = verify_environment(env, seed=0)
    assert report.tools["upsert_attribute_value"].status == {
        "smoke": "pass",
        "L1": "pass",
        "L2": "pass",
        "L3": "pass",
    }, report.to_dict()
    assert any(m.kind == "no_upsert" for m in build_mutants(env.spec))
    mutants = run_mutants(env, seed=0)
    survivors = [r.name for r in mutants.survivors()]
    assert not [n for n in survivors if n.startswith("no_upsert")], survivors
