"""Model backends by name: ``ModelConfig.backend`` picks one of ``BACKENDS``.

Each factory takes the validated ``ModelConfig`` and the ``UsageLedger`` to record into.
Backends load on first use: httpx for "openai", the ``vllm`` extra for "vllm".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import ChatModel, UsageLedger
    from .config import ModelConfig

__all__ = ["BACKENDS", "BackendFactory"]

BackendFactory = Callable[["ModelConfig", "UsageLedger"], "ChatModel"]


def _none(config: ModelConfig, ledger: UsageLedger) -> ChatModel:
    from .base import NoModel

    return NoModel(ledger)


def _openai(config: ModelConfig, ledger: UsageLedger) -> ChatModel:
    from .openai_compat import OpenAICompatModel

    assert config.base_url and config.model  # checked by ModelConfig
    return OpenAICompatModel(
        config.base_url,
        config.model,
        api_key=os.environ.get(config.api_key_env) or None,
        timeout=config.timeout,
        max_retries=config.max_retries,
        concurrency=config.concurrency,
        ledger=ledger,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
    )


def _vllm(config: ModelConfig, ledger: UsageLedger) -> ChatModel:
    from .vllm_backend import VLLMModel

    assert config.model  # checked by ModelConfig
    return VLLMModel(config.model, ledger=ledger, temperature=config.temperature, **config.vllm_engine_kwargs)


BACKENDS: dict[str, BackendFactory] = {
    "none": _none,  # the default: every call raises ModelError saying how to configure a model
    "openai": _openai,  # an OpenAI-compatible HTTP endpoint (vllm serve)
    "vllm": _vllm,  # vLLM in-process (the vllm extra)
}
