import json

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.spec import save_spec

from ._tiny import tiny_spec


def test_verify_command_records_replays_and_fails_on_a_changed_cassette(tmp_path, monkeypatch):
    env_dir = tmp_path / "domains" / "test" / "tiny_shop"
    save_spec(tiny_spec(), env_dir)
    monkeypatch.setenv("ENVFACTORY_ROOT", str(tmp_path))
    runner = CliRunner()
    missing = runner.invoke(app, ["verify", "--domain", "test"])
    assert missing.exit_code == 1 and "no cassette" in missing.output
    rec = runner.invoke(app, ["verify", "--domain", "test", "--record"])
    assert rec.exit_code == 0, rec.output
    assert (env_dir / "cassettes" / "tiny_shop.json").is_file()
    assert runner.invoke(app, ["verify", "--domain", "test"]).exit_code == 0
    p = env_dir / "cassettes" / "tiny_shop.json"
    d = json.loads(p.read_text())
    d["sequences"][0][0]["hash"] = "0" * 64
    p.write_text(json.dumps(d))
    bad = runner.invoke(app, ["verify", "--domain", "test"])
    assert bad.exit_code == 1 and "FAIL" in bad.output
