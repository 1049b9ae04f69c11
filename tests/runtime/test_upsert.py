"""The runtime's upsert: an update whose call creates the row when its key names none."""

from __future__ import annotations

import pytest

from envfactory.errors import ArgumentError, NotFoundError, SpecError
from envfactory.runtime import Environment
from envfactory.spec import EnvSpec

from ..verify.test_upsert import SPEC, _env


def test_an_upsert_updates_a_stored_row_and_creates_one_it_does_not_name():
    env = _env()
    with env.new_session() as s:
        before = s.state_hash()
        new = s.call("upsert_attribute_value", {"customer_id": 2, "attribute_id": 7, "value": "a"})
        chosen = s.call(
            "upsert_attribute_value", {"id": 500, "customer_id": 2, "attribute_id": 7, "value": "b"}
        )
        assert chosen["id"] == 500 and new["id"] not in (None, 500)
        changed = s.call(
            "upsert_attribute_value", {"id": 1, "customer_id": 3, "attribute_id": 9, "value": "c"}
        )
        assert changed == {"id": 1, "customer_id": 3, "attribute_id": 9, "value": "c"}
        d = s.diff()
        assert sorted(r["id"] for r in d.added["attribute_value"]) == sorted([new["id"], 500])
        assert [c["key"] for c in d.changed["attribute_value"]] == [1]
        h = s.state_hash()
        # a create still checks what it writes: a missing customer fails and changes nothing
        with pytest.raises(NotFoundError):
            s.call("upsert_attribute_value", {"customer_id": 99999, "attribute_id": 1, "value": "x"})
        with pytest.raises(ArgumentError):
            s.call("upsert_attribute_value", {"id": 1})
        assert s.state_hash() == h != before


def test_only_an_update_with_a_key_may_be_an_upsert():
    bad = {**SPEC, "tools": [{**SPEC["tools"][2], "kind": "create"}]}
    with pytest.raises((ValueError, SpecError), match="only an update with a key parameter can be an upsert"):
        EnvSpec.model_validate(bad)


def test_a_plain_update_with_an_optional_key_refuses_a_call_without_it_where_an_upsert_creates():
    plain = {**SPEC, "tools": [{**SPEC["tools"][2], "upsert": False}]}
    env = Environment.from_spec(EnvSpec.model_validate(plain))
    with env.new_session() as s:
        before = s.state_hash()
        with pytest.raises(ArgumentError, match="no attribute value selected: give 'id'"):
            s.call("upsert_attribute_value", {"customer_id": 2, "attribute_id": 7, "value": "a"})
        assert s.state_hash() == before
