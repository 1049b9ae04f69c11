"""A scripted OpenAI-compatible HTTP server: a TEST DOUBLE, not a model.

``ScriptedOpenAIServer`` answers ``POST /v1/chat/completions`` from a script written by a
test: each request takes the next step (a canned reply, an HTTP error, a delay, or a
callable that builds a reply from the request). Nothing here generates language; every
reply it sends was written in advance by whoever wrote the script, so its output must never
be reported as a model's output or used as evidence of model quality. It exists so the LLM
paths (HTTP client, retries, tool-call parsing, agents) can be tested offline on 127.0.0.1.

    with ScriptedOpenAIServer([Reply("hello"), ErrorReply(500), Reply(tool_calls=[...])]) as srv:
        model = OpenAICompatModel(srv.base_url, "scripted")
        ...
        assert len(srv.chat_requests) == 3

Response ids and ``created`` timestamps are deterministic. When the script is exhausted
(and no ``fallback`` is set) the server answers HTTP 500 with a message saying so.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Delay",
    "ErrorReply",
    "RecordedRequest",
    "Reply",
    "ScriptedOpenAIServer",
    "ScriptedToolCall",
    "count_tokens_roughly",
]

CREATED = 1_700_000_000  # fixed, so replies are byte-identical from run to run
MAX_DELAY_S = 30.0
DEFAULT_MODEL = "scripted-test-double"


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call to put in a scripted reply. ``arguments`` may be a dict (sent as JSON)
    or a string (sent verbatim, which is how tests send malformed arguments)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """A 200 reply. ``usage`` (prompt, completion, total), when not given, is computed from
    a rough token count of the request and of this reply. ``finish_reason`` defaults to
    "tool_calls" when there are tool calls, else "stop"."""

    content: str | None = None
    tool_calls: tuple[ScriptedToolCall | tuple[str, Mapping[str, Any] | str], ...] = ()
    finish_reason: str | None = None
    usage: tuple[int, int, int] | Mapping[str, int] | None = None
    model: str | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error. ``body`` (any JSON value) defaults to the OpenAI error shape
    ``{"error": {"message": message, ...}}``; ``headers`` e.g. ``{"Retry-After": "1"}``."""

    status: int
    message: str = "scripted error"
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (at most 30; cut short when the server shuts down), then answer
    with ``then``: any step, callables included (an empty assistant reply when None).
    Used to exercise client timeouts and concurrency."""

    seconds: float
    then: Any = None

    def __post_init__(self) -> None:
        if not 0 <= self.seconds <= MAX_DELAY_S:
            raise ValueError(f"Delay must be between 0 and {MAX_DELAY_S:g} seconds, got {self.seconds}")


# A callable step receives the request's JSON body and returns a step (or a bare string,
# short for Reply(content=...)).
Responder = Callable[[dict[str, Any]], Reply | ErrorReply | Delay | str]
Step = Reply | ErrorReply | Delay | str | Responder


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received. ``step`` is the index of the script step that
    answered it (None for requests that take no step, -1 for the fallback)."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    step: int | None


_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens_roughly(text: str) -> int:
    """Words and punctuation marks: a rough stand-in for a tokenizer, good for usage numbers."""
    return len(_TOKEN.findall(text))


def _prompt_text(request: Mapping[str, Any]) -> str:
    parts = []
    for m in request.get("messages") or []:
        if isinstance(m, Mapping):
            parts.append(str(m.get("role", "")))
            c = m.get("content")
            parts.append(c if isinstance(c, str) else json.dumps(c))
            if m.get("tool_calls"):
                parts.append(json.dumps(m["tool_calls"]))
    if request.get("tools"):
        parts.append(json.dumps(request["tools"]))
    return " ".join(parts)


class ScriptedOpenAIServer:
    """A real HTTP server on 127.0.0.1 (port chosen by the OS) that replies from a script.

    Use as a context manager, or call ``start()``/``close()``. ``base_url`` ends in ``/v1``.
    ``fallback``, if given, is a step used for every request once the script is exhausted
    (typically a callable, for open-ended conversations). ``requests`` records everything
    received; ``chat_requests`` holds the JSON bodies of chat-completion requests;
    ``max_in_flight`` is the most chat requests that were being handled at once.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        model: str = DEFAULT_MODEL,
        fallback: Step | None = None,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self._script: list[Step] = list(script)
        self._next = 0
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._replies = 0
        self._in_flight = 0
        self.max_in_flight = 0
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        handler = type("_Handler", (_Handler,), {"server_ref": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; cuts short any delay in progress. Bounded: returns within ~2 s."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running; use it as a context manager")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- script and records ----------------------------------------------------------------

    def add(self, *steps: Step) -> None:
        """Append steps to the script (e.g. between phases of a test)."""
        with self._lock:
            self._script.extend(steps)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script) - self._next

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Any]:
        """JSON bodies of the chat-completion requests received, in arrival order."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def _take_step(self) -> tuple[int | None, Step | None]:
        with self._lock:
            if self._next < len(self._script):
                i = self._next
                self._next += 1
                return i, self._script[i]
        if self.fallback is not None:
            return -1, self.fallback
        return None, None

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_id(self) -> int:
        with self._lock:
            self._replies += 1
            return self._replies

    # --- turning steps into HTTP answers ---------------------------------------------------

    def _resolve(self, step: Step, request: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        """(status, headers, JSON body) for one step; waits for Delay steps."""
        for _ in range(8):  # a callable may return a Delay whose `then` is a Reply: bounded
            if isinstance(step, str):
                step = Reply(content=step)
            if isinstance(step, Reply):
                return 200, {}, self._reply_body(step, request)
            if isinstance(step, ErrorReply):
                body = step.body
                if body is None:
                    body = {
                        "error": {
                            "message": step.message,
                            "type": "scripted_error",
                            "param": None,
                            "code": step.status,
                        }
                    }
                return step.status, dict(step.headers), body
            if isinstance(step, Delay):
                self._stopping.wait(step.seconds)
                step = step.then if step.then is not None else Reply(content="")
                continue
            if callable(step):
                try:
                    step = step(request)
                except Exception as e:  # a broken responder is the test's bug: say so over HTTP
                    return (
                        500,
                        {},
                        {"error": {"message": f"scripted responder raised {type(e).__name__}: {e}"}},
                    )
                continue
            return 500, {}, {"error": {"message": f"not a script step: {step!r}"}}
        return 500, {}, {"error": {"message": "scripted responder nested too deeply"}}

    def _reply_body(self, reply: Reply, request: Mapping[str, Any]) -> dict[str, Any]:
        n = self._next_id()
        calls = []
        for i, c in enumerate(reply.tool_calls):
            if not isinstance(c, ScriptedToolCall):
                c = ScriptedToolCall(*c)
            args = c.arguments if isinstance(c.arguments, str) else json.dumps(dict(c.arguments))
            calls.append(
                {
                    "id": c.id or f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": args},
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        if reply.usage is None:
            prompt = count_tokens_roughly(_prompt_text(request))
            completion = count_tokens_roughly((reply.content or "") + " ".join(json.dumps(c) for c in calls))
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        elif isinstance(reply.usage, Mapping):
            usage = dict(reply.usage)
        else:
            p, c_, t = reply.usage
            usage = {"prompt_tokens": p, "completion_tokens": c_, "total_tokens": t}
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": CREATED,
            "model": reply.model or request.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }


class _Handler(BaseHTTPRequestHandler):
    server_ref: ScriptedOpenAIServer  # set on the per-server subclass
    server_version = "ScriptedOpenAI/1"
    timeout = 10  # a stuck client cannot hold a handler thread for long

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass  # the client gave up (e.g. it timed out during a Delay step)

    def do_GET(self) -> None:
        srv = self.server_ref
        srv._record(RecordedRequest("GET", self.path, dict(self.headers), None, None))
        if self.path.rstrip("/") == "/v1/models":
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": srv.model, "object": "model", "created": CREATED, "owned_by": "scripted"}
                    ],
                },
            )
        else:
            self._send(404, {"error": {"message": f"no route for GET {self.path}"}})

    def do_POST(self) -> None:
        srv = self.server_ref
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if self.path.rstrip("/") != "/v1/chat/completions":
            srv._record(RecordedRequest("POST", self.path, dict(self.headers), body, None))
            self._send(404, {"error": {"message": f"no route for POST {self.path}"}})
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            srv._record(RecordedRequest("POST", self.path, dict(self.headers), body, None))
            self._send(
                400, {"error": {"message": "request body must be a JSON object with a 'messages' list"}}
            )
            return
        index, step = srv._take_step()
        srv._record(RecordedRequest("POST", self.path, dict(self.headers), body, index))
        if step is None:
            self._send(
                500,
                {
                    "error": {
                        "message": f"scripted server: script exhausted after {len(srv._script)} steps "
                        f"(request #{len(srv.chat_requests)} has no scripted reply)"
                    }
                },
            )
            return
        srv._enter()
        try:
            status, headers, reply = srv._resolve(step, body)
        finally:
            srv._leave()
        self._send(status, reply, headers)
