"""Load and save EnvSpecs as YAML; export the JSON Schema of the format."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import SpecError
from .model import EnvSpec

__all__ = ["load_spec", "save_spec", "dump_spec", "parse_spec", "spec_json_schema", "spec_digest", "find_specs"]

SPEC_FILE = "env.yaml"


def _yaml_loader():
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_spec(data: Any, *, source: str = "<spec>") -> EnvSpec:
    """Validate a plain dict (as read from YAML/JSON) into an EnvSpec."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: an environment spec must be a mapping, got {type(data).__name__}")
    try:
        return EnvSpec.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        more = f" (+{e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise SpecError(f"{source}: {loc}: {first['msg']}{more}") from e


def load_spec(path: str | os.PathLike) -> EnvSpec:
    """Read ``env.yaml`` (or a folder holding one) into an EnvSpec."""
    p = Path(path)
    if p.is_dir():
        p = p / SPEC_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{p}: cannot read spec: {e.strerror or e}") from e
    try:
        data = yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as e:
        raise SpecError(f"{p}: malformed YAML: {str(e).splitlines()[0]}") from e
    return parse_spec(data, source=str(p))


def dump_spec(spec: EnvSpec) -> str:
    data = spec.model_dump(mode="json", exclude_defaults=True)
    data = {"spec_version": spec.spec_version, **data}
    # ``set: null`` is a real effect (clear a field); keep it although null is the default.
    for tool, tdata in zip(spec.tools, data.get("tools", [])):
        for ef, edata in zip(tool.effects, tdata.get("effects", [])):
            if ef.uses_set and "set" not in edata:
                edata["set"] = None
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def save_spec(spec: EnvSpec, path: str | os.PathLike) -> Path:
    """Write the spec as YAML atomically (to ``path/env.yaml`` if ``path`` is a folder)."""
    p = Path(path)
    if p.suffix not in (".yaml", ".yml"):
        p = p / SPEC_FILE
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".env-", suffix=".yaml.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(dump_spec(spec))
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def spec_digest(spec: EnvSpec) -> str:
    """A stable digest of the spec's content (used to key template databases)."""
    blob = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def spec_json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the env.yaml format."""
    schema = EnvSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "envfactory EnvSpec"
    return schema


def find_specs(root: str | os.PathLike) -> list[Path]:
    """Every ``env.yaml`` under ``root`` (a domain folder or the domains/ folder), sorted.

    Dot-folders are skipped: a build works in ``.<domain>.build-*`` and a killed one may
    leave it behind (the next build removes it)."""
    r = Path(root)
    if (r / SPEC_FILE).is_file():
        return [r / SPEC_FILE]
    return sorted(p for p in r.rglob(SPEC_FILE) if not any(part.startswith(".") for part in p.relative_to(r).parts))
