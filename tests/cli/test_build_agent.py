"""`envfactory build --explorer agent` wiring, end to end against a scripted OpenAI-compatible server.

The server's replies are scripted by this test (they are not a model's output): it answers every
request with text that is not a spec, so the agent must fall back to the deterministic draft, and
the build must still ship verified environments.
"""

from __future__ import annotations

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.llm import ScriptedOpenAIServer
from envfactory.llm.scripted import Reply

from ..conftest import REPO

DOC = REPO / "tests" / "fixtures" / "travel" / "cars.yaml"


def test_build_with_explorer_agent_falls_back_to_the_draft_on_unusable_replies(tmp_path):
    with ScriptedOpenAIServer(fallback=Reply(content="I cannot do that.")) as server:
        r = CliRunner().invoke(
            app,
            [
                "build",
                "--source",
                str(DOC),
                "--out",
                str(tmp_path / "out"),
                "--name",
                "cars",
                "--explorer",
                "agent",
                "--model",
                "scripted",
                "--base-url",
                server.base_url,
            ],
            catch_exceptions=False,
        )
        asked = len(server.chat_requests)
    assert r.exit_code == 0, r.output
    assert "fell back to the rules' draft" in r.output
    assert asked >= 1  # the agent really talked to the endpoint
    assert list((tmp_path / "out").glob("*/env.yaml"))


def test_explorer_agent_without_model_is_a_clear_error(tmp_path):
    r = CliRunner().invoke(
        app, ["build", "--source", str(DOC), "--out", str(tmp_path / "o"), "--explorer", "agent"]
    )
    assert r.exit_code == 2 and "--explorer agent needs --model" in r.output
