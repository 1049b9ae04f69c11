"""A release works without the checkout: the built wheel and a dataset folder are enough.

The wheel is built here (``pip wheel . --no-deps``) and installed into a fresh virtual
environment; its dependencies come from this interpreter's site-packages through a ``.pth``
path line (no download). The script runs from an empty folder with ``ENVFACTORY_ROOT`` pointing
there, so no ``domains/`` folder and no checkout is reachable: it resets 20 RL rows (state hash
equal to the row's ``initial_state_hash``), replays their gold calls (reward 1) and a no-op
(reward 0), and checks that ``envfactory`` was imported from the fresh environment.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from ._data import TRIP_DESK

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
import envfactory, envfactory.rl as rl

folder = sys.argv[1]
rows = rl.load_rows(folder)[:20]
src = rl.EnvironmentSource(folder)
out = {"module": envfactory.__file__, "rows": len(rows), "hash_equal": 0, "gold": [], "noop": []}
for row in rows:
    env = rl.make(row, source=src)
    out["hash_equal"] += env.reset()["state_hash"] == row["initial_state_hash"]
    reward = None
    for m in row["messages"]:
        if m["role"] == "assistant":
            _, reward, done, _ = env.step(m)
            if done:
                break
    out["gold"].append(reward)
    env.reset()
    done = False
    while not done:
        _, reward, done, _ = env.step("Done.")
    out["noop"].append(reward)
print(json.dumps(out))
"""


def _isolation() -> list[str]:
    """Build with this interpreter's setuptools when it can make wheels (>= 70.1, or with ``wheel``):
    nothing is downloaded then; else pip fetches the build backend into an isolated environment."""
    import importlib.util
    from importlib.metadata import version

    try:
        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except Exception:
        return []
    can = (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None
    return ["--no-build-isolation"] if can else []


@pytest.mark.slow
def test_wheel_and_dataset_folder_reset_replay_and_score_20_rl_rows(tmp_path):
    from envfactory.pipelines import synthesize_dataset
    from envfactory.runtime import load_environment

    data = tmp_path / "release"
    res = synthesize_dataset([load_environment(TRIP_DESK)], data, n=26, seed=3, rl_fraction=1.0)
    assert res.split_counts["rl"] >= 20, res
    shutil.rmtree(data / ".synth")

    src = tmp_path / "src"  # build from a copy: pip would leave build/ and *.egg-info in the checkout
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            "domains",
            "tests",
            "resources",
            "eval",
            "trajectories",
            "__pycache__",
            "*.egg-info",
            "build",
        ),
    )
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", *_isolation(), "-q", "-w", str(wheels)],
        check=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("envfactory-*.whl")

    home = tmp_path / "venv"
    venv.create(home, with_pip=True)
    py = home / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # dependencies from this interpreter's site-packages: a plain path line, so its .pth files
    # (the checkout's editable install among them) are not processed
    (purelib / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=600,
    )

    empty = tmp_path / "elsewhere"
    empty.mkdir()
    env = {"PATH": "/usr/bin:/bin", "ENVFACTORY_ROOT": str(empty), "HOME": str(empty), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [str(py), "-c", SCRIPT, str(data)], cwd=empty, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(out["module"]).is_relative_to(home), out["module"]
    assert out["rows"] == 20 and out["hash_equal"] == 20
    assert out["gold"] == [1.0] * 20 and out["noop"] == [0.0] * 20
