"""Environments: the trusted interpreter of an EnvSpec, compiled once, and the state it owns.

``Environment`` compiles a spec (validators, SQL, converters) and holds the template database
as bytes; sessions (``envfactory.runtime.session``) are isolated copies of it.

State hash: per table, the sum (mod 2**128) of a 128-bit digest of every row, so equal
states give equal hashes whatever the order of writes; after a write only the touched rows
are rehashed. The digests and sums are the runtime's own: other packages get hashes and
snapshots through ``Environment``'s and ``Session``'s public calls.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConstraintError, NotFoundError, SpecError, StateError
from ..spec import EntitySpec, EnvSpec, FieldType, ToolKind, ToolSpec, default_id_prefix, load_spec
from .state import harden, open_state
from .template import SEQ_TABLE, load_or_build_template
from .validate import ArgValidator, to_db

if TYPE_CHECKING:
    from .session import Session

__all__ = ["Environment", "Snapshot", "StateDiff", "load_environment"]

_MOD = 1 << 128


def _row_digest(row: tuple) -> int:
    return int.from_bytes(hashlib.blake2b(repr(row).encode(), digest_size=16).digest(), "big")


def _q(name: str) -> str:
    # Backticks, never double quotes: SQLite reads "x" as the string 'x' when no column x
    # exists (and Python 3.11 cannot switch that off), so a missing column would read back
    # as its own name. `x` is always an identifier.
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Snapshot:
    """A saved state: the database bytes and its per-table hash sums."""

    data: bytes
    sums: dict[str, int]
    seq: dict[str, int] | None = None


@dataclass
class StateDiff:
    """What changed since a session started, per table."""

    added: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    removed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    changed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "removed": self.removed, "changed": self.changed}


class _Entity:
    """Compiled per-entity facts: columns, converters, SQL."""

    def __init__(self, ent: EntitySpec):
        self.spec = ent
        self.name = ent.name
        self.cols = [f.name for f in ent.fields]
        self.idx = {c: i for i, c in enumerate(self.cols)}
        self.pk = ent.primary_key
        self.pk_type = ent.pk.type
        self.types = {f.name: f.type for f in ent.fields}
        self.refs = {f.name: f.ref for f in ent.fields if f.ref}
        self.nullable = {f.name for f in ent.fields if f.nullable}
        self.defaults = {f.name: f.default for f in ent.fields if f.default is not None}
        self.id_prefix = ent.pk.id_prefix
        collist = ", ".join(_q(c) for c in self.cols)
        self.sql_get = f"SELECT {collist} FROM {_q(ent.name)} WHERE {_q(self.pk)} = ?"
        self.sql_exists = f"SELECT 1 FROM {_q(ent.name)} WHERE {_q(self.pk)} = ?"
        self.sql_one = f"SELECT {collist} FROM {_q(ent.name)} ORDER BY {_q(self.pk)} LIMIT 1"
        self.sql_all = f"SELECT {collist} FROM {_q(ent.name)}"
        self.sql_delete = f"DELETE FROM {_q(ent.name)} WHERE {_q(self.pk)} = ?"
        self.collist = collist
        self.conv = [
            (i, f.type)
            for i, f in enumerate(ent.fields)
            if f.type in (FieldType.boolean, FieldType.object, FieldType.array)
        ]
        self.to_db_conv = [
            (i, f.name, f.type)
            for i, f in enumerate(ent.fields)
            if f.type in (FieldType.boolean, FieldType.object, FieldType.array, FieldType.number)
        ]
        self.referenced_by: list[tuple[str, str]] = []
        self.owned: list[str] = []  # per-parent singletons keyed by this entity's rows
        self.update_sql: dict[tuple[str, ...], str] = {}
        self.insert_sql: dict[tuple[str, ...], str] = {}
        self.prefix = ent.pk.id_prefix or default_id_prefix(ent.name)

    def to_json(self, row: tuple, only: list[int] | None = None) -> dict[str, Any]:
        vals: Sequence[Any] = row
        if self.conv:
            conv = list(row)
            for i, t in self.conv:
                v = conv[i]
                if v is None:
                    continue
                conv[i] = bool(v) if t == FieldType.boolean else json.loads(v)
            vals = conv
        if only is None:
            return dict(zip(self.cols, vals))
        return {self.cols[i]: vals[i] for i in only}

    def db_row(self, row: dict[str, Any]) -> list[Any]:
        """A row dict (JSON values) as the list of values stored in SQLite, in column order."""
        out = [row[c] for c in self.cols]
        for i, _, t in self.to_db_conv:
            if out[i] is not None:
                out[i] = to_db(t, out[i])
        return out

    def db_to_py(self, col: str, v: Any) -> Any:
        t = self.types[col]
        if v is None:
            return None
        if t == FieldType.boolean:
            return bool(v)
        if t in (FieldType.object, FieldType.array):
            return json.loads(v)
        return v


class _Tool:
    def __init__(self, env: Environment, tool: ToolSpec):
        self.spec = tool
        self.name = tool.name
        self.kind = tool.kind
        self.ent = env._entities[tool.entity]
        self.validate = ArgValidator(tool)
        self.returns = [self.ent.idx[r] for r in tool.returns] if tool.returns else None
        key = tool.key_param
        self.key = key.name if key else None
        self.field_params = [(p.name, p.field) for p in tool.params if p.field and not p.key]
        self.filters = [(p.name, p.field, p.op) for p in tool.params if p.field and not p.key]
        if tool.kind == ToolKind.list:
            for p in tool.params:
                if not p.field:
                    raise SpecError(
                        f"{env.spec.name}: list tool {tool.name!r}: parameter {p.name!r} filters no field"
                    )
        self.sort_default = tool.sort.default if tool.sort and tool.sort.default else self.ent.pk
        self.sort_desc = bool(tool.sort and tool.sort.descending)
        self._sql_cache: dict[Any, str] = {}
        self.verb = tool.name.split("_")[0]
        # Effects on referenced rows write a second table: only those calls need a transaction.
        self.multi_statement = any("." in ef.field for ef in tool.effects)

    @property
    def key_arg(self) -> str:
        """The key parameter's name: get/update/delete/action tools have exactly one (ToolSpec checks it)."""
        assert self.key is not None, f"tool {self.name!r} has no key parameter"
        return self.key


