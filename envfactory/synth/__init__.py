"""Tasks and trajectories: from executed plans to goals, conversations and datasets."""

from .config import SynthConfig, TaskConfig
from .policy import OraclePolicy, Policy, TeacherPolicy
from .rollout import McpConnector, replay_calls, run_rollout, run_task
from .tasks import TaskBuildResult, build_tasks
from .trajectories import (
    assign_split,
    build_rl_row,
    build_row,
    build_sharegpt_row,
    env_id_of,
    eval_envs,
    replay_row,
)
from .user_sim import UserSimulator

__all__ = [
    "TaskConfig",
    "SynthConfig",
    "TaskBuildResult",
    "build_tasks",
    "UserSimulator",
    "OraclePolicy",
    "Policy",
    "TeacherPolicy",
    "McpConnector",
    "replay_calls",
    "run_rollout",
    "run_task",
    "assign_split",
    "build_row",
    "build_rl_row",
    "build_sharegpt_row",
    "env_id_of",
    "eval_envs",
    "replay_row",
]
