"""Issue 17 #9, #10: small specs that used to end in a traceback (or an hour of seeding) are a
one-line SpecError naming the field; sizes are bounded by the documented SPEC_LIMITS."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envfactory.errors import SpecError
from envfactory.runtime import build_template
from envfactory.spec import SPEC_LIMITS, parse_spec

from ..runtime.conftest import SMALL


def _spec(**patch) -> dict:
    d = copy.deepcopy(SMALL)
    for path, value in patch.items():
        *head, last = path.split("__")
        node = d
        for k in head:
            node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
        node[int(last) if isinstance(node, list) else last] = value
    return d


def _gen(field: str, gen: dict, entity: str = "product") -> dict:
    d = copy.deepcopy(SMALL)
    d["seed"]["entities"][entity].setdefault("fields", {})[field] = gen
    return d


def _refused(d: dict, needle: str) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(d, source="env.yaml")
    msg = str(info.value)
    assert "\n" not in msg and needle in msg, msg
    return msg


def _entity(name: str, fields: list[dict], pk: str | None = None) -> dict:
    return {"name": name, "primary_key": pk or fields[0]["name"], "fields": fields}


@pytest.mark.parametrize("name", ["sqlite_master", "sqlite_sequence", "sqlite_stat1"])
def test_sqlite_reserved_table_names_are_refused(name):
    d = copy.deepcopy(SMALL)
    d["entities"].append(_entity(name, [{"name": "id", "type": "integer"}]))
    _refused(d, "reserved by SQLite")


def test_index_names_that_would_collide_are_refused():
    d = copy.deepcopy(SMALL)
    d["entities"] += [
        _entity(
            "a_b", [{"name": "id", "type": "integer"}, {"name": "c", "type": "string", "ref": "customer"}]
        ),
        _entity(
            "a", [{"name": "id", "type": "integer"}, {"name": "b_c", "type": "string", "ref": "customer"}]
        ),
    ]
    _refused(d, "'ix_a_b_c' clashes")


def test_an_entity_named_like_an_index_is_refused():
    d = copy.deepcopy(SMALL)
    d["entities"].append(_entity("ix_order_customer_id", [{"name": "id", "type": "integer"}]))
    _refused(d, "clashes with entity 'ix_order_customer_id'")


def test_thousands_of_fields_are_refused():
    d = copy.deepcopy(SMALL)
    d["entities"].append(_entity("wide", [{"name": f"f{i}", "type": "integer"} for i in range(2001)]))
    _refused(d, f"at most {SPEC_LIMITS['MAX_FIELDS']}")


@pytest.mark.parametrize(
    "gen, needle",
    [
        ({"kind": "choice", "values": ["a", "b"], "weights": [1, 2, 3]}, "one weight per value"),
        ({"kind": "choice", "values": ["a", "b"], "weights": [0, 0]}, "must not all be 0"),
        ({"kind": "choice", "values": ["a", "b"], "weights": [1, float("nan")]}, "finite"),
        ({"kind": "float", "min": float("-inf"), "max": 10}, "finite"),
        ({"kind": "int", "min": 0, "max": float("inf")}, "finite"),
        ({"kind": "int", "min": 10, "max": 1}, "greater than max"),
        ({"kind": "int", "min": 0, "max": 1e300}, "between"),
        ({"kind": "sequence", "width": 1_000_000_000}, "width"),
        ({"kind": "pattern", "pattern": "#" * 10_000_000}, "pattern is longer"),
        ({"kind": "const", "value": "x" * 100_000}, "longer than"),
        ({"kind": "float", "decimals": 10**9}, "decimals"),
        ({"kind": "null_or", "p_null": 2.0}, "p_null"),
    ],
)
def test_generator_sizes_and_shapes_are_one_line_errors(gen, needle):
    msg = _refused(_gen("title", gen), needle)
    assert "seed.entities.product.fields.title" in msg


@pytest.mark.parametrize("start", ["2026-13-45", "yesterday", "0001-01-01", "9999-12-31"])
def test_invalid_or_unrepresentable_start_dates_are_refused(start):
    d = copy.deepcopy(SMALL)
    d["seed"]["entities"]["order"]["fields"]["placed_on"] = {"kind": "date", "start": start}
    _refused(d, "start")


def test_a_datetime_with_an_offset_under_a_local_clock_is_refused():
    d = copy.deepcopy(SMALL)
    d["entities"][0]["fields"].append({"name": "joined_at", "type": "datetime"})
    d["seed"]["entities"]["customer"]["fields"] = {
        "joined_at": {"kind": "datetime", "start": "2026-01-01T00:00:00+00:00"}
    }
    _refused(d, "must not carry a UTC offset")


def test_an_offset_that_would_overflow_a_date_is_refused():
    d = copy.deepcopy(SMALL)
    d["seed"]["entities"]["order"]["fields"]["placed_on"] = {
        "kind": "date",
        "start": "2026-01-01",
        "end": "2026-02-01",
    }
    d["entities"][2]["fields"].append({"name": "ships_on", "type": "date"})
    d["seed"]["entities"]["order"]["fields"]["ships_on"] = {
        "kind": "offset",
        "field": "placed_on",
        "max": 1e9,
    }
    _refused(d, "offset max")


def test_an_offset_from_a_text_field_is_refused():
    d = copy.deepcopy(SMALL)
    d["entities"][2]["fields"].append({"name": "ships_on", "type": "date"})
    d["seed"]["entities"]["order"]["fields"]["ships_on"] = {"kind": "offset", "field": "status", "max": 3}
    _refused(d, "offsets need a date, datetime or number field")


def test_a_billion_seed_rows_are_refused():
    d = copy.deepcopy(SMALL)
    d["seed"]["entities"]["product"]["rows"] = 1e9
    _refused(d, "seed.entities.product.rows")


def test_a_clock_outside_the_year_range_is_refused():
    _refused(_spec(clock="0001-01-01T00:00:00"), "clock")


@pytest.mark.parametrize("where", ["tool", "entity", "field", "param"])
def test_names_with_a_trailing_newline_are_refused(where):
    d = copy.deepcopy(SMALL)
    if where == "tool":
        d["tools"][0]["name"] = "get_customer\n"
    elif where == "entity":
        d["entities"][0]["name"] = "customer\n"
    elif where == "field":
        d["entities"][0]["fields"][1]["name"] = "name\n"
    else:
        d["tools"][0]["params"][0]["name"] = "customer_id\n"
    _refused(d, "snake_case")


def test_infinite_parameter_bounds_are_refused():
    d = copy.deepcopy(SMALL)
    d["tools"][1]["params"][1]["maximum"] = float("inf")
    _refused(d, "finite")


def test_a_faker_provider_that_needs_arguments_is_a_spec_error():
    spec = parse_spec(_gen("title", {"kind": "faker", "provider": "enum"}))
    with pytest.raises(SpecError, match="needs arguments"):
        build_template(spec)
    spec = parse_spec(_gen("title", {"kind": "pattern", "pattern": "{{enum}}-##"}))
    with pytest.raises(SpecError, match="needs arguments"):
        build_template(spec)


def test_text_ids_for_an_integer_key_are_a_spec_error():
    d = copy.deepcopy(SMALL)
    d["entities"].append(_entity("tag", [{"name": "tag_id", "type": "integer"}]))
    d["seed"]["entities"]["tag"] = {"rows": 3, "fields": {"tag_id": {"kind": "pattern", "pattern": "??"}}}
    with pytest.raises(SpecError, match="seed"):
        build_template(parse_spec(d))


# ---- #10: keys are never written ----------------------------------------------------------


def test_a_tool_that_renames_a_primary_key_is_refused():
    d = copy.deepcopy(SMALL)
    d["tools"][3]["params"].append({"name": "new_id", "type": "string", "field": "customer_id"})
    _refused(d, "would change the primary key customer.customer_id")


def test_an_effect_on_a_primary_key_is_refused():
    d = copy.deepcopy(SMALL)
    d["tools"][6]["effects"].append({"field": "order_id", "set": "OR99999"})
    _refused(d, "effect on 'order_id' would change the primary key")
    d = copy.deepcopy(SMALL)
    d["tools"][6]["effects"].append({"field": "product_id.product_id", "set": "PR99999"})
    _refused(d, "primary key product.product_id")


# ---- bounded time: deduplicating unique values -----------------------------------------------


def test_unique_values_from_a_constant_deduplicate_in_linear_time():
    # 50,000 rows of one constant: quadratic deduplication is ~1.25e9 probes (many minutes);
    # linear is well under a second. The subprocess bound only stops a regression from hanging.
    code = textwrap.dedent("""
        import copy, sys
        sys.path.insert(0, ".")
        from tests.runtime.conftest import SMALL
        from envfactory.spec import parse_spec
        from envfactory.runtime import build_seed_rows
        d = copy.deepcopy(SMALL)
        d["seed"]["entities"]["product"] = {"rows": 50000, "fields": {"title": {"kind": "const", "value": "same", "unique": True}}}
        d["seed"]["entities"]["order"]["rows"] = 0
        cols, rows = build_seed_rows(parse_spec(d))["product"]
        titles = [r[cols.index("title")] for r in rows]
        print(len(set(titles)), titles[0], titles[-1])
    """)
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["50000", "same", "same-50000"]
