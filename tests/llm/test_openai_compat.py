"""OpenAICompatModel against the scripted OpenAI-compatible server; config and other backends."""

from __future__ import annotations

import asyncio
import importlib.util

import httpx
import pytest

import envfactory.llm as llm
from envfactory.errors import ConfigError, ModelError
from envfactory.llm import (
    ChatMessage,
    ChatModel,
    Delay,
    ErrorReply,
    ModelConfig,
    NoModel,
    OpenAICompatModel,
    Reply,
    ScriptedOpenAIServer,
    ScriptedToolCall,
    UsageLedger,
    VLLMModel,
    build_chat_model,
    load_model_config,
    openai_compat,
    parse_text_tool_calls,
)

USER = [{"role": "user", "content": "Find flight FL1"}]
TOOLS = [
    {
        "name": "get_flight",
        "description": "Get a flight by id.",
        "parameters": {"type": "object", "properties": {"flight_id": {"type": "string"}}},
    }
]


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """Backoff waits the client asked for, recorded instead of slept."""
    seen: list[float] = []
    monkeypatch.setattr(openai_compat, "_sleep", seen.append)

    async def asleep(s: float) -> None:
        seen.append(s)

    monkeypatch.setattr(openai_compat, "_asleep", asleep)
    return seen


def make(srv: ScriptedOpenAIServer, **kw) -> OpenAICompatModel:
    kw.setdefault("timeout", 5)
    return OpenAICompatModel(srv.base_url, "test-model", **kw)


def test_public_api_is_explicit():
    # Others build on these names; changing the list should be a decision, not an accident.
    assert set(llm.__all__) == {
        "BACKENDS", "LOCAL_MODEL_NAME", "LocalModelServer", "find_local_gguf", "CallRecord", "ChatMessage", "ChatModel", "ChatRequest", "ChatResponse", "Delay", "ErrorReply",
        "MessageLike", "ModelConfig", "NoModel", "OpenAICompatModel", "RecordedRequest", "Reply",
        "ScriptedOpenAIServer", "ScriptedToolCall", "ToolCall", "Usage", "UsageLedger", "UsageSummary",
        "VLLMModel", "build_chat_model", "load_model_config", "normalize_messages", "parse_text_tool_calls",
        "to_openai_tools",
    }  # fmt: skip
    for name in llm.__all__:
        assert hasattr(llm, name), name


def test_backends_registry_is_what_model_config_accepts():
    from typing import get_args

    from envfactory.llm import BACKENDS, ModelConfig, NoModel, build_chat_model

    assert set(BACKENDS) == set(get_args(ModelConfig.model_fields["backend"].annotation))
    assert isinstance(build_chat_model(ModelConfig()), NoModel)
    model = build_chat_model(ModelConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(model, OpenAICompatModel) and model.base_url == "http://127.0.0.1:9/v1"
    model.close()


def test_importing_a_backend_name_does_not_import_httpx():
    import subprocess
    import sys

    code = "import sys, envfactory.llm as l; l.ChatMessage; l.BACKENDS; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_check_endpoint_names_an_unreachable_server_and_lists_a_live_ones_models():
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = OpenAICompatModel(f"http://127.0.0.1:{port}/v1", "m", timeout=5)
    with pytest.raises(ModelError, match=r"cannot reach http://127.0.0.1:\d+/v1: ConnectError"):
        dead.check_endpoint(timeout=2)
    dead.close()
    with ScriptedOpenAIServer(model="tiny") as srv, make(srv) as model:
        assert model.check_endpoint() == ["tiny"]


def test_plain_reply_and_request_shape():
    with ScriptedOpenAIServer(["Hello there."]) as srv, make(srv, api_key="k", temperature=0.3) as model:
        assert isinstance(model, ChatModel)
        r = model.complete([ChatMessage.system("be brief"), *USER], max_tokens=50, seed=7)
        sent = srv.chat_requests[0]
        auth = srv.requests[0].headers["Authorization"]
    assert r.content == "Hello there."
    assert r.finish_reason == "stop" and r.tool_calls == [] and r.model == "test-model"
    assert r.latency_s > 0
    assert sent["model"] == "test-model" and sent["stream"] is False
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.3, 50, 7)
    assert "tools" not in sent
    assert auth == "Bearer k"


