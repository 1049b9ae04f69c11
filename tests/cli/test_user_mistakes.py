"""Bad options and paths end with one 'error:' line and exit 2, never a traceback or a half-written file."""

from __future__ import annotations

from typer.testing import CliRunner

from envfactory.cli import app

from ..conftest import REPO

runner = CliRunner()


def _run(*args: str):
    # catch_exceptions=False: a traceback fails the test instead of hiding in r.exception
    return runner.invoke(app, list(args), catch_exceptions=False, env={"ENVFACTORY_ROOT": str(REPO)})


def test_synth_tasks_file_that_is_not_tasks_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n')
    r = _run(
        "synth",
        "--domain",
        "travel",
        "--env",
        "trip_desk",
        "--tasks",
        str(bad),
        "--out-root",
        str(tmp_path / "o"),
    )
    assert r.exit_code == 2
    assert "bad.jsonl:1: not a task" in " ".join(r.output.split())
    assert not (tmp_path / "o").exists()


def test_synth_tasks_file_with_no_task_for_the_envs_writes_nothing(tmp_path):
    from envfactory.runtime import load_environment
    from envfactory.spec import write_tasks
    from envfactory.synth.tasks import build_tasks

    env = load_environment(REPO / "domains" / "travel" / "trip_desk")
    tasks = build_tasks([env], n=2, seed=0).tasks
    f = write_tasks([t.model_copy(update={"env": "elsewhere"}) for t in tasks], tmp_path / "t.jsonl")
    r = _run(
        "synth",
        "--domain",
        "travel",
        "--env",
        "trip_desk",
        "--tasks",
        str(f),
        "--out-root",
        str(tmp_path / "o"),
    )
    assert r.exit_code == 2
    assert "none of its 2 tasks" in r.output
    assert not (tmp_path / "o").exists()


def test_unwritable_out_path_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = _run("spec-schema", "--out", str(blocker / "x.json"))
    assert r.exit_code == 2
    assert "error:" in r.output and "Not a directory" in " ".join(r.output.split())


def test_tasks_base_url_without_model_is_one_line(tmp_path):
    r = _run(
        "tasks",
        "--domain",
        "travel",
        "--n",
        "1",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        str(tmp_path / "t.jsonl"),
    )
    assert r.exit_code == 2
    assert "--model and --base-url go together" in r.output
    assert not (tmp_path / "t.jsonl").exists()


def test_build_domain_outside_the_domains_folder_is_refused(tmp_path):
    r = _run(
        "build",
        "--domain",
        "../resources",
        "--resources",
        str(REPO / "resources"),
        "--domains",
        str(tmp_path / "domains"),
        "--no-verify",
    )
    assert r.exit_code == 2
    assert "invalid domain name" in r.output
    assert not list(tmp_path.iterdir())


def test_build_domain_with_out_is_refused_not_ignored(tmp_path):
    # --out names one --source's folder; with --domain it used to be ignored and domains/ rewritten in place
    r = _run("build", "--domain", "travel", "--out", str(tmp_path / "x"), "--no-verify")
    assert r.exit_code == 2
    assert "--out goes with --source" in r.output and "--domains" in r.output
    assert not list(tmp_path.iterdir())


def test_synth_dataset_name_cannot_leave_trajectories():
    from typer.testing import CliRunner

    from envfactory.cli import app

    r = CliRunner().invoke(app, ["synth", "--domain", "travel", "--n", "2", "--name", "../escape"])
    assert r.exit_code == 2 and "--name '../escape'" in r.output
