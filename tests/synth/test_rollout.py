"""Rollouts: the oracle on live sessions (in process and over MCP), and the teacher with rejection sampling."""

from __future__ import annotations

import json

import pytest

from envfactory.llm import OpenAICompatModel, Reply, ScriptedOpenAIServer, ScriptedToolCall
from envfactory.spec import tool_input_schema
from envfactory.synth.policy import OraclePolicy, TeacherPolicy
from envfactory.synth.rollout import McpConnector, run_rollout, run_task
from envfactory.text import format_plain

from ._fixtures import trip_desk, trip_desk_tasks


@pytest.fixture(scope="module")
def env():
    return trip_desk()


@pytest.fixture(scope="module")
def tasks():
    return trip_desk_tasks(40)


def test_oracle_rollouts_earn_full_reward_and_end_with_the_assistant(env, tasks):
    assert len(tasks) >= 30
    for t in tasks:
        tr = run_task(t, env)
        assert tr.ok, (t.task_id, tr.failure)
        assert tr.messages[0]["role"] == "system" and tr.messages[1]["role"] == "user"
        assert tr.messages[-1]["role"] == "assistant" and not tr.messages[-1].get("tool_calls")
        assert [c.tool for c in tr.calls if c.ok] == [g.tool for g in t.gold]
        assert all(c.error == "invalid_argument" for c in tr.calls if not c.ok)  # a rejected value, recovered
        assert tr.user_turns >= len(t.subgoals)
        for f in t.answer_facts:
            assert f in tr.messages[-1]["content"]


def test_a_call_in_a_wrong_form_carries_weight_0_and_nothing_else_does(env, tasks):
    # the oracle's deliberate wrong-form call is kept (the recovery after it needs it) but marked, as
    # OpenAI's fine-tuning format marks a message not to learn from
    seen = 0
    for t in tasks:
        tr = run_rollout(t, env, policy=OraclePolicy(recover_rate=1.0))
        results = {m["tool_call_id"]: m["content"] for m in tr.messages if m["role"] == "tool"}
        for m in tr.messages:
            if m["role"] != "assistant" or not m.get("tool_calls"):
                assert "weight" not in m
                continue
            failed = results[m["tool_calls"][0]["id"]].startswith('{"error"')
            assert m.get("weight") == (0 if failed else None), m
            seen += failed
    assert seen >= 5


def test_oracle_asks_for_a_hidden_fact_before_the_call_that_uses_it(env, tasks):
    checked = 0
    for t in tasks:
        for value in t.persona.hidden_facts.values():
            tr = run_rollout(t, env, policy=OraclePolicy())
            msgs = tr.messages
            first_use = next(
                i
                for i, m in enumerate(msgs)
                if m["role"] == "assistant"
                and any(
                    value in json.loads(c["function"]["arguments"]).values()
                    for c in m.get("tool_calls") or []
                )
            )
            reveal = next(
                i for i, m in enumerate(msgs) if m["role"] == "user" and format_plain(value) in m["content"]
            )
            assert reveal < first_use
            assert msgs[reveal - 1]["role"] == "assistant" and msgs[reveal - 1]["content"].endswith("?")
            assert not any(format_plain(value) in m["content"] for m in msgs[:reveal] if m["role"] == "user")
            checked += 1
    assert checked >= 10


def test_rollouts_are_deterministic(env, tasks):
    a = run_task(tasks[3], env)
    b = run_task(tasks[3], env)
    assert a.messages == b.messages


def test_oracle_through_the_in_process_mcp_server_gives_the_same_conversation(env, tasks):
    with McpConnector("inproc") as conn:
        for t in tasks[:6]:
            over_mcp = run_task(t, env, connector=conn)
            assert over_mcp.ok and over_mcp.via == "mcp-inproc" and over_mcp.mcp_mismatches == 0
            assert over_mcp.messages == run_task(t, env).messages


def test_oracle_through_a_stdio_server_process(env, tasks):
    t = next(t for t in tasks if t.reward.changes_state)
    with McpConnector("stdio") as conn:
        tr = run_task(t, env, connector=conn)
    assert tr.ok and tr.via == "mcp-stdio" and tr.mcp_mismatches == 0


def _good_script(task) -> list[Reply]:
    steps = [Reply(content="Let me look.", tool_calls=(ScriptedToolCall(g.tool, g.args),)) for g in task.gold]
    return steps + [Reply(content="All done. " + "; ".join(task.answer_facts))]


def _writing_task(tasks):
    return next(t for t in tasks if t.reward.changes_state and len(t.subgoals) == 1)


def test_teacher_keeps_only_full_reward_rollouts_and_records_the_attempt(env, tasks):
    task = _writing_task(tasks)
    bad = [Reply(content="All done, your request is complete.")]
    with ScriptedOpenAIServer(bad + _good_script(task)) as srv:
        teacher = TeacherPolicy(OpenAICompatModel(srv.base_url, "teacher-x"), attempts=2)
        tr = run_task(task, env, policy=teacher)
        assert tr.ok and tr.attempts == 2 and tr.policy == "teacher:teacher-x"
        assert [c.tool for c in tr.calls] == [g.tool for g in task.gold]
        req = srv.chat_requests[0]
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in req["tools"]}
        assert tools["create_booking"] == tool_input_schema(env.spec.tool("create_booking"))
        # the second attempt saw the tool results of its own calls
        later = srv.chat_requests[2]["messages"]
        assert later[-1]["role"] == "tool" and later[-1]["tool_call_id"] == later[-2]["tool_calls"][0]["id"]
    with ScriptedOpenAIServer(bad) as srv:
        teacher = TeacherPolicy(OpenAICompatModel(srv.base_url, "teacher-x"), attempts=1)
        tr = run_task(task, env, policy=teacher)
        assert not tr.ok and tr.reward.reward == 0.0 and "reward 0" in tr.failure


def test_a_model_error_is_a_failed_rollout_not_a_crash(env, tasks):
    with ScriptedOpenAIServer([]) as srv:  # every request answers HTTP 500
        model = OpenAICompatModel(srv.base_url, "teacher-x", max_retries=0)
        tr = run_task(tasks[0], env, policy=TeacherPolicy(model, attempts=1))
    assert not tr.ok and tr.failure.startswith("model error")


def test_recoveries_vary_between_a_value_in_a_wrong_form_and_a_value_left_out(env, tasks):
    import json as _json

    kinds, narrated = set(), 0
    for t in tasks:
        tr = run_rollout(t, env, policy=OraclePolicy(recover_rate=1.0))
        msgs = tr.messages
        for i, m in enumerate(msgs):
            if m["role"] == "tool" and m["content"].startswith('{"error"'):
                bad = _json.loads(msgs[i - 1]["tool_calls"][0]["function"]["arguments"])
                good = _json.loads(msgs[i + 1]["tool_calls"][0]["function"]["arguments"])
                kinds.add("missing" if set(good) - set(bad) else "form")
                assert tr.reward.reward == 1.0  # the retry is the gold call: the reward stays exact
                # the mistaken call is narrated with what it sends: not 'with customer id C1' when
                # the call leaves the customer id out
                said = msgs[i - 1]["content"].lower()
                for k in set(good) - set(bad):
                    narrated += 1
                    assert f"{k.replace('_', ' ')} {str(good[k]).lower()}" not in said, said
    assert kinds == {"form", "missing"} and narrated
