"""A ChatModel running vLLM in-process (``vllm.LLM(...).chat``), behind the ``vllm`` extra.

For most uses prefer ``vllm serve`` + ``OpenAICompatModel``: the server applies the
model's own tool-call parser (``--tool-call-parser``) and batches across processes. This
backend suits one-process offline jobs. Offline vLLM returns text only, so tool calls are
recovered best-effort from the two common formats: Hermes-style
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks, or a reply that is
just a JSON object (or list of objects) with ``name`` and ``arguments``/``parameters``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from envfactory.errors import ModelError
from envfactory.llm.base import (
    ChatMessage,
    ChatResponse,
    MessageLike,
    ToolCall,
    Usage,
    UsageLedger,
    normalize_messages,
    to_openai_tools,
)

__all__ = ["VLLMModel", "parse_text_tool_calls"]

MISSING_EXTRA = "in-process vLLM needs the 'vllm' extra: pip install envfactory[vllm]"

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_text_tool_calls(text: str) -> tuple[str | None, list[ToolCall]]:
    """Split generated text into (content, tool calls). Malformed calls are kept with
    ``parse_error`` set rather than dropped, so the caller can tell the model."""
    blocks = _HERMES.findall(text)
    if blocks:
        content = _HERMES.sub("", text).strip() or None
        return content, [_call_from_json(b, i) for i, b in enumerate(blocks)]
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return text, []
        items = value if isinstance(value, list) else [value]
        if items and all(isinstance(v, dict) and "name" in v for v in items):
            return None, [_call_from_json(json.dumps(v), i) for i, v in enumerate(items)]
    return text, []


def _call_from_json(raw: str, index: int) -> ToolCall:
    call_id = f"call_{index}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as e:
        return ToolCall(
            id=call_id, name="", raw_arguments=raw, parse_error=f"tool call is not valid JSON: {e}"
        )
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return ToolCall(id=call_id, name="", raw_arguments=raw, parse_error="tool call has no 'name'")
    args = obj.get("arguments", obj.get("parameters", {}))
    return ToolCall.from_raw(call_id, obj["name"], args)


class VLLMModel:
    """``vllm.LLM`` behind the ChatModel protocol. ``engine_kwargs`` go to ``vllm.LLM``
    (``tensor_parallel_size``, ``max_model_len``, ``dtype`` ...). Calls are serialized:
    one engine, one call at a time; batch through ``vllm serve`` instead."""

    def __init__(
        self,
        model: str,
        *,
        ledger: UsageLedger | None = None,
        temperature: float | None = None,
        **engine_kwargs: Any,
    ) -> None:
        try:
            import vllm  # heavy and optional: imported only here
        except ImportError as e:
            raise ModelError(MISSING_EXTRA) from e
        self._vllm = vllm
        self.model = model
        self.temperature = temperature
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._lock = threading.Lock()
        try:
            self._llm = vllm.LLM(model=model, **engine_kwargs)
        except Exception as e:  # engine start-up failures come in many types
            raise ModelError(f"vLLM could not load {model!r}: {type(e).__name__}: {e}") from e

    def _sampling_params(
        self,
        temperature: float | None,
        max_tokens: int | None,
        seed: int | None,
        response_format: Mapping[str, Any] | None,
    ) -> Any:
        kwargs: dict[str, Any] = {}
        temperature = self.temperature if temperature is None else temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if seed is not None:
            kwargs["seed"] = seed
        if response_format is not None:
            kwargs.update(self._structured(response_format))
        return self._vllm.SamplingParams(**kwargs)

    def _structured(self, response_format: Mapping[str, Any]) -> dict[str, Any]:
        kind = response_format.get("type")
        if kind == "json_schema":
            schema: Any = (response_format.get("json_schema") or {}).get("schema") or {}
        elif kind == "json_object":
            schema = {"type": "object"}
        else:
            return {}
        # The structured-output API moved between vLLM releases; use what this one has.
        sp = self._vllm.sampling_params
        if hasattr(sp, "StructuredOutputsParams"):
            return {"structured_outputs": sp.StructuredOutputsParams(json=schema)}
        if hasattr(sp, "GuidedDecodingParams"):
            return {"guided_decoding": sp.GuidedDecodingParams(json=schema)}
        raise ModelError("this vLLM version has no structured-output support for response_format")

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
    ) -> ChatResponse:
        """One chat completion. ``tool_choice`` other than "none" is advisory offline."""
        msgs = [m.to_openai() for m in normalize_messages(messages)]
        openai_tools = None if tool_choice == "none" else to_openai_tools(tools)
        started = time.perf_counter()
        try:
            params = self._sampling_params(temperature, max_tokens, seed, response_format)
            with self._lock:
                outputs = self._llm.chat(
                    msgs, sampling_params=params, tools=openai_tools or None, use_tqdm=False
                )
            out = outputs[0]
            gen = out.outputs[0]
        except ModelError as e:
            self.ledger.record_failure(self.model, str(e), latency_s=time.perf_counter() - started)
            raise
        except Exception as e:
            message = f"vLLM generation failed: {type(e).__name__}: {e}"
            self.ledger.record_failure(self.model, message, latency_s=time.perf_counter() - started)
            raise ModelError(message) from e
        content, calls = parse_text_tool_calls(gen.text) if openai_tools else (gen.text, [])
        prompt = len(getattr(out, "prompt_token_ids", None) or [])
        completion = len(getattr(gen, "token_ids", None) or [])
        response = ChatResponse(
            message=ChatMessage.assistant(content, calls or None),
            finish_reason="tool_calls" if calls else gen.finish_reason,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion),
            latency_s=time.perf_counter() - started,
            model=self.model,
        )
        self.ledger.record_ok(response)
        return response

    async def acomplete(self, messages: Sequence[MessageLike], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self.complete, messages, **kwargs)
