"""The real small model for the ``model`` tests: one llama.cpp server for the whole session.

``ENVFACTORY_TEST_BASE_URL`` and ``ENVFACTORY_TEST_MODEL`` point the same tests at a server that
is already running (``vllm serve`` on a GPU machine) instead of starting the local one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Served:
    base_url: str
    model: str


@pytest.fixture(scope="session")
def local_server() -> Iterator[Served]:
    url, name = os.environ.get("ENVFACTORY_TEST_BASE_URL"), os.environ.get("ENVFACTORY_TEST_MODEL")
    if url and name:
        yield Served(url, name)
        return
    from envfactory.llm import LocalModelServer

    # 16k tokens of context: the explorer agent's prompt carries the EnvSpec schema and a draft
    with LocalModelServer(n_ctx=16384, startup_timeout=300) as server:
        yield Served(server.base_url, server.model)


@pytest.fixture(scope="session")
def local_client(local_server: Served) -> Callable[..., object]:
    """A client for the served model with a hard timeout, no retries and a small default max_tokens."""
    from envfactory.llm import OpenAICompatModel

    def make(max_tokens: int, timeout: float = 300) -> OpenAICompatModel:
        return OpenAICompatModel(
            local_server.base_url, local_server.model, timeout=timeout, max_retries=0, max_tokens=max_tokens
        )

    return make
