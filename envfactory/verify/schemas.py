"""JSON Schema validators for verification, built once per schema and reused.

Verification checks every tool's arguments and results against the tool's schemas, level
after level and round after round of repair; building a ``Draft202012Validator`` (and
checking the schema itself against the meta-schema) per check made the cost grow with the
number of checks times the size of the schemas. Here a validator is made once per schema
(keyed by its JSON text, key order kept, as the order of the errors depends on it), a schema
that passed the meta-schema is not checked again, and an instance already found valid is not
walked again. Verdicts and error messages are jsonschema's own: the same checks, the same
bytes in ``verification.json``.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

__all__ = ["SchemaValidator", "check_schema", "schema_validator"]

_MAX_VALIDATORS = 1024
_MAX_VALID_INSTANCES = 4096  # instances found valid, over all validators (a key is the instance's repr)
_VALIDATORS: OrderedDict[str, SchemaValidator] = OrderedDict()
_VALID: OrderedDict[tuple[int, str], None] = OrderedDict()
_CHECKED: OrderedDict[str, None] = OrderedDict()


def _key(schema: Any) -> str:
    return json.dumps(schema, separators=(",", ":"), default=repr)


def _instance_key(instance: Any) -> str | None:
    # repr tells list from tuple, 1 from 1.0 from True, which JSON text would not (and the
    # type checker does); an instance with anything else in it is not remembered
    try:
        return repr(instance) if _plain(instance) else None
    except RecursionError:
        return None


def _plain(v: Any, depth: int = 0) -> bool:
    if v is None or type(v) in (str, int, float, bool):
        return True
    if depth > 64:
        return False
    if type(v) is list:
        return all(_plain(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _plain(x, depth + 1) for k, x in v.items())
    return False


class SchemaValidator:
    """One schema's validator: ``iter_errors`` and ``is_valid`` as jsonschema's, valid instances remembered."""

    _serial = itertools.count()

    def __init__(self, schema: Any):
        self.schema = copy.deepcopy(schema)  # a caller changing its dict later changes nothing here
        self._validator = Draft202012Validator(self.schema)
        self._id = next(SchemaValidator._serial)  # never reused, unlike id(), once evicted

    def _known_valid(self, key: str | None) -> bool:
        if key is None or (self._id, key) not in _VALID:
            return False
        _VALID.move_to_end((self._id, key))
        return True

    def _remember_valid(self, key: str | None) -> None:
        if key is not None:
            _VALID[(self._id, key)] = None
            while len(_VALID) > _MAX_VALID_INSTANCES:
                _VALID.popitem(last=False)

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        key = _instance_key(instance)
        if self._known_valid(key):
            return iter(())
        errors = self._validator.iter_errors(instance)
        first = next(errors, None)
        if first is None:
            self._remember_valid(key)
            return iter(())
        return _chain(first, errors)

    def is_valid(self, instance: Any) -> bool:
        return next(self.iter_errors(instance), None) is None


def _chain(first: ValidationError, rest: Iterator[ValidationError]) -> Iterator[ValidationError]:
    yield first
    yield from rest


def schema_validator(schema: Any) -> SchemaValidator:
    """The validator of ``schema``, made on first use (an LRU of the last 1,024 schemas)."""
    key = _key(schema)
    v = _VALIDATORS.get(key)
    if v is None:
        v = _VALIDATORS[key] = SchemaValidator(schema)
        while len(_VALIDATORS) > _MAX_VALIDATORS:
            _VALIDATORS.popitem(last=False)
    else:
        _VALIDATORS.move_to_end(key)
    return v


def check_schema(schema: Any) -> None:
    """``Draft202012Validator.check_schema`` (raises ``SchemaError``), once per distinct schema that passes."""
    key = _key(schema)
    if key in _CHECKED:
        _CHECKED.move_to_end(key)
        return
    Draft202012Validator.check_schema(schema)
    _CHECKED[key] = None
    while len(_CHECKED) > _MAX_VALIDATORS:
        _CHECKED.popitem(last=False)
