"""OpenEnv adapter: envfactory tasks as an ``openenv.core`` ``Environment`` (and its HTTP/WebSocket server).

OpenEnv (``pip install openenv-core``) defines an environment as ``reset(seed, episode_id, **kw)``
and ``step(action)`` returning pydantic ``Observation``s that carry ``done`` and ``reward``,
served by ``create_fastapi_app`` (stateful episodes over its ``/ws`` WebSocket)::

    from envfactory.rl.openenv import openenv_app
    app = openenv_app(rows, source="trajectories/travel")     # uvicorn app:app --host 127.0.0.1

``reset(task_id=...)`` picks a row by id (else ``seed`` indexes the rows); an action is one
assistant message (``{"message": {"role": "assistant", "tool_calls": [...]}}`` or
``{"message": "text"}``); the observation holds the new messages, the tools (on reset), and, at
the end, the reward with its parts in ``info["reward"]``. ``openenv`` is imported here only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app

from ..errors import ConfigError
from .env import ToolEnv
from .source import EnvironmentSource, task_from_row

__all__ = ["EnvfactoryAction", "EnvfactoryObservation", "EnvfactoryState", "openenv_app", "openenv_factory"]


class EnvfactoryAction(Action):
    """One assistant message: an OpenAI-format dict (tool calls or text) or a plain string."""

    message: dict[str, Any] | str


class EnvfactoryObservation(Observation):
    messages: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    state_hash: str | None = None
    info: dict[str, Any] = {}  # OpenEnv's server leaves ``metadata`` out of what it sends; this travels


class EnvfactoryState(State):
    task_id: str | None = None
    state_hash: str | None = None


class _Env(Environment):  # type: ignore[misc]
    SUPPORTS_CONCURRENT_SESSIONS = True  # each instance owns its own runtime session

    def __init__(self, rows: Sequence[Mapping[str, Any]], src: EnvironmentSource):
        super().__init__()
        self._rows = list(rows)
        self._by_id = {str(r["id"]): r for r in self._rows}
        self._src = src
        self._episode: ToolEnv | None = None
        self._state = EnvfactoryState()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> EnvfactoryObservation:
        task_id = kwargs.get("task_id")
        if task_id is not None:
            row = self._by_id.get(str(task_id))
            if row is None:
                raise ConfigError(f"no task {str(task_id)[:80]!r} among the {len(self._rows)} rows served")
        else:
            row = self._rows[(seed or 0) % len(self._rows)]
        task = task_from_row(row)
        if self._episode is not None:
            self._episode.close()
        self._episode = ToolEnv(
            task, self._src.get(f"{task.domain}/{task.env}"), prompt=list(row.get("prompt") or []) or None
        )
        obs = self._episode.reset()
        self._state = EnvfactoryState(
            episode_id=episode_id, step_count=0, task_id=task.task_id, state_hash=obs["state_hash"]
        )
        return EnvfactoryObservation(
            messages=obs["messages"],
            tools=obs["tools"],
            done=False,
            reward=None,
            state_hash=obs["state_hash"],
            info={"task_id": task.task_id},
        )

    def step(
        self, action: EnvfactoryAction, timeout_s: float | None = None, **kwargs: Any
    ) -> EnvfactoryObservation:
        if self._episode is None:
            raise ConfigError("reset() before step()")
        obs, reward, done, info = self._episode.step(action.message)
        self._state.step_count += 1
        self._state.state_hash = self._episode.state_hash()
        return EnvfactoryObservation(
            messages=obs["messages"],
            done=done,
            reward=reward if done else None,
            state_hash=self._state.state_hash,
            info=info,
        )

    @property
    def state(self) -> EnvfactoryState:
        return self._state

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()


def openenv_factory(
    rows: Sequence[Mapping[str, Any]], *, source: str | os.PathLike | EnvironmentSource | None = None
) -> Callable[[], Environment]:
    """A factory of OpenEnv environments over ``rows`` (sharing one compiled environment per env_id)."""
    if not rows:
        raise ConfigError("openenv_factory needs at least one row")
    src = source if isinstance(source, EnvironmentSource) else EnvironmentSource(source)
    return lambda: _Env(rows, src)


def openenv_app(
    rows: Sequence[Mapping[str, Any]],
    *,
    source: str | os.PathLike | EnvironmentSource | None = None,
    max_concurrent_envs: int = 64,
) -> Any:
    """OpenEnv's FastAPI app (``/reset``, ``/step``, ``/ws``, ``/schema``, ``/health``) over ``rows``."""
    return create_fastapi_app(
        openenv_factory(rows, source=source),
        EnvfactoryAction,
        EnvfactoryObservation,
        max_concurrent_envs=max_concurrent_envs,
    )
