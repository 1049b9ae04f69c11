import pytest

from envfactory.ingest import infer_schema
from envfactory.ingest.infer import merge_schemas


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        (True, {"type": "boolean"}),
        (3, {"type": "integer"}),
        (2.5, {"type": "number"}),
        ("hello", {"type": "string"}),
        ("2024-01-31", {"type": "string", "format": "date"}),
        ("2026-01-27T05:40:00.000Z", {"type": "string", "format": "date-time"}),
        ("2019-11-23T19:44:00+01:00", {"type": "string", "format": "date-time"}),
        ("annie@honchodesign.com", {"type": "string", "format": "email"}),
        ("https://3.basecampapi.com/1/todos/2.json", {"type": "string", "format": "uri"}),
        ("123e4567-e89b-12d3-a456-426614174000", {"type": "string", "format": "uuid"}),
        (None, {"nullable": True}),
        ([], {"type": "array", "items": {}}),
        ([1, 2], {"type": "array", "items": {"type": "integer"}}),
    ],
)
def test_infer_schema_scalars_and_formats(example, expected):
    assert infer_schema(example) == expected


def test_infer_schema_nested_object_marks_present_keys_required():
    schema = infer_schema({"id": 1, "parent": {"id": 2, "title": "x"}, "tags": [{"name": "a"}]})
    assert schema["type"] == "object"
    assert schema["required"] == ["id", "parent", "tags"]
    assert schema["properties"]["parent"]["properties"]["title"] == {"type": "string"}
    assert schema["properties"]["tags"]["items"]["required"] == ["name"]


def test_infer_schema_array_merges_elements_and_keeps_common_required():
    schema = infer_schema([{"id": 1, "due_on": None}, {"id": 2, "due_on": "2024-05-01", "extra": True}])
    items = schema["items"]
    assert items["required"] == ["id", "due_on"]
    assert items["properties"]["due_on"] == {"type": "string", "format": "date", "nullable": True}
    assert items["properties"]["extra"] == {"type": "boolean"}


def test_merge_schemas_widens_integer_to_number():
    assert merge_schemas({"type": "integer"}, {"type": "number"})["type"] == "number"
