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
    r = _run("call", "get_flight", "--domain", "travel", "--env", "trip_desk", "--args", '{"flight_id": "FL00001"}', "--json")
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
    cfg.write_text("call:\n  domain: travel\n  env: trip_desk\n  args: '{\"code\": \"ZZZ\"}'\n")
    r = _run("--config", str(cfg), "call", "get_airport")
    assert r.exit_code == 1 and 'airport "ZZZ" not found' in r.output


def test_bad_config_file_is_a_clear_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("call: [1, 2\n")
    r = _run("--config", str(cfg), "inspect")
    assert r.exit_code == 2 and "malformed YAML" in r.output and str(cfg) in r.output
