"""All model access in envfactory: one small ``ChatModel`` protocol and its backends.

- ``OpenAICompatModel``: an OpenAI-compatible HTTP endpoint (what ``vllm serve`` exposes).
- ``VLLMModel``: vLLM in-process (the ``vllm`` extra).
- ``NoModel``: the default; every call raises ``ModelError`` saying how to configure one.

``ScriptedOpenAIServer`` is a test double (replies written by a test, not a model) for
testing the LLM paths offline. Every backend records its calls in a ``UsageLedger``.
"""

from envfactory.llm.base import (
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
from envfactory.llm.config import ModelConfig, build_chat_model, load_model_config
from envfactory.llm.openai_compat import OpenAICompatModel
from envfactory.llm.scripted import Delay, ErrorReply, RecordedRequest, Reply, ScriptedOpenAIServer, ScriptedToolCall
from envfactory.llm.vllm_backend import VLLMModel, parse_text_tool_calls

__all__ = [
    "CallRecord",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Delay",
    "ErrorReply",
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
    "load_model_config",
    "normalize_messages",
    "parse_text_tool_calls",
    "to_openai_tools",
]
