"""Task: what a trainer gets for one executed plan, and the reward spec that scores a run of it.

A task carries a goal stated the way a person states it (never tool names, never internal
ids), the persona who states it with the facts they know, hidden facts they reveal only
when asked, the gold run (calls, outputs, final state), and a verifiable reward spec.

This module is the contract between the task builder (``envfactory.synth.tasks``), the
rollout / dataset stage (``envfactory.synth.rollout``, ``envfactory.pipelines``), the reward
(``envfactory.reward``) and the evaluation harness (``envfactory.evaluation``): it lives in
``spec`` so that none of them imports another for it. Plain pydantic; JSON Lines on disk.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ..errors import ConfigError

__all__ = ["Persona", "SubGoal", "GoldStep", "Difficulty", "RewardSpec", "Task", "load_tasks", "write_tasks"]


class RewardSpec(BaseModel):
    """What a correct run looks like, recorded from the gold execution (scored by ``envfactory.reward``)."""

    gold_state_hash: str
    initial_state_hash: str
    gold_diff: dict[str, Any] = Field(default_factory=dict)  # StateDiff.to_dict()
    gold_calls: list[dict[str, Any]] = Field(default_factory=list)  # [{"tool", "args"}]
    masked_args: list[list[str]] = Field(default_factory=list)  # per gold call
    required_facts: list[str] = Field(default_factory=list)
    malformed_penalty: float = 0.05
    extra_write_penalty: float = 0.05

    @property
    def changes_state(self) -> bool:
        return self.gold_state_hash != self.initial_state_hash


class Persona(BaseModel):
    """The person who wants something done."""

    name: str
    style: Literal["terse", "polite", "chatty", "hurried"] = "polite"
    known_facts: dict[str, Any] = Field(
        default_factory=dict, description="Facts the user states up front, e.g. {'email': 'ann@x.org'}."
    )
    hidden_facts: dict[str, Any] = Field(
        default_factory=dict,
        description="Facts the user knows but only reveals when the assistant asks for them.",
    )


class GoldStep(BaseModel):
    """One gold call, concrete, with what it returned."""

    tool: str
    args: dict[str, Any]
    output: Any = None
    role: Literal["goal", "discover", "setup", "branch"] = "goal"
    masked_args: list[str] = Field(
        default_factory=list, description="Arguments the user could not pin down (any valid value is fine)."
    )


class SubGoal(BaseModel):
    """One turn's worth of the goal: what the user asks, and the gold steps that serve it."""

    text: str
    steps: list[int] = Field(default_factory=list, description="Indices into Task.gold.")
    reveals: list[str] = Field(
        default_factory=list, description="Keys of hidden facts this sub-goal may need."
    )
    kind: Literal["request", "refusal"] = Field(
        "request", description="'refusal': a request the tools cannot serve; the assistant declines it."
    )
    answers: list[str] = Field(default_factory=list, description="Answer facts this sub-goal asks for.")
    decline: str = Field("", description="For a refusal: what the assistant cannot do, as it says it.")


class Difficulty(BaseModel):
    predicted_pass_rate: float
    measured_pass_rate: float | None = None
    level: Literal["easy", "medium", "hard"] = "medium"
    calibration_action: str | None = Field(default=None, description="e.g. 'harder-depth', 'easier-breadth'.")
    features: dict[str, float] = Field(
        default_factory=dict, description="Structural proxies used for the estimate."
    )


class Task(BaseModel):
    task_id: str
    domain: str
    env: str
    source_docs: list[str] = Field(default_factory=list)
    seed: int = 0
    persona: Persona
    goal: str = Field(description="The whole request in a person's words.")
    intent: str = Field(
        "",
        description="What the person wants, by pattern: find and report, change my own "
        "thing, create with references looked up, cancel or refund, ...",
    )
    subgoals: list[SubGoal] = Field(default_factory=list, description="The goal split into turns.")
    gold: list[GoldStep]
    answer_facts: list[str] = Field(default_factory=list, description="Strings the final answer must state.")
    initial_state: str = Field(
        default="template",
        description="'template' (the env's seeded state) or a path/ref to a saved snapshot.",
    )
    reward: RewardSpec
    difficulty: Difficulty
    checks_passed: list[str] = Field(default_factory=list)
    tools: list[str] = Field(
        default_factory=list, description="Tools offered to the agent (default: all of the env)."
    )
    turn_limit: int = 30


def write_tasks(tasks: Iterable[Task], path: str | os.PathLike) -> Path:
    """Write tasks as JSON Lines, atomically; a ``.gz`` path is gzip-compressed, byte-stable
    (no timestamp or name in the header), for files kept under version control."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    try:
        with tmp.open("wb") as raw:
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if p.suffix == ".gz" else None
            with io.TextIOWrapper(gz or raw, encoding="utf-8", newline="\n") as fh:
                for t in tasks:
                    fh.write(json.dumps(t.model_dump(mode="json"), sort_keys=True) + "\n")
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def load_tasks(path: str | os.PathLike) -> Iterator[Task]:
    """Read tasks written by ``write_tasks``; a line that is not a task is a ConfigError naming it."""
    p = Path(path)
    with gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else p.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield Task.model_validate_json(line)
                except ValidationError as e:
                    first = e.errors()[0]
                    where = ".".join(str(x) for x in first["loc"])
                    raise ConfigError(
                        f"{path}:{i}: not a task ({where + ': ' if where else ''}{first['msg']}; "
                        f"{e.error_count()} error(s))"
                    ) from None
