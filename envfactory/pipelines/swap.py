"""Putting a build's environments in place, so that a crash at any point is recoverable.

A build writes its environments into a temporary folder next to its target,
``<parent>/.<target>.build-XXXX/`` (a dot-folder: every loader skips it). The swap then:

1. writes a journal (``.swap.json`` in the temporary folder): the environments it places,
   the ones the previous build owned, and the ``build.json`` it will write;
2. per environment, moves the old folder aside (into ``.old/`` of the temporary folder) and
   the new one into place;
3. writes ``build.json``. The temporary folder is then removed.

A swap that fails in this process is undone at once: every new folder it placed goes, every
old one comes back, and ``build.json`` (written last) is still the old one.

A killed build leaves its temporary folder; the next build of the target ``recover``s it
first, under a lock (``.<target>.build.lock``) that two builds of one target share. Without
a journal the build never started swapping: the folder is deleted. With one, the file system
says how far the swap got: if every folder was moved, it is finished (``build.json`` written
from the journal); otherwise it is undone as above. Either way every environment
``build.json`` lists exists afterwards, and no folder a build placed is left unowned.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConfigError
from .build_report import BUILD_FILE

__all__ = ["build_lock", "new_build_dir", "recover", "recover_interrupted", "swap_in", "write_atomic"]

JOURNAL = ".swap.json"
OLD = ".old"


def _prefix(target: Path) -> str:
    return f".{target.name}.build-"


def new_build_dir(target: Path) -> Path:
    """A fresh temporary folder for a build of ``target``, beside it (same file system)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=_prefix(target), dir=target.parent))


@contextmanager
def build_lock(target: Path) -> Iterator[None]:
    """Hold the lock of ``target``'s builds; a second build of it meanwhile is a ConfigError.

    An OS lock (``flock``) on ``.<target>.build.lock`` beside the target: the kernel releases
    it when a build is killed, so no stale lock outlives its build. The holder deletes the file
    when done; a build that locked a file deleted meanwhile locks the new one instead. Where
    ``fcntl`` does not exist (Windows), builds are not locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    path = target.parent / f".{target.name}.build.lock"
    while True:
        fh = open(path, "a+b")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise ConfigError(f"another build of {target} is running; wait for it to finish") from None
        try:
            if os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino:
                break
        except FileNotFoundError:
            pass
        fh.close()  # the previous holder deleted this file after we opened it: lock the new one
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        fh.close()  # releases the lock


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: never half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def swap_in(tmp: Path, target: Path, names: list[str], previous: set[str], build_json: str) -> None:
    """Move the environments ``names`` from ``tmp`` into ``target`` and write ``build.json``.

    ``previous``: the folders the last build placed (replaced or removed here). On any failure
    the swap is undone (old folders back, new ones out) before the exception goes on.
    """
    target.mkdir(parents=True, exist_ok=True)
    journal = {"names": sorted(names), "previous": sorted(previous), "build_json": build_json}
    write_atomic(tmp / JOURNAL, json.dumps(journal, indent=1))
    old = tmp / OLD
    old.mkdir()
    try:
        for name in sorted(set(names) | previous):
            dest = target / name
            if dest.exists():
                os.replace(dest, old / name)
            if name in names:
                os.replace(tmp / name, dest)
        write_atomic(target / BUILD_FILE, build_json)
    except BaseException:
        _undo(tmp, target, set(names), previous)
        raise


def recover(tmp: Path, target: Path) -> None:
    """Finish a temporary build folder of ``target`` that a killed build left: complete or undo
    its swap (see the module docstring), then delete it."""
    journal_file = tmp / JOURNAL
    if journal_file.is_file():
        journal = json.loads(journal_file.read_text(encoding="utf-8"))
        names, previous = set(journal["names"]), set(journal["previous"])
        if _all_moved(tmp, target, names, previous):
            write_atomic(target / BUILD_FILE, journal["build_json"])
        else:
            _undo(tmp, target, names, previous)
    shutil.rmtree(tmp, ignore_errors=True)


def _all_moved(tmp: Path, target: Path, names: set[str], previous: set[str]) -> bool:
    return all(not (tmp / n).exists() and (target / n).exists() for n in names) and not any(
        (target / n).exists() for n in previous - names
    )


def _undo(tmp: Path, target: Path, names: set[str], previous: set[str]) -> None:
    """Put every old folder back and take every new one out (into ``tmp``, deleted with it)."""
    old = tmp / OLD
    for name in sorted(names | previous):
        dest, backup, new = target / name, old / name, tmp / name
        placed = name in names and not new.exists() and dest.exists()  # the new folder went in
        if placed:
            os.replace(dest, new)
        if backup.exists() and not dest.exists():
            os.replace(backup, dest)


def recover_interrupted(target: Path) -> list[Path]:
    """Recover every temporary folder a killed build of ``target`` left; returns them.
    Call it holding ``build_lock(target)``."""
    if not target.parent.is_dir():
        return []
    left = sorted(p for p in target.parent.glob(_prefix(target) + "*") if p.is_dir())
    for tmp in left:
        recover(tmp, target)
    return left