class Environment:
    """A compiled environment: spec + template database. Thread-safe to share; sessions are not."""

    def __init__(
        self,
        spec: EnvSpec,
        template: bytes,
        *,
        path: Path | None = None,
        template_state: Snapshot | None = None,
    ):
        """``template_state``: the template's snapshot from another environment over the same
        template (``other.template_snapshot``), to skip rescanning it; its data must be ``template``."""
        self.spec = spec
        self.path = path
        self.template = template
        self.clock = dt.datetime.fromisoformat(spec.clock)
        self.clock_date = self.clock.date().isoformat()
        self.clock_iso = self.clock.isoformat(timespec="seconds")
        self._entities = {e.name: _Entity(e) for e in spec.entities}
        for e in spec.entities:
            for f in e.fields:
                if f.ref and e.singleton and f.name == e.primary_key:
                    self._entities[f.ref].owned.append(e.name)  # deleted with its parent row
                elif f.ref:
                    self._entities[f.ref].referenced_by.append((e.name, f.name))
        self._tools = {t.name: _Tool(self, t) for t in spec.tools}
        self._local = threading.local()  # per thread: read-only connections sessions share
        if template_state is not None:
            if template_state.data is not template and template_state.data != template:
                raise ValueError("template_state is the snapshot of another template")
            self._template_sums = dict(template_state.sums)
            self._template_seq = dict(template_state.seq or {})
        else:
            self._template_sums, self._template_seq = self._scan(template, source=f"{spec.name}: template")

    @classmethod
    def from_spec(
        cls, spec: EnvSpec, *, cache_path: str | Path | None = None, path: Path | None = None
    ) -> Environment:
        return cls(spec, load_or_build_template(spec, cache_path), path=path)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def tool_names(self) -> list[str]:
        return list(self._tools)

    def _scan(self, data: bytes, source: str = "state") -> tuple[dict[str, int], dict[str, int]]:
        """Check ``data`` as an untrusted state (``open_state``) and hash it from its rows."""
        conn = open_state(self.spec, data, source=source)
        try:
            sums = {}
            for name, e in self._entities.items():
                s = 0
                for row in conn.execute(e.sql_all):
                    s += _row_digest(row)
                sums[name] = s % _MOD
            seq = dict(conn.execute(f"SELECT entity, next FROM {SEQ_TABLE}").fetchall())
            return sums, seq
        except sqlite3.Error as e:  # e.g. text that is not UTF-8, or the check's deadline
            raise StateError(f"{source}: not a usable state of environment '{self.name}': {e}") from None
        finally:
            conn.close()

    _READERS_PER_THREAD = 8

    def _reader(self, data: bytes) -> sqlite3.Connection:
        """A read-only connection over ``data`` (the template or a snapshot's bytes), one per
        thread, shared by every session of this thread that has not written yet."""
        readers: dict[bytes, sqlite3.Connection] | None = getattr(self._local, "readers", None)
        if readers is None or self._local.pid != os.getpid():  # a forked worker opens its own
            readers = self._local.readers = {}
            self._local.pid = os.getpid()
        conn = readers.get(data)  # bytes cache their hash; the same object compares by identity
        if conn is None:
            if len(readers) >= self._READERS_PER_THREAD:
                for c in readers.values():
                    c.close()
                readers.clear()
            from .session import STATEMENT_CACHE

            conn = harden(
                sqlite3.connect(
                    ":memory:",
                    check_same_thread=False,
                    isolation_level=None,
                    cached_statements=STATEMENT_CACHE,
                )
            )
            conn.deserialize(data)
            conn.execute("PRAGMA query_only = ON")
            readers[data] = conn
        return conn

    def row_counts(self) -> dict[str, int]:
        conn = sqlite3.connect(":memory:")
        try:
            conn.deserialize(self.template)
            return {n: conn.execute(f"SELECT COUNT(*) FROM {_q(n)}").fetchone()[0] for n in self._entities}
        finally:
            conn.close()

    def new_session(self, snapshot: Snapshot | None = None) -> Session:
        """A fresh isolated session at the template state (or at ``snapshot``)."""
        from .session import Session  # session.py builds on this module; imported once, then a lookup

        return Session(self, snapshot)

    @property
    def template_snapshot(self) -> Snapshot:
        """The template state as a snapshot (data and hash sums); see ``__init__``'s ``template_state``."""
        return Snapshot(self.template, dict(self._template_sums), dict(self._template_seq))

    def snapshot_from_bytes(self, data: bytes, *, source: str = "state") -> Snapshot:
        """A snapshot of a serialized state (``Session.conn.serialize()``, a saved state file),
        its hash computed by scanning every row.

        The bytes are untrusted: anything but a state of this spec (triggers, views, another
        schema, a damaged file) is a ``StateError`` (see ``envfactory.runtime.state``)."""
        sums, seq = self._scan(data, source=source)
        return Snapshot(data, sums, seq)

    def snapshot_with(self, changes: Iterable[tuple[str, Any, str, Any]]) -> Snapshot:
        """The template with some fields set: ``(entity, key, field, value)``, value as JSON.

        For checks that need a state no tool call reaches (a row whose precondition fails).
        The hash sums are the template's adjusted for the changed rows, not a rescan. A value
        the schema refuses is a ConstraintError; a key with no row, a NotFoundError.
        """
        sums = dict(self._template_sums)
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.deserialize(self.template)
            for entity, key, fname, value in changes:
                e = self._entities.get(entity)
                if e is None or fname not in e.idx:
                    raise SpecError(f"{self.name}: no field {entity}.{fname}")
                old = conn.execute(e.sql_get, (key,)).fetchone()
                if old is None:
                    raise NotFoundError(f"{entity} {json.dumps(key, default=str)} not found")
                try:
                    conn.execute(
                        f"UPDATE {_q(e.name)} SET {_q(fname)} = ? WHERE {_q(e.pk)} = ?",
                        (to_db(e.types[fname], value), key),
                    )
                except sqlite3.IntegrityError as err:
                    raise ConstraintError(f"{entity}.{fname} = {value!r}: {err}") from None
                new = conn.execute(e.sql_get, (key,)).fetchone()
                sums[entity] = (sums[entity] - _row_digest(old) + _row_digest(new)) % _MOD
            data = conn.serialize()
        finally:
            conn.close()
        return Snapshot(data, sums, dict(self._template_seq))


def load_environment(path: str | Path) -> Environment:
    """Load ``env.yaml`` (or its folder) and its template DB (built and cached if missing)."""
    p = Path(path)
    spec = load_spec(p)
    folder = p if p.is_dir() else p.parent
    return Environment.from_spec(spec, cache_path=folder / "template.db", path=folder)
