"""The contract between stages (plain pydantic): the environment specification, its seed
defaults and foreign-key order, and the data shapes of tasks (``Task``, ``RewardSpec``)."""

from .conditions import compare
from .io import (
    dump_spec,
    find_specs,
    load_spec,
    load_yaml_bounded,
    parse_spec,
    save_spec,
    spec_digest,
    spec_json_schema,
)
from .limits import MAX_IN_ITEMS, SPEC_LIMITS
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
from .relations import entity_order
from .seed_defaults import default_generator, default_id_prefix
from .task import Difficulty, GoldStep, Persona, RewardSpec, SubGoal, Task, load_tasks, write_tasks
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
    "load_yaml_bounded",
    "SPEC_LIMITS",
    "MAX_IN_ITEMS",
    "field_json_schema",
    "param_json_schema",
    "tool_input_schema",
    "tool_output_schema",
    "default_generator",
    "default_id_prefix",
    "entity_order",
    "Difficulty",
    "GoldStep",
    "Persona",
    "RewardSpec",
    "SubGoal",
    "Task",
    "load_tasks",
    "write_tasks",
]
