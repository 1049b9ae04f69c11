"""A ChatModel that talks the OpenAI chat-completions API over HTTP.

This is the backend for ``vllm serve`` (and any other OpenAI-compatible server):
``POST {base_url}/chat/completions``, non-streaming. Transient failures (HTTP 5xx and 429,
connection errors, timeouts) are retried with bounded exponential backoff; any other 4xx
fails at once with the server's own message. Every call, ok or failed, is recorded in the
backend's ``UsageLedger``.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from envfactory.errors import ModelError
from envfactory.llm.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    MessageLike,
    Usage,
    UsageLedger,
    normalize_messages,
    to_openai_tools,
)

__all__ = ["OpenAICompatModel"]

# Indirections so tests can observe backoff waits without sleeping.
_sleep = time.sleep
_asleep = asyncio.sleep

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))


@dataclass
class _Outcome:
    """What one HTTP attempt came to."""

    response: ChatResponse | None = None
    retry: bool = False
    error: str = ""
    retry_after: float | None = None


@dataclass
class _LoopState:
    client: httpx.AsyncClient
    semaphore: asyncio.Semaphore
    owned: bool


def _server_message(response: httpx.Response) -> str:
    """The error message a server put in its body (OpenAI, vLLM and FastAPI shapes)."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if body.get(key):
                return str(body[key])
    return str(body)[:500]


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: not worth honouring for a short client-side wait
    return seconds if seconds >= 0 else None


