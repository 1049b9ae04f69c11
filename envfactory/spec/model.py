"""EnvSpec: the declarative description of one environment.

An environment is data, never code. A trusted runtime interprets this model over
SQLite, so a spec written from an untrusted document (or by an LLM) cannot run code.

Vocabulary:
- ``EntitySpec``: a table. Typed ``FieldSpec``s, one primary key, unique fields,
  foreign keys (``FieldSpec.ref`` names the referenced entity).
- ``ToolSpec``: one tool an agent can call. ``kind`` says what it does:
  ``get`` (one row by key), ``list`` (filters, sorting, paging), ``create``,
  ``update``, ``delete``, ``action`` (a state change guarded by ``Condition``s,
  applying ``Effect``s, e.g. cancel a booking only while it is confirmed).
- ``SeedSpec``: how many rows of each entity and how to make realistic values.

Field paths: a ``Condition`` or ``Effect`` names a field of the tool's entity
(``status``), or a field of a row it references through a foreign key
(``flight_id.seats_available``).
"""

from __future__ import annotations

import datetime as dt
import re
from enum import Enum
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import limits as _limits
from .roles import ConstraintSpec, FieldRole, infer_constraints, infer_role

__all__ = [
    "SPEC_VERSION",
    "DEFAULT_CLOCK",
    "FieldType",
    "FieldSpec",
    "EntitySpec",
    "ToolKind",
    "ParamSpec",
    "FilterOp",
    "Condition",
    "Effect",
    "SortSpec",
    "ToolSpec",
    "GeneratorSpec",
    "ConstraintSpec",
    "FieldRole",
    "EntitySeed",
    "SeedSpec",
    "EnvSpec",
]

SPEC_VERSION = 1
DEFAULT_CLOCK = "2026-06-01T09:00:00"
"""The fixed 'now' of an environment that does not set its own ``clock`` (local time, no offset)."""

_IDENT = re.compile(r"[a-z][a-z0-9_]*")  # always fullmatch: '$' would accept a trailing newline


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldType(str, Enum):
    string = "string"
    integer = "integer"
    number = "number"
    boolean = "boolean"
    date = "date"
    datetime = "datetime"
    enum = "enum"
    object = "object"
    array = "array"


class FieldSpec(_Strict):
    """One column of an entity."""

    name: str
    type: FieldType
    description: str = ""
    enum: list[str] | None = None
    nullable: bool = False
    default: Any = None
    unique: bool = False
    ref: str | None = Field(
        default=None, description="Entity this field references (foreign key to its primary key)."
    )
    id_prefix: str | None = Field(
        default=None, description="For a string primary key: new ids are PREFIX + zero-padded number."
    )
    role: FieldRole | None = Field(
        default=None,
        description="What the field means (envfactory.spec.roles); "
        "inferred from its name and type when unset.",
    )
    examples: list[Any] | None = Field(
        default=None, description="Values the documentation gives; seed values are drawn from them."
    )
    pattern: str | None = Field(
        default=None, description="Shape of a code: '#' a digit, '?' a letter (e.g. '??-####')."
    )
    minimum: float | None = Field(default=None, description="Least believable value of a number.")
    maximum: float | None = Field(default=None, description="Largest believable value of a number.")
    unit: str | None = Field(
        default=None, description="Currency (money) or unit (quantity, duration) of a number."
    )

    @model_validator(mode="after")
    def _check(self) -> FieldSpec:
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"field name {self.name!r} must be snake_case")
        _limits.check_names("field", self.name)
        _limits.check_value_size(self.default, f"field {self.name!r} default")
        if self.id_prefix is not None and len(self.id_prefix) > _limits.MAX_PREFIX_CHARS:
            raise ValueError(
                f"field {self.name!r}: id_prefix is longer than {_limits.MAX_PREFIX_CHARS} characters"
            )
        if self.type == FieldType.enum and not self.enum:
            raise ValueError(f"field {self.name!r}: an enum field needs 'enum' values")
        if self.enum is not None and self.type not in (FieldType.enum, FieldType.string):
            raise ValueError(f"field {self.name!r}: 'enum' only applies to enum fields")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ValueError(f"field {self.name!r}: minimum {self.minimum} > maximum {self.maximum}")
        return self


