"""Tools of an environment: ``ToolSpec`` with its ``ParamSpec`` arguments, the ``Condition``s an
action checks and the ``Effect``s it applies (see ``envfactory.spec.model``)."""

from __future__ import annotations

from enum import Enum
from functools import cached_property
from typing import Any, Literal

from pydantic import Field, model_validator

from . import limits as _limits
from .entities import _IDENT, FieldType, _Strict

__all__ = ["ToolKind", "FilterOp", "ParamSpec", "Condition", "Effect", "SortSpec", "ToolSpec"]


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
    ``delete``/``action`` the parameter with ``key: true`` selects the row. ``required`` is the
    document's flag: a key the document marks optional (a body or query id) stays optional, and a
    call without it is refused at run time ("no visitor selected"); an upsert's optional key
    creates a row instead (``ToolSpec.needs`` says what a call that acts must pass).
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
    append_param: str | None = Field(
        default=None,
        description="Add this argument's value (each, for a list) to the array field, once: a follower, a tag.",
    )
    remove_param: str | None = Field(
        default=None, description="Take this argument's value (each, for a list) out of the array field."
    )
    match_key: str | None = Field(
        default=None,
        description=(
            "For append/remove on an array of objects: the key that names an element ('gid'); an "
            "appended value becomes {match_key: value}."
        ),
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
                self.append_param is not None,
                self.remove_param is not None,
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
                f"effect on {self.field!r} needs exactly one of set/param/now/copy_from/increment/"
                "increment_param/increment_from/append_param/remove_param"
            )
        if self.match_key is not None and self.append_param is None and self.remove_param is None:
            raise ValueError(f"effect on {self.field!r}: match_key goes with append_param or remove_param")
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
    upsert: bool = Field(
        default=False,
        description=(
            "An update that creates the row when the call names none: without its key, or with a key "
            "no stored row has (the new row takes that key). Its key may be optional."
        ),
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
    def selects_row(self) -> bool:
        """Whether the key parameter must name a stored row for a call to act: get, update,
        delete and action tools with a key (not a create's chosen key, nor an upsert's)."""
        return (
            self.key_param is not None
            and self.kind not in (ToolKind.create, ToolKind.list)
            and not self.upsert
        )

    def needs(self, p: ParamSpec) -> bool:
        """Whether a call that acts must pass ``p``: a required parameter, or the key of a tool that
        selects a row (the document may mark it optional; without it the runtime refuses the call)."""
        return p.required or (p.key and self.selects_row)

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
        keys = [p for p in self.params if p.key]
        if len(keys) > 1:
            raise ValueError(f"tool {self.name!r} has {len(keys)} key parameters; at most one is allowed")
        if self.upsert and (self.kind != ToolKind.update or not keys):
            raise ValueError(f"tool {self.name!r}: only an update with a key parameter can be an upsert")
        if self.page_size < 1 or self.max_page_size < self.page_size:
            raise ValueError(f"tool {self.name!r}: need 1 <= page_size <= max_page_size")
        return self
