"""What the command line imports before it does anything: the set of modules, not a time.

Speed is measured by ``envfactory bench cli``; these tests keep the heavy libraries out of the
paths that do not use them, where a regression would otherwise go unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ..conftest import REPO

# Libraries that cost tens to hundreds of milliseconds each to import.
HEAVY = (
    "sqlalchemy",
    "faker",
    "networkx",
    "numpy",
    "langgraph",
    "datasets",
    "mcp",
    "httpx",
    "scipy",
    "matplotlib",
    "pandas",
    "pyarrow",
    "starlette",
    "uvicorn",
    "jsonschema",
    "huggingface_hub",
    "psutil",
)

_PROBE = """
import json, sys
{setup}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
"""

_RUN_CLI = """
import sys
from envfactory.cli import main
sys.argv = ["envfactory", *{argv!r}]
try:
    main()
except SystemExit:
    pass
"""


def _loaded(setup: str, cwd=REPO) -> set[str]:
    """Top-level modules loaded in a fresh interpreter after running ``setup`` (its own stdout discarded)."""
    code = _PROBE.format(
        setup="import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
        + "\n".join("    " + line for line in setup.strip().splitlines())
    )
    env = {**os.environ, "ENVFACTORY_ROOT": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_library():
    loaded = _loaded("import envfactory.cli")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert "rich" not in loaded and "pydantic" not in loaded  # both load on first use


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["inspect", "--help"],
        ["eval", "--help"],
        ["serve", "--help"],
        ["bench", "--help"],
        ["sample", "--help"],
        ["--root", ".", "call", "--help"],
    ],
)
def test_help_loads_no_heavy_library(argv):
    loaded = _loaded(_RUN_CLI.format(argv=argv))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    # typer would import pydantic to coerce the root group's options; _app._RootGroup spares it
    assert "pydantic" not in loaded and "rich" not in loaded


def test_root_group_fills_only_empty_typer_coercion_slots():
    from pathlib import Path

    from typer.main import get_command

    from envfactory.cli import app
    from envfactory.cli._app import _Flag, _PathOption

    group = get_command(app)
    ctx = group.make_context("envfactory", ["--root", "/tmp", "--config", "c.yaml", "inspect"])
    assert ctx.params["root"] == Path("/tmp") and ctx.params["config"] == Path("c.yaml")
    slots = {p.name: type(getattr(p, "_runtime_param", None)) for p in group.get_params(ctx)}
    assert slots == {"config": _PathOption, "root": _PathOption, "version": _Flag, "help": _Flag}

    class Foreign:  # a parameter of a typer without the slot: left alone
        name, is_flag, opts, secondary_opts = "root", False, ["--foreign"], []

    foreign = Foreign()
    group.params.append(foreign)
    try:
        group.get_params(ctx)
        assert not hasattr(foreign, "_runtime_param")
    finally:
        group.params.remove(foreign)


def test_inspect_loads_the_runtime_but_not_what_it_does_not_use():
    loaded = _loaded(_RUN_CLI.format(argv=["inspect", "--domain", "travel", "--env", "trip_desk"]))
    assert "envfactory" in loaded
    # the runtime's own libraries may load; serving, graphs, models, datasets and agents may not
    unused = {
        "langgraph",
        "datasets",
        "mcp",
        "httpx",
        "numpy",
        "scipy",
        "matplotlib",
        "starlette",
        "uvicorn",
        "huggingface_hub",
        "pandas",
        "pyarrow",
    }
    assert not loaded & unused, sorted(loaded & unused)


def test_version_prints_the_package_version():
    from typer.testing import CliRunner

    import envfactory
    from envfactory.cli import app

    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"envfactory {envfactory.__version__}"


def test_cli_help_lists_every_registered_choice():
    """Help text names choices without importing their registries' machinery; they must agree."""
    from typer.testing import CliRunner

    from envfactory.cli import app
    from envfactory.graph import SAMPLERS

    runner = CliRunner()
    sample = " ".join(runner.invoke(app, ["sample", "--help"]).output.split())
    assert all(name in sample for name in SAMPLERS), sample
    from envfactory.cli.graph_cmds import SAMPLER_NAMES

    assert tuple(SAMPLERS) == SAMPLER_NAMES
    from envfactory.evaluation import CATEGORIES, REFERENCE_AGENTS

    ev = " ".join(runner.invoke(app, ["eval", "--help"]).output.split())
    assert all(name in ev for name in REFERENCE_AGENTS) and all(c in ev for c in CATEGORIES)


def test_bench_cli_measures_the_floor_and_each_command():
    from envfactory.bench.cli import run_cli_bench

    rep = run_cli_bench(repeats=1, commands=[["--version"]])
    assert rep.floor.name == "python -c pass" and len(rep.floor.seconds) == 1
    (fig,) = rep.commands
    assert fig.argv[-1] == "--version" and len(fig.seconds) == 1
    assert rep.ratio(fig) > 0
