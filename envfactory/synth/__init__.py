"""Tasks and trajectories: from executed plans to goals, conversations and datasets."""

from .task import Difficulty, GoldStep, Persona, SubGoal, Task, load_tasks, write_tasks

__all__ = ["Difficulty", "GoldStep", "Persona", "SubGoal", "Task", "load_tasks", "write_tasks"]
