"""What the runner evaluates: a model behind a ChatModel, or a reference agent.

An ``Agent`` answers one step of one entry (:class:`AgentContext`) with a ``ChatResponse``.
:class:`ModelAgent` sends the conversation to a ``ChatModel`` (function calling through the
``tools`` parameter in ``fc`` mode; the functions in the system prompt in ``prompt`` mode).

The reference agents read the entry's ground truth and answer the way a model would (tool
calls in ``fc`` mode, BFCL call strings in ``prompt`` mode), so the whole decode-and-score
path runs for them. They exist to show that the metrics discriminate (``registry.REFERENCE_AGENTS``
holds them by name):

- ``oracle``: the gold calls (100% on every category);
- ``noop``: never calls anything (0% where calls are expected, 100% on irrelevance);
- ``random``: one call of a random offered function with random, valid-looking arguments;
- ``drop-one``: the gold calls less one, wherever an entry expects more than one call.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..llm import ChatMessage, ChatModel, ChatResponse, ToolCall
from ..spec import Task
from .bfcl_format import Call, format_calls, ground_truth_to_calls, parse_call
from .suite_model import SuiteEntry

__all__ = [
    "AgentContext",
    "Agent",
    "ModelAgent",
    "OracleAgent",
    "NoopAgent",
    "RandomAgent",
    "DropOneAgent",
    "BareAgent",
    "expected_calls",
]

Mode = Literal["fc", "prompt"]


@dataclass
class AgentContext:
    """One step of one entry: ``turn`` counts user turns, ``step`` the assistant's replies
    within the turn (0 answers the user; later steps follow tool results)."""

    entry: SuiteEntry
    turn: int
    step: int
    mode: Mode
    messages: list[ChatMessage]
    tools: list[dict[str, Any]] | None = None  # OpenAI tool declarations (fc mode)
    task: Task | None = None
    last_turn: bool = True


class Agent(Protocol):
    name: str

    def act(self, ctx: AgentContext) -> ChatResponse: ...


@dataclass
class ModelAgent:
    """A ChatModel (``OpenAICompatModel`` for ``vllm serve``). Raises ``ModelError`` when no
    reply could be had after the model's own retries."""

    model: ChatModel
    temperature: float | None = 0.0
    max_tokens: int | None = None
    name: str = field(default="")

    def __post_init__(self) -> None:
        self.name = self.name or str(getattr(self.model, "model", "model"))

    def act(self, ctx: AgentContext) -> ChatResponse:
        return self.model.complete(
            ctx.messages,
            tools=ctx.tools if ctx.mode == "fc" else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )


# ----------------------------------------------------------------------------- helpers


def _rng(*parts: Any) -> random.Random:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def expected_calls(entry: SuiteEntry, turn: int = 0) -> list[Call]:
    """The calls a perfect model makes: single-turn, the first accepted value of each
    parameter; multi-turn, that turn's gold calls."""
    if entry.is_multi_turn:
        if turn >= len(entry.ground_truth):
            return []
        return [parse_call(c) for c in entry.ground_truth[turn]]
    if entry.category == "irrelevance":
        return []
    if entry.category == "live_relevance":  # any call passes (BFCL's relevance rule)
        return [{entry.functions[0]["name"]: {}}] if entry.functions else []
    return ground_truth_to_calls(entry.ground_truth, entry.functions)


def _reply(name: str, ctx: AgentContext, calls: Sequence[Call], text: str = "") -> ChatResponse:
    if not calls:
        return ChatResponse(
            message=ChatMessage.assistant(text or "I cannot do that with the functions I have."),
            finish_reason="stop",
            model=name,
        )
    if ctx.mode == "prompt":
        return ChatResponse(
            message=ChatMessage.assistant(format_calls(calls)), finish_reason="stop", model=name
        )
    tool_calls = []
    for i, call in enumerate(calls):
        ((fn, args),) = call.items()
        tool_calls.append(
            ToolCall(
                id=f"call_{ctx.turn}_{ctx.step}_{i}", name=fn, arguments=args, raw_arguments=json.dumps(args)
            )
        )
    return ChatResponse(
        message=ChatMessage.assistant(None, tool_calls), finish_reason="tool_calls", model=name
    )


def _final_text(ctx: AgentContext) -> str:
    facts = list(ctx.task.answer_facts) + list(ctx.task.reward.required_facts) if ctx.task else []
    return " ".join(["Done.", *facts]) if ctx.last_turn else "Done."


# ----------------------------------------------------------------------------- reference agents


class OracleAgent:
    """The gold calls at the first step of each turn, then a closing message."""

    name = "oracle"

    def calls(self, ctx: AgentContext) -> list[Call]:
        return expected_calls(ctx.entry, ctx.turn)

    def act(self, ctx: AgentContext) -> ChatResponse:
        calls = self.calls(ctx) if ctx.step == 0 else []
        return _reply(self.name, ctx, calls, _final_text(ctx))


class NoopAgent:
    """Never calls a function."""

    name = "noop"

    def act(self, ctx: AgentContext) -> ChatResponse:
        return _reply(self.name, ctx, [], "I will not call any function.")


class DropOneAgent(OracleAgent):
    """The oracle less one call (chosen by the seed) in entries that expect more than one."""

    name = "drop-one"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def calls(self, ctx: AgentContext) -> list[Call]:
        entry = ctx.entry
        turns = len(entry.ground_truth) if entry.is_multi_turn else 1
        per_turn = [expected_calls(entry, t) for t in range(turns)]
        slots = [(t, i) for t, calls in enumerate(per_turn) for i in range(len(calls))]
        calls = per_turn[ctx.turn] if ctx.turn < turns else []
        if len(slots) <= 1:
            return calls
        t, i = _rng(self.seed, "drop-one", entry.id).choice(slots)
        return [c for j, c in enumerate(calls) if not (ctx.turn == t and j == i)]


class BareAgent(OracleAgent):
    """The gold functions with every argument left out: what a suite must not reward where the
    question states an argument."""

    name = "bare"

    def calls(self, ctx: AgentContext) -> list[Call]:
        return [{name: {}} for call in expected_calls(ctx.entry, ctx.turn) for name in call]


def _random_value(prop: Mapping[str, Any], param: str, rng: random.Random) -> Any:
    if "enum" in prop:
        return rng.choice(prop["enum"])
    kind = prop.get("type", "string")
    if kind == "integer":
        return rng.randint(1, 50)
    if kind == "float":
        return round(rng.uniform(1, 5000), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [_random_value(prop.get("items", {}), param, rng)]
    if kind == "dict":
        return {}
    if param.endswith("_id"):
        return "".join(rng.choices(string.ascii_uppercase, k=2)) + f"{rng.randint(0, 99999):05d}"
    if "date" in param or "Format: YYYY-MM-DD" in prop.get("description", ""):
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return "".join(rng.choices(string.ascii_lowercase, k=8))


class RandomAgent:
    """One call of a random offered function, every parameter filled with a random value of
    its type (enum members, id-shaped strings, dates), at the first step of each turn."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def act(self, ctx: AgentContext) -> ChatResponse:
        if ctx.step > 0 or not ctx.entry.functions:
            return _reply(self.name, ctx, [], "Done.")
        rng = _rng(self.seed, "random", ctx.entry.id, ctx.turn)
        function = rng.choice(ctx.entry.functions)
        properties = function.get("parameters", {}).get("properties", {})
        args = {p: _random_value(prop, p, rng) for p, prop in properties.items()}
        return _reply(self.name, ctx, [{function["name"]: args}])