class EntitySpec(_Strict):
    """One table."""

    name: str
    description: str = ""
    primary_key: str
    fields: list[FieldSpec]
    display_field: str | None = Field(default=None, description="Human-readable name of a row (e.g. 'name').")
    constraints: list[ConstraintSpec] | None = Field(
        default=None,
        description="Cross-field rules the rows keep (envfactory.spec.roles); inferred when unset.",
    )

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def has_field(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    @property
    def pk(self) -> FieldSpec:
        return self.field(self.primary_key)

    def role_of(self, f: FieldSpec) -> FieldRole | None:
        """The field's role: as stated, else inferred from its name and type."""
        if f.role is not None:
            return f.role
        return infer_role(
            self.name,
            f.name,
            f.type.value,
            enum=f.enum,
            description=f.description,
            example=(f.examples or [None])[0],
            primary_key=f.name == self.primary_key,
            ref=f.ref is not None,
            siblings=[g.name for g in self.fields],
        )

    def inferred_constraints(self) -> list[ConstraintSpec]:
        facts = [
            (
                f.name,
                f.type.value,
                self.role_of(f),
                f.enum or (f.examples if self.role_of(f) == FieldRole.status else None),
            )
            for f in self.fields
        ]
        return infer_constraints(self.name, facts)

    def effective_constraints(self) -> list[ConstraintSpec]:
        """The stated constraints, or the inferred ones when none are stated."""
        return list(self.constraints) if self.constraints is not None else self.inferred_constraints()

    @model_validator(mode="after")
    def _check(self) -> EntitySpec:
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"entity name {self.name!r} must be snake_case")
        _limits.check_names("entity", self.name)
        _limits.check_entity_limits(self)
        names = [f.name for f in self.fields]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"entity {self.name!r}: duplicate fields {sorted(dup)}")
        if self.primary_key not in names:
            raise ValueError(f"entity {self.name!r}: primary key {self.primary_key!r} is not a field")
        if self.display_field and self.display_field not in names:
            raise ValueError(f"entity {self.name!r}: display_field {self.display_field!r} is not a field")
        for c in self.constraints or []:
            for n in c.fields:
                if n not in names:
                    raise ValueError(f"entity {self.name!r}: {c.kind} constraint names unknown field {n!r}")
        return self


class ToolKind(str, Enum):
    get = "get"
    list = "list"
    create = "create"
    update = "update"
    delete = "delete"
    action = "action"


FilterOp = Literal["eq", "ne", "gt", "gte", "lt", "lte", "contains", "in"]


class ParamSpec(_Strict):
    """One argument of a tool.

    ``field`` maps it to a column of the tool's entity. For ``list`` tools ``op`` says how
    it filters (``eq``, ranges, ``contains`` substring, ``in`` membership). For
    ``create``/``update`` the value is written to ``field``. For ``get``/``update``/
    ``delete``/``action`` the parameter with ``key: true`` selects the row.
    """

    name: str
    type: FieldType
    description: str = ""
    required: bool = False
    field: str | None = None
    op: FilterOp = "eq"
    key: bool = False
    enum: list[str] | None = None
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None

    @model_validator(mode="after")
    def _check(self) -> ParamSpec:
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"parameter name {self.name!r} must be snake_case")
        _limits.check_names("parameter", self.name)
        _limits.check_value_size(self.default, f"parameter {self.name!r} default")
        for bound in ("minimum", "maximum"):
            _limits._finite_bound(getattr(self, bound), f"parameter {self.name!r} {bound}")
        if self.type == FieldType.enum and not self.enum:
            raise ValueError(f"parameter {self.name!r}: an enum parameter needs 'enum' values")
        return self


