"""The deterministic explorer: API documentation (ApiDoc) in, EnvSpecs out, no model.

Inference rules live one per module: ``resources`` (operations -> resources and tool
kinds), ``entities`` (fields, keys, foreign keys), ``actions`` (the verb table of state
changes), ``tools`` (parameters, filters, preconditions, effects), ``seeding`` (seed recipe)
and ``split`` (community detection for large APIs).
"""

from .actions import ACTION_RULES, ActionRule
from .explorer import ExcludedOp, ExploreResult, explore
from .fidelity import (
    FIDELITY_COUNTS,
    DocFidelity,
    DroppedOp,
    FidelityReport,
    build_fidelity,
    documented_body,
    drop_reasons,
)
from .resources import OpPlan, plan_operation

__all__ = [
    "explore",
    "ExploreResult",
    "ExcludedOp",
    "DocFidelity",
    "DroppedOp",
    "FidelityReport",
    "FIDELITY_COUNTS",
    "build_fidelity",
    "documented_body",
    "drop_reasons",
    "ACTION_RULES",
    "ActionRule",
    "OpPlan",
    "plan_operation",
]
