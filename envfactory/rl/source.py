"""Where RL episodes come from: dataset rows, tasks, and the environments they name.

A row of a dataset written by ``envfactory synth`` carries everything an episode needs but the
environment: the user (persona, goal, sub-goals), the reward spec, the initial state and its
hash, and ``env_id``. ``EnvironmentSource`` resolves an ``env_id`` to a compiled ``Environment``
once (later lookups are a dict hit), from, in order: the environments it was given, the bundles
of a dataset folder (``envs/``, see ``envfactory.export.bundle``), a Hub dataset repo (fetched
with ``huggingface_hub``), or a checkout's ``domains/`` folder.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..config import project_paths
from ..errors import ConfigError, EnvFactoryError
from ..export import find_bundles, load_bundle
from ..runtime import Environment
from ..runtime import load_environment as _load_env_folder
from ..spec import Difficulty, GoldStep, Persona, RewardSpec, SubGoal, Task

__all__ = ["EnvironmentSource", "load_environment", "load_rows", "task_from_row", "resolve_source"]

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ROW_KEYS = ("id", "domain", "env", "reward_spec", "user")


def _json(v: Any) -> Any:
    """A ``Json()`` column's value: decoded already (``datasets``) or a JSON string (plain Parquet)."""
    if isinstance(v, (str, bytes)):
        try:
            return json.loads(v)
        except json.JSONDecodeError as e:
            raise ConfigError(f"a JSON column holds malformed JSON: {e}") from None
    return v


def task_from_row(row: Mapping[str, Any]) -> Task:
    """The task a dataset row was rolled out from (what the user simulator and the reward need)."""
    missing = [k for k in _ROW_KEYS if k not in row]
    if missing:
        raise ConfigError(f"not an envfactory dataset row (missing {', '.join(missing)})")
    try:
        spec = RewardSpec.model_validate(_json(row["reward_spec"]))
        user = _json(row["user"]) or {}
        raw_tools = row.get("tools") or []
        tools = [_json(t) for t in (_json(raw_tools) if isinstance(raw_tools, (str, bytes)) else raw_tools)]
        masks = spec.masked_args
        gold = [
            GoldStep(tool=c["tool"], args=c.get("args") or {}, masked_args=masks[i] if i < len(masks) else [])
            for i, c in enumerate(spec.gold_calls)
        ]
        return Task(
            task_id=str(row["id"]),
            domain=str(row["domain"]),
            env=str(row["env"]),
            source_docs=list(row.get("source_docs") or []),
            seed=int(row.get("seed") or 0),
            persona=Persona.model_validate(user.get("persona") or {"name": "user"}),
            goal=str(user.get("goal") or ""),
            subgoals=[SubGoal.model_validate(s) for s in user.get("subgoals") or []],
            gold=gold,
            answer_facts=list(spec.required_facts),
            initial_state=str(row.get("initial_state") or "template"),
            reward=spec,
            difficulty=Difficulty(
                predicted_pass_rate=float(row.get("predicted_pass_rate") or 0.5),
                level=row.get("difficulty") or "medium",
            ),
            checks_passed=list(row.get("checks_passed") or []),
            tools=[t["function"]["name"] for t in tools if isinstance(t, dict) and "function" in t],
            turn_limit=int(row.get("turn_limit") or 30),
        )
    except EnvFactoryError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        first = str(e).splitlines()[0][:300]
        raise ConfigError(f"row {str(row.get('id'))[:80]!r}: not a usable RL row ({first})") from None


def _hub_snapshot(repo_id: str, *, revision: str | None = None, patterns: list[str] | None = None) -> Path:
    """A local copy of a Hub dataset repo (only the files ``patterns`` name)."""
    import huggingface_hub as hh

    try:
        return Path(
            hh.snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns)
        )
    except Exception as e:  # network, auth, missing repo: one line
        raise EnvFactoryError(
            f"cannot fetch dataset {repo_id} from the Hub: {str(e).splitlines()[0][:300]}"
        ) from e


def resolve_source(source: str | os.PathLike, *, revision: str | None = None) -> Path:
    """A local folder for ``source``: a path as it is, or a Hub dataset repo id (``ORG/NAME``) downloaded."""
    p = Path(source)
    if p.exists():
        return p
    if isinstance(source, str) and _REPO_ID.match(source):
        return _hub_snapshot(source, revision=revision, patterns=["README.md", "data/*.parquet", "envs/**"])
    raise ConfigError(f"{source}: no such folder (and not a Hub dataset repo id ORG/NAME)")


