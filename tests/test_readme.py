"""Every fenced code block in README.md runs here, as a new user would run it.

- ``python`` blocks execute in a fresh interpreter from the project folder.
- ``bash`` blocks: each ``envfactory ...`` command (``&&`` chains, ``VAR=value`` prefixes and
  trailing ``# comments`` as a shell reads them) runs as a subprocess in a scratch copy of the
  project, so nothing here writes into the checkout. Model endpoints
  (``--base-url http://127.0.0.1:8000/v1``) point at a scripted OpenAI-compatible server on
  127.0.0.1, and ``--n N`` is capped at 2. The venv and pip steps are the environment these tests
  run in; they are checked for what they name, not run.
- A command the block cannot run here is named, with the reason, in an HTML comment right
  above the block: ``<!-- readme-test: not-run "PREFIX" (why) -->``. Keep these few.
- ``yaml`` blocks are the environment format: each tool validates as a ``ToolSpec`` and matches
  the tool of that name in the reference environment. ``text`` blocks (the layout) name folders
  and subpackages that exist.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from .conftest import REPO, TRIP_DESK

README = REPO / "README.md"
_FENCE = re.compile(r"^```(\w*)\s*$")
_NOT_RUN = re.compile(r'<!--\s*readme-test:\s*not-run\s+"([^"]+)"\s*\(([^)]+)\)\s*-->')
# steps that make the environment these tests already run in (checked, not repeated)
_SETUP = (
    re.compile(r"python3 -m venv \.venv"),
    re.compile(r"(CMAKE_ARGS=\S+ )?\.venv/bin/pip install (-q )?-e '?\.(\[(\w+)\])?'?"),
    # the lint and type-check steps of the test command: .ci/run runs them (this test checks it does)
    re.compile(r"\.venv/bin/ruff (check|format --check) envfactory tests"),
    re.compile(r"\.venv/bin/mypy"),
)
_SLOW_COMMANDS = {"build", "synth"}  # a whole domain build, rollouts: run with the slow tests
MODEL_URL = "http://127.0.0.1:8000/v1"


@dataclass
class Block:
    lang: str
    text: str
    line: int
    not_run: dict[str, str] = field(default_factory=dict)  # command prefix -> reason

    @property
    def id(self) -> str:
        return f"L{self.line}-{self.lang or 'plain'}"


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        above = lines[start - 1] if start > 0 else ""
        not_run = {p: why for p, why in _NOT_RUN.findall(above)}
        blocks.append(Block(m.group(1), "\n".join(lines[start + 1 : j]) + "\n", start + 1, not_run))
        i = j + 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _segments(block: Block) -> list[list[str]]:
    """Each shell command of a bash block as argv (after the shell's word splitting)."""
    out = []
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for w in words:
            if w == "&&":
                out.append(current)
                current = []
            else:
                current.append(w)
        if current:
            out.append(current)
    return out


def _params(kind: str) -> list:
    out = []
    for b in BLOCKS:
        if b.lang != kind:
            continue
        commands = [_envfactory_args(argv)[1][:1] for argv in _segments(b)] if kind == "bash" else []
        slow = any(c and c[0] in _SLOW_COMMANDS for c in commands)
        out.append(pytest.param(b, id=b.id, marks=[pytest.mark.slow] if slow else []))
    return out


def _envfactory_args(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """(environment assignments, arguments after 'envfactory'), or ({}, []) when not an envfactory command."""
    env: dict[str, str] = {}
    rest = list(argv)
    while rest and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", rest[0]):
        k, _, v = rest.pop(0).partition("=")
        env[k] = v
    if rest and rest[0] in ("envfactory", ".venv/bin/envfactory"):
        return env, rest[1:]
    return {}, []


def test_every_block_is_covered():
    kinds = {b.lang for b in BLOCKS}
    assert kinds <= {"bash", "python", "yaml", "text"}, f"a README block of a kind no test runs: {kinds}"
    assert len(BLOCKS) >= 6
    exemptions = [p for b in BLOCKS for p in b.not_run]
    assert len(exemptions) <= 2, f"keep not-run exemptions few: {exemptions}"


def test_ci_runs_the_readme_test_command_verbatim():
    (block,) = [b for b in BLOCKS if "pytest" in b.not_run]
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    (command,) = [line for line in block.text.splitlines() if "pytest" in line]
    assert command in ci_lines
    assert "-m 'slow or not slow'" in command  # CI runs the slow tests too


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory) -> Path:
    """A copy of the project's data (what the commands read and write), outside the checkout."""
    root = tmp_path_factory.mktemp("readme-root")
    shutil.copytree(REPO / "resources", root / "resources")
    shutil.copytree(REPO / "domains" / "travel", root / "domains" / "travel")
    shutil.copytree(REPO / "eval" / "suites" / "travel", root / "eval" / "suites" / "travel")
    shutil.copytree(REPO / "configs", root / "configs")
    return root


def _adapt(args: list[str], model_url: str) -> list[str]:
    """Small sizes and the scripted endpoint, as the module docstring says."""
    out = []
    for i, a in enumerate(args):
        if a == MODEL_URL:
            a = model_url
        elif i > 0 and args[i - 1] == "--n" and a.isdigit():
            a = str(min(int(a), 2))
        out.append(a)
    return out


@pytest.mark.parametrize("block", _params("bash"))
def test_bash_block_runs(block: Block, scratch_root: Path):
    from envfactory.llm import Reply, ScriptedOpenAIServer

    ran = exempt = 0
    # the stand-in for 'vllm serve MODEL': every reply is "Done." (a model that calls no tool)
    with ScriptedOpenAIServer(model="MODEL", fallback=lambda request: Reply("Done.")) as server:
        for argv in _segments(block):
            line = " ".join(argv)
            skipped = [p for p in block.not_run if line.startswith(p) or p in line.split()]
            if skipped:
                exempt += 1
                continue
            if any(p.fullmatch(line) for p in _SETUP):
                extra = re.search(r"\[(\w+)\]", line)
                if extra:  # the extra it installs exists
                    assert f"\n{extra.group(1)} = [" in (REPO / "pyproject.toml").read_text()
                continue
            env_vars, args = _envfactory_args(argv)
            assert args, f"README line {block.line}: the test does not know how to run {line!r}"
            env = {k: v for k, v in os.environ.items() if k != "ENVFACTORY_ROOT"}
            env.update(env_vars)
            p = subprocess.run(
                [sys.executable, "-m", "envfactory", *_adapt(args, server.base_url)],
                cwd=scratch_root,
                env={**env, "COLUMNS": "200"},
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert p.returncode == 0, (
                f"README line {block.line}: {line}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
            )
            assert "Traceback" not in p.stderr
            ran += 1
    assert ran or exempt, f"README line {block.line}: nothing in this block ran"


@pytest.mark.parametrize("block", _params("python"))
def test_python_block_runs(block: Block):
    env = {k: v for k, v in os.environ.items() if k != "ENVFACTORY_ROOT"}
    p = subprocess.run(
        [sys.executable, "-c", block.text], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, f"README line {block.line}:\n{p.stderr[-3000:]}"
    assert p.stdout.strip(), "the example prints what it did"


@pytest.mark.parametrize("block", _params("yaml"))
def test_yaml_block_is_a_tool_of_the_reference_environment(block: Block):
    from envfactory.spec import ToolSpec, load_spec

    tools = [ToolSpec.model_validate(t) for t in yaml.safe_load(block.text)]
    reference = {t.name: t for t in load_spec(TRIP_DESK).tools}
    for tool in tools:
        real = reference[tool.name]
        # the README shortens the descriptions; everything an agent or the runtime acts on is as shipped
        assert tool.model_dump(exclude={"description", "params"}) == real.model_dump(
            exclude={"description", "params"}
        )
        assert [p.model_dump(exclude={"description"}) for p in tool.params] == [
            p.model_dump(exclude={"description"}) for p in real.params
        ]
        assert real.description.startswith(tool.description.split(".")[0])


@pytest.mark.parametrize("block", _params("text"))
def test_text_block_names_what_exists(block: Block):
    folders = re.findall(r"^(\w[\w-]*)/(.*)$", block.text, re.M)
    assert folders
    for name, says in folders:
        if "not committed" in says:  # made by the commands: git must ignore what they write there
            probe = subprocess.run(["git", "check-ignore", "-q", f"{name}/example/file"], cwd=REPO)
            assert probe.returncode == 0, f"README says {name}/ is not committed, but git does not ignore it"
        else:
            assert (REPO / name).is_dir(), f"README layout names {name}/, which is not in the repository"
    package = re.search(r"the package: (.*?)\n\S", block.text, re.S)
    assert package
    for name in re.split(r"[,\s]+", package.group(1).strip()):
        if name:
            assert (REPO / "envfactory" / name).is_dir() or (REPO / "envfactory" / f"{name}.py").is_file(), (
                name
            )
