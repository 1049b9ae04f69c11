"""Records: OpenAI chat rows (schema + a tool-calling chat template), ShareGPT rows, splits, replay."""

from __future__ import annotations

import json

import jinja2
import jinja2.sandbox
import jsonschema
import pytest

from envfactory.export.shards import read_shards
from envfactory.synth.trajectories import api_groups, build_rl_row, build_sharegpt_row, eval_envs, replay_row

from ._fixtures import synth_two_envs, trip_desk, trip_desk_twin

# The OpenAI chat-completions message shapes (request side), as JSON Schema.
_TOOL_CALL = {
    "type": "object",
    "required": ["id", "type", "function"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "arguments"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                "arguments": {"type": "string"},
            },
        },
    },
}
OPENAI_MESSAGE = {
    "oneOf": [
        {
            "type": "object",
            "required": ["role", "content"],
            "additionalProperties": False,
            "properties": {
                "role": {"const": "system"},
                "content": {"type": "string"},
                "name": {"type": "string"},
            },
        },
        {
            "type": "object",
            "required": ["role", "content"],
            "additionalProperties": False,
            "properties": {
                "role": {"const": "user"},
                "content": {"type": "string"},
                "name": {"type": "string"},
            },
        },
        {
            "type": "object",
            "required": ["role"],
            "additionalProperties": False,
            "properties": {
                "role": {"const": "assistant"},
                "content": {"type": ["string", "null"]},
                "name": {"type": "string"},
                "tool_calls": {"type": "array", "items": _TOOL_CALL},
                # OpenAI's chat fine-tuning format: 0 marks a message not to learn from
                "weight": {"enum": [0, 1]},
            },
        },
        {
            "type": "object",
            "required": ["role", "content", "tool_call_id"],
            "additionalProperties": False,
            "properties": {
                "role": {"const": "tool"},
                "content": {"type": "string"},
                "tool_call_id": {"type": "string"},
            },
        },
    ]
}
OPENAI_TOOL = {
    "type": "object",
    "required": ["type", "function"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "parameters"],
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "parameters": {"type": "object"},
            },
        },
    },
}

# A Hermes / Qwen2.5-style tool-calling chat template (kept here: no download).
HERMES_TEMPLATE = """{%- if tools %}<|im_start|>system
{{ messages[0].content if messages[0].role == 'system' else '' }}

# Tools

You may call one or more functions to assist with the user query.
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags.<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' %}{% if not tools %}<|im_start|>system
{{ message.content }}<|im_end|>
{% endif %}
{%- elif message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{%- if message.content %}
{{ message.content }}{% endif %}
{%- for tool_call in message.tool_calls %}
<tool_call>
{"name": "{{ tool_call.function.name }}", "arguments": {{ tool_call.function.arguments }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == 'tool' %}{% if loop.previtem.role != 'tool' %}<|im_start|>user{% endif %}
<tool_response>
{{ message.content }}
</tool_response>
{%- if loop.last or loop.nextitem.role != 'tool' %}<|im_end|>
{% endif %}
{%- endif %}
{%- endfor %}"""


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "twins"
    res = synth_two_envs(out, 30)
    rows = [r["row"] for r in read_shards(out / ".synth" / "shards") if r["status"] == "ok"]
    return res, rows, {r["task_id"]: r["split"] for r in read_shards(out / ".synth" / "shards")}