def load_rows(
    source: str | os.PathLike, *, split: str = "rl", revision: str | None = None
) -> list[dict[str, Any]]:
    """The rows of one split of a dataset folder (or Hub repo), JSON columns decoded."""
    import pyarrow.parquet as pq

    folder = resolve_source(source, revision=revision)
    files = sorted((folder / "data").glob(f"{split}-*-of-*.parquet"))
    if not files:
        raise ConfigError(
            f"{source}: no '{split}' split under data/ (a dataset folder written by envfactory synth?)"
        )
    rows: list[dict[str, Any]] = []
    for f in files:
        try:
            rows += pq.read_table(f).to_pylist()
        except Exception as e:  # a damaged or foreign Parquet file
            raise ConfigError(f"{f}: unreadable Parquet file: {str(e)[:200]}") from None
    json_cols = ("messages", "tools", "prompt")
    for r in rows:
        for k in json_cols:
            if isinstance(r.get(k), list):
                r[k] = [_json(x) for x in r[k]]
        for k in ("reward_spec", "user"):
            if k in r:
                r[k] = _json(r[k])
    return rows


class EnvironmentSource:
    """Resolves ``env_id`` (``domain/env``) to a compiled Environment, each loaded once.

    ``source``: a dataset folder or Hub repo id (its bundles), one bundle folder, an env folder
    (``env.yaml``), a ``domains/`` folder, or None (the project's ``domains/``). ``environments``:
    already compiled ones, used first.
    """

    def __init__(
        self,
        source: str | os.PathLike | None = None,
        *,
        environments: Iterable[Environment] | Mapping[str, Environment] = (),
    ):
        self._envs: dict[str, Environment] = {}
        items = environments.values() if isinstance(environments, Mapping) else environments
        for e in items:
            self._envs[f"{e.spec.domain}/{e.spec.name}"] = e
        self.folder = resolve_source(source) if source is not None else None
        self._bundles: dict[str, Path] = {}
        if self.folder is not None:
            for b in find_bundles(self.folder):
                self._bundles[f"{b.parent.name}/{b.name}"] = b

    def env_ids(self) -> list[str]:
        """The environments this source can give without searching ``domains/``."""
        return sorted(set(self._envs) | set(self._bundles))

    def get(self, env_id: str) -> Environment:
        env = self._envs.get(env_id)
        if env is None:
            env = self._envs[env_id] = self._load(env_id)
        return env

    def _load(self, env_id: str) -> Environment:
        domain, _, name = env_id.partition("/")
        if not domain or not name or "/" in name or ".." in env_id:
            raise ConfigError(f"env_id {env_id!r} must look like DOMAIN/ENV")
        if env_id in self._bundles:
            return load_bundle(self._bundles[env_id])
        candidates = []
        if self.folder is not None:
            candidates += [self.folder / name, self.folder / domain / name]
        candidates.append(project_paths().root / "domains" / domain / name)
        for c in candidates:
            if (c / "env.yaml").is_file():
                env = _load_env_folder(c)
                if (env.spec.domain, env.spec.name) == (domain, name):
                    return env
        where = f"{self.folder} (no envs/{env_id}/ bundle) or " if self.folder is not None else ""
        raise ConfigError(f"environment {env_id} not found in {where}domains/{env_id}")


def load_environment(source: str | os.PathLike, env_id: str | None = None) -> Environment:
    """An environment from a bundle folder, a dataset folder or Hub repo (``env_id`` picks one of
    its bundles; optional when it has one), or an env folder with ``env.yaml``."""
    folder = resolve_source(source)
    if env_id is None and ((folder / "env.yaml").is_file() and not (folder / "bundle.json").is_file()):
        return _load_env_folder(folder)
    src = EnvironmentSource(folder)
    if env_id is None:
        ids = src.env_ids()
        if len(ids) != 1:
            raise ConfigError(
                f"{source}: holds {len(ids)} environment bundles ({', '.join(ids[:8]) or 'none'}); "
                "pass env_id='DOMAIN/ENV'"
            )
        env_id = ids[0]
    return src.get(env_id)
