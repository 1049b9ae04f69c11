"""Initial states for served sessions: SQLite bytes (base64 or a file) checked against the env."""

from __future__ import annotations

import base64
import binascii
import sqlite3
from pathlib import Path

from ..errors import StateError
from ..runtime import Environment, Snapshot

__all__ = ["StateError", "load_state_bytes", "load_state_file", "decode_state_b64", "resolve_state_path"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def load_state_bytes(env: Environment, data: bytes, *, source: str = "state") -> Snapshot:
    """A Snapshot of ``env`` from SQLite database bytes (as ``Session.snapshot().data``)."""
    if not data.startswith(_SQLITE_MAGIC):
        raise StateError(f"{source}: not an SQLite database (the bytes do not start with the SQLite header)")
    try:
        return env.snapshot_from_bytes(data)
    except sqlite3.Error as e:
        raise StateError(f"{source}: not a state of environment '{env.name}': {e}") from e


def decode_state_b64(env: Environment, text: str) -> Snapshot:
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise StateError(f"state_b64 is not valid base64: {e}") from e
    return load_state_bytes(env, data, source="state_b64")


def load_state_file(env: Environment, path: str | Path) -> Snapshot:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise StateError(f"{p}: cannot read state: {e.strerror or e}") from e
    return load_state_bytes(env, data, source=str(p))


def resolve_state_path(env: Environment, path: str, roots: list[Path]) -> Path:
    """``path`` (relative to the environment folder, or absolute) if it lies under one of ``roots``."""
    base = env.path or Path.cwd()
    try:  # a NUL byte or an unreadable folder would otherwise be a 500
        p = Path(path)
        p = (p if p.is_absolute() else base / p).resolve()
        allowed = [Path(r).resolve() for r in roots] or [base.resolve().parent]
        inside = any(p.is_relative_to(r) for r in allowed)
        is_file = inside and p.is_file()
    except (OSError, ValueError) as e:
        raise StateError(f"state_path {path[:200]!r} is not a usable path: {e}") from e
    if not inside:
        raise StateError(
            f"state_path {path!r} is outside the folders states may be read from "
            f"({', '.join(str(r) for r in allowed)})"
        )
    if not is_file:
        raise StateError(f"state_path {path!r}: no such file")
    return p
