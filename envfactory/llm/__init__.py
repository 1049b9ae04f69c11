"""All model access in envfactory: one small ``ChatModel`` protocol and its backends.

- ``OpenAICompatModel``: an OpenAI-compatible HTTP endpoint (what ``vllm serve`` exposes).
- ``VLLMModel``: vLLM in-process (the ``vllm`` extra).
- ``LocalModelServer``: a real small model on CPU (Gemma 3 270M behind llama.cpp's server; the
  ``local`` extra), reached through ``OpenAICompatModel`` like any endpoint.
- ``NoModel``: the default; every call raises ``ModelError`` saying how to configure one.

``ScriptedOpenAIServer`` is a test double (replies written by a test, not a model) for
testing the LLM paths offline. Every backend records its calls in a ``UsageLedger``.

``BACKENDS`` maps each backend name (``ModelConfig.backend``) to its factory. Names load on
first use (PEP 562): ``from envfactory.llm import ChatMessage`` does not import httpx.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        CallRecord,
        ChatMessage,
        ChatModel,
        ChatRequest,
        ChatResponse,
        MessageLike,
        NoModel,
        ToolCall,
        Usage,
        UsageLedger,
        UsageSummary,
        normalize_messages,
        to_openai_tools,
    )
    from .config import (
        ModelConfig,
        build_chat_model,
        load_model_config,
    )
    from .local import (
        LOCAL_MODEL_NAME,
        LocalModelServer,
        find_local_gguf,
    )
    from .openai_compat import (
        OpenAICompatModel,
    )
    from .registry import (
        BACKENDS,
    )
    from .scripted import (
        Delay,
        ErrorReply,
        RecordedRequest,
        Reply,
        ScriptedOpenAIServer,
        ScriptedToolCall,
    )
    from .vllm_backend import (
        VLLMModel,
        parse_text_tool_calls,
    )

_LAZY = {
    "CallRecord": "base",
    "ChatMessage": "base",
    "ChatModel": "base",
    "ChatRequest": "base",
    "ChatResponse": "base",
    "MessageLike": "base",
    "NoModel": "base",
    "ToolCall": "base",
    "Usage": "base",
    "UsageLedger": "base",
    "UsageSummary": "base",
    "normalize_messages": "base",
    "to_openai_tools": "base",
    "ModelConfig": "config",
    "build_chat_model": "config",
    "load_model_config": "config",
    "BACKENDS": "registry",
    "LOCAL_MODEL_NAME": "local",
    "LocalModelServer": "local",
    "find_local_gguf": "local",
    "OpenAICompatModel": "openai_compat",
    "Delay": "scripted",
    "ErrorReply": "scripted",
    "RecordedRequest": "scripted",
    "Reply": "scripted",
    "ScriptedOpenAIServer": "scripted",
    "ScriptedToolCall": "scripted",
    "VLLMModel": "vllm_backend",
    "parse_text_tool_calls": "vllm_backend",
}

__all__ = [
    "BACKENDS",
    "CallRecord",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Delay",
    "ErrorReply",
    "LOCAL_MODEL_NAME",
    "LocalModelServer",
    "MessageLike",
    "ModelConfig",
    "NoModel",
    "OpenAICompatModel",
    "RecordedRequest",
    "Reply",
    "ScriptedOpenAIServer",
    "ScriptedToolCall",
    "ToolCall",
    "Usage",
    "UsageLedger",
    "UsageSummary",
    "VLLMModel",
    "build_chat_model",
    "find_local_gguf",
    "load_model_config",
    "normalize_messages",
    "parse_text_tool_calls",
    "to_openai_tools",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
