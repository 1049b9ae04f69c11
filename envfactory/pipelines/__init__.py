"""Multi-stage flows, one home: each runs the stages below it in order and owns its files.

    build_domain / build_source   documents -> explore -> verify -> domains/<domain>/<env>/
    run_explorer_agent            draft -> materialize -> verify -> repair, with a model
    explore_with_agent            the deterministic draft improved by the explorer agent
    synthesize_dataset            tasks -> rollouts -> replayed rows -> a dataset folder

The stages themselves live in their packages (``explore``, ``verify``, ``synth``, ``export``);
nothing below this package imports it.
"""

from .agent_loop import EnvAgentOutcome, ExplorerAgentConfig, TranscriptEntry
from .build import Agent, Progress, build_domain, build_source
from .build_report import BUILD_FILE, TIMES_FILE, BuildReport, DocReport, EnvReport
from .explorer_agent import AgentExploreResult, explore_with_agent, run_explorer_agent
from .synthesize import WORK_DIR, SynthResult, synthesize_dataset

__all__ = [
    "BUILD_FILE",
    "TIMES_FILE",
    "WORK_DIR",
    "Agent",
    "AgentExploreResult",
    "BuildReport",
    "DocReport",
    "EnvAgentOutcome",
    "EnvReport",
    "ExplorerAgentConfig",
    "Progress",
    "SynthResult",
    "TranscriptEntry",
    "build_domain",
    "build_source",
    "explore_with_agent",
    "run_explorer_agent",
    "synthesize_dataset",
]
