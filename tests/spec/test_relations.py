"""Entity order by foreign keys (``envfactory.spec.entity_order``) and the seed defaults live in spec."""

from __future__ import annotations

import datetime as dt

import pytest

from envfactory.errors import SpecError
from envfactory.spec import EnvSpec, default_generator, default_id_prefix, entity_order


def _spec(refs: dict[str, list[str]]) -> EnvSpec:
    entities = []
    for name, targets in refs.items():
        fields = [{"name": f"{name}_id", "type": "string"}]
        fields += [
            {"name": f"{t}_ref" if t != name else "parent_id", "type": "string", "ref": t, "nullable": True}
            for t in targets
        ]
        entities.append({"name": name, "primary_key": f"{name}_id", "fields": fields})
    return EnvSpec.model_validate({"name": "shop", "domain": "test", "entities": entities, "tools": []})


def test_referenced_entities_come_first_and_ties_go_alphabetically():
    spec = _spec(
        {"order": ["customer", "product"], "product": [], "customer": [], "review": ["order", "review"]}
    )
    assert [e.name for e in entity_order(spec)] == ["customer", "product", "order", "review"]


def test_a_cycle_of_foreign_keys_is_a_spec_error_naming_it():
    spec = _spec({"a": ["b"], "b": ["a"], "c": []})
    with pytest.raises(SpecError, match=r"cycle \(a -> b -> a\)"):
        entity_order(spec)


def test_seed_defaults_follow_name_and_type():
    spec = _spec({"travel_booking": []})
    ent = spec.entities[0]
    assert default_id_prefix("travel_booking") == "TB"
    assert default_generator(ent, ent.pk, dt.datetime(2026, 6, 1)).prefix == "TB"