def test_a_default_max_tokens_bounds_calls_that_pass_none():
    # a base model without a limit writes until its context is full (minutes on CPU)
    with ScriptedOpenAIServer(["a", "b"]) as srv, make(srv, max_tokens=32) as model:
        model.complete(USER)
        model.complete(USER, max_tokens=8)
        first, second = srv.chat_requests
    assert (first["max_tokens"], second["max_tokens"]) == (32, 8)
    cfg = ModelConfig(base_url="http://127.0.0.1:9/v1", model="m", max_tokens=64)
    built = build_chat_model(cfg)
    assert isinstance(built, OpenAICompatModel) and built.max_tokens == 64
    with pytest.raises(ModelError, match="max_tokens"):
        OpenAICompatModel("http://127.0.0.1:9/v1", "m", max_tokens=0)


def test_tool_calls_are_parsed_and_tools_sent_in_function_format():
    step = Reply(tool_calls=(ScriptedToolCall("get_flight", {"flight_id": "FL1"}, id="call_a"),))
    with ScriptedOpenAIServer([step]) as srv, make(srv) as model:
        r = model.complete(USER, tools=TOOLS, tool_choice="get_flight")
        sent = srv.chat_requests[0]
    assert r.finish_reason == "tool_calls"
    (call,) = r.tool_calls
    assert (call.id, call.name, call.arguments, call.is_valid) == (
        "call_a",
        "get_flight",
        {"flight_id": "FL1"},
        True,
    )
    assert sent["tools"][0] == {"type": "function", "function": TOOLS[0]}
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_flight"}}


