"""inspect / call / spec-schema / --config through the CLI, as a user runs them."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from envfactory.cli import app

from ..conftest import REPO

runner = CliRunner()


def _run(*args: str, **kw):
    return runner.invoke(app, list(args), catch_exceptions=False, env={"ENVFACTORY_ROOT": str(REPO)}, **kw)


def test_inspect_lists_travel_reference_env():
    r = _run("inspect", "--domain", "travel", "--env", "trip_desk")
    assert r.exit_code == 0, r.output
    assert "trip_desk" in r.output and "14,020" in r.output


def test_call_prints_result_json():
    r = _run(
        "call",
        "get_flight",
        "--domain",
        "travel",
        "--env",
        "trip_desk",
        "--args",
        '{"flight_id": "FL00001"}',
        "--json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["ok"] is True and out["result"]["flight_id"] == "FL00001"


def test_call_error_is_one_line_and_exit_1():
    r = _run("call", "get_flight", "--domain", "travel", "--env", "trip_desk", "--args", '{"flight_id": 5}')
    assert r.exit_code == 1
    assert "invalid_argument" in r.output and "'flight_id' must be a string" in r.output
    assert "Traceback" not in r.output


def test_call_bad_json_args_names_the_option():
    r = _run("call", "get_flight", "--domain", "travel", "--args", "{nope")
    assert r.exit_code == 2
    assert "--args is not valid JSON" in r.output


def test_unknown_domain_is_a_clear_error():
    r = _run("inspect", "--domain", "atlantis")
    assert r.exit_code == 2 and "domain 'atlantis' not found" in r.output


def test_spec_schema_is_json():
    r = _run("spec-schema")
    assert r.exit_code == 0
    assert json.loads(r.output)["title"] == "envfactory EnvSpec"


def test_config_file_supplies_option_defaults(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text('call:\n  domain: travel\n  env: trip_desk\n  args: \'{"code": "ZZZ"}\'\n')
    r = _run("--config", str(cfg), "call", "get_airport")
    assert r.exit_code == 1 and 'airport "ZZZ" not found' in r.output


def test_bad_config_file_is_a_clear_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("call: [1, 2\n")
    r = _run("--config", str(cfg), "inspect")
    assert r.exit_code == 2 and "malformed YAML" in r.output and str(cfg) in r.output


def _two_envs_sharing_a_tool(tmp_path) -> dict[str, str]:
    """A project whose travel domain has trip_desk and a renamed copy of it (the same tool names)."""
    import shutil

    dom = tmp_path / "domains" / "travel"
    shutil.copytree(
        REPO / "domains" / "travel" / "trip_desk",
        dom / "trip_desk",
        ignore=shutil.ignore_patterns("template.db"),
    )
    shutil.copytree(dom / "trip_desk", dom / "trip_mirror")
    spec = dom / "trip_mirror" / "env.yaml"
    spec.write_text(spec.read_text().replace("name: trip_desk", "name: trip_mirror", 1))
    return {"ENVFACTORY_ROOT": str(tmp_path)}


def test_call_of_a_tool_in_several_environments_lists_them_and_calls_nothing(tmp_path):
    env = _two_envs_sharing_a_tool(tmp_path)
    r = runner.invoke(
        app, ["call", "get_flight", "--domain", "travel", "--args", '{"flight_id": "FL00001"}'], env=env
    )
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert "'get_flight' is in 2 environments" in text
    assert "trip_mirror/get_flight" in text and "trip_desk/get_flight" in text


def test_call_accepts_env_slash_tool(tmp_path):
    r = _run(
        "call", "trip_desk/get_flight", "--domain", "travel", "--args", '{"flight_id": "FL00001"}', "--json"
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["result"]["flight_id"] == "FL00001"
    clash = runner.invoke(
        app,
        ["call", "trip_desk/get_flight", "--domain", "travel", "--env", "trip_mirror"],
        env=_two_envs_sharing_a_tool(tmp_path),
    )
    assert clash.exit_code == 2 and "--env says 'trip_mirror'" in " ".join(clash.output.split())
    missing = _run("call", "trip_desk/no_such_tool", "--domain", "travel")
    assert missing.exit_code == 2 and "no tool 'no_such_tool' in environment 'trip_desk'" in " ".join(
        missing.output.split()
    )


def test_inspect_tools_shows_each_parameter_with_type_required_and_enum():
    r = runner.invoke(
        app,
        ["inspect", "--domain", "travel", "--env", "trip_desk", "--tools"],
        catch_exceptions=False,
        env={"ENVFACTORY_ROOT": str(REPO), "COLUMNS": "250"},
    )
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "booking_id: string (required)" in text  # cancel_booking's key
    assert "cabin: string one of economy|premium_economy|business|first" in text
    assert "status: list of string one of scheduled|delayed|cancelled|departed" in text  # an 'in' filter
    assert "limit: integer" in text  # paging, as an agent sees it


def test_describe_params_follows_the_tool_input_schema(trip_desk_env):
    from envfactory.cli.runtime_cmds import describe_params
    from envfactory.spec import tool_input_schema

    for tool in trip_desk_env.spec.tools:
        schema = tool_input_schema(tool)
        lines = describe_params(tool)
        assert [line.split(":")[0] for line in lines] == list(schema["properties"])
        assert sum("(required)" in line for line in lines) == len(schema.get("required", []))


def test_root_option_works_from_any_folder(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ENVFACTORY_ROOT"}
    cmd = [sys.executable, "-m", "envfactory"]
    lost = subprocess.run(
        [*cmd, "inspect", "--domain", "travel"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lost.returncode == 2
    assert "pass --root DIR or set $ENVFACTORY_ROOT" in " ".join(lost.stderr.split())
    found = subprocess.run(
        [*cmd, "--root", str(REPO), "inspect", "--domain", "travel", "--env", "trip_desk"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert "14,020" in found.stdout
    via_env = subprocess.run(
        [*cmd, "call", "trip_desk/get_airport", "--args", '{"code": "ZZZ"}'],
        cwd=tmp_path,
        env={**env, "ENVFACTORY_ROOT": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert via_env.returncode == 1 and 'airport "ZZZ" not found' in via_env.stdout
    assert not list(tmp_path.iterdir())  # nothing written into the current folder


def test_root_option_is_restored_after_an_in_process_run(tmp_path, monkeypatch):
    import os

    monkeypatch.delenv("ENVFACTORY_ROOT", raising=False)
    r = runner.invoke(
        app,
        ["--root", str(REPO), "inspect", "--domain", "travel", "--env", "trip_desk"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert "ENVFACTORY_ROOT" not in os.environ
    bad = runner.invoke(app, ["--root", str(tmp_path / "nowhere"), "inspect"])
    assert bad.exit_code == 2 and "nowhere: not a folder" in " ".join(bad.output.split())
