"""Issue 17 (13): a Faker provider that gives no single value (a generator, a container) is refused, never stored as text."""

from __future__ import annotations

import copy

import pytest

from envfactory.errors import SpecError
from envfactory.runtime.seed import build_seed_rows
from envfactory.spec import parse_spec

from .conftest import SMALL


def _spec(provider: str):
    raw = copy.deepcopy(SMALL)
    raw["seed"]["entities"]["customer"]["fields"] = {"name": {"kind": "faker", "provider": provider}}
    return parse_spec(raw)


@pytest.mark.parametrize("provider", ["time_series", "pylist", "pydict", "profile"])
def test_a_provider_that_gives_no_single_value_is_refused(provider):
    with pytest.raises(SpecError, match=f"'{provider}' is not an allowed Faker provider"):
        build_seed_rows(_spec(provider))


def test_dates_from_faker_are_stored_as_iso_text():
    cols, rows = build_seed_rows(_spec("date_object"))["customer"]
    names = [r[cols.index("name")] for r in rows]
    assert all(isinstance(v, str) and len(v) == 10 and v[4] == "-" for v in names)


def test_a_provider_that_returns_a_list_is_an_error_naming_the_field():
    with pytest.raises(SpecError, match=r"seed customer\.name: Faker provider 'words' gives a list"):
        build_seed_rows(_spec("words"))