def test_assistant_tool_calls_round_trip_into_the_next_request():
    step = Reply(tool_calls=(ScriptedToolCall("get_flight", {"flight_id": "FL1"}, id="c1"),))
    with ScriptedOpenAIServer([step, "FL1 departs at 9."]) as srv, make(srv) as model:
        first = model.complete(USER, tools=TOOLS)
        history = [*USER, first.message, ChatMessage.tool('{"departs": "09:00"}', tool_call_id="c1")]
        assert model.complete(history, tools=TOOLS).content == "FL1 departs at 9."
        sent = srv.chat_requests[1]["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "get_flight", "arguments": '{"flight_id": "FL1"}'}
    assert sent[2] == {"role": "tool", "content": '{"departs": "09:00"}', "tool_call_id": "c1"}


def test_malformed_tool_call_arguments_are_kept_raw_and_flagged():
    step = Reply(tool_calls=(("get_flight", '{"flight_id": "FL1"'), ("list_flights", "[1, 2]"), ("ping", "")))
    with ScriptedOpenAIServer([step]) as srv, make(srv) as model:
        bad, not_object, empty = model.complete(USER, tools=TOOLS).tool_calls
    assert not bad.is_valid and bad.arguments == {} and bad.raw_arguments == '{"flight_id": "FL1"'
    assert "not valid JSON" in bad.parse_error
    assert not not_object.is_valid and "JSON object" in not_object.parse_error
    assert empty.is_valid and empty.arguments == {}
    assert bad.to_openai()["function"]["arguments"] == '{"flight_id": "FL1"'  # replayed verbatim


def test_usage_is_accounted_in_a_shared_ledger():
    ledger = UsageLedger()
    script = [Reply("a", usage=(10, 2, 12)), Reply("b", usage=(20, 3, 23)), ErrorReply(400, "bad")]
    with ScriptedOpenAIServer(script) as srv, make(srv, ledger=ledger) as model:
        assert model.complete(USER).usage.total_tokens == 12
        model.complete(USER)
        with pytest.raises(ModelError):
            model.complete(USER)
    s = ledger.summary()
    assert (s.calls, s.ok, s.failed) == (3, 2, 1)
    assert (s.prompt_tokens, s.completion_tokens, s.total_tokens) == (30, 5, 35)
    assert s.models == ["test-model"]
    assert 0 < s.latency_p50_s <= s.latency_p99_s and s.latency_mean_s > 0
    assert ledger.summary(model="other").calls == 0


def test_ledger_percentiles_are_nearest_rank():
    ledger = UsageLedger()
    for i in range(1, 101):
        ledger.record(llm.CallRecord(model="m", ok=True, latency_s=float(i)))
    s = ledger.summary()
    assert (s.latency_p50_s, s.latency_p99_s, s.latency_mean_s) == (50.0, 99.0, 50.5)
    assert UsageLedger().summary().latency_p99_s == 0.0


def test_server_errors_are_retried_with_backoff_then_succeed(waits):
    script = [ErrorReply(500, "boom"), ErrorReply(503, "busy"), "finally"]
    with ScriptedOpenAIServer(script) as srv, make(srv, backoff_base=0.1, max_retries=3) as model:
        r = model.complete(USER)
        n = len(srv.chat_requests)
    assert r.content == "finally"
    assert n == 3
    assert waits == [0.1, 0.2]  # exponential
    assert model.ledger.records[0].attempts == 3


def test_retries_are_bounded_and_the_last_error_is_reported(waits):
    with ScriptedOpenAIServer([ErrorReply(502, "gateway")] * 5) as srv, make(srv, max_retries=2) as model:
        with pytest.raises(ModelError, match=r"gave up after 3 attempts: HTTP 502: gateway"):
            model.complete(USER)
        assert len(srv.chat_requests) == 3
    assert model.ledger.summary().failed == 1


def test_a_timed_out_request_is_retried(waits):
    with ScriptedOpenAIServer([Delay(3.0), "after the timeout"]) as srv, make(srv, timeout=0.2) as model:
        r = model.complete(USER)
        n = len(srv.chat_requests)
    assert r.content == "after the timeout"
    assert n == 2
    assert model.ledger.records[0].attempts == 2


def test_429_honours_a_small_retry_after_and_ignores_a_large_one(waits):
    script = [
        ErrorReply(429, "slow", headers={"Retry-After": "2"}),
        ErrorReply(429, "slow", headers={"Retry-After": "3600"}),
        "ok",
    ]
    with ScriptedOpenAIServer(script) as srv, make(srv, backoff_base=0.25) as model:
        assert model.complete(USER).content == "ok"
        assert len(srv.chat_requests) == 3
    assert waits == [2.0, 0.5]  # honoured, then exponential backoff instead of an hour


def test_400_fails_at_once_with_status_and_server_message(waits):
    with ScriptedOpenAIServer([ErrorReply(400, "'tools' is not supported by this model"), "unused"]) as srv:
        with make(srv) as model, pytest.raises(ModelError) as info:
            model.complete(USER)
        n = len(srv.chat_requests)
    assert n == 1 and waits == []
    assert "HTTP 400" in str(info.value) and "'tools' is not supported by this model" in str(info.value)


def test_connection_errors_are_retried_then_reported(waits):
    with ScriptedOpenAIServer() as srv:
        url = srv.base_url
    model = OpenAICompatModel(url, "m", max_retries=1, timeout=2)
    with pytest.raises(ModelError, match="gave up after 2 attempts: ConnectError"):
        model.complete(USER)
    assert len(waits) == 1


def test_unusable_200_reply_is_a_model_error():
    transport = httpx.MockTransport(lambda req: httpx.Response(200, json={"nothing": "here"}))
    model = OpenAICompatModel("http://test/v1", "m", transport=transport)
    with pytest.raises(ModelError, match="unusable reply"):
        model.complete(USER)
    assert model.ledger.summary().failed == 1


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"message": {"content": "x"}}], "usage": ["not", "a", "dict"]},
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}},
        {"choices": [{"message": {"role": "robot", "content": "x"}}]},
    ],
)
def test_a_reply_with_malformed_fields_is_a_model_error_not_a_crash(body):
    transport = httpx.MockTransport(lambda req: httpx.Response(200, json=body))
    model = OpenAICompatModel("http://test/v1", "m", transport=transport)
    with pytest.raises(ModelError, match="unusable reply"):
        model.complete(USER)
    assert model.ledger.summary().failed == 1


def test_a_backoff_wait_does_not_hold_a_concurrency_slot(monkeypatch):
    free_during_wait: list[bool] = []

    def sleep(seconds: float) -> None:
        got = model._thread_slots.acquire(blocking=False)
        free_during_wait.append(got)
        if got:
            model._thread_slots.release()

    monkeypatch.setattr(openai_compat, "_sleep", sleep)
    with ScriptedOpenAIServer([ErrorReply(503, "busy"), "ok"]) as srv, make(srv, concurrency=1) as model:
        assert model.complete(USER).content == "ok"
    assert free_during_wait == [True]


def test_list_models():
    with ScriptedOpenAIServer(model="served-name") as srv, make(srv) as model:
        assert model.list_models() == ["served-name"]


