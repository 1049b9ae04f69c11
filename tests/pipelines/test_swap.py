"""A build killed at any point is recovered by the next build; loaders never see its temp folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envfactory.errors import ConfigError
from envfactory.pipelines import BUILD_FILE, build_domain
from envfactory.pipelines import swap as swap_mod
from envfactory.spec import find_specs

from .test_build import DOC

REPO = Path(__file__).resolve().parents[2]


class Killed(BaseException):
    """Stands for the process dying: nothing after it runs in the swap."""


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _prepare(tmp_path: Path) -> tuple[Path, Path, dict[str, str], dict[str, str]]:
    """A target with the envs a, b (owned) and hand (foreign); a build placing b, c (a dropped)."""
    target = tmp_path / "domains" / "dom"
    for name in ("a", "b", "hand"):
        (target / name).mkdir(parents=True)
        (target / name / "env.yaml").write_text(f"old {name}\n")
    (target / BUILD_FILE).write_text(json.dumps({"envs": ["a", "b"]}))
    before = _tree(target)
    tmp = swap_mod.new_build_dir(target)
    for name in ("b", "c"):
        (tmp / name).mkdir()
        (tmp / name / "env.yaml").write_text(f"new {name}\n")
    after = {
        "b/env.yaml": "new b\n",
        "c/env.yaml": "new c\n",
        "hand/env.yaml": "old hand\n",
        BUILD_FILE: json.dumps({"envs": ["b", "c"]}),
    }
    return target, tmp, before, after


def _replaces_in_a_swap(tmp_path: Path) -> int:
    target, tmp, _, _ = _prepare(tmp_path / "count")
    calls = []
    real = os.replace

    def counting(src, dst):
        calls.append(dst)
        return real(src, dst)

    os.replace = counting
    try:
        swap_mod.swap_in(tmp, target, ["b", "c"], {"a", "b"}, json.dumps({"envs": ["b", "c"]}))
    finally:
        os.replace = real
    return len(calls)


@pytest.mark.parametrize("crash_at", range(1, 8))
def test_a_swap_killed_at_any_rename_is_completed_or_undone_by_the_next_build(
    tmp_path, monkeypatch, crash_at
):
    # the renames: journal, a aside, b aside, b in, c in, build.json; 7 = killed after the swap,
    # before its temp folder was removed
    assert _replaces_in_a_swap(tmp_path) == 6
    target, tmp, before, after = _prepare(tmp_path)
    real, calls = os.replace, []

    def dying(src, dst):
        calls.append(dst)
        if len(calls) == crash_at:
            raise Killed
        return real(src, dst)

    monkeypatch.setattr(swap_mod.os, "replace", dying)
    monkeypatch.setattr(swap_mod, "_undo", lambda *a: None)  # a killed process undoes nothing
    try:
        swap_mod.swap_in(tmp, target, ["b", "c"], {"a", "b"}, after[BUILD_FILE])
    except Killed:
        assert crash_at <= 6
    else:
        assert crash_at == 7
    monkeypatch.undo()
    assert tmp.is_dir()  # left behind, as a killed build leaves it
    assert [p.parent.name for p in find_specs(target.parent)] == sorted(
        p.name for p in target.iterdir() if (p / "env.yaml").is_file()
    )  # loaders skip the temp folder

    assert swap_mod.recover_interrupted(target) == [tmp]
    got = _tree(target)
    assert got in (before, after), (crash_at, got)
    listed = json.loads((target / BUILD_FILE).read_text())["envs"]
    assert all((target / n / "env.yaml").is_file() for n in listed)
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".dom.build-")]


def test_a_swap_that_fails_in_process_puts_everything_back(tmp_path, monkeypatch):
    target, tmp, before, _ = _prepare(tmp_path)
    real = os.replace

    def failing(src, dst):
        if Path(dst) == target / "c":
            raise OSError("rename failed")
        return real(src, dst)

    monkeypatch.setattr(swap_mod.os, "replace", failing)
    with pytest.raises(OSError):
        swap_mod.swap_in(tmp, target, ["b", "c"], {"a", "b"}, json.dumps({"envs": ["b", "c"]}))
    assert _tree(target) == before


KILLED_BUILD = """
import os, sys
from envfactory.pipelines import build_domain
real = os.replace
def dying(src, dst):
    real(src, dst)
    if os.path.basename(os.path.dirname(dst)) == ".old":  # the old env moved aside: die before the new one lands
        os._exit(9)
os.replace = dying
build_domain("library", resources_root=sys.argv[1], domains_root=sys.argv[2], verify=False)
"""


def test_a_killed_build_leaves_an_ignored_temp_folder_that_the_next_build_recovers(tmp_path):
    res, dom = tmp_path / "resources", tmp_path / "domains"
    (res / "library").mkdir(parents=True)
    (res / "library" / "loans.yaml").write_text(DOC)
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_BUILD), str(res), str(dom)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 9, proc.stderr
    (left,) = [p for p in dom.iterdir() if p.name.startswith(".library.build-")]
    assert not (dom / "library" / "library_loans").exists()  # the crash window: moved aside, not yet replaced
    assert find_specs(dom) == []  # the copy inside the temp folder is not an environment to load
    from envfactory.cli._app import domain_dirs, env_dirs

    assert domain_dirs(dom) == []

    report = build_domain("library", resources_root=res, domains_root=dom, verify=False)
    assert [e.name for e in report.envs] == ["library_loans"]  # the same name: still owned, not "_2"
    assert not left.exists() and [p.parent.name for p in find_specs(dom)] == ["library_loans"]
    stray = dom / ".library.build-stray" / "library_loans"  # as a build killed while verifying leaves it
    stray.mkdir(parents=True)
    (stray / "env.yaml").write_bytes((dom / "library" / "library_loans" / "env.yaml").read_bytes())
    assert env_dirs(None, domains_root=dom) == [dom / "library" / "library_loans"]
    assert [p.parent for p in find_specs(dom)] == [dom / "library" / "library_loans"]


def test_a_second_build_of_the_same_target_meanwhile_is_refused(tmp_path):
    target = tmp_path / "domains" / "dom"
    with swap_mod.build_lock(target):
        with pytest.raises(ConfigError, match="another build"):
            with swap_mod.build_lock(target):
                pass
    with swap_mod.build_lock(target):  # released, and its file removed
        pass
    assert not list(target.parent.glob(".dom.build.lock"))
