"""Verification of environments: smoke check, L1 properties, L2 interactions, L3 replayed
rollouts (cassettes), mutation score and rule-based repair."""

from .args import valid_args
from .smoke import ToolCheck, smoke_check

__all__ = ["ToolCheck", "smoke_check", "valid_args"]
