"""Where the shared corpus lives, and a skip marker for when it is absent."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = (REPO_ROOT / "../shared/corpus").resolve()

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus absent: {CORPUS}")


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.glob("*/*") if p.is_file())
