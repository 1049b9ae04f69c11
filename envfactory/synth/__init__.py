"""Tasks and trajectories: from executed plans to goals, conversations and datasets."""

from .policy import OraclePolicy, TeacherPolicy
from .rollout import run_rollout, run_task
from .tasks import TaskBuildResult, build_tasks
from .trajectories import replay_row
from .user_sim import UserSimulator

__all__ = [
    "TaskBuildResult",
    "build_tasks",
    "UserSimulator",
    "OraclePolicy",
    "TeacherPolicy",
    "run_rollout",
    "run_task",
    "replay_row",
]
