"""Issue 17 #4: YAML alias bombs ('billion laughs') in an env.yaml or an ingested document are
refused before anything expands them. Each bomb runs in a subprocess under a memory limit
(RLIMIT_AS) and a wall-clock bound, so a regression fails instead of taking the machine."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envfactory.spec import load_yaml_bounded

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 1536 << 20  # the interpreter and its imports fit well inside; a bomb does not


def _laughs(levels: int = 9, width: int = 9) -> str:
    """655 bytes that expand to width**levels strings."""
    lines = ["l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _run_bounded(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    prelude = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))
    """)
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_a_billion_laughs_document_is_refused_by_ingest(tmp_path):
    (tmp_path / "api.yaml").write_text(
        'openapi: "3.0.0"\ninfo: {title: t, version: "1"}\npaths: {}\n'
        "x-bomb:\n" + textwrap.indent(_laughs(), "  ")
    )
    out = _run_bounded(
        """
        from envfactory.errors import IngestError
        from envfactory.ingest import load_apidoc
        try:
            load_apidoc("api.yaml")
        except IngestError as e:
            print("refused:", e)
    """,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused:" in out.stdout and "alias" in out.stdout


def test_a_bomb_in_an_env_yaml_default_is_refused(tmp_path):
    import copy

    import yaml

    from ..runtime.conftest import SMALL

    d = copy.deepcopy(SMALL)
    d["entities"][0]["fields"][1]["default"] = "BOMB"
    text = yaml.safe_dump(d, sort_keys=False)
    levels = _laughs().strip().splitlines()  # 'l0: &l0 [...]' ...: one flow mapping holds them all
    (tmp_path / "env.yaml").write_text(text.replace("default: BOMB", "default: {" + ", ".join(levels) + "}"))
    # load_environment hashes the spec (model_dump expands every alias) and seeds it
    out = _run_bounded(
        """
        from envfactory.errors import SpecError
        from envfactory.runtime import load_environment
        try:
            load_environment(".")
        except SpecError as e:
            print("refused:", e)
    """,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused:" in out.stdout and "alias" in out.stdout and "\n" not in out.stdout.strip()


def test_a_recursive_alias_is_refused():
    with pytest.raises(ValueError, match="refers to itself"):
        load_yaml_bounded("a: &a [1, *a]\n")


def test_ordinary_aliases_still_load():
    assert load_yaml_bounded("base: &b {x: 1}\nuse: *b\nlist: [*b, *b]\n") == {
        "base": {"x": 1},
        "use": {"x": 1},
        "list": [{"x": 1}, {"x": 1}],
    }


@pytest.mark.parametrize(
    "use",
    [
        "b: *x",
        "b: [*x, *x]",
        "b: {y: *x}",
        "b:\n  - *x",
        "b:\n  ? *x\n  : 1",
        'b: {"y":*x}',
        "b: [1,*x]",
        "*x : 1",
    ],
)
def test_every_way_of_writing_an_alias_is_measured(use):
    # the pre-scan that skips measuring may only skip texts with no alias at all
    import yaml

    from envfactory.spec.io import _MAY_ALIAS

    text = "a: &x [1]\n" + use + "\n"
    assert any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text))  # it is an alias
    assert _MAY_ALIAS.search(text.split("\n", 1)[1])  # found in the lines after the anchor
