"""TaskConfig and SynthConfig: one set of defaults, reachable from a config file and the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.spec import save_spec
from envfactory.synth.config import SynthConfig, TaskConfig
from tests.graph._shop import shop_spec

runner = CliRunner()


@pytest.fixture()
def project(tmp_path):
    d = tmp_path / "domains" / "shop" / "store"
    d.mkdir(parents=True)
    save_spec(shop_spec(), d / "env.yaml")
    return tmp_path


def _run(root, *args):
    return runner.invoke(app, list(args), catch_exceptions=False, env={"ENVFACTORY_ROOT": str(root)})


def test_turn_limit_follows_the_settings():
    assert TaskConfig().turn_limit(2) == 18 and TaskConfig().turn_limit(20) == 40
    assert TaskConfig(turn_limit_base=3, turn_limit_per_step=1, turn_limit_max=5).turn_limit(9) == 5


def test_task_settings_from_a_config_file_reach_the_tasks(project):
    cfg = project / "cfg.yaml"
    cfg.write_text(
        "tasks:\n  task_config:\n    turn_limit_base: 3\n    turn_limit_per_step: 1\n"
        "    turn_limit_max: 5\n    sampler: {p_second_goal: 0.0}\n"
    )
    out = project / "t.jsonl"
    r = _run(project, "--config", str(cfg), "tasks", "--domain", "shop", "--n", "8", "--out", str(out))
    assert r.exit_code == 0, r.output
    tasks = [json.loads(x) for x in out.read_text().splitlines()]
    assert tasks and all(t["turn_limit"] == min(5, 3 + len(t["gold"])) for t in tasks)
    r = _run(project, "tasks", "--domain", "shop", "--n", "3", "--task-config", '{"rounds": 0}')
    assert r.exit_code == 2 and "rounds" in r.output


def test_synth_options_default_to_synth_config():
    """The synth command's option defaults are SynthConfig's (the settings' one definition)."""
    import typer.main

    cmd = typer.main.get_command(app).commands["synth"]
    defaults = {p.name: p.default for p in cmd.params}
    cfg = SynthConfig()
    for name in ("n", "seed", "policy", "attempts", "temperature", "eval_fraction", "rl_fraction", "license"):
        assert defaults[name] == getattr(cfg, name), name
    assert defaults["via_mcp"] is False and cfg.via_mcp is None


def test_the_example_config_file_holds_valid_settings():
    from pathlib import Path

    from envfactory.config import load_cli_config
    from envfactory.graph import SamplerConfig

    root = Path(__file__).resolve().parents[2]
    dm = load_cli_config(root / "configs" / "example.yaml").default_map()
    SamplerConfig.model_validate(dm["sample"]["sampler_config"])
    TaskConfig.model_validate(dm["tasks"]["task_config"])
    TaskConfig.model_validate(dm["synth"]["task_config"])
    SynthConfig(eval_fraction=dm["synth"]["eval_fraction"])


def test_graph_and_synth_raise_only_errors_from_the_one_tree():
    """Exception classes live in envfactory.errors; graph and synth define none of their own."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "envfactory"
    for pkg in ("graph", "synth"):
        for f in sorted((root / pkg).glob("*.py")):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                    assert not any(b.endswith(("Error", "Exception")) for b in bases), (f.name, node.name)
