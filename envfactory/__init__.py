"""envfactory: executable, verified tool environments for LLM agents, built from API documentation."""

from .errors import EnvFactoryError
from .runtime import Environment, Session, load_environment
from .spec import EnvSpec, load_spec, save_spec

__version__ = "0.1.0"

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
