"""Template databases: DDL from the spec (SQLAlchemy), seeded rows, serialized bytes.

A template is an in-memory SQLite database serialized to bytes; a session is a
``deserialize`` of those bytes, a memcpy. Templates are cached on disk next to the spec
(``template.db``, git-ignored) keyed by the spec's digest, and rebuilt when stale.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

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

from ..spec import EnvSpec, FieldType, entity_order, spec_digest
from .seed import build_seed_rows

__all__ = ["build_metadata", "build_template", "load_or_build_template", "SEQ_TABLE", "META_TABLE"]

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
            cols.append(Column(
                f.name,
                _SA_TYPES[f.type](),
                *args,
                primary_key=is_pk,
                nullable=f.nullable and not is_pk,
                unique=f.unique and not is_pk,
                autoincrement=is_pk and f.type == FieldType.integer,
            ))
        Table(ent.name, md, *cols)
    Table(SEQ_TABLE, md, Column("entity", String, primary_key=True), Column("next", Integer, nullable=False))
    Table(META_TABLE, md, Column("key", String, primary_key=True), Column("value", String, nullable=False))
    return md


def build_template(spec: EnvSpec) -> bytes:
    """Create and seed the template database; return it serialized. Deterministic."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
        build_metadata(spec).create_all(engine)
        engine.dispose(close=False)
        # Foreign-key indexes, in a fixed order (SQLAlchemy keeps Index objects in a set,
        # which would make the file's bytes depend on hash randomization).
        for ent in entity_order(spec):
            for f in ent.fields:
                if f.ref and f.name != ent.primary_key:
                    conn.execute(f'CREATE INDEX "ix_{ent.name}_{f.name}" ON "{ent.name}" ("{f.name}")')
        data = build_seed_rows(spec)
        with conn:
            for ent in entity_order(spec):
                cols, rows = data[ent.name]
                if rows:
                    q = ", ".join('"' + c + '"' for c in cols)
                    marks = ", ".join("?" * len(cols))
                    conn.executemany(f'INSERT INTO "{ent.name}" ({q}) VALUES ({marks})', rows)
                conn.execute(f"INSERT INTO {SEQ_TABLE} VALUES (?, ?)", (ent.name, len(rows) + 1))
            conn.execute(f"INSERT INTO {META_TABLE} VALUES ('spec_digest', ?)", (_template_key(spec),))
        conn.execute("VACUUM")
        return conn.serialize()
    finally:
        conn.close()


def _template_key(spec: EnvSpec) -> str:
    return f"{spec_digest(spec)}:v{TEMPLATE_VERSION}"


def _read_digest(path: Path) -> str | None:
    try:
        c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = c.execute(f"SELECT value FROM {META_TABLE} WHERE key='spec_digest'").fetchone()
            return row[0] if row else None
        finally:
            c.close()
    except sqlite3.Error:
        return None


def load_or_build_template(spec: EnvSpec, cache_path: str | os.PathLike | None) -> bytes:
    """The template bytes, from ``cache_path`` when it matches the spec, else built (and cached)."""
    if cache_path is None:
        return build_template(spec)
    p = Path(cache_path)
    if p.is_file() and _read_digest(p) == _template_key(spec):
        return p.read_bytes()
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
