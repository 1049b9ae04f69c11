"""The environment specification: the contract between stages (plain pydantic)."""

from .conditions import compare
from .io import dump_spec, find_specs, load_spec, parse_spec, save_spec, spec_digest, spec_json_schema
from .model import (
    DEFAULT_CLOCK,
    SPEC_VERSION,
    Condition,
    Effect,
    EntitySeed,
    EntitySpec,
    EnvSpec,
    FieldSpec,
    FieldType,
    GeneratorSpec,
    ParamSpec,
    SeedSpec,
    SortSpec,
    ToolKind,
    ToolSpec,
)
from .schema import DATE_PATTERN, DATETIME_PATTERN, field_json_schema, param_json_schema, tool_input_schema, tool_output_schema

__all__ = [
    "DATE_PATTERN",
    "DATETIME_PATTERN",
    "compare",
    "SPEC_VERSION",
    "DEFAULT_CLOCK",
    "Condition",
    "Effect",
    "EntitySeed",
    "EntitySpec",
    "EnvSpec",
    "FieldSpec",
    "FieldType",
    "GeneratorSpec",
    "ParamSpec",
    "SeedSpec",
    "SortSpec",
    "ToolKind",
    "ToolSpec",
    "dump_spec",
    "find_specs",
    "load_spec",
    "parse_spec",
    "save_spec",
    "spec_digest",
    "spec_json_schema",
    "field_json_schema",
    "param_json_schema",
    "tool_input_schema",
    "tool_output_schema",
]