class Condition(_Strict):
    """A precondition on the selected row (or a row it references)."""

    field: str
    op: Literal["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "is_null", "not_null"]
    value: Any = None
    value_param: str | None = Field(
        default=None, description="Compare against this argument instead of a literal."
    )
    message: str | None = Field(default=None, description="What the agent is told when the condition fails.")


class Effect(_Strict):
    """A write an action (or create) applies. Exactly one of the value sources is set."""

    field: str
    set: Any = None
    param: str | None = Field(default=None, description="Write this argument's value.")
    now: bool = Field(default=False, description="Write the environment clock (date or datetime).")
    copy_from: str | None = Field(
        default=None, description="Write the value of another field path, e.g. 'flight_id.price'."
    )
    increment: float | None = Field(default=None, description="Add this number (negative to decrement).")
    increment_param: str | None = Field(default=None, description="Add this argument's value.")
    increment_from: str | None = Field(
        default=None, description="Add the value of a field path of the row, e.g. 'passengers'."
    )
    scale_param: str | None = Field(default=None, description="Multiply the copied value by this argument.")
    negate_param: bool = Field(
        default=False, description="Subtract the increment (param or field) instead of adding it."
    )

    def _other_sources(self) -> int:
        return sum(
            [
                self.param is not None,
                self.now,
                self.copy_from is not None,
                self.increment is not None,
                self.increment_param is not None,
                self.increment_from is not None,
            ]
        )

    @cached_property
    def uses_set(self) -> bool:
        """True when the effect writes the literal ``set`` (which may be null)."""
        return self._other_sources() == 0

    @model_validator(mode="after")
    def _one_source(self) -> Effect:
        n = self._other_sources()
        explicit_set = "set" in self.model_fields_set and self.set is not None
        if n > 1 or (n == 1 and explicit_set) or (n == 0 and "set" not in self.model_fields_set):
            raise ValueError(
                f"effect on {self.field!r} needs exactly one of set/param/now/copy_from/increment/increment_param/increment_from"
            )
        return self


class SortSpec(_Strict):
    fields: list[str] = Field(default_factory=list, description="Fields the caller may sort by.")
    default: str | None = None
    descending: bool = False


class ToolSpec(_Strict):
    """One tool. ``description`` is read by a model: say what it does and when to use it."""

    name: str
    kind: ToolKind
    entity: str
    description: str
    params: list[ParamSpec] = Field(default_factory=list)
    returns: list[str] | None = Field(default=None, description="Fields returned per row (default: all).")
    preconditions: list[Condition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    sort: SortSpec | None = None
    page_size: int = 10
    max_page_size: int = 100
    source: str | None = Field(
        default=None, description="Where in the documentation this tool came from (e.g. 'POST /bookings')."
    )

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def key_param(self) -> ParamSpec | None:
        for p in self.params:
            if p.key:
                return p
        return None

    @property
    def writes(self) -> bool:
        return self.kind in (ToolKind.create, ToolKind.update, ToolKind.delete, ToolKind.action)

    @model_validator(mode="after")
    def _check(self) -> ToolSpec:
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r} must be snake_case verb_object")
        _limits.check_names("tool", self.name)
        if len(self.params) > _limits.MAX_PARAMS:
            raise ValueError(
                f"tool {self.name!r} has {len(self.params)} parameters; at most {_limits.MAX_PARAMS} are allowed"
            )
        names = [p.name for p in self.params]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"tool {self.name!r}: duplicate parameters {sorted(dup)}")
        if self.kind in (ToolKind.get, ToolKind.update, ToolKind.delete, ToolKind.action):
            keys = [p for p in self.params if p.key]
            if len(keys) != 1:
                raise ValueError(f"tool {self.name!r} ({self.kind.value}) needs exactly one key parameter")
            if not keys[0].required:
                raise ValueError(f"tool {self.name!r}: key parameter {keys[0].name!r} must be required")
        if self.page_size < 1 or self.max_page_size < self.page_size:
            raise ValueError(f"tool {self.name!r}: need 1 <= page_size <= max_page_size")
        return self


