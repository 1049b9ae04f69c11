"""envfactory: executable, verified tool environments for LLM agents, built from API documentation.

The names below are imported on first use (PEP 562), so ``import envfactory`` and the
command line's ``--help`` stay fast: the runtime (SQLAlchemy, Faker, networkx) loads only
when something asks for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import EnvFactoryError

if TYPE_CHECKING:
    from .runtime import Environment, Session, load_environment
    from .spec import EnvSpec, load_spec, save_spec

__all__ = [
    "__version__",
    "EnvFactoryError",
    "EnvSpec",
    "Environment",
    "Session",
    "load_environment",
    "load_spec",
    "save_spec",
]

# public name -> the subpackage that defines it
_LAZY = {
    "Environment": "runtime",
    "Session": "runtime",
    "load_environment": "runtime",
    "EnvSpec": "spec",
    "load_spec": "spec",
    "save_spec": "spec",
}


def __getattr__(name: str) -> Any:
    package = _LAZY.get(name)
    if package is None:
        raise AttributeError(f"module 'envfactory' has no attribute {name!r}")
    value = getattr(import_module(f".{package}", __name__), name)
    globals()[name] = value  # the next access is a plain attribute lookup
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
