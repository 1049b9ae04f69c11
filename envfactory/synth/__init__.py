"""Tasks and trajectories: from executed plans to goals, conversations and datasets."""

from .config import SynthConfig, TaskConfig
from .policy import OraclePolicy, TeacherPolicy
from .rollout import run_rollout, run_task
from .task import Difficulty, GoldStep, Persona, SubGoal, Task, load_tasks, write_tasks
from .tasks import TaskBuildResult, build_tasks
from .trajectories import replay_row
from .user_sim import UserSimulator

__all__ = [
    "TaskConfig",
    "SynthConfig",
    "Difficulty",
    "GoldStep",
    "Persona",
    "SubGoal",
    "Task",
    "load_tasks",
    "write_tasks",
    "TaskBuildResult",
    "build_tasks",
    "UserSimulator",
    "OraclePolicy",
    "TeacherPolicy",
    "run_rollout",
    "run_task",
    "replay_row",
]
