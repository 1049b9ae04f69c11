"""The real small model for the ``model`` tests: one llama.cpp server for the whole session.

``ENVFACTORY_TEST_BASE_URL`` and ``ENVFACTORY_TEST_MODEL`` point the same tests at a server that
is already running (``vllm serve`` on a GPU machine) instead of starting the local one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest


class Served:
    """The served model. A local server that died (llama.cpp crashed on a request) is started
    again when the next test asks for its URL; ``restarts`` counts that."""

    def __init__(self, base_url: str | None, model: str) -> None:
        self._url, self.model, self.restarts = base_url, model, 0
        self._server: Any = None

    @property
    def base_url(self) -> str:
        if self._url is not None:
            return self._url
        proc = getattr(self._server, "_proc", None)
        if self._server is None or proc is None or proc.poll() is not None:
            from envfactory.llm import LocalModelServer

            if self._server is not None:
                self.restarts += 1
                print(f"[llama.cpp server exited: {self._server.log_tail()}; restarting]")
                self._server.stop()
            # 16k tokens of context: the explorer agent's prompt carries the EnvSpec schema and a draft
            self._server = LocalModelServer(n_ctx=16384, startup_timeout=300).start()
        return str(self._server.base_url)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()


@pytest.fixture(scope="session")
def local_server() -> Iterator[Served]:
    url, name = os.environ.get("ENVFACTORY_TEST_BASE_URL"), os.environ.get("ENVFACTORY_TEST_MODEL")
    served = Served(url, name) if url and name else Served(None, "gemma-3-270m")
    try:
        served.base_url  # noqa: B018 - start it (and fail early) before the first test
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="session")
def local_client(local_server: Served) -> Callable[..., object]:
    """A client for the served model with a hard timeout, no retries and a small default max_tokens."""
    from envfactory.llm import OpenAICompatModel

    def make(max_tokens: int, timeout: float = 300) -> OpenAICompatModel:
        return OpenAICompatModel(
            local_server.base_url, local_server.model, timeout=timeout, max_retries=0, max_tokens=max_tokens
        )

    return make
