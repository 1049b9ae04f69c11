"""envfactory: executable, verified tool environments for LLM agents, built from API documentation."""

from ._version import __version__
from .errors import EnvFactoryError
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
