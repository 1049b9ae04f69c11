"""Reference agents by name: the one registry the CLI (``eval --agent``) and Python callers pick from.

Each entry is a factory ``(seed) -> Agent``. The agent classes load on first use, so listing
the names (``envfactory eval --help``) costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from .agents import Agent

__all__ = ["REFERENCE_AGENTS", "AgentFactory", "build_reference_agent"]

AgentFactory = Callable[[int], "Agent"]


def _oracle(seed: int) -> Agent:
    from .agents import OracleAgent

    return OracleAgent()


def _noop(seed: int) -> Agent:
    from .agents import NoopAgent

    return NoopAgent()


def _random(seed: int) -> Agent:
    from .agents import RandomAgent

    return RandomAgent(seed)


def _drop_one(seed: int) -> Agent:
    from .agents import DropOneAgent

    return DropOneAgent(seed)


def _bare(seed: int) -> Agent:
    from .agents import BareAgent

    return BareAgent()


REFERENCE_AGENTS: dict[str, AgentFactory] = {
    "oracle": _oracle,  # the gold calls: 100% on every category
    "noop": _noop,  # never calls: 0% where calls are expected, 100% on irrelevance
    "random": _random,  # one random call with valid-looking arguments
    "drop-one": _drop_one,  # the gold calls less one, where more than one is expected
    "bare": _bare,  # the gold functions called with no arguments: 0% where one is stated
}


def build_reference_agent(name: str, *, seed: int = 0) -> Agent:
    """The reference agent registered as ``name`` (``drop_one`` is accepted for ``drop-one``)."""
    factory = REFERENCE_AGENTS.get(name) or REFERENCE_AGENTS.get(name.replace("_", "-"))
    if factory is None:
        raise ConfigError(f"unknown reference agent {name!r}; known: {', '.join(REFERENCE_AGENTS)}")
    return factory(seed)