class OpenAICompatModel:
    """A client for an OpenAI-compatible chat-completions endpoint.

    ``base_url`` includes the API prefix, e.g. ``http://127.0.0.1:8000/v1`` for
    ``vllm serve``. ``max_retries`` counts retries after the first attempt. ``concurrency``
    bounds in-flight requests of ``acomplete``/``abatch`` (per event loop) and of
    ``complete``/``batch`` across threads. ``temperature`` and ``max_tokens`` are the defaults for
    calls that do not pass one (a base model may otherwise write until its context is full). Tests may inject ``client``/``transport`` (sync) and
    ``async_client``/``async_transport``; injected clients are not closed by ``close()``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60,
        max_retries: int = 3,
        concurrency: int = 4,
        ledger: UsageLedger | None = None,
        extra_headers: Mapping[str, str] | None = None,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        retry_after_max: float = 30.0,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        async_client: httpx.AsyncClient | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ModelError("OpenAICompatModel needs a base_url such as http://127.0.0.1:8000/v1")
        if not model:
            raise ModelError("OpenAICompatModel needs a model name (the name the server serves)")
        if max_retries < 0 or concurrency < 1 or timeout <= 0 or (max_tokens is not None and max_tokens < 1):
            raise ModelError("max_retries must be >= 0, concurrency >= 1, timeout > 0 and max_tokens >= 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.concurrency = int(concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._headers = {"Accept": "application/json", **(extra_headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=httpx.Timeout(self.timeout), transport=transport)
        self._async_client = async_client
        self._async_transport = async_transport
        self._thread_slots = threading.BoundedSemaphore(self.concurrency)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        self._loops_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAICompatModel(base_url={self.base_url!r}, model={self.model!r})"

    # --- request building and reply parsing ------------------------------------------------

    def _payload(
        self,
        messages: Sequence[MessageLike],
        tools: Sequence[Any] | None,
        tool_choice: str | Mapping[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        response_format: Mapping[str, Any] | None,
        seed: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in normalize_messages(messages)],
            "stream": False,
        }
        openai_tools = to_openai_tools(tools)
        if openai_tools:
            body["tools"] = openai_tools
        if tool_choice is not None:
            if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "required"):
                tool_choice = {"type": "function", "function": {"name": tool_choice}}
            body["tool_choice"] = tool_choice if isinstance(tool_choice, str) else dict(tool_choice)
        temperature = self.temperature if temperature is None else temperature
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = self.max_tokens if max_tokens is None else max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if response_format is not None:
            body["response_format"] = dict(response_format)
        if seed is not None:
            body["seed"] = seed
        return body

    def _parse(self, response: httpx.Response, started: float) -> ChatResponse:
        try:
            data = response.json()
            choice = data["choices"][0]
            message = ChatMessage.from_openai(choice.get("message") or {})
            u = data.get("usage") or {}
            prompt = int(u.get("prompt_tokens") or 0)
            completion = int(u.get("completion_tokens") or 0)
            usage = Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                total_tokens=int(u.get("total_tokens") or prompt + completion),
            )
            return ChatResponse(
                message=message,
                finish_reason=choice.get("finish_reason"),
                usage=usage,
                latency_s=time.perf_counter() - started,
                model=data.get("model") or self.model,
            )
        except (
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
        ) as e:  # pydantic's too (a ValueError)
            raise ModelError(
                f"{self._url('chat/completions')}: unusable reply ({e!r}): {response.text[:300]}"
            ) from e

    def _url(self, path: str) -> str:
        return f"{self.base_url}/{path}"

    def _classify(self, response: httpx.Response, started: float) -> _Outcome:
        status = response.status_code
        if 200 <= status < 300:
            return _Outcome(response=self._parse(response, started))
        error = f"HTTP {status}: {_server_message(response)}"
        if status in _RETRY_STATUS:
            return _Outcome(retry=True, error=error, retry_after=_retry_after(response))
        raise ModelError(f"POST {self._url('chat/completions')} failed with {error}")

    def _transport_outcome(self, e: httpx.TransportError) -> _Outcome:
        if isinstance(e, httpx.TimeoutException):
            return _Outcome(retry=True, error=f"timed out after {self.timeout:g}s ({type(e).__name__})")
        if isinstance(e, (httpx.NetworkError, httpx.RemoteProtocolError)):
            return _Outcome(retry=True, error=f"{type(e).__name__}: {e}")
        raise ModelError(f"POST {self._url('chat/completions')}: {type(e).__name__}: {e}") from e

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None and retry_after <= self.retry_after_max:
            return retry_after
        return min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))

    def _fail(self, started: float, attempts: int, error: str) -> ModelError:
        message = f"POST {self._url('chat/completions')} gave up after {attempts} attempts: {error}"
        self.ledger.record_failure(
            self.model, message, latency_s=time.perf_counter() - started, attempts=attempts
        )
        return ModelError(message)

    def _record_immediate_failure(self, started: float, attempts: int, e: ModelError) -> None:
        self.ledger.record_failure(
            self.model, str(e), latency_s=time.perf_counter() - started, attempts=attempts
        )

    # --- sync -------------------------------------------------------------------------------

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
        """One chat completion; raises ``ModelError`` when no usable reply could be had."""
        body = self._payload(messages, tools, tool_choice, temperature, max_tokens, response_format, seed)
        url = self._url("chat/completions")
        started = time.perf_counter()
        attempts = 0
        while True:
            attempts += 1
            try:
                with self._thread_slots:  # not held during backoff waits, as in acomplete
                    try:
                        r = self._client.post(url, json=body, headers=self._headers)
                    except httpx.TransportError as e:
                        outcome = self._transport_outcome(e)
                    else:
                        outcome = self._classify(r, started)
            except ModelError as e:
                self._record_immediate_failure(started, attempts, e)
                raise
            if outcome.response is not None:
                outcome.response.latency_s = time.perf_counter() - started
                self.ledger.record_ok(outcome.response, attempts=attempts)
                return outcome.response
            if attempts > self.max_retries:
                raise self._fail(started, attempts, outcome.error)
            _sleep(self._wait(attempts, outcome.retry_after))

    def batch(
        self, requests: Sequence[ChatRequest | Mapping[str, Any]], *, return_exceptions: bool = True
    ) -> list[ChatResponse | ModelError]:
        """Run many requests from threads, at most ``concurrency`` at a time, in order.

        A failed request is a ``ModelError`` in its slot (or raised, when
        ``return_exceptions`` is false). Usable from code that has no event loop.
        """
        reqs = [ChatRequest.coerce(r) for r in requests]

        def one(req: ChatRequest) -> ChatResponse | ModelError:
            try:
                return self.complete(req.messages, **req.kwargs())
            except ModelError as e:
                if not return_exceptions:
                    raise
                return e

        if not reqs:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(reqs))) as pool:
            return list(pool.map(one, reqs))

    def list_models(self) -> list[str]:
        """The model ids the server serves (``GET {base_url}/models``)."""
        url = self._url("models")
        try:
            r = self._client.get(url, headers=self._headers)
        except httpx.TransportError as e:
            raise ModelError(f"GET {url}: {type(e).__name__}: {e}") from e
        if r.status_code != 200:
            raise ModelError(f"GET {url} failed with HTTP {r.status_code}: {_server_message(r)}")
        try:
            return [str(m["id"]) for m in r.json()["data"]]
        except (ValueError, KeyError, TypeError) as e:
            raise ModelError(f"GET {url}: unusable reply: {r.text[:300]}") from e

    def check_endpoint(self, timeout: float = 10.0) -> list[str] | None:
        """Fail fast when the endpoint cannot answer: ``GET {base_url}/models`` within ``timeout`` seconds.

        Returns the served model ids, or None when the server has no usable model listing (HTTP
        404/405, an odd body): chat requests may still work there. Raises ``ModelError`` naming the
        cause when the server is unreachable, times out, refuses the credentials or fails.
        """
        url = self._url("models")
        try:
            r = self._client.get(url, headers=self._headers, timeout=min(timeout, self.timeout))
        except httpx.TimeoutException as e:
            raise ModelError(
                f"{self.base_url} did not answer GET /models within {min(timeout, self.timeout):g} s "
                f"({type(e).__name__}); is the server up and is --base-url right?"
            ) from e
        except httpx.TransportError as e:
            raise ModelError(
                f"cannot reach {self.base_url}: {type(e).__name__}: {e}; is the server running "
                "(e.g. vllm serve MODEL) and is --base-url right?"
            ) from e
        if r.status_code in (401, 403):
            raise ModelError(
                f"GET {url}: HTTP {r.status_code}: {_server_message(r)}; check the API key "
                "(--api-key or $OPENAI_API_KEY)"
            )
        if r.status_code in (404, 405):
            return None
        if r.status_code >= 400:
            raise ModelError(f"GET {url} failed with HTTP {r.status_code}: {_server_message(r)}")
        try:
            return [str(m["id"]) for m in r.json()["data"]]
        except (ValueError, KeyError, TypeError):
            return None

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OpenAICompatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- async ------------------------------------------------------------------------------

    def _loop_state(self) -> _LoopState:
        # httpx.AsyncClient and asyncio.Semaphore are bound to the loop they first run on;
        # keep one of each per loop so the model can be used from several asyncio.run calls.
        loop = asyncio.get_running_loop()
        with self._loops_lock:
            state = self._loops.get(loop)
            if state is None:
                if self._async_client is not None:
                    client, owned = self._async_client, False
                else:
                    client = httpx.AsyncClient(
                        timeout=httpx.Timeout(self.timeout), transport=self._async_transport
                    )
                    owned = True
                state = _LoopState(client=client, semaphore=asyncio.Semaphore(self.concurrency), owned=owned)
                self._loops[loop] = state
            return state

    async def acomplete(
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
        """``complete`` for asyncio; at most ``concurrency`` calls are in flight per loop."""
        body = self._payload(messages, tools, tool_choice, temperature, max_tokens, response_format, seed)
        url = self._url("chat/completions")
        state = self._loop_state()
        started = time.perf_counter()
        attempts = 0
        while True:
            attempts += 1
            try:
                async with state.semaphore:  # not held during backoff waits
                    try:
                        r = await state.client.post(url, json=body, headers=self._headers)
                    except httpx.TransportError as e:
                        outcome = self._transport_outcome(e)
                    else:
                        outcome = self._classify(r, started)
            except ModelError as e:
                self._record_immediate_failure(started, attempts, e)
                raise
            if outcome.response is not None:
                outcome.response.latency_s = time.perf_counter() - started
                self.ledger.record_ok(outcome.response, attempts=attempts)
                return outcome.response
            if attempts > self.max_retries:
                raise self._fail(started, attempts, outcome.error)
            await _asleep(self._wait(attempts, outcome.retry_after))

    async def abatch(
        self, requests: Sequence[ChatRequest | Mapping[str, Any]], *, return_exceptions: bool = True
    ) -> list[ChatResponse | ModelError]:
        """Run many requests concurrently (at most ``concurrency`` in flight), in order.

        Each request is a ``ChatRequest`` or a dict of ``complete`` keyword arguments
        (``{"messages": [...], "tools": [...]}``). A failed request is a ``ModelError`` in
        its slot, so one bad item does not sink the batch; with ``return_exceptions=False``
        the first failure is raised instead.
        """
        reqs = [ChatRequest.coerce(r) for r in requests]
        results = await asyncio.gather(
            *(self.acomplete(r.messages, **r.kwargs()) for r in reqs), return_exceptions=True
        )
        out: list[ChatResponse | ModelError] = []
        for res in results:
            if isinstance(res, BaseException):
                if not isinstance(res, ModelError) or not return_exceptions:
                    raise res
            out.append(res)
        return out

    async def aclose(self) -> None:
        """Close the async client of the running loop (and the sync client)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - called outside a loop
            loop = None
        with self._loops_lock:
            state = self._loops.pop(loop, None) if loop is not None else None
        if state is not None and state.owned:
            await state.client.aclose()
        self.close()

    async def __aenter__(self) -> OpenAICompatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
