"""EnvSpec: YAML round trip, validation errors, and the exported JSON Schema."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml

from envfactory.errors import SpecError
from envfactory.spec import (
    dump_spec,
    load_spec,
    parse_spec,
    save_spec,
    spec_digest,
    spec_json_schema,
    tool_input_schema,
)

from ..conftest import TRIP_DESK


def test_save_load_round_trip(tmp_path):
    spec = load_spec(TRIP_DESK)
    path = save_spec(spec, tmp_path / "copy")
    again = load_spec(path)
    assert again == spec
    assert spec_digest(again) == spec_digest(spec)
    assert dump_spec(again) == dump_spec(spec)


def test_json_schema_validates_travel_spec_and_rejects_broken():
    schema = spec_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = yaml.safe_load((TRIP_DESK / "env.yaml").read_text())
    jsonschema.validate(data, schema)
    broken = copy.deepcopy(data)
    broken["tools"][0]["kind"] = "teleport"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    missing = copy.deepcopy(data)
    del missing["entities"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, schema)


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (lambda d: d["entities"][0].update(primary_key="nope"), "primary key 'nope' is not a field"),
        (lambda d: d["entities"][3]["fields"][1].update(ref="ghost"), "unknown entity 'ghost'"),
        (lambda d: d["tools"][0].update(entity="ghost"), "unknown entity 'ghost'"),
        (lambda d: d["tools"][0]["params"][0].update(key=False), "exactly one key parameter"),
        (lambda d: d["tools"][0].update(name="Get Airport"), "snake_case"),
        (lambda d: d["tools"][1]["params"][0].update(field="altitude"), "unknown field airport.altitude"),
        (lambda d: d["tools"].append(copy.deepcopy(d["tools"][0])), "duplicate tool names"),
        (lambda d: d.update(clock="next tuesday"), "clock 'next tuesday' is not an ISO date-time"),
        (
            lambda d: next(t for t in d["tools"] if t.get("sort"))["sort"].update(default="altitude"),
            "sorts by unknown field 'altitude'",
        ),
    ],
)
def test_inconsistent_specs_are_refused_with_a_clear_message(mutate, needle):
    data = yaml.safe_load((TRIP_DESK / "env.yaml").read_text())
    mutate(data)
    with pytest.raises(SpecError) as info:
        parse_spec(data, source="t.yaml")
    assert needle in str(info.value)
    assert str(info.value).startswith("t.yaml")


def test_malformed_yaml_names_the_file(tmp_path):
    p = tmp_path / "env.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="malformed YAML") as info:
        load_spec(p)
    assert str(p) in str(info.value)


def test_tool_input_schema_is_json_schema_with_paging_for_lists():
    spec = load_spec(TRIP_DESK)
    s = tool_input_schema(spec.tool("search_flights"))
    jsonschema.Draft202012Validator.check_schema(s)
    assert {"limit", "offset", "sort_by", "origin"} <= set(s["properties"])
    assert s["properties"]["status"]["type"] == "array"
    g = tool_input_schema(spec.tool("get_flight"))
    assert g["required"] == ["flight_id"] and g["additionalProperties"] is False


def test_effect_setting_null_and_now_survive_dump_and_reload(tmp_path):
    from envfactory.spec import EnvSpec

    spec = load_spec(TRIP_DESK)
    data = spec.model_dump(mode="json")
    data["tools"][spec.tools.index(spec.tool("cancel_booking"))]["effects"].append(
        {"field": "seat", "set": None}
    )
    spec2 = EnvSpec.model_validate(data)
    assert (
        EnvSpec.model_validate(spec2.model_dump(mode="json")) == spec2
    )  # full dump round trip (now + set: null)
    path = save_spec(spec2, tmp_path / "e")
    again = load_spec(path)
    assert again == spec2
    assert again.tool("cancel_booking").effects[-1].uses_set
