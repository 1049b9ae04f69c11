"""The runner: decoding replies, failures as data, and `envfactory eval` end to end.

The end-to-end tests talk to ScriptedOpenAIServer on 127.0.0.1: a TEST DOUBLE whose replies
are written by this test (it looks up the suite's own ground truth). Its scores say the
harness works; they are not a model's results and must never be reported as such.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.evaluation import (
    ADDITIONAL_FUNCTION_PROMPT,
    EvalConfig,
    ModelAgent,
    SuiteError,
    build_reference_agent,
    decode_reply,
    expected_calls,
    format_calls,
    load_suite,
    openai_tools,
    run_eval,
    summarize,
)
from envfactory.llm import (
    ChatMessage,
    ChatResponse,
    ErrorReply,
    OpenAICompatModel,
    Reply,
    ScriptedOpenAIServer,
    ScriptedToolCall,
    ToolCall,
)
from envfactory.spec import write_tasks

from ._fixtures import REPO, trip_desk, trip_desk_suite, trip_desk_tasks

runner = CliRunner()


def test_openai_tools_translate_bfcl_types():
    doc = {
        "name": "f",
        "description": "d",
        "parameters": {
            "type": "dict",
            "properties": {
                "x": {"type": "float"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "o": {"type": "dict"},
            },
            "required": ["x"],
        },
    }
    (tool,) = openai_tools([doc])
    params = tool["function"]["parameters"]
    assert params["type"] == "object" and params["required"] == ["x"]
    assert [params["properties"][k]["type"] for k in ("x", "tags", "o")] == ["number", "array", "object"]


def test_decode_reply_in_both_modes():
    fc = ChatResponse(message=ChatMessage.assistant(None, [ToolCall(id="1", name="f", arguments={"a": 1})]))
    assert decode_reply(fc, "fc") == [{"f": {"a": 1}}]
    bad = ChatResponse(message=ChatMessage.assistant(None, [ToolCall.from_raw("1", "f", "{not json")]))
    assert decode_reply(bad, "fc") is None
    # a text reply in fc mode does not decode (BFCL's FC handlers: ast_decoder:decoder_failed)
    assert decode_reply(ChatResponse(message=ChatMessage.assistant("hello")), "fc") is None
    assert decode_reply(ChatResponse(message=ChatMessage.assistant("[f(a=1), g(b='x')]")), "prompt") == [
        {"f": {"a": 1}},
        {"g": {"b": "x"}},
    ]
    assert decode_reply(ChatResponse(message=ChatMessage.assistant("I cannot help")), "prompt") is None


def _scripted_oracle(suite, mode: str):
    """A responder that answers from the suite's ground truth, keyed by the user turns so far."""
    answers = {}
    for entry in suite.entries:
        texts = []
        for turn, messages in enumerate(entry.question):
            names = ",".join(sorted(f["name"] for f in entry.functions_at(turn)))
            if str(turn) in entry.missed_function:  # held-out functions come back with BFCL's message
                texts.append(ADDITIONAL_FUNCTION_PROMPT)
            texts += [m["content"] for m in messages]
            answers[("\n".join(texts), names)] = expected_calls(entry, turn)

    def respond(request):
        messages = request["messages"]
        if messages[-1]["role"] == "tool" or messages[-1]["content"].startswith(
            "Results of your function calls"
        ):
            return Reply("Done.")
        users = [
            m["content"].split("\n")[-1]
            if m["content"].endswith(ADDITIONAL_FUNCTION_PROMPT)
            else m["content"]
            for m in messages
            if m["role"] == "user" and not m["content"].startswith("Results")
        ]
        if mode == "prompt":
            offered = re.findall(
                r'"name": "(\w+)"', "\n".join(m["content"] for m in messages if m["role"] != "assistant")
            )
        else:
            offered = [t["function"]["name"] for t in request.get("tools") or []]
        calls = answers.get(("\n".join(users), ",".join(sorted(offered))), [])
        if not calls:
            return Reply("None of these functions can do that.")
        if mode == "prompt":
            return Reply(format_calls(calls))
        return Reply(tool_calls=tuple(ScriptedToolCall(*next(iter(c.items()))) for c in calls))

    return respond


def _unambiguous(suite):
    """The entries whose user turns (with the functions offered) tell them apart: the test double
    answers from those alone, and the fixture's templated sentences repeat ("Please get room.")."""
    import dataclasses

    keys: dict = {}
    for entry in suite.entries:
        for turn in range(len(entry.question)):
            texts = tuple(m["content"] for t in entry.question[: turn + 1] for m in t)
            names = tuple(sorted(f["name"] for f in entry.functions_at(turn)))
            keys.setdefault((texts, names), set()).add(json.dumps(expected_calls(entry, turn)))
    clear = [
        e
        for e in suite.entries
        if all(
            len(
                keys[
                    (
                        tuple(m["content"] for t in e.question[: turn + 1] for m in t),
                        tuple(sorted(f["name"] for f in e.functions_at(turn))),
                    )
                ]
            )
            == 1
            for turn in range(len(e.question))
        )
    ]
    return dataclasses.replace(suite, entries=clear)


