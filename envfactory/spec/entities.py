"""Entities of an environment (tables): ``FieldSpec`` columns with their type and role, and
``EntitySpec`` with its key, display field and cross-field constraints (see ``envfactory.spec.model``)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import limits as _limits
from .roles import ConstraintSpec, FieldRole, infer_constraints, infer_role

__all__ = ["FieldType", "FieldSpec", "EntitySpec"]

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
    singleton: bool = Field(
        default=False,
        description="One object, not a collection: exactly one row (the settings, the current user), or, "
        "when the primary key references another entity, one row per row of it (a file's watermark). "
        "Its tools take no key (or only the parent's id); nothing creates or lists its rows.",
    )

    @property
    def parent(self) -> str | None:
        """The entity a per-parent singleton belongs to (its primary key references it); None otherwise."""
        return self.pk.ref if self.singleton else None

    def field(self, name: str) -> FieldSpec:
        f = self._field_index().get(name)
        if f is not None and f.name == name:
            return f
        for f in self.fields:  # not indexed (or renamed since): the list is the truth
            if f.name == name:
                return f
        raise KeyError(name)

    def has_field(self, name: str) -> bool:
        f = self._field_index().get(name)
        return (f is not None and f.name == name) or any(f.name == name for f in self.fields)

    def _field_index(self) -> dict[str, FieldSpec]:
        """Fields by name, rebuilt when ``fields`` is another list or changed length. Kept in
        ``__dict__`` beside the model's fields: pydantic's dumps and equality ignore it."""
        cached = self.__dict__.get("_fields_by_name")
        fields = self.fields
        if cached is None or cached[0] is not fields or cached[1] != len(fields):
            index: dict[str, FieldSpec] = {}
            for f in fields:
                index.setdefault(f.name, f)
            cached = (fields, len(fields), index)
            object.__setattr__(self, "_fields_by_name", cached)
        return cached[2]

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
