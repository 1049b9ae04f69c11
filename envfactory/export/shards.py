"""Append-only JSON Lines shards that survive a kill at any point.

Each record is one line, written with a single ``write`` and ``fsync``-ed before the next task
starts, so after a crash a shard holds whole records plus at most one truncated last line.
``read_shard`` repairs that: it cuts the file back to the end of the last whole line (the
truncated record is redone), and ignores a repeated key (keeps the first), so resuming never
loses or duplicates a record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ShardWriter", "read_shard", "read_shards"]


def read_shard(path: str | os.PathLike, *, key: str = "task_id", repair: bool = True) -> list[dict[str, Any]]:
    """Whole records of a shard, first occurrence per ``key``; a torn tail is cut off the file."""
    p = Path(path)
    if not p.exists():
        return []
    data = p.read_bytes()
    good_end = 0
    records: list[dict[str, Any]] = []
    seen: set[Any] = set()
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break  # no newline: the last write was cut short
        line = data[pos:nl]
        try:
            rec = json.loads(line)
        except ValueError:
            break  # a torn line (only the tail can be one, but stop at the first either way)
        pos = nl + 1
        good_end = pos
        if not isinstance(rec, dict):
            continue
        k = rec.get(key)
        if k in seen:
            continue
        seen.add(k)
        records.append(rec)
    if repair and good_end < len(data):
        with p.open("r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return records


def read_shards(folder: str | os.PathLike, *, key: str = "task_id") -> Iterator[dict[str, Any]]:
    """Every record of every ``*.jsonl`` shard in a folder (sorted by file name)."""
    f = Path(folder)
    if not f.is_dir():
        return
    for p in sorted(f.glob("*.jsonl")):
        yield from read_shard(p, key=key)


class ShardWriter:
    """Appends records to a shard, one ``fsync``-ed line each."""

    def __init__(self, path: str | os.PathLike, *, fsync: bool = True):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("ab")
        self._fsync = fsync
        self.written = 0

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._fh.write(line.encode("utf-8"))
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())
        self.written += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
