"""The ChatModel protocol, the chat data model it speaks, and the usage ledger.

Every model call in envfactory goes through ``ChatModel.complete``. Messages, tool calls
and responses use the OpenAI chat-completions shapes, because that is what ``vllm serve``
and every other serving stack we target exposes. Every backend records each call into a
``UsageLedger`` so that the token and time cost of a build, a synthesis run or an eval can
be reported.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envfactory.errors import ModelError

__all__ = [
    "CallRecord",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "MessageLike",
    "NoModel",
    "ToolCall",
    "Usage",
    "UsageLedger",
    "UsageSummary",
    "normalize_messages",
    "to_openai_tools",
]

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One function call requested by the assistant.

    ``arguments`` is the parsed JSON object. When the model emitted arguments that are not
    a JSON object, ``arguments`` is empty, ``raw_arguments`` keeps the text as sent and
    ``parse_error`` says what was wrong: a malformed call is data for the caller (an agent
    loop can hand the error back to the model), not a crash.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    parse_error: str | None = None

    @property
    def is_valid(self) -> bool:
        return self.parse_error is None

    @classmethod
    def from_raw(cls, id: str, name: str, raw: Any) -> ToolCall:
        """Build a call from the ``function.arguments`` a server sent (a JSON string, or
        already a dict on lenient servers); never raises on bad arguments."""
        if isinstance(raw, Mapping):
            return cls(id=id, name=name, arguments=dict(raw), raw_arguments=json.dumps(raw))
        text = "" if raw is None else str(raw)
        if not text.strip():
            # An empty string is what several servers send for a call without parameters.
            return cls(id=id, name=name, arguments={}, raw_arguments=text)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            return cls(id=id, name=name, raw_arguments=text, parse_error=f"arguments are not valid JSON: {e}")
        if not isinstance(value, dict):
            return cls(
                id=id,
                name=name,
                raw_arguments=text,
                parse_error=f"arguments must be a JSON object, got {type(value).__name__}",
            )
        return cls(id=id, name=name, arguments=value, raw_arguments=text)

    def to_openai(self) -> dict[str, Any]:
        # Send back exactly what the model wrote, so a replayed conversation is faithful.
        raw = self.raw_arguments if self.raw_arguments or self.parse_error else json.dumps(self.arguments)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": raw}}


class ChatMessage(BaseModel):
    """One message in OpenAI chat format."""

    model_config = ConfigDict(extra="ignore")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    # 0 on an assistant message not to learn from (a call in a wrong form, kept so the recovery after
    # it makes sense): the ``weight`` key of OpenAI's chat fine-tuning format
    weight: int | None = None

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str | None = None, tool_calls: list[ToolCall] | None = None) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tool_calls or None)

    @classmethod
    def tool(cls, content: str, tool_call_id: str, name: str | None = None) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> ChatMessage:
        """Parse a message as a server returns it (tool-call arguments as JSON strings)."""
        calls = None
        raw_calls = data.get("tool_calls")
        if raw_calls:
            calls = []
            for i, c in enumerate(raw_calls):
                fn = c.get("function") or {}
                calls.append(
                    ToolCall.from_raw(c.get("id") or f"call_{i}", fn.get("name") or "", fn.get("arguments"))
                )
        content = data.get("content")
        if isinstance(content, list):  # content parts: keep the text
            content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
        return cls(
            role=data.get("role") or "assistant",
            content=content,
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )

    @property
    def text(self) -> str:
        """The content as plain text ("" when there is none)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.get("text", "") for p in self.content)

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content if self.content is not None else ""}
        if self.tool_calls:
            out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


MessageLike = ChatMessage | Mapping[str, Any]


