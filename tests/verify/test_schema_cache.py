"""Validators are made once per schema and valid instances remembered; the verdicts stay jsonschema's."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from envfactory.verify import schemas
from envfactory.verify.schemas import check_schema, schema_validator

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "tags": {"type": "array"}, "ok": {"type": "boolean"}},
    "required": ["n"],
}

INSTANCES = [
    {"n": 1},
    {"n": 1.0},  # an integer to JSON Schema
    {"n": 1.5},
    {"n": True},  # not an integer
    {"n": "1"},
    {},
    {"n": 2, "tags": [1, 2]},
    {"n": 2, "tags": (1, 2)},  # a tuple is not an array to jsonschema's type checker
    {"n": 2, "ok": 1},
    {"n": 2, "ok": False},
]


def _messages(errors):
    return [e.message for e in errors]


def test_one_validator_per_schema_text():
    a = schema_validator(dict(SCHEMA))
    assert schema_validator(dict(SCHEMA)) is a
    assert schema_validator({**SCHEMA, "required": []}) is not a


def test_verdicts_and_messages_are_jsonschemas_twice_over():
    plain = Draft202012Validator(SCHEMA)
    cached = schema_validator(SCHEMA)
    for _ in range(2):  # the second pass answers the valid ones from memory
        for inst in INSTANCES:
            assert cached.is_valid(inst) == plain.is_valid(inst), inst
            assert _messages(cached.iter_errors(inst)) == _messages(plain.iter_errors(inst)), inst


def test_a_remembered_valid_instance_is_not_walked_again(monkeypatch):
    v = schema_validator({"type": "object", "title": "walk-count"})
    calls = []
    real = v._validator

    class Counting:
        def iter_errors(self, instance):
            calls.append(instance)
            return real.iter_errors(instance)

    monkeypatch.setattr(v, "_validator", Counting())
    assert v.is_valid({"a": [1, 2]}) and v.is_valid({"a": [1, 2]})
    assert not v.is_valid([1]) and not v.is_valid([1])
    assert len(calls) == 3  # the valid one once; the invalid one every time


def test_a_caller_changing_its_schema_afterwards_changes_nothing():
    mine = {"type": "object", "properties": {"x": {"type": "string"}}, "title": "mutated"}
    v = schema_validator(mine)
    mine["properties"]["x"]["type"] = "integer"
    assert not v.is_valid({"x": 1}) and v.is_valid({"x": "a"})
    assert schema_validator(mine).is_valid({"x": 1})


def test_check_schema_raises_as_jsonschema_and_remembers_only_successes():
    bad = {"type": "no-such-type"}
    for _ in range(2):
        with pytest.raises(SchemaError):
            check_schema(bad)
    check_schema(SCHEMA)
    assert schemas._key(SCHEMA) in schemas._CHECKED
    assert schemas._key(bad) not in schemas._CHECKED
