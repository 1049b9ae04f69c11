"""What the runner says to a model and how it reads the reply: prompts, tools, decoding, and
the run's data shapes (``EvalConfig``, ``EntryResult``, ``EvalReport``)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..llm import ChatMessage, ChatResponse
from .bfcl_format import BfclFormatError, parse_calls
from .categories import CATEGORIES
from .suite_model import SuiteEntry

__all__ = [
    "PROMPT_SYSTEM",
    "FC_MULTI_TURN_SYSTEM",
    "ADDITIONAL_FUNCTION_PROMPT",
    "BFCL_MAX_STEPS",
    "EvalConfig",
    "EntryResult",
    "EvalReport",
    "Usage",
    "decode_reply",
    "openai_tools",
    "prompt_messages",
]

PROMPT_SYSTEM = (
    "You are an expert in composing functions. You are given a question and a set of possible "
    "functions. Based on the question, you will need to make one or more function/tool calls to "
    "achieve the purpose. If none of the functions can be used, point it out. If the given question "
    "lacks the parameters required by the function, also point it out. You should only return the "
    "function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]\n"
    "You SHOULD NOT include any other text in the response.\n\n"
    "At each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request "
    "to the best of your ability. Once you have no more functions to call, reply in plain text.\n\n"
    "Here is a list of functions in JSON format that you can invoke.\n{functions}\n"
)
FC_MULTI_TURN_SYSTEM = (
    "You are a helpful assistant with tools. Use them to do what the user asks; when the request "
    "is done, reply to the user in plain text."
)
# BFCL's user message for a turn where held-out functions come back (default_prompts.py).
ADDITIONAL_FUNCTION_PROMPT = "I have updated some more functions you can choose from. What about now?"
BFCL_MAX_STEPS = 20  # BFCL's MAXIMUM_STEP_LIMIT: one more step than this force-quits the episode


@dataclass
class EvalConfig:
    """Settings of a run.

    loop: ``"bfcl"`` (default) runs multi-turn entries as BFCL's inference loop does: a reply that
        does not decode (malformed tool-call arguments, a text reply) ends the turn; more than
        ``max_steps_per_turn`` (20) steps with calls force-quits the episode, and the turns not
        reached make it invalid (``multi_turn:force_terminated``). ``"lenient"`` is envfactory's
        earlier loop: a malformed call gets an error result and the turn goes on; a turn is cut
        after ``max_steps_per_turn`` replies and scored as it stands.
    trials: runs per multi-turn entry (pass^k over them); single-turn entries run once.
    """

    categories: tuple[str, ...] = CATEGORIES
    mode: Literal["fc", "prompt"] = "fc"
    concurrency: int = 8
    limit: int | None = None  # entries per category
    max_steps_per_turn: int = BFCL_MAX_STEPS
    user: Literal["subgoals", "simulator"] = "subgoals"
    matching: Literal["greedy", "optimal"] = "greedy"
    seed: int = 0
    loop: Literal["bfcl", "lenient"] = "bfcl"
    trials: int = 1


@dataclass
class EntryResult:
    """One entry's outcome. ``model_calls``: single-turn decoded calls (None: did not decode);
    ``turns``: multi-turn, per turn the calls made (call strings), their results and the verdict;
    ``trial_valid``: multi-turn with trials > 1, the verdict of each trial (``valid`` is all)."""

    id: str
    category: str
    valid: bool
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)
    model_calls: list[dict[str, Any]] | None = None
    raw_output: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)
    reward: dict[str, Any] | None = None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model_error: str | None = None
    trial_valid: list[bool] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EvalReport:
    suite: str
    agent: str
    mode: str
    config: dict[str, Any]
    results: list[EntryResult]
    wall_s: float = 0.0


_OPENAI_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def _openai_schema(prop: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k not in ("type", "items", "properties")}
    kind = prop.get("type")
    kind = _OPENAI_TYPES.get(kind, kind) if kind else None
    if kind:
        out["type"] = kind
    if "items" in prop:
        out["items"] = _openai_schema(prop["items"])
    if "properties" in prop:
        out["properties"] = {k: _openai_schema(v) for k, v in prop["properties"].items()}
    return out


def openai_tools(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs -> OpenAI ``tools`` (``dict`` -> ``object``, ``float`` -> ``number``)."""
    return [
        {
            "type": "function",
            "function": {
                "name": f["name"],
                "description": f.get("description", ""),
                "parameters": _openai_schema(f.get("parameters", {"type": "dict", "properties": {}})),
            },
        }
        for f in functions
    ]


def decode_reply(response: ChatResponse, mode: str) -> list[dict[str, Any]] | None:
    """The calls in a reply, in BFCL's decoded form; None when they do not decode.

    fc: a text reply (no tool calls) does not decode, as in BFCL's FC handlers (its decoder
    iterates the tool calls and fails on text): single-turn that is ``ast_decoder:decoder_failed``
    and an irrelevance pass. So do malformed arguments. prompt: BFCL's call strings, decoded with
    time and size bounds (:func:`~envfactory.evaluation.bfcl_format.parse_calls`).
    """
    if mode == "fc":
        calls = response.tool_calls
        if not calls or any(not c.is_valid for c in calls):
            return None
        return [{c.name: dict(c.arguments)} for c in calls]
    text = response.content.strip()
    if not text:
        return None
    try:
        return parse_calls(text)
    except BfclFormatError:
        return None


def prompt_messages(entry: SuiteEntry, mode: str) -> list[ChatMessage]:
    if mode == "prompt":
        return [ChatMessage.system(PROMPT_SYSTEM.format(functions=json.dumps(entry.functions, indent=1)))]
    if entry.is_multi_turn:
        return [ChatMessage.system(FC_MULTI_TURN_SYSTEM)]
    return []


class Usage:
    """Requests, tokens and latency of one entry."""

    def __init__(self) -> None:
        self.requests = self.prompt = self.completion = 0
        self.latency = 0.0

    def add(self, response: ChatResponse, started: float) -> None:
        self.requests += 1
        self.prompt += response.usage.prompt_tokens
        self.completion += response.usage.completion_tokens
        self.latency += response.latency_s or (time.perf_counter() - started)

    def fill(self, result: EntryResult) -> EntryResult:
        result.requests, result.prompt_tokens = self.requests, self.prompt
        result.completion_tokens, result.latency_s = self.completion, round(self.latency, 6)
        return result
