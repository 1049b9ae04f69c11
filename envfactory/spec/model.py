"""EnvSpec: the declarative description of one environment.

An environment is data, never code. A trusted runtime interprets this model over
SQLite, so a spec written from an untrusted document (or by an LLM) cannot run code.

Vocabulary:
- ``EntitySpec``: a table. Typed ``FieldSpec``s, one primary key, unique fields,
  foreign keys (``FieldSpec.ref`` names the referenced entity). A ``singleton`` entity is
  one object rather than a collection: one row (the settings; its tools take no key), or one
  row per row of the entity its primary key references (a file's watermark, keyed by the
  file's id).
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
from typing import Any, Literal

from pydantic import Field, model_validator

from . import limits as _limits
from .entities import _IDENT, EntitySpec, FieldSpec, FieldType, _Strict
from .roles import ConstraintSpec, FieldRole
from .tools import Condition, Effect, FilterOp, ParamSpec, SortSpec, ToolKind, ToolSpec

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
    spare: int = Field(
        default=0,
        ge=0,
        description=(
            "How many of this entity's rows (the last ones) no seeded row references: a customer "
            "with no orders yet, which a delete can remove while its siblings are in use."
        ),
    )


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
            _check_key_count(ent, t)
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
                for pn in (ef.param, ef.increment_param, ef.scale_param, ef.append_param, ef.remove_param):
                    if pn and pn not in pnames:
                        raise ValueError(f"tool {t.name!r}: effect uses unknown parameter {pn!r}")
                if (ef.append_param or ef.remove_param) and (
                    "." in ef.field or ent.field(ef.field).type != FieldType.array
                ):
                    raise ValueError(
                        f"tool {t.name!r}: append/remove effect on {ef.field!r}: only an array field of "
                        f"{t.entity} can take elements"
                    )
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


def _check_key_count(ent: EntitySpec, t: ToolSpec) -> None:
    """A tool that reads or changes one row selects it by one key; a global singleton has only
    one row, so its tools take none. Nothing creates, lists or deletes the rows of a singleton
    (they are the object itself); an action whose effects clear its fields resets it."""
    if ent.singleton and t.kind in (ToolKind.create, ToolKind.list, ToolKind.delete):
        raise ValueError(
            f"tool {t.name!r}: {ent.name} is a singleton (one object, not a collection); a "
            f"{t.kind.value} tool cannot address it (reset it with an action that clears its fields)"
        )
    if t.upsert and ent.singleton:
        raise ValueError(
            f"tool {t.name!r}: {ent.name} is a singleton; an upsert creates rows of a collection"
        )
    if t.kind not in (ToolKind.get, ToolKind.update, ToolKind.delete, ToolKind.action):
        return
    keys = sum(1 for p in t.params if p.key)
    if ent.singleton and ent.pk.ref is None:
        if keys:
            raise ValueError(
                f"tool {t.name!r}: {ent.name} is a singleton with one row; its tools take no key parameter"
            )
    elif keys != 1:
        raise ValueError(f"tool {t.name!r} ({t.kind.value}) needs exactly one key parameter")


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
