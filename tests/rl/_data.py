"""Test-only: a small dataset written by the real synthesis pipeline (every row in the rl split)."""

from __future__ import annotations

import shutil
from functools import lru_cache
from pathlib import Path

from envfactory.runtime import load_environment

REPO = Path(__file__).resolve().parents[2]
TRIP_DESK = REPO / "domains" / "travel" / "trip_desk"


@lru_cache(maxsize=1)
def _dataset(root: str, n: int) -> Path:
    from envfactory.pipelines import synthesize_dataset

    out = Path(root) / "td"
    res = synthesize_dataset([load_environment(TRIP_DESK)], out, n=n, seed=0, rl_fraction=1.0)
    assert res.split_counts["rl"] >= 8, res
    shutil.rmtree(out / ".synth")  # a release holds only the card, the Parquet files and the bundles
    return out


def dataset(tmp_path_factory, n: int = 12) -> Path:
    return _dataset(str(tmp_path_factory.getbasetemp() / "rl-dataset"), n)