def test_prompt_mode_against_a_scripted_server_scores_single_and_multi_turn():
    suite = _unambiguous(trip_desk_suite())
    with ScriptedOpenAIServer(fallback=_scripted_oracle(suite, "prompt")) as server:
        with OpenAICompatModel(server.base_url, "scripted", concurrency=4, max_retries=0) as model:
            report = run_eval(
                suite,
                ModelAgent(model),
                envs={"trip_desk": trip_desk()},
                config=EvalConfig(mode="prompt", limit=3, concurrency=4),
            )
        requests = server.chat_requests
    summary = summarize(report)
    assert all(s["accuracy"] == 1.0 for s in summary["categories"].values()), summary["categories"]
    assert all("tools" not in r and "[func_name1(" in r["messages"][0]["content"] for r in requests)
    assert summary["tokens"]["prompt"] > 0 and summary["tokens"]["requests"] == len(requests)


def test_a_failing_server_fails_entries_not_the_run():
    suite = trip_desk_suite()
    with ScriptedOpenAIServer(fallback=ErrorReply(400, "model does not support tools")) as server:
        with OpenAICompatModel(server.base_url, "scripted", max_retries=0) as model:
            report = run_eval(
                suite,
                ModelAgent(model),
                envs={"trip_desk": trip_desk()},
                config=EvalConfig(limit=2, categories=("simple_python", "multi_turn_base")),
            )
    assert [r.error_type for r in report.results] == ["model_error"] * 4
    assert all("model does not support tools" in r.model_error for r in report.results)
    assert summarize(report)["model_errors"] == 4


def test_eval_help_says_how_to_point_it_at_vllm():
    result = runner.invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes" in text
    assert "--base-url http://127.0.0.1:8000/v1 --suite travel" in text


