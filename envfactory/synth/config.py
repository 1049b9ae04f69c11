"""TaskConfig and SynthConfig: the settings of task building and of dataset synthesis.

Defaults live here and nowhere else. A config file reaches them per command::

    tasks:
      n: 500
      task_config: {rounds: 6, hide_rate: 0.5, sampler: {p_branch: 0.5}}
    synth:
      n: 200                  # SynthConfig fields are the synth command's own options
      task_config: {oversample: 1.5}
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..graph import SamplerConfig

__all__ = ["TaskConfig", "SynthConfig"]


class TaskConfig(BaseModel):
    """How tasks are built from sampled plans (``build_tasks``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rounds: int = Field(
        6, ge=1, description="Sampling rounds at most; each samples more plans while tasks are short."
    )
    oversample: float = Field(1.3, ge=1.0, description="Plans sampled per task wanted (checks drop some).")
    extra_plans: int = Field(5, ge=0, description="Plans sampled in the first round beyond n x oversample.")
    refill_factor: float = Field(
        1.5, ge=1.0, description="Later rounds sample (missing tasks x oversample x this)."
    )
    refill_min: int = Field(10, ge=1, description="Fewest plans a later round samples.")
    round_seed_stride: int = Field(1000, ge=1, description="Round r samples with seed + r x this.")
    realize_attempts: int = Field(
        3,
        ge=1,
        description="Phrasings tried per plan (the first and its rewrites) "
        "before a task that fails a check is dropped.",
    )
    hide_rate: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Chance that a fact is held back for the user to reveal when asked (parameter omission).",
    )
    turn_limit_base: int = Field(
        10, ge=1, description="A task's turn limit: this many assistant messages ..."
    )
    turn_limit_per_step: int = Field(4, ge=0, description="... plus this many per gold step ...")
    turn_limit_max: int = Field(40, ge=1, description="... and at most this many.")
    solver_temperature: float = Field(
        0.7, ge=0.0, description="Sampling temperature of measured solver rollouts."
    )
    solver_max_turns: int | None = Field(
        None,
        ge=1,
        description="Assistant messages per solver rollout at most (default: the task's turn limit).",
    )
    solver_workers: int | None = Field(
        None, ge=1, description="Tasks measured at a time (default: the model's concurrency)."
    )
    rewrite_temperature: float = Field(
        0.7, ge=0.0, description="Temperature of the model that rewrites goals."
    )
    samples_shown: int = Field(6, ge=0, description="Goals quoted in the report.")
    sampler: SamplerConfig = Field(
        default_factory=lambda: SamplerConfig(intent_first=True),
        description="How plans are sampled (intent-first: plans one person would ask for).",
    )
    p_refusal: float = Field(
        0.07,
        ge=0.0,
        le=1.0,
        description="Share of tasks with a last request the tools cannot "
        "serve, which the assistant declines.",
    )

    def turn_limit(self, steps: int) -> int:
        """Assistant messages a task with ``steps`` gold steps may take."""
        return min(self.turn_limit_max, self.turn_limit_base + self.turn_limit_per_step * steps)


class SynthConfig(BaseModel):
    """What a synthesis run makes (``envfactory synth``); recorded in the dataset's manifest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(1000, ge=1, description="Tasks to build and roll out (in total).")
    seed: int = Field(0, description="Seed: the same seed gives the same dataset, byte for byte.")
    policy: Literal["oracle", "teacher"] = Field(
        "oracle", description="oracle (no model) or teacher (a model)."
    )
    attempts: int = Field(3, ge=1, description="Teacher: rollouts tried per task (rejection sampling).")
    temperature: float = Field(0.7, ge=0.0, description="Teacher sampling temperature.")
    via_mcp: Literal["inproc", "stdio"] | None = Field(
        None, description="Run tool calls through the MCP server: in memory or a server process per rollout."
    )
    eval_fraction: float = Field(
        0.2, ge=0.0, le=1.0, description="Share of environments held out for eval (by hash)."
    )
    rl_fraction: float = Field(
        0.25, ge=0.0, le=1.0, description="Share of training tasks in the rl split (by hash)."
    )
    license: str = Field("apache-2.0", min_length=1, description="License in the dataset card.")
    tasks: TaskConfig = Field(
        default_factory=TaskConfig, description="How tasks are built (when not read from a file)."
    )
