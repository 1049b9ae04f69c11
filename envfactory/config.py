"""User settings: project paths and per-command option defaults, from YAML under configs/.

A config file maps command names to option defaults, so any CLI option can come from it::

    build:
      domain: travel
      seed: 7
    bench runtime:
      sessions: 500

``envfactory --config configs/my.yaml build`` applies them (flags on the command line win).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError

__all__ = ["Paths", "CliConfig", "load_cli_config", "project_paths"]


class Paths(BaseModel):
    """Where envfactory reads and writes. Relative to the project root (the current folder)."""

    model_config = ConfigDict(extra="forbid")

    root: Path = Field(default_factory=Path.cwd)
    domains: Path = Path("domains")
    resources: Path = Path("resources")
    trajectories: Path = Path("trajectories")
    eval: Path = Path("eval")

    def resolve(self, p: Path) -> Path:
        return p if p.is_absolute() else self.root / p

    @property
    def domains_dir(self) -> Path:
        return self.resolve(self.domains)

    @property
    def resources_dir(self) -> Path:
        return self.resolve(self.resources)

    @property
    def trajectories_dir(self) -> Path:
        return self.resolve(self.trajectories)

    @property
    def eval_dir(self) -> Path:
        return self.resolve(self.eval)


def project_paths(root: str | os.PathLike | None = None) -> Paths:
    """Paths for a project root (default: $ENVFACTORY_ROOT or the current folder)."""
    r = Path(root or os.environ.get("ENVFACTORY_ROOT") or Path.cwd())
    return Paths(root=r)


class CliConfig(BaseModel):
    """A config file: ``{command name: {option: value}}``; nested sub-commands as 'bench runtime'."""

    model_config = ConfigDict(extra="allow")

    def default_map(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, dict):
                raise ConfigError(f"section {key!r} must be a mapping of option: value")
            parts = str(key).split()
            if not parts:
                raise ConfigError("a section needs a command name")
            node = out
            for part in parts:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ConfigError(f"section {key!r}: {part!r} is also set as an option")
            node.update({str(k).replace("-", "_"): v for k, v in value.items()})
        return out


def load_cli_config(path: str | os.PathLike) -> CliConfig:
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except OSError as e:
        raise ConfigError(f"{p}: cannot read config: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: malformed YAML: {str(e).splitlines()[0]}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: a config file must be a mapping of command: options")
    try:
        cfg = CliConfig.model_validate(data)
        cfg.default_map()
    except (ValidationError, ConfigError) as e:
        raise ConfigError(f"{p}: {e}") from e
    return cfg
