"""Template databases: DDL from the spec (SQLAlchemy), seeded rows, serialized bytes.

A template is an in-memory SQLite database serialized to bytes; a session is a
``deserialize`` of those bytes, a memcpy. Templates are cached on disk next to the spec
(``template.db``, git-ignored) keyed by the spec's digest, and rebuilt when stale.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import TypeVar

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
)
from sqlalchemy.pool import StaticPool

from ..errors import SpecError, StateError
from ..spec import EnvSpec, FieldType, entity_order, spec_digest
from .seed import build_seed_rows

__all__ = [
    "build_metadata",
    "build_template",
    "load_or_build_template",
    "expected_schema",
    "SEQ_TABLE",
    "META_TABLE",
]

# Bump when seeding or DDL changes what a spec materializes to: cached templates (and the
# cassettes recorded on them) are keyed by the spec digest *and* this version.
TEMPLATE_VERSION = 4

SEQ_TABLE = "_envfactory_seq"
META_TABLE = "_envfactory_meta"

_SA_TYPES = {
    FieldType.string: String,
    FieldType.integer: Integer,
    FieldType.number: Float,
    FieldType.boolean: Boolean,
    FieldType.date: String,  # ISO text: exact, sortable, and what the agent sends
    FieldType.datetime: String,
    FieldType.enum: String,
    FieldType.object: JSON,
    FieldType.array: JSON,
}


def build_metadata(spec: EnvSpec) -> MetaData:
    """SQLAlchemy tables for the spec: typed columns, keys, uniques, foreign keys, FK indexes."""
    md = MetaData()
    for ent in entity_order(spec):
        cols = []
        for f in ent.fields:
            args = []
            if f.ref:
                target = spec.entity(f.ref)
                args.append(ForeignKey(f"{target.name}.{target.primary_key}"))
            is_pk = f.name == ent.primary_key
            cols.append(
                Column(
                    f.name,
                    _SA_TYPES[f.type](),
                    *args,
                    primary_key=is_pk,
                    nullable=f.nullable and not is_pk,
                    unique=f.unique and not is_pk,
                    autoincrement=is_pk and f.type == FieldType.integer,
                )
            )
        Table(ent.name, md, *cols)
    Table(SEQ_TABLE, md, Column("entity", String, primary_key=True), Column("next", Integer, nullable=False))
    Table(META_TABLE, md, Column("key", String, primary_key=True), Column("value", String, nullable=False))
    return md


# A build verifies an environment on one template and then saves it with another (after
# excluding tools, or just once more from the saved spec): the tables and seed rows depend on
# the entities, the seed recipe and the clock only, not on the tools, so both are kept here
# per process, keyed by those, and the second template costs inserts, not seeding (the rows
# and the DDL text are the same, so are the bytes). Small LRUs: a build holds one spec at a time.
_CACHE_SIZE = 8
_V = TypeVar("_V")
_DDL: OrderedDict[str, list[str]] = OrderedDict()
_ROWS: OrderedDict[str, dict[str, tuple[list[str], list[tuple]]]] = OrderedDict()


def _data_key(spec: EnvSpec, *, rows: bool) -> str:
    parts: dict = {"entities": [e.model_dump(mode="json") for e in spec.entities]}
    if rows:  # the name is in seeding's error messages; rows are only cached when seeding worked
        parts.update(name=spec.name, seed=spec.seed.model_dump(mode="json"), clock=spec.clock)
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return f"{hashlib.sha256(blob.encode()).hexdigest()}:v{TEMPLATE_VERSION}"


def _remember(cache: OrderedDict[str, _V], key: str, value: _V) -> _V:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    return value


def _schema_sql(spec: EnvSpec) -> list[str]:
    """The DDL the spec's tables and indexes are created with, in creation order (SQLAlchemy
    writes it once per entity set; later databases replay the text)."""
    key = _data_key(spec, rows=False)
    got = _DDL.get(key)
    if got is not None:
        _DDL.move_to_end(key)
        return got
    conn = sqlite3.connect(":memory:")
    try:
        _create_schema_sqlalchemy(conn, spec)
        ddl = [
            r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        ]
    finally:
        conn.close()
    return _remember(_DDL, key, ddl)


def _seed_rows(spec: EnvSpec) -> dict[str, tuple[list[str], list[tuple]]]:
    key = _data_key(spec, rows=True)
    got = _ROWS.get(key)
    if got is not None:
        _ROWS.move_to_end(key)
        return got
    return _remember(_ROWS, key, build_seed_rows(spec))


def _create_schema(conn: sqlite3.Connection, spec: EnvSpec) -> None:
    for sql in _schema_sql(spec):
        conn.execute(sql)


def _create_schema_sqlalchemy(conn: sqlite3.Connection, spec: EnvSpec) -> None:
    engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
    build_metadata(spec).create_all(engine)
    engine.dispose(close=False)
    # Foreign-key indexes, in a fixed order (SQLAlchemy keeps Index objects in a set,
    # which would make the file's bytes depend on hash randomization).
    for ent in entity_order(spec):
        for f in ent.fields:
            if f.ref and f.name != ent.primary_key:
                conn.execute(f'CREATE INDEX "ix_{ent.name}_{f.name}" ON "{ent.name}" ("{f.name}")')


_SCHEMAS: dict[str, frozenset[tuple]] = {}


def expected_schema(spec: EnvSpec) -> frozenset[tuple]:
    """``sqlite_master`` of the spec's database: (type, name, table, sql) of every table and
    index, exactly as the template creates them. A state with anything else is refused."""
    key = _data_key(spec, rows=False)
    got = _SCHEMAS.get(key)
    if got is None:
        conn = sqlite3.connect(":memory:")
        try:
            _create_schema(conn, spec)
            got = frozenset(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
        finally:
            conn.close()
        if len(_SCHEMAS) >= 64:
            _SCHEMAS.clear()
        _SCHEMAS[key] = got
    return got


def build_template(spec: EnvSpec) -> bytes:
    """Create and seed the template database; return it serialized. Deterministic."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        _create_schema(conn, spec)
        try:
            data = _seed_rows(spec)
        except (ValueError, TypeError, OverflowError, ArithmeticError) as e:
            # a generator whose values do not fit its field (text for an integer, a Faker
            # provider that fails): the recipe's fault, said in one line
            raise SpecError(
                f"{spec.name}: seed: the recipe makes values its fields cannot hold: "
                f"{' '.join(str(e).split())[:300]}"
            ) from None
        try:
            with conn:
                for ent in entity_order(spec):
                    cols, rows = data[ent.name]
                    if rows:
                        q = ", ".join('"' + c + '"' for c in cols)
                        marks = ", ".join("?" * len(cols))
                        conn.executemany(f'INSERT INTO "{ent.name}" ({q}) VALUES ({marks})', rows)
                    conn.execute(f"INSERT INTO {SEQ_TABLE} VALUES (?, ?)", (ent.name, len(rows) + 1))
                conn.execute(f"INSERT INTO {META_TABLE} VALUES ('spec_digest', ?)", (_template_key(spec),))
        except (sqlite3.Error, OverflowError) as e:
            # e.g. a text id generated for an integer key: the seed recipe, not our bug
            raise SpecError(
                f"{spec.name}: seed {ent.name}: the generated rows do not fit the table: {e}"
            ) from None
        conn.execute("VACUUM")
        return conn.serialize()
    finally:
        conn.close()


