"""Every document of the shared corpus either yields verified environments or fails with a
one-line IngestError/ExploreError. Prints the yield figures (run with -s to see them)."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
FILES = (
    sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
    if CORPUS.is_dir()
    else []
)


def build_one(path: str) -> tuple[str, str, int, int, str]:
    """(file, outcome, envs, tools, detail); outcome is ok | failed | crash."""
    from envfactory.errors import ExploreError, IngestError
    from envfactory.pipelines import build_source

    with tempfile.TemporaryDirectory() as out:
        try:
            # one env per giant document and a tenth of the seed rows keep this in the time budget
            r = build_source(
                path, out_dir=out, domain="corpus", verify=True, max_envs_per_doc=1, row_scale=0.1
            )
        except (IngestError, ExploreError) as e:
            return path, "failed", 0, 0, str(e)
        except Exception as e:  # noqa: BLE001 - a crash is the finding this test reports
            return path, "crash", 0, 0, f"{type(e).__name__}: {e}"
        if not r.envs:
            errors = [d.error for d in r.failed_documents if d.error] + r.dropped_envs
            return path, "failed", 0, 0, errors[0] if errors else "no environment"
        for e in r.envs:
            assert (Path(out) / e.name / "env.yaml").is_file()
        return path, "ok", len(r.envs), sum(e.tools for e in r.envs), ""


@pytest.mark.skipif(not FILES, reason=f"no corpus at {CORPUS}")
@pytest.mark.slow  # builds every document of the shared corpus
def test_corpus_yields_environments_or_one_line_errors():
    workers = max(1, min(4, os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(build_one, [str(f) for f in FILES]))
    crashes = [(f, d) for f, o, _, _, d in results if o == "crash"]
    failed = [(f, d) for f, o, _, _, d in results if o == "failed"]
    ok = [r for r in results if r[1] == "ok"]
    for f, d in failed:
        assert "\n" not in d, f"{f}: multi-line error"
        print(f"failed: {Path(f).name}: {d}")
    envs = sum(r[2] for r in ok)
    tools = sum(r[3] for r in ok)
    print(
        f"\ncorpus yield: {len(ok)}/{len(results)} files yield environments "
        f"({100 * len(ok) / len(results):.0f}%), {envs} environments, {tools} tools"
    )
    assert not crashes, crashes
    assert len(ok) / len(results) >= 0.85