def test_eval_suite_then_eval_end_to_end_against_a_scripted_server(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFACTORY_ROOT", str(REPO))
    tasks = write_tasks(trip_desk_tasks(), tmp_path / "tasks.jsonl")
    built = runner.invoke(
        app,
        [
            "eval-suite",
            "--domain",
            "travel",
            "--tasks",
            str(tasks),
            "-n",
            "4",
            "--out",
            str(tmp_path / "suites"),
        ],
    )
    assert built.exit_code == 0, built.output
    suite_dir = tmp_path / "suites" / "travel"
    assert (suite_dir / "BFCL_v4_simple_python.json").exists()

    from envfactory.evaluation import load_suite, write_suite

    suite = _unambiguous(load_suite(suite_dir))
    suite_dir = write_suite(suite, tmp_path / "clear" / "travel")
    out = tmp_path / "results"
    # Replies come from the scripted test double (this test's own ground-truth lookup), not a model.
    with ScriptedOpenAIServer(fallback=_scripted_oracle(suite, "fc")) as server:
        result = runner.invoke(
            app,
            [
                "eval",
                "--model",
                "scripted",
                "--base-url",
                server.base_url,
                "--suite",
                str(suite_dir),
                "--concurrency",
                "3",
                "--timeout",
                "10",
                "--retries",
                "0",
                "--out",
                str(out),
                "--db",
                str(tmp_path / "r.db"),
            ],
        )
        requests = server.chat_requests
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == summary["overall"]["total"] == len(suite.entries)
    assert summary["overall"]["accuracy"] == 1.0, summary["categories"]
    rewards = [
        json.loads(line)["reward"] for line in lines if json.loads(line)["category"].startswith("multi_turn")
    ]
    # the test double closes with "Done." (no answer facts), so the state part is what must be right
    assert rewards and all(r["state_match"] for r in rewards)
    assert all(r.get("tools") for r in requests)  # fc mode sends the functions as tools
    assert "overall" in result.output and "accuracy" in result.output
    # the preflight lists the served models; a name the server does not list is a warning, not a refusal
    assert "serves scripted-test-double, not 'scripted'" in " ".join(result.output.split())


def test_eval_with_a_reference_agent_and_bad_options(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFACTORY_ROOT", str(tmp_path / "root"))
    (tmp_path / "root").mkdir()
    from envfactory.evaluation import write_suite

    suite_dir = write_suite(trip_desk_suite(), tmp_path / "travel")
    ok = runner.invoke(
        app,
        [
            "eval",
            "--agent",
            "noop",
            "--suite",
            str(suite_dir),
            "--categories",
            "simple,irrelevance",
            "--out",
            str(tmp_path / "r"),
            "--db",
            str(tmp_path / "r.db"),
        ],
    )
    assert ok.exit_code == 0, ok.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert {c: s["accuracy"] for c, s in summary["categories"].items()} == {
        "simple_python": 0.0,
        "irrelevance": 1.0,
    }
    both = runner.invoke(app, ["eval", "--agent", "noop", "--model", "m", "--suite", str(suite_dir)])
    assert both.exit_code == 2 and "exactly one" in both.output
    missing = runner.invoke(app, ["eval", "--agent", "noop", "--suite", "nowhere"])
    assert missing.exit_code == 2 and "eval-suite" in missing.output
    bad = runner.invoke(app, ["eval", "--agent", "noop", "--suite", str(suite_dir), "--categories", "bogus"])
    assert bad.exit_code == 2 and "unknown categories" in bad.output
    negative = runner.invoke(app, ["eval", "--agent", "noop", "--suite", str(suite_dir), "--limit", "-1"])
    assert negative.exit_code == 2 and "--limit must be >= 0" in negative.output
    unknown = runner.invoke(app, ["eval", "--agent", "oracel", "--suite", str(suite_dir)])
    assert unknown.exit_code == 2 and "known: oracle, noop, random, drop-one, bare" in " ".join(
        unknown.output.split()
    )
    assert not list((tmp_path / "root").iterdir())  # refused runs create no results folder
    (tmp_path / "a_file").write_text("x")
    blocked = runner.invoke(
        app, ["eval", "--agent", "noop", "--suite", str(suite_dir), "--out", str(tmp_path / "a_file" / "r")]
    )
    assert blocked.exit_code == 2 and "results folder" in " ".join(blocked.output.split())
    with pytest.raises(SuiteError, match="limit must be >= 0"):
        run_eval(load_suite(suite_dir), build_reference_agent("noop"), config=EvalConfig(limit=-1))


def test_eval_results_go_under_the_project_root_not_the_current_folder(tmp_path, monkeypatch):
    from envfactory.evaluation import write_suite

    root, cwd = tmp_path / "root", tmp_path / "cwd"
    root.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    suite_dir = write_suite(trip_desk_suite(), tmp_path / "travel")
    r = runner.invoke(
        app,
        [
            "--root",
            str(root),
            "eval",
            "--agent",
            "drop-one",
            "--suite",
            str(suite_dir),
            "--categories",
            "simple",
        ],
    )
    assert r.exit_code == 0, r.output
    assert (root / "eval" / "results" / "travel" / "drop-one" / "summary.json").is_file()
    assert not list(cwd.iterdir())


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_eval_against_an_unreachable_endpoint_fails_fast_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFACTORY_ROOT", str(tmp_path))
    from envfactory.evaluation import write_suite

    suite_dir = write_suite(trip_desk_suite(), tmp_path / "travel")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    r = runner.invoke(
        app,
        [
            "eval",
            "--model",
            "m",
            "--base-url",
            url,
            "--suite",
            str(suite_dir),
            "--retries",
            "3",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    text = " ".join(r.output.split())
    assert r.exit_code != 0, text
    assert f"cannot reach {url}: ConnectError" in text and "Connection refused" in text
    assert not (tmp_path / "r" / "summary.json").exists()  # no 0% score was written


def test_eval_where_every_request_failed_exits_1_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFACTORY_ROOT", str(REPO))
    from envfactory.evaluation import write_suite

    suite_dir = write_suite(trip_desk_suite(), tmp_path / "travel")
    with ScriptedOpenAIServer(fallback=ErrorReply(400, "model does not support tools")) as server:
        r = runner.invoke(
            app,
            [
                "eval",
                "--model",
                "scripted-test-double",
                "--base-url",
                server.base_url,
                "--suite",
                str(suite_dir),
                "--categories",
                "simple,multiple",
                "--retries",
                "0",
                "--out",
                str(tmp_path / "r"),
                "--db",
                str(tmp_path / "r.db"),
            ],
        )
    text = " ".join(r.output.split())
    assert r.exit_code == 1, text
    assert "every entry failed on a model error" in text and "model does not support tools" in text
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())  # the evidence is kept
    assert summary["model_errors"] == summary["overall"]["total"] > 0
    assert any("model does not support tools" in cause for cause in summary["model_error_causes"])


def test_a_malformed_suite_is_a_suite_error(tmp_path):
    from envfactory.evaluation import write_suite

    folder = write_suite(trip_desk_suite(), tmp_path / "travel")
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["entries"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match="malformed suite"):
        load_suite(folder)
    (folder / "manifest.json").write_text("[]")
    with pytest.raises(SuiteError, match="must be a JSON object"):
        load_suite(folder)


def test_the_simulated_user_comes_from_the_callers_factory_the_harness_does_not_import_synth():
    suite = trip_desk_suite()
    config = EvalConfig(limit=1, categories=("multi_turn_base",), user="simulator")
    without = run_eval(suite, build_reference_agent("noop"), envs={"trip_desk": trip_desk()}, config=config)
    assert [r.error_type for r in without.results] == ["suite_error"]
    assert "user_factory" in " ".join(without.results[0].errors)

    from envfactory.synth import UserSimulator

    made = []

    def factory(task):
        made.append(task.task_id)
        return UserSimulator(task, seed=0)

    with_user = run_eval(
        suite,
        build_reference_agent("noop"),
        envs={"trip_desk": trip_desk()},
        config=config,
        user_factory=factory,
    )
    assert len(made) == 1 and with_user.results[0].error_type != "suite_error"