def _template_key(spec: EnvSpec) -> str:
    return f"{spec_digest(spec)}:v{TEMPLATE_VERSION}"


def _cached_template(spec: EnvSpec, p: Path) -> bytes | None:
    """The cached template at ``p`` if it is one of this spec (and version), else None.

    A cached file is a state like any other (anyone who can write the folder wrote it): it
    is read through the same checks, and a tampered or damaged one is rebuilt."""
    from .state import open_state  # state.py builds on this module

    try:
        data = p.read_bytes()
        conn = open_state(spec, data, source=str(p))
    except (OSError, StateError):
        return None
    try:
        row = conn.execute(f"SELECT value FROM {META_TABLE} WHERE key = 'spec_digest'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return data if row and row[0] == _template_key(spec) else None


def load_or_build_template(spec: EnvSpec, cache_path: str | os.PathLike | None) -> bytes:
    """The template bytes, from ``cache_path`` when it matches the spec, else built (and cached)."""
    if cache_path is None:
        return build_template(spec)
    p = Path(cache_path)
    if p.is_file():
        cached = _cached_template(spec, p)
        if cached is not None:
            return cached
    blob = build_template(spec)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".template-", suffix=".tmp")
    except OSError:
        return blob  # a read-only checkout still works, it just rebuilds each time
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, p)
    except OSError:
        Path(tmp).unlink(missing_ok=True)  # e.g. disk full: leave no half-written file behind
    return blob
