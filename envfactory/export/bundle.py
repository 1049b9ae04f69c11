"""Environment bundles: what a dataset ships so its RL rows can be reset and scored anywhere.

A dataset row names its environment by ``env_id`` (``domain/env``); a bundle per environment
used lives beside the Parquet files, so ``pip install envfactory`` plus the dataset folder (or
its Hub repo) is enough to reset any row and score a run of it::

    envs/<domain>/<env>/env.yaml         the spec (entities, tools, seed recipe): data, never code
    envs/<domain>/<env>/bundle.json      env_id, envfactory and Faker versions, spec digest,
                                         template key, template sha256 and state hash, states shipped
    envs/<domain>/<env>/template.db.gz   the seeded template database (gzip, mtime 0: same bytes)
    envs/<domain>/<env>/states/...       initial states rows name other than ``template``

The template ships because re-seeding depends on Faker's version: a bundle loads its own
template when its sha256 matches and rebuilds from the spec only when it is missing; either
way the state hash a session reports is the one the rows' ``initial_state_hash`` was taken on.
A bundle is untrusted input: the spec is validated, the template must be an SQLite database
whose schema the spec's own tools can read, and nothing in it is executed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import ConfigError, SpecError
from ..runtime import Environment, Snapshot, build_template
from ..spec import EnvSpec, load_spec, save_spec, spec_digest

__all__ = [
    "BUNDLE_DIR",
    "BUNDLE_FORMAT",
    "BundleInfo",
    "bundle_dir",
    "find_bundles",
    "load_bundle",
    "write_bundle",
    "write_bundles",
]

BUNDLE_DIR = "envs"
BUNDLE_FORMAT = 1
_MAX_TEMPLATE_BYTES = 512 << 20  # a bundle's template, uncompressed
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class BundleInfo:
    """``bundle.json``: where an environment came from and what its template is."""

    env_id: str
    envfactory_version: str
    faker_version: str
    spec_digest: str
    template_sha256: str
    template_state_hash: str
    states: tuple[str, ...] = ()
    format: int = BUNDLE_FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "env_id": self.env_id,
            "envfactory_version": self.envfactory_version,
            "faker_version": self.faker_version,
            "spec_digest": self.spec_digest,
            "template_sha256": self.template_sha256,
            "template_state_hash": self.template_state_hash,
            "states": list(self.states),
        }


def bundle_dir(root: str | os.PathLike, domain: str, env: str) -> Path:
    return Path(root) / BUNDLE_DIR / domain / env


def _faker_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("faker")
    except PackageNotFoundError:  # pragma: no cover - faker is a dependency
        return "unknown"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _state_hash(env: Environment, snap: Snapshot | None = None) -> str:
    with env.new_session(snap) as s:
        return s.state_hash()


def write_bundle(root: str | os.PathLike, env: Environment, *, states: Iterable[str] = ()) -> list[Path]:
    """Write ``env``'s bundle under ``root/envs/<domain>/<env>/``; returns the files written.

    ``states``: initial-state references rows use besides ``template`` (paths relative to the env
    folder); each is copied under ``states/`` with the same relative path.
    """
    spec = env.spec
    out = bundle_dir(root, spec.domain, spec.name)
    files = [save_spec(spec, out)]
    tpl = out / "template.db.gz"
    _atomic_write(tpl, gzip.compress(env.template, compresslevel=6, mtime=0))
    files.append(tpl)
    shipped = []
    for ref in sorted(set(states) - {"", "template"}):
        rel = Path(ref)
        if rel.is_absolute() or ".." in rel.parts or env.path is None:
            raise ConfigError(
                f"{spec.domain}/{spec.name}: initial state {ref!r} is not a path inside the env folder"
            )
        dst = out / "states" / rel
        _atomic_write(dst, (Path(env.path) / rel).read_bytes())
        files.append(dst)
        shipped.append(rel.as_posix())
    info = BundleInfo(
        env_id=f"{spec.domain}/{spec.name}",
        envfactory_version=__version__,
        faker_version=_faker_version(),
        spec_digest=spec_digest(spec),
        template_sha256=hashlib.sha256(env.template).hexdigest(),
        template_state_hash=_state_hash(env),
        states=tuple(shipped),
    )
    meta = out / "bundle.json"
    _atomic_write(meta, (json.dumps(info.to_json(), indent=1, sort_keys=True) + "\n").encode())
    files.append(meta)
    return sorted(files)


def write_bundles(
    root: str | os.PathLike, envs: Iterable[Environment], states: dict[str, set[str]] | None = None
) -> list[Path]:
    """A bundle per environment (``states``: env_id -> initial states its rows use); stale
    bundles of environments no longer in the dataset are removed."""
    states = states or {}
    files: list[Path] = []
    keep: set[Path] = set()
    for env in envs:
        env_id = f"{env.spec.domain}/{env.spec.name}"
        files += write_bundle(root, env, states=states.get(env_id, ()))
        keep.add(bundle_dir(root, env.spec.domain, env.spec.name).resolve())
    for old in find_bundles(root):
        if old.resolve() not in keep:
            for p in sorted(old.rglob("*"), reverse=True):
                p.unlink() if p.is_file() else p.rmdir()
            old.rmdir()
    return files


def find_bundles(root: str | os.PathLike) -> list[Path]:
    """The bundle folders under ``root`` (a dataset folder, its ``envs/`` folder, or one bundle)."""
    r = Path(root)
    if (r / "bundle.json").is_file():
        return [r]
    base = r / BUNDLE_DIR if (r / BUNDLE_DIR).is_dir() else r
    return sorted(p.parent for p in base.glob("*/*/bundle.json"))


def _read_info(folder: Path) -> BundleInfo:
    try:
        raw = json.loads((folder / "bundle.json").read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != BUNDLE_FORMAT:
            raise ValueError(
                f"format {raw.get('format') if isinstance(raw, dict) else raw!r} is not {BUNDLE_FORMAT}"
            )
        return BundleInfo(
            env_id=str(raw["env_id"]),
            envfactory_version=str(raw["envfactory_version"]),
            faker_version=str(raw["faker_version"]),
            spec_digest=str(raw["spec_digest"]),
            template_sha256=str(raw["template_sha256"]),
            template_state_hash=str(raw["template_state_hash"]),
            states=tuple(str(s) for s in raw.get("states", [])),
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{folder}: not an environment bundle (bundle.json: {e})") from None


def _read_template(folder: Path, info: BundleInfo) -> bytes | None:
    path = folder / "template.db.gz"
    if not path.is_file():
        return None
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read(_MAX_TEMPLATE_BYTES + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise ConfigError(f"{path}: unreadable template: {e}") from None
    if len(data) > _MAX_TEMPLATE_BYTES or not data.startswith(_SQLITE_MAGIC):
        raise ConfigError(f"{path}: not an SQLite template (or over {_MAX_TEMPLATE_BYTES >> 20} MiB)")
    if hashlib.sha256(data).hexdigest() != info.template_sha256:
        raise ConfigError(f"{path}: sha256 differs from bundle.json's template_sha256 (a damaged download?)")
    return data


def load_bundle(folder: str | os.PathLike) -> Environment:
    """The environment of one bundle folder (its shipped template, or one rebuilt from the spec)."""
    f = Path(folder)
    info = _read_info(f)
    spec: EnvSpec = load_spec(f)
    if spec_digest(spec) != info.spec_digest:
        raise ConfigError(f"{f}: env.yaml does not match bundle.json's spec_digest")
    if f"{spec.domain}/{spec.name}" != info.env_id:
        raise ConfigError(f"{f}: env.yaml is {spec.domain}/{spec.name}, bundle.json says {info.env_id}")
    data = _read_template(f, info)
    try:
        env = Environment(spec, data if data is not None else build_template(spec), path=f / "states")
        got = _state_hash(env)
    except (sqlite3.Error, KeyError, IndexError, ValueError) as e:
        raise SpecError(f"{f}: the template does not fit env.yaml: {e}") from None
    if got != info.template_state_hash:
        raise ConfigError(
            f"{f}: template state hash {got[:12]} differs from the bundle's "
            f"{info.template_state_hash[:12]} (rebuilt with Faker {_faker_version()}, "
            f"bundled with {info.faker_version})"
        )
    return env
