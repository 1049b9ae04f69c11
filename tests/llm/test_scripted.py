"""The scripted OpenAI-compatible server (a test double) spoken to with plain httpx."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from envfactory.llm.scripted import (
    CREATED,
    Delay,
    ErrorReply,
    Reply,
    ScriptedOpenAIServer,
    ScriptedToolCall,
    count_tokens_roughly,
)

# One client for the module: building one per request (TLS context included) is slow.
http = httpx.Client(timeout=5)


def chat(srv: ScriptedOpenAIServer, content: str = "hi", **extra) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], **extra}
    return http.post(f"{srv.base_url}/chat/completions", json=body)


def test_module_docstring_says_it_is_a_test_double_not_a_model():
    import envfactory.llm.scripted as mod

    assert "TEST DOUBLE, not a model" in mod.__doc__


def test_base_url_is_loopback_with_v1_prefix_and_models_are_listed():
    with ScriptedOpenAIServer(model="tiny") as srv:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.base_url.endswith("/v1")
        r = http.get(f"{srv.base_url}/models")
        assert r.status_code == 200
        assert [m["id"] for m in r.json()["data"]] == ["tiny"]
        assert srv.remaining == 0  # listing models takes no script step


def test_replies_follow_the_script_in_order_with_deterministic_ids():
    def run() -> list[dict]:
        with ScriptedOpenAIServer(["first", Reply("second", finish_reason="length")]) as srv:
            return [chat(srv).json(), chat(srv).json()]

    a, b = run(), run()
    assert a == b  # same script, same bytes
    assert [x["choices"][0]["message"]["content"] for x in a] == ["first", "second"]
    assert [x["choices"][0]["finish_reason"] for x in a] == ["stop", "length"]
    assert [x["id"] for x in a] == ["chatcmpl-scripted-1", "chatcmpl-scripted-2"]
    assert a[0]["created"] == CREATED
    assert a[0]["model"] == "m"  # echoes the requested model, as vllm serve does


def test_tool_calls_are_sent_in_openai_format_with_json_string_arguments():
    step = Reply(tool_calls=(ScriptedToolCall("get_flight", {"flight_id": "FL1"}), ("list_flights", "{bad")))
    with ScriptedOpenAIServer([step]) as srv:
        choice = chat(srv).json()["choices"][0]
    calls = choice["message"]["tool_calls"]
    assert choice["finish_reason"] == "tool_calls"
    assert calls[0]["function"] == {"name": "get_flight", "arguments": '{"flight_id": "FL1"}'}
    assert calls[1]["function"]["arguments"] == "{bad"  # strings are sent verbatim
    assert calls[0]["id"] != calls[1]["id"]


def test_usage_is_estimated_from_the_request_unless_given():
    with ScriptedOpenAIServer([Reply("one two three"), Reply("x", usage=(7, 2, 9))]) as srv:
        est = chat(srv, "alpha beta gamma delta").json()["usage"]
        given = chat(srv).json()["usage"]
    assert est["completion_tokens"] == 3
    assert est["prompt_tokens"] >= 4
    assert est["total_tokens"] == est["prompt_tokens"] + est["completion_tokens"]
    assert given == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    assert count_tokens_roughly("Hello, world!") == 4


def test_error_step_sends_status_headers_and_openai_error_body():
    with ScriptedOpenAIServer([ErrorReply(429, "slow down", headers={"Retry-After": "3"})]) as srv:
        r = chat(srv)
    assert r.status_code == 429
    assert r.headers["retry-after"] == "3"
    assert r.json()["error"]["message"] == "slow down"


def test_exhausted_script_answers_500_saying_so():
    with ScriptedOpenAIServer(["only"]) as srv:
        assert chat(srv).status_code == 200
        r = chat(srv)
    assert r.status_code == 500
    assert "script exhausted" in r.json()["error"]["message"]


def test_callable_step_and_fallback_build_replies_from_the_request():
    def echo(req: dict) -> str:
        return "echo: " + req["messages"][-1]["content"]

    def broken(req: dict) -> str:
        raise KeyError("nope")

    with ScriptedOpenAIServer([echo, broken], fallback=lambda req: Reply("fallback")) as srv:
        assert chat(srv, "ping").json()["choices"][0]["message"]["content"] == "echo: ping"
        r = chat(srv)
        assert r.status_code == 500 and "responder raised KeyError" in r.json()["error"]["message"]
        assert chat(srv).json()["choices"][0]["message"]["content"] == "fallback"
        assert [r.step for r in srv.requests] == [0, 1, -1]


def test_requests_are_recorded_for_assertions():
    with ScriptedOpenAIServer(["a"]) as srv:
        chat(srv, "hello", tools=[{"type": "function", "function": {"name": "f"}}], seed=3)
        http.post(f"{srv.base_url}/embeddings", json={})
        recorded = srv.requests
        bodies = srv.chat_requests
    assert [(r.method, r.path) for r in recorded] == [
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/embeddings"),
    ]
    assert bodies[0]["seed"] == 3 and bodies[0]["messages"][0]["content"] == "hello"
    assert recorded[0].headers["Content-Type"] == "application/json"


def test_bad_request_body_is_a_400_and_takes_no_step():
    with ScriptedOpenAIServer(["a"]) as srv:
        r = http.post(f"{srv.base_url}/chat/completions", content=b"not json")
        assert r.status_code == 400
        assert srv.remaining == 1


def test_delay_is_bounded():
    with pytest.raises(ValueError):
        Delay(31)


def test_close_is_prompt_even_while_a_delay_step_is_in_progress():
    srv = ScriptedOpenAIServer([Delay(20)]).start()
    with pytest.raises(httpx.TimeoutException):
        chat_body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        httpx.post(f"{srv.base_url}/chat/completions", content=json.dumps(chat_body), timeout=0.2)
    t = time.perf_counter()
    srv.close()
    assert time.perf_counter() - t < 2.5
    srv.close()  # idempotent