def test_async_batch_respects_concurrency_keeps_order_and_returns_failures_as_data():
    def answer(req: dict):
        q = req["messages"][-1]["content"]
        return ErrorReply(400, f"cannot answer {q}") if q == "q3" else f"answer to {q}"

    requests = [{"messages": [{"role": "user", "content": f"q{i}"}]} for i in range(8)]
    with ScriptedOpenAIServer(fallback=Delay(0.1, then=answer)) as srv:
        model = make(srv, concurrency=3)

        async def go():
            try:
                return await model.abatch(requests)
            finally:
                await model.aclose()

        results = asyncio.run(go())
        peak = srv.max_in_flight
    assert peak == 3
    assert isinstance(results[3], ModelError) and "cannot answer q3" in str(results[3])
    assert [r.content for i, r in enumerate(results) if i != 3] == [
        f"answer to q{i}" for i in range(8) if i != 3
    ]
    assert model.ledger.summary().calls == 8


def test_sync_batch_is_bounded_too():
    with (
        ScriptedOpenAIServer(fallback=Delay(0.1, then=lambda req: "ok")) as srv,
        make(srv, concurrency=2) as model,
    ):
        results = model.batch([USER] * 5)
        assert srv.max_in_flight == 2
    assert [r.content for r in results] == ["ok"] * 5


# --- config -----------------------------------------------------------------------------


def test_load_model_config_reads_the_example_file():
    cfg = load_model_config("configs/model.example.yaml")
    assert (cfg.backend, cfg.base_url) == ("openai", "http://127.0.0.1:8000/v1")


def test_load_model_config_and_build_an_openai_backend(tmp_path, monkeypatch):
    p = tmp_path / "model.yaml"
    p.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\napi_key_env: MY_KEY\nmax_retries: 1\n")
    monkeypatch.setenv("MY_KEY", "secret")
    cfg = load_model_config(p)
    assert cfg.backend == "openai"  # inferred from base_url
    ledger = UsageLedger()
    model = build_chat_model(cfg, ledger=ledger)
    assert isinstance(model, OpenAICompatModel)
    assert model.ledger is ledger and model.max_retries == 1
    assert model._headers["Authorization"] == "Bearer secret"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("backend: openai\nmodel: [unclosed\n", "invalid YAML"),
        ("backend: openai\nmodel: m\n", "needs both base_url"),
        ("backend: gpt\n", "backend"),
        ("timeout: -1\n", "timeout"),
        ("modle: m\n", "modle"),
        ("- a\n- b\n", "mapping"),
    ],
)
def test_bad_model_config_is_a_config_error_naming_the_file(tmp_path, text, needle):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_model_config(p)
    assert str(p) in str(info.value) and needle in str(info.value)


def test_missing_config_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml"):
        load_model_config(tmp_path / "nope.yaml")


def test_no_model_is_the_default_and_raises_a_helpful_error():
    model = build_chat_model(ModelConfig())
    assert isinstance(model, NoModel) and isinstance(model, ChatModel)
    with pytest.raises(ModelError, match="no model configured: pass --model and --base-url"):
        model.complete(USER)
    assert model.ledger.summary().failed == 1


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_backend_without_the_extra_says_how_to_install_it():
    with pytest.raises(ModelError, match=r"pip install envfactory\[vllm\]"):
        VLLMModel("some/model")
    with pytest.raises(ModelError, match="'vllm' extra"):
        build_chat_model(ModelConfig(backend="vllm", model="some/model"))


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        ("just text", "just text", []),
        ('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>', None, [("f", {"x": 1})]),
        ('Sure. <tool_call>{"name": "f", "arguments": {}}</tool_call>', "Sure.", [("f", {})]),
        ('{"name": "g", "parameters": {"y": "z"}}', None, [("g", {"y": "z"})]),
        ('{"answer": 42}', '{"answer": 42}', []),
    ],
)
def test_vllm_text_tool_calls_are_recovered(text, content, calls):
    got_content, got_calls = parse_text_tool_calls(text)
    assert got_content == content
    assert [(c.name, c.arguments) for c in got_calls] == calls


def test_vllm_text_tool_call_with_bad_json_is_flagged():
    _, (call,) = parse_text_tool_calls("<tool_call>{oops</tool_call>")
    assert not call.is_valid


def test_an_invalid_message_is_a_model_error_before_any_request():
    with ScriptedOpenAIServer(["unused"]) as srv, make(srv) as model:
        with pytest.raises(ModelError, match="chat message #0 is invalid"):
            model.complete([{"role": "robot", "content": "hi"}])
        assert srv.chat_requests == []