class GeneratorSpec(_Strict):
    """How seed values of one field are made. Deterministic for a seed.

    kinds:
    - ``faker``: a Faker provider by name (``city``, ``name``, ``email``, ``company`` ...)
    - ``choice``: one of ``values`` (optionally ``weights``)
    - ``int`` / ``float``: uniform in [``min``, ``max``] (``decimals`` for floats)
    - ``date`` / ``datetime``: uniform between ``start`` and ``end`` (ISO strings)
    - ``ref``: the key of a random row of the referenced entity
    - ``sequence``: ``prefix`` + zero-padded row number (primary keys)
    - ``pattern``: a Faker ``bothify`` pattern, e.g. ``'??-####'`` or ``'{{first_name}}'``
    - ``const``: always ``value``
    - ``null_or``: None with probability ``p_null``, else ``inner``
    - ``offset``: another field of the same row (``field``, a date/datetime or number) plus
      a random amount in [``min``, ``max``] (days for dates, hours for datetimes)
    - ``list``: [``min``, ``max``] (default 1..3) values of ``inner``
    - ``object``: an object whose ``properties`` are each made by their own generator
    """

    kind: Literal[
        "faker",
        "choice",
        "int",
        "float",
        "date",
        "datetime",
        "ref",
        "sequence",
        "pattern",
        "const",
        "null_or",
        "offset",
        "list",
        "object",
    ]
    provider: str | None = None
    values: list[Any] | None = None
    weights: list[float] | None = None
    min: float | None = None
    max: float | None = None
    decimals: int = 2
    start: str | None = None
    end: str | None = None
    prefix: str | None = None
    width: int = 5
    pattern: str | None = None
    value: Any = None
    p_null: float = 0.0
    inner: GeneratorSpec | None = None
    field: str | None = None
    unique: bool = False
    properties: dict[str, GeneratorSpec] | None = None

    @model_validator(mode="after")
    def _check(self) -> GeneratorSpec:
        _limits.check_generator(self)
        return self


class EntitySeed(_Strict):
    rows: int = Field(ge=0, le=_limits.MAX_SEED_ROWS)
    fields: dict[str, GeneratorSpec] = Field(default_factory=dict)


class SeedSpec(_Strict):
    seed: int = 0
    locale: str = "en_US"
    entities: dict[str, EntitySeed] = Field(default_factory=dict)


