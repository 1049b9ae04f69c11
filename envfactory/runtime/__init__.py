"""The trusted runtime: template databases, sessions, tool calls, state hashes and diffs."""

from .environment import Environment, Snapshot, StateDiff, load_environment
from .seed import build_seed_rows
from .session import Session
from .template import build_metadata, build_template, load_or_build_template

__all__ = [
    "Environment",
    "Session",
    "Snapshot",
    "StateDiff",
    "load_environment",
    "build_metadata",
    "build_template",
    "load_or_build_template",
    "build_seed_rows",
]
