"""Model settings (``ModelConfig``), loading them from YAML, and building the backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from envfactory.errors import ConfigError
from envfactory.llm.base import ChatModel, UsageLedger

__all__ = ["ModelConfig", "build_chat_model", "load_model_config"]


class ModelConfig(BaseModel):
    """Which model to use and how to reach it.

    ``backend`` is "none" (the default: no model), "openai" (an OpenAI-compatible HTTP
    endpoint such as ``vllm serve``) or "vllm" (in-process, needs the ``vllm`` extra).
    When ``backend`` is not given and ``base_url`` is, "openai" is assumed, so CLI options
    ``--model M --base-url U`` are enough. The API key is read from the environment
    variable named by ``api_key_env`` (never stored in the file); ``vllm serve`` without
    ``--api-key`` needs none. ``vllm_engine_kwargs`` go to ``vllm.LLM`` for backend "vllm".
    """

    model_config = ConfigDict(extra="forbid")

    backend: Literal["none", "openai", "vllm"] = "none"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)
    concurrency: int = Field(default=4, ge=1, le=1024)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    vllm_engine_kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _infer_backend(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("backend") is None:
            data = {k: v for k, v in data.items() if k != "backend"}
            if data.get("base_url"):
                data["backend"] = "openai"
        return data

    @model_validator(mode="after")
    def _check_backend_fields(self) -> ModelConfig:
        if self.backend == "openai" and not (self.base_url and self.model):
            raise ValueError("backend 'openai' needs both base_url (e.g. http://127.0.0.1:8000/v1) and model")
        if self.backend == "vllm" and not self.model:
            raise ValueError("backend 'vllm' needs model (a local path or model name)")
        return self


def _format_validation_error(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def load_model_config(path: str | Path) -> ModelConfig:
    """Read a ``ModelConfig`` from a YAML file; any problem is a ``ConfigError`` naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{p}: cannot read model config: {e.strerror or e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: invalid YAML: {e}") from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: a model config must be a mapping of fields, got {type(data).__name__}")
    try:
        return ModelConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{p}: invalid model config: {_format_validation_error(e)}") from e


def build_chat_model(config: ModelConfig, ledger: UsageLedger | None = None) -> ChatModel:
    """The backend ``config`` describes (``registry.BACKENDS``), recording into ``ledger`` (a new one if None)."""
    from envfactory.llm.registry import BACKENDS

    return BACKENDS[config.backend](config, ledger if ledger is not None else UsageLedger())