class EnvSpec(_Strict):
    """One environment: entities, tools and seed recipe. Saved as ``env.yaml``."""

    spec_version: int = SPEC_VERSION
    name: str
    domain: str
    description: str = ""
    clock: str = Field(default=DEFAULT_CLOCK, description="The environment's fixed 'now' (ISO datetime).")
    sources: list[str] = Field(default_factory=list, description="Documents this environment was built from.")
    entities: list[EntitySpec]
    tools: list[ToolSpec]
    seed: SeedSpec = Field(default_factory=SeedSpec)
    excluded: list[str] = Field(
        default_factory=list, description="Documented operations left out, with the reason."
    )

    def entity(self, name: str) -> EntitySpec:
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(name)

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)

    @model_validator(mode="after")
    def _check_refs(self) -> EnvSpec:
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"environment name {self.name!r} must be snake_case")
        try:
            clock = _limits.parse_when(self.clock, "clock", datetime=True)
        except ValueError as err:
            raise ValueError(f"{err} (e.g. {DEFAULT_CLOCK})") from None
        _limits.check_seed_limits(self)
        ents = {e.name: e for e in self.entities}
        if len(ents) != len(self.entities):
            raise ValueError("duplicate entity names")
        tool_names = [t.name for t in self.tools]
        dup = {n for n in tool_names if tool_names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate tool names {sorted(dup)}")
        for e in self.entities:
            for f in e.fields:
                if f.ref is not None and f.ref not in ents:
                    raise ValueError(f"{e.name}.{f.name} references unknown entity {f.ref!r}")
        for t in self.tools:
            ent = ents.get(t.entity)
            if ent is None:
                raise ValueError(f"tool {t.name!r}: unknown entity {t.entity!r}")
            pnames = {p.name for p in t.params}
            for p in t.params:
                if p.field is not None and not ent.has_field(p.field):
                    raise ValueError(
                        f"tool {t.name!r}: parameter {p.name!r} maps to unknown field {t.entity}.{p.field}"
                    )
                if p.key and p.field != ent.primary_key:
                    raise ValueError(
                        f"tool {t.name!r}: key parameter {p.name!r} must map to {t.entity}.{ent.primary_key}"
                    )
            for c in t.preconditions:
                _check_path(ents, ent, c.field, f"tool {t.name!r} precondition")
                if c.value_param and c.value_param not in pnames:
                    raise ValueError(
                        f"tool {t.name!r}: precondition uses unknown parameter {c.value_param!r}"
                    )
            _check_no_key_writes(ents, ent, t)
            for ef in t.effects:
                _check_path(ents, ent, ef.field, f"tool {t.name!r} effect")
                for src in (ef.copy_from, ef.increment_from):
                    if src:
                        _check_path(ents, ent, src, f"tool {t.name!r} effect source")
                for pn in (ef.param, ef.increment_param, ef.scale_param):
                    if pn and pn not in pnames:
                        raise ValueError(f"tool {t.name!r}: effect uses unknown parameter {pn!r}")
            if t.returns:
                for r in t.returns:
                    if not ent.has_field(r):
                        raise ValueError(f"tool {t.name!r}: returns unknown field {r!r}")
            if t.sort:
                for s in [*t.sort.fields, *([t.sort.default] if t.sort.default else [])]:
                    if not ent.has_field(s):
                        raise ValueError(f"tool {t.name!r}: sorts by unknown field {s!r}")
        for ename, es in self.seed.entities.items():
            ent = ents.get(ename)
            if ent is None:
                raise ValueError(f"seed: unknown entity {ename!r}")
            for fname, gen in es.fields.items():
                if not ent.has_field(fname):
                    raise ValueError(f"seed: unknown field {ename}.{fname}")
                _check_generator_in(ent, fname, gen, clock)
        return self


def _check_path(ents: dict[str, EntitySpec], ent: EntitySpec, path: str, where: str) -> None:
    parts = path.split(".")
    if len(parts) > 2:
        raise ValueError(f"{where}: path {path!r} may cross at most one foreign key")
    if not ent.has_field(parts[0]):
        raise ValueError(f"{where}: unknown field {ent.name}.{parts[0]}")
    if len(parts) == 2:
        fk = ent.field(parts[0])
        if fk.ref is None:
            raise ValueError(f"{where}: {ent.name}.{parts[0]} is not a foreign key")
        if not ents[fk.ref].has_field(parts[1]):
            raise ValueError(f"{where}: unknown field {fk.ref}.{parts[1]}")


def _check_no_key_writes(ents: dict[str, EntitySpec], ent: EntitySpec, t: ToolSpec) -> None:
    """Keys are never rewritten: a row's hash and diff are tracked by its key."""
    if t.kind in (ToolKind.update, ToolKind.action):
        for p in t.params:
            if p.field == ent.primary_key and not p.key:
                raise ValueError(
                    f"tool {t.name!r}: parameter {p.name!r} would change the primary key "
                    f"{ent.name}.{ent.primary_key}; keys cannot be written"
                )
    for ef in t.effects:
        parts = ef.field.split(".")
        target = ent
        if len(parts) == 2 and ent.has_field(parts[0]) and ent.field(parts[0]).ref in ents:
            target = ents[ent.field(parts[0]).ref or ""]
        if parts[-1] == target.primary_key and target.has_field(parts[-1]):
            raise ValueError(
                f"tool {t.name!r}: effect on {ef.field!r} would change the primary key "
                f"{target.name}.{target.primary_key}; keys cannot be written"
            )


def _check_generator_in(ent: EntitySpec, fname: str, gen: GeneratorSpec, clock: dt.date) -> None:
    """What a generator needs from its entity and the clock."""
    where = f"seed {ent.name}.{fname}"
    aware = isinstance(clock, dt.datetime) and clock.tzinfo is not None
    g: GeneratorSpec | None = gen
    while g is not None:
        if g.kind == "datetime":
            for key in ("start", "end"):
                text = getattr(g, key)
                if text is not None and (dt.datetime.fromisoformat(text).tzinfo is not None) != aware:
                    raise ValueError(
                        f"{where}: {key} {text!r} must {'' if aware else 'not '}carry a UTC offset, "
                        f"as the clock {'does' if aware else 'does not'}"
                    )
        if g.kind == "offset":
            base = g.field or ""
            if not ent.has_field(base):
                raise ValueError(f"{where}: offset from unknown field {ent.name}.{base}")
            btype = ent.field(base).type
            if btype not in (FieldType.date, FieldType.datetime, FieldType.integer, FieldType.number):
                raise ValueError(
                    f"{where}: offset from {ent.name}.{base}, a {btype.value} field; "
                    "offsets need a date, datetime or number field"
                )
        g = g.inner if g.kind == "null_or" else None