def normalize_messages(messages: Sequence[MessageLike]) -> list[ChatMessage]:
    """Accept ``ChatMessage`` objects or OpenAI-format dicts; return ``ChatMessage`` objects."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ModelError("messages must be a list of chat messages")
    out = []
    for i, m in enumerate(messages):
        if isinstance(m, ChatMessage):
            out.append(m)
        elif isinstance(m, Mapping):
            try:
                out.append(
                    ChatMessage.from_openai(m) if m.get("tool_calls") else ChatMessage.model_validate(dict(m))
                )
            except ValidationError as e:
                raise ModelError(
                    f"chat message #{i} is invalid: {e.errors()[0]['msg']} ({dict(m)!r:.200})"
                ) from e
        else:
            raise ModelError(f"a chat message must be a ChatMessage or a dict, got {type(m).__name__}")
    return out


def to_openai_tools(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """Normalize tool declarations to the OpenAI function format.

    Accepts ``{"type": "function", "function": {...}}`` as is, a bare
    ``{"name", "description", "parameters"}`` dict, and MCP tool declarations
    (``name``, ``description``, ``inputSchema``; dicts or pydantic objects such as
    ``mcp.types.Tool``).
    """
    if tools is None:
        return None
    out = []
    for t in tools:
        if hasattr(t, "model_dump") and not isinstance(t, Mapping):
            t = t.model_dump(by_alias=True, exclude_none=True)
        if not isinstance(t, Mapping):
            raise ModelError(f"a tool must be a dict, got {type(t).__name__}")
        if t.get("type") == "function" and isinstance(t.get("function"), Mapping):
            out.append(dict(t))
            continue
        if "name" not in t:
            raise ModelError(f"a tool declaration needs a name: {dict(t)!r:.200}")
        params = t.get("parameters", t.get("inputSchema")) or {"type": "object", "properties": {}}
        fn: dict[str, Any] = {"name": t["name"], "parameters": params}
        if t.get("description"):
            fn["description"] = t["description"]
        out.append({"type": "function", "function": fn})
    return out


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChatResponse(BaseModel):
    """The assistant's reply to one ``complete`` call."""

    message: ChatMessage
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0  # wall time of the whole call, retries included
    model: str = ""

    @property
    def content(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls or []


class ChatRequest(BaseModel):
    """The arguments of one ``complete`` call, for batch APIs."""

    messages: list[ChatMessage]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None
    seed: int | None = None

    @classmethod
    def coerce(cls, value: ChatRequest | Mapping[str, Any] | Sequence[MessageLike]) -> ChatRequest:
        """A ChatRequest, a dict of ``complete`` keyword arguments, or a bare message list."""
        if isinstance(value, ChatRequest):
            return value
        if isinstance(value, Mapping):
            data = dict(value)
            data["messages"] = normalize_messages(data.get("messages") or [])
            try:
                return cls.model_validate(data)
            except ValidationError as e:
                raise ModelError(
                    f"invalid chat request: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}"
                ) from e
        return cls(messages=normalize_messages(value))

    def kwargs(self) -> dict[str, Any]:
        return {
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": self.response_format,
            "seed": self.seed,
        }


@runtime_checkable
class ChatModel(Protocol):
    """What every model backend provides. Backends may also offer ``async acomplete``
    with the same arguments, and expose the ``UsageLedger`` they record into as ``ledger``.

    ``tools`` are OpenAI function declarations (see ``to_openai_tools`` for the accepted
    shapes); ``tool_choice`` is "auto", "none", "required", a tool name, or the OpenAI
    dict; ``response_format`` is the OpenAI dict (e.g. ``{"type": "json_object"}``).
    Raises ``ModelError`` when no usable reply could be had.
    """

    def complete(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[Any] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> ChatResponse: ...


# --- the ledger ---------------------------------------------------------------------------


class CallRecord(BaseModel):
    """One model call as the ledger saw it (retries of one call are one record)."""

    model: str
    ok: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None


class UsageSummary(BaseModel):
    """Totals over the calls in a ledger. Latency statistics cover every call, failed ones
    included (a timed-out call costs time too); they are 0.0 when there were no calls."""

    calls: int = 0
    ok: int = 0
    failed: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_total_s: float = 0.0
    latency_mean_s: float = 0.0
    latency_p50_s: float = 0.0
    latency_p99_s: float = 0.0
    models: list[str] = Field(default_factory=list)


def _percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile: an observed value, never an interpolation."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


class UsageLedger:
    """A thread-safe record of every model call: tokens, latency, model, ok or failed.

    Share one ledger between backends to report the cost of a whole run.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []

    def record(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)

    def record_ok(self, response: ChatResponse, *, attempts: int = 1) -> None:
        u = response.usage
        self.record(
            CallRecord(
                model=response.model,
                ok=True,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                total_tokens=u.total_tokens,
                latency_s=response.latency_s,
                attempts=attempts,
            )
        )

    def record_failure(self, model: str, error: str, *, latency_s: float = 0.0, attempts: int = 1) -> None:
        self.record(CallRecord(model=model, ok=False, latency_s=latency_s, attempts=attempts, error=error))

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def summary(self, model: str | None = None) -> UsageSummary:
        """Totals, counts and latency statistics, optionally for one model only."""
        recs = [r for r in self.records if model is None or r.model == model]
        lat = sorted(r.latency_s for r in recs)
        total_lat = sum(lat)
        return UsageSummary(
            calls=len(recs),
            ok=sum(r.ok for r in recs),
            failed=sum(not r.ok for r in recs),
            attempts=sum(r.attempts for r in recs),
            prompt_tokens=sum(r.prompt_tokens for r in recs),
            completion_tokens=sum(r.completion_tokens for r in recs),
            total_tokens=sum(r.total_tokens for r in recs),
            latency_total_s=total_lat,
            latency_mean_s=total_lat / len(lat) if lat else 0.0,
            latency_p50_s=_percentile(lat, 50),
            latency_p99_s=_percentile(lat, 99),
            models=sorted({r.model for r in recs}),
        )


# --- the no-model backend -----------------------------------------------------------------

NO_MODEL_MESSAGE = (
    "no model configured: pass --model and --base-url (an OpenAI-compatible endpoint such as "
    "`vllm serve`), or set backend in a model config file"
)


class NoModel:
    """The default backend: there is no model. Every call raises ``ModelError`` saying how
    to configure one, and is recorded in the ledger as a failed call."""

    model = "none"

    def __init__(self, ledger: UsageLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else UsageLedger()

    def complete(self, messages: Sequence[MessageLike], **kwargs: Any) -> ChatResponse:
        self.ledger.record_failure(self.model, NO_MODEL_MESSAGE)
        raise ModelError(NO_MODEL_MESSAGE)

    async def acomplete(self, messages: Sequence[MessageLike], **kwargs: Any) -> ChatResponse:
        return self.complete(messages, **kwargs)
