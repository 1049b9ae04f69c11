"""envfactory graph / sample through the CLI, on a domain laid out in a temporary project."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.spec import save_spec

from ._shop import shop_spec

runner = CliRunner()


@pytest.fixture()
def project(tmp_path):
    d = tmp_path / "domains" / "shop" / "store"
    d.mkdir(parents=True)
    save_spec(shop_spec(), d / "env.yaml")
    return tmp_path


def _run(root, *args):
    return runner.invoke(app, list(args), catch_exceptions=False, env={"ENVFACTORY_ROOT": str(root)})


def test_graph_command_writes_json_html_png(project):
    pytest.importorskip("matplotlib")
    out = project / "out" / "shop_graph"
    r = _run(project, "graph", "--domain", "shop", "--out", str(out))
    assert r.exit_code == 0, r.output
    saved = json.loads((project / "domains/shop/store/tool_graph.json").read_text())
    assert saved["graph"]["env"] == "store" and saved["edges"]
    assert (project / "out/shop_graph.html").stat().st_size > 1000
    assert (project / "out/shop_graph.png").read_bytes()[:4] == b"\x89PNG"


def test_sample_command_reports_both_samplers_and_writes_jsonl(project):
    out = project / "plans.jsonl"
    r = _run(
        project, "sample", "--domain", "shop", "--n", "120", "--seed", "3", "--report", "--out", str(out)
    )
    assert r.exit_code == 0, r.output
    assert "topology" in r.output and "random_walk" in r.output and "success rate" in r.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) >= 110 and all(x["ok"] for x in lines)
    assert {"plan", "calls", "final_hash", "diff"} <= set(lines[0])


def test_sample_rejects_unknown_sampler(project):
    r = _run(project, "sample", "--domain", "shop", "--sampler", "nope")
    assert r.exit_code == 2 and "unknown sampler" in r.output


def _project_with(tmp_path, spec):
    d = tmp_path / "domains" / "bare" / "store"
    d.mkdir(parents=True)
    save_spec(spec, d / "env.yaml")
    return tmp_path


@pytest.mark.parametrize("command", ["sample", "tasks"])
def test_env_without_tools_is_a_one_line_error(tmp_path, command):
    root = _project_with(tmp_path, shop_spec().model_copy(update={"tools": []}))
    r = _run(root, command, "--domain", "bare", "--n", "3")
    assert r.exit_code == 2, r.output
    assert "no tools to sample plans from" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("command", ["sample", "tasks"])
def test_env_without_rows_is_a_one_line_error(tmp_path, command):
    spec = shop_spec()
    empty = spec.model_copy(update={"seed": spec.seed.model_copy(update={"entities": {}})})
    root = _project_with(tmp_path, empty)
    r = _run(root, command, "--domain", "bare", "--n", "3")
    assert r.exit_code == 2, r.output
    assert "every tool failed to ground" in r.output and "Traceback" not in r.output


def test_sampler_settings_from_a_config_file_or_the_command_line(project):
    cfg = project / "cfg.yaml"
    cfg.write_text("sample:\n  sampler_config: {p_second_goal: 0.0, p_branch: 0.0}\n")
    a, b, c = project / "a.jsonl", project / "b.jsonl", project / "c.jsonl"
    r = _run(
        project,
        "--config",
        str(cfg),
        "sample",
        "--domain",
        "shop",
        "--n",
        "60",
        "--workers",
        "0",
        "--out",
        str(a),
    )
    assert r.exit_code == 0, r.output
    r = _run(
        project,
        "sample",
        "--domain",
        "shop",
        "--n",
        "60",
        "--workers",
        "0",
        "--out",
        str(b),
        "--sampler-config",
        '{"p_second_goal": 0, "p_branch": 0}',
    )
    assert r.exit_code == 0, r.output
    r = _run(project, "sample", "--domain", "shop", "--n", "60", "--workers", "0", "--out", str(c))
    assert r.exit_code == 0, r.output
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    plans = [json.loads(x)["plan"] for x in a.read_text().splitlines()]
    assert all(len(p["goal_steps"]) == 1 and all(s["role"] != "branch" for s in p["steps"]) for p in plans)


@pytest.mark.parametrize(
    "value, message",
    [
        ('{"p_branch": 2}', "p_branch"),
        ('{"no_such": 1}', "no_such"),
        ("[1", "not JSON or YAML"),
        ("3", "mapping"),
    ],
)
def test_bad_sampler_settings_are_one_line_errors(project, value, message):
    r = _run(project, "sample", "--domain", "shop", "--n", "5", "--sampler-config", value)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