def test_every_row_is_openai_chat_format(synth):
    _, rows, _ = synth
    assert rows
    msg_v = jsonschema.Draft202012Validator(OPENAI_MESSAGE)
    tool_v = jsonschema.Draft202012Validator(OPENAI_TOOL)
    schemas = set()
    for row in rows:
        for m in row["messages"]:
            msg_v.validate(m)
        for t in row["tools"]:
            tool_v.validate(t)
            schemas.add(json.dumps(t["function"]["parameters"], sort_keys=True))
        calls = {c["id"] for m in row["messages"] for c in m.get("tool_calls") or []}
        answers = [m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"]
        assert sorted(answers) == sorted(calls) and len(set(answers)) == len(answers)
        for m in row["messages"]:
            for c in m.get("tool_calls") or []:
                assert isinstance(json.loads(c["function"]["arguments"]), dict)
        assert "prompt" not in row and "completion" not in row  # TRL reads an SFT row as a conversation
        rl = build_rl_row(row)
        assert rl["prompt"] == row["messages"][:2] and rl["prompt"] + rl["completion"] == row["messages"]
        assert "messages" not in rl
    for sch in schemas:
        jsonschema.Draft202012Validator.check_schema(json.loads(sch))


def test_rows_render_through_a_tool_calling_chat_template(synth):
    _, rows, _ = synth
    # as transformers renders chat templates: a sandbox with trim_blocks / lstrip_blocks
    tpl = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(
        HERMES_TEMPLATE
    )
    for row in rows[:20]:
        text = tpl.render(messages=row["messages"], tools=row["tools"])
        n_calls = sum(len(m.get("tool_calls") or []) for m in row["messages"])
        assert text.count("<tool_call>\n{") == n_calls
        assert text.count("<tool_response>") == n_calls
        assert text.count("<|im_start|>assistant") == sum(m["role"] == "assistant" for m in row["messages"])
        for m in row["messages"]:
            for _c in m.get("tool_calls") or []:
                payload = text.split("<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0]
                assert json.loads(payload)["name"]  # the rendered call is JSON
                break


def test_sharegpt_rows_alternate_as_llamafactory_requires(synth):
    _, rows, _ = synth
    for row in rows:
        sg = build_sharegpt_row(row)
        roles = [c["from"] for c in sg["conversations"]]
        assert roles[0] == "human" and roles[-1] == "gpt"
        for i, r in enumerate(roles):
            assert r in (("human", "observation") if i % 2 == 0 else ("gpt", "function_call"))
        assert json.loads(sg["tools"])[0]["parameters"]["type"] == "object"
        assert sg["system"] == row["messages"][0]["content"]


def test_eval_holds_out_whole_environments(synth):
    res, rows, splits = synth
    env_split = {}
    for row in rows:
        env_split.setdefault(row["env_id"], set()).add(splits[row["task_id"]])
    assert sum("eval" in s for s in env_split.values()) == 1
    for s in env_split.values():
        assert s == {"eval"} or "eval" not in s
    assert res.split_counts["eval"] > 0 and res.split_counts["sft"] > 0


@pytest.mark.parametrize("n", [2, 3, 5, 13, 40])
def test_eval_env_rule_is_stable_and_never_empty_or_total(n):
    ids = [f"d{i}/e{i}" for i in range(n)]
    held = eval_envs(ids)
    assert 1 <= len(held) < n
    assert held == eval_envs(list(reversed(ids)))
    # adding an environment never moves one that was not at the fallback edge
    more = eval_envs(ids + ["zz/new"])
    assert {e for e in held if e in more} or len(held) == 1


def test_a_single_environment_is_never_held_out():
    assert eval_envs(["travel/trip_desk"]) == set()


def test_environments_that_share_a_document_are_held_out_together():
    # Sinao split into three environments, and Adyen merged with Sinao into a fourth: one API, whose
    # tables (Sinao's apps) must not be in training when any of them is in eval
    sources = {
        "finance/apps": ["sinao.json"],
        "finance/invoices": ["sinao.json"],
        "finance/people": ["sinao.json"],
        "finance/sweeps": ["adyen.json", "sinao.json"],
        "travel/traccar": ["traccar.json"],
        "travel/trip_desk": ["hand-written"],
        "office/tasks": ["tasks.json"],
    }
    assert api_groups(sources)["finance/sweeps"] == "adyen.json" == api_groups(sources)["finance/apps"]
    assert api_groups(sources)["travel/trip_desk"] == "travel/trip_desk"
    for frac in (0.1, 0.3, 0.5, 0.7, 0.9):
        held = eval_envs(list(sources), fraction=frac, sources=sources)
        finance = {e for e in sources if e.startswith("finance/")}
        assert finance <= held or not finance & held, (frac, held)
        assert held and held != set(sources)


def test_every_row_replays_and_a_tampered_row_does_not(synth):
    _, rows, _ = synth
    envs = {"trip_desk": trip_desk(), "trip_desk_twin": trip_desk_twin()}
    for row in rows:
        assert replay_row(row, envs[row["env"]]) == (True, 1.0)
    row = json.loads(json.dumps(next(r for r in rows if r["num_tool_calls"] > 1)))
    tool_msg = next(m for m in row["messages"] if m["role"] == "tool")
    tool_msg["content"] = tool_msg["content"].replace("1", "2", 1) + " "
    assert replay_row(row, envs[row["env"]])[0] is False
    row = json.loads(json.dumps(next(r for r in rows if r["reward_spec"]["required_facts"])))
    row["messages"][-1]["content"] = "Done."
    assert replay_row(row, envs[row["env"]]) == (False, 0.0)
