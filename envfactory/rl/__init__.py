"""Reinforcement learning over envfactory tasks: episodes a trainer can step, rewards it can call.

    import envfactory.rl as rl
    rows = rl.load_rows("trajectories/travel")           # the dataset's rl split (or a Hub repo id)
    env = rl.make(rows[0], source="trajectories/travel")  # the environment comes from the bundle
    obs = env.reset()                                     # system prompt, tools, the user's first message
    obs, reward, done, info = env.step(assistant_message) # tool calls run; text is answered by the user

``EnvBatch`` / ``make_batch`` step many episodes from one process; ``load_environment`` opens a
bundle, a dataset folder or a Hub repo. Trainer adapters live in ``envfactory.rl.trl`` (TRL's
``GRPOTrainer``: ``environment_factory`` and ``reward_funcs``), imported on demand.
See docs/rl.md.
"""

from .batch import EnvBatch, make, make_batch
from .env import ToolEnv, parse_assistant_message
from .source import EnvironmentSource, load_environment, load_rows, task_from_row

__all__ = [
    "EnvBatch",
    "EnvironmentSource",
    "ToolEnv",
    "load_environment",
    "load_rows",
    "make",
    "make_batch",
    "parse_assistant_message",
    "task_from_row",
]
