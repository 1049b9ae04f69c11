"""Making episodes (``make``) and stepping many of them from one process (``EnvBatch``).

Specs are read and compiled once per environment (``EnvironmentSource`` caches them); an
episode is then a task, a session (a memcpy of the template) and a user simulator, so a batch
of 256 episodes over one environment costs 256 sessions, not 256 specs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..llm import ChatModel
from ..runtime import Environment
from ..spec import Task
from .env import Observation, StepResult, ToolEnv
from .source import EnvironmentSource, task_from_row

__all__ = ["make", "make_batch", "EnvBatch"]

TaskOrRow = Task | Mapping[str, Any]


def _source_of(
    source: str | os.PathLike | EnvironmentSource | None, environment: Environment | None
) -> EnvironmentSource:
    if isinstance(source, EnvironmentSource):
        return source
    return EnvironmentSource(source, environments=[environment] if environment is not None else [])


def make(
    task_or_row: TaskOrRow,
    *,
    source: str | os.PathLike | EnvironmentSource | None = None,
    environment: Environment | None = None,
    user_model: ChatModel | None = None,
    seed: int = 0,
) -> ToolEnv:
    """An RL environment for one task or dataset row.

    The environment the task names (``env_id``) comes from ``environment`` if given, else from
    ``source``: a dataset folder or Hub repo id (its ``envs/`` bundles), a bundle folder, an
    env folder, or an ``EnvironmentSource`` shared by many calls; else the project's ``domains/``.
    """
    src = _source_of(source, environment)
    if isinstance(task_or_row, Task):
        task, prompt = task_or_row, None
    elif isinstance(task_or_row, Mapping):
        task = task_from_row(task_or_row)
        prompt = task_or_row.get("prompt") or None
    else:
        raise ConfigError(f"make() takes a Task or a dataset row (dict), got {type(task_or_row).__name__}")
    env = src.get(f"{task.domain}/{task.env}")
    return ToolEnv(task, env, user_model=user_model, seed=seed, prompt=list(prompt) if prompt else None)


def make_batch(
    items: Iterable[TaskOrRow],
    *,
    source: str | os.PathLike | EnvironmentSource | None = None,
    environments: Iterable[Environment] = (),
    user_model: ChatModel | None = None,
    seed: int = 0,
) -> EnvBatch:
    """``EnvBatch`` of ``make(item)`` for each item, sharing one ``EnvironmentSource``."""
    src = (
        source
        if isinstance(source, EnvironmentSource)
        else EnvironmentSource(source, environments=environments)
    )
    return EnvBatch([make(it, source=src, user_model=user_model, seed=seed) for it in items])


class EnvBatch:
    """Many episodes stepped together: ``reset()`` all, ``step(messages)`` one message each.

    An episode that is done is skipped: its slot in ``step``'s input is ignored and its result
    repeats ``(empty observation, 0.0, True, {"finished": True})``.
    """

    def __init__(self, envs: Sequence[ToolEnv]):
        self.envs = list(envs)

    def __len__(self) -> int:
        return len(self.envs)

    @property
    def done(self) -> list[bool]:
        return [e.done for e in self.envs]

    def reset(self) -> list[Observation]:
        return [e.reset() for e in self.envs]

    def step(self, messages: Sequence[Any]) -> list[StepResult]:
        if len(messages) != len(self.envs):
            raise ConfigError(
                f"step() needs one message per environment ({len(self.envs)}), got {len(messages)}"
            )
        out: list[StepResult] = []
        for e, m in zip(self.envs, messages):
            out.append(({"messages": []}, 0.0, True, {"finished": True}) if e.done else e.step(m))
        return out

    def rewards(self) -> list[float]:
        """Each episode's reward as it stands now (final for finished ones)."""
        return [e.score().reward if e.session is not None else 0.0 for e in self.envs]

    def close(self) -> None:
        for e in self.envs:
            e.close()
