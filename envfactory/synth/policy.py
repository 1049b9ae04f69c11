"""The assistant side of a rollout: the gold-driven oracle (no model) and a teacher model.

A policy starts an episode per rollout (``policy.begin(task, env, tools)``); the episode's
``act(messages)`` returns the next assistant message (text, tool calls, or both), or ``None``
when it has nothing more to say.

- ``OraclePolicy``: replays the task's gold calls, sub-goal by sub-goal, in gold order (so
  every read sees the state it was planned against), with a short natural message before
  each call. Before the first gold call that needs a hidden fact it asks the user for it;
  before some writes it asks for confirmation; it closes each sub-goal with a summary and the
  last one with a final answer that states every ``answer_facts`` string. It needs no model
  and is deterministic for a seed.
- ``TeacherPolicy(model)``: OpenAI-compatible tool calling with the environment's tools as
  JSON Schemas. Rollouts are kept only when they earn full reward (rejection sampling, up to
  ``attempts`` tries per task; see ``envfactory.synth.rollout.run_task``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..llm import ChatMessage, ChatModel
from ..spec import Task, tool_input_schema
from .oracle_script import call_id, groups, write_script

__all__ = [
    "Episode",
    "Policy",
    "OraclePolicy",
    "TeacherPolicy",
    "build_tool_schemas",
    "build_system_prompt",
    "call_id",
]


class Episode(Protocol):
    def act(self, messages: list[ChatMessage]) -> ChatMessage | None: ...


class Policy(Protocol):
    name: str
    attempts: int

    def begin(self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0) -> Episode: ...


def build_tool_schemas(env: Any, names: list[str] | None = None) -> list[dict[str, Any]]:
    """The env's tools (or ``names`` of them, in that order) in OpenAI function format."""
    spec = env.spec
    wanted = names or [t.name for t in spec.tools]
    out = []
    for n in wanted:
        t = spec.tool(n)
        out.append(
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or t.name.replace("_", " "),
                    "parameters": tool_input_schema(t),
                },
            }
        )
    return out


def account_context(env: Any) -> str:
    """What the deployment tells the assistant about the account (``account_roots``: the one project
    every path names, which no operation lists), as a sentence; '' when there is nothing to tell."""
    from ..graph.state import state_index
    from ..spec import account_roots

    spec = env.spec
    bits = []
    for name in sorted(account_roots(spec)):
        rows = state_index(env).rows.get(name) or []
        if len(rows) == 1:
            pk = spec.entity(name).primary_key
            bits.append(f"one {name.replace('_', ' ')} ({pk.replace('_', ' ')} {rows[0][pk]})")
        else:
            return ""
    if not bits:
        return ""
    return f"This account has {' and '.join(bits)}; use these where a tool asks for them.\n"


def build_system_prompt(task: Task, env: Any) -> str:
    spec = env.spec
    desc = (spec.description or f"the {spec.name.replace('_', ' ')} service").strip()
    return (
        f"You are a helpful assistant for {desc}\n"
        f"The current date and time is {spec.clock}.\n"
        f"{account_context(env)}"
        "Use the tools to look things up and to act for the user. Ask the user for any detail you need "
        "and do not have; never invent ids or values. When a request is done, reply with a short answer "
        "that states the results."
    )


# ---- the oracle ---------------------------------------------------------------------------------


@dataclass
class _OracleEpisode:
    actions: list[ChatMessage]
    i: int = 0

    def act(self, messages: list[ChatMessage]) -> ChatMessage | None:
        if self.i >= len(self.actions):
            return None
        m = self.actions[self.i]
        self.i += 1
        return m


class OraclePolicy:
    """Gold calls with specific messages; asks for hidden facts before the step that needs them,
    answers each sub-goal when it is done, recovers from a rejected call in ``recover_rate`` of the
    runs and declines what the tools cannot do (``oracle_script``)."""

    name = "oracle"
    attempts = 1

    def __init__(self, *, seed: int = 0, confirm_rate: float = 0.3, recover_rate: float = 0.3):
        self.seed = seed
        self.confirm_rate = confirm_rate
        self.recover_rate = recover_rate

    def begin(self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0) -> _OracleEpisode:
        return _OracleEpisode(self.script(task, env, attempt=attempt))

    def groups(self, task: Task) -> list[tuple[int, list[int]]]:
        """(sub-goal index, gold step indices) per turn (see ``oracle_script.groups``)."""
        return groups(task)

    def script(self, task: Task, env: Any, *, attempt: int = 0) -> list[ChatMessage]:
        return write_script(
            task,
            env,
            seed=self.seed,
            attempt=attempt,
            confirm_rate=self.confirm_rate,
            recover_rate=self.recover_rate,
        )


# ---- the teacher --------------------------------------------------------------------------------


@dataclass
class _TeacherEpisode:
    model: ChatModel
    tools: list[dict[str, Any]]
    temperature: float | None
    seed: int
    calls: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def act(self, messages: list[ChatMessage]) -> ChatMessage | None:
        resp = self.model.complete(
            messages,
            tools=self.tools,
            tool_choice="auto",
            temperature=self.temperature,
            seed=self.seed + self.calls,
        )
        self.calls += 1
        self.usage["prompt_tokens"] += resp.usage.prompt_tokens
        self.usage["completion_tokens"] += resp.usage.completion_tokens
        m = resp.message
        # not ChatMessage.assistant: a reply's content may be a list of parts, kept as it came
        return ChatMessage(
            role="assistant", content=m.content if m.content else None, tool_calls=m.tool_calls or None
        )


class TeacherPolicy:
    """A model behind an OpenAI-compatible API drives the assistant side.

    ``attempts``: rollouts tried per task until one earns full reward (rejection sampling);
    each attempt uses seed ``seed + attempt`` and ``temperature``.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        attempts: int = 3,
        temperature: float | None = 0.7,
        seed: int = 0,
        model_name: str | None = None,
    ):
        self.model = model
        self.attempts = max(1, attempts)
        self.temperature = temperature
        self.seed = seed
        self.model_name = model_name or getattr(model, "model", None) or type(model).__name__
        self.name = f"teacher:{self.model_name}"

    def begin(
        self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0
    ) -> _TeacherEpisode:
        return _TeacherEpisode(self.model, tools, self.temperature, self.seed * 1000 + attempt * 100)
