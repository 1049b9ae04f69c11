"""Evaluation suites in BFCL's own file format, built from our tasks and environments.

A suite is one folder per domain, laid out like BFCL's data folder, with BFCL v4's file and id
naming, so BFCL's own loaders (``extract_test_category``, ``load_dataset_entry`` with
``PROMPT_PATH`` set to the folder, ``load_ground_truth_entry``) and ``ast_file_runner`` read
the files unchanged::

    eval/suites/<domain>/
        BFCL_v4_<category>.json                  questions (JSON Lines); ids <category>_<n>
        possible_answer/BFCL_v4_<category>.json  ground truth (not for irrelevance / relevance)
        multi_turn_func_doc/<env>.json           function docs of each environment (multi-turn)
        manifest.json                            provenance: entry -> task, env, steps; suite digest
        tasks.jsonl.gz                           the tasks behind multi-turn entries

How each category is made: :mod:`envfactory.evaluation.suite_build`. Accepted values and the
"stated means required" rule: :mod:`envfactory.evaluation.suite_docs`. Calls use keyword
arguments only. The same tasks, environments and seed give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import SuiteError
from ..spec import load_tasks, write_tasks
from .bfcl_format import load_jsonl, write_jsonl
from .categories import CATEGORIES, FORMAT_VERSION, SINGLE_TURN_CATEGORIES, canonical_category
from .suite_build import build_suite
from .suite_docs import bfcl_function_doc
from .suite_model import Suite, SuiteEntry

__all__ = [
    "CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "SuiteError",
    "SuiteEntry",
    "Suite",
    "bfcl_function_doc",
    "build_suite",
    "write_suite",
    "load_suite",
    "suite_digest",
    "suite_file_name",
]

MANIFEST = "manifest.json"
TASKS_FILE = "tasks.jsonl.gz"  # gold outputs make it large; suites written before read tasks.jsonl
_OLD_TASKS_FILE = "tasks.jsonl"
FUNC_DOC_DIR = "multi_turn_func_doc"
_NO_ANSWER = ("irrelevance", "live_relevance")


def suite_file_name(category: str) -> str:
    """BFCL's file name for a category: ``BFCL_v4_<category>.json``."""
    return f"{FORMAT_VERSION}_{canonical_category(category)}.json"


def suite_digest(folder: str | Path) -> str:
    """sha256 over the suite's BFCL files (names and bytes): the same files, the same digest."""
    root = Path(folder)
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.json*")):
        if p.is_file() and p.name != MANIFEST:
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _clear(out: Path) -> None:
    olds = [
        *out.glob("BFCL_v*_*.json"),
        *(out / "possible_answer").glob("*.json"),
        *(out / FUNC_DOC_DIR).glob("*.json"),
    ]
    for old in olds:
        old.unlink()


def write_suite(suite: Suite, out_dir: str | Path) -> Path:
    """Write the suite's files under ``out_dir`` (the domain's folder); returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear(out)
    manifest: dict[str, Any] = {
        "format": f"{FORMAT_VERSION} (BFCL question / possible_answer JSON Lines)",
        "domain": suite.domain,
        "seed": suite.seed,
        "envs": dict(sorted(suite.envs.items())),
        "counts": suite.counts,
        "files": {},
        "entries": {},
    }
    for env, docs in sorted(suite.func_docs.items()):
        write_jsonl(out / FUNC_DOC_DIR / f"{env}.json", docs)
    for category in CATEGORIES:
        entries = suite.by_category(category)
        if not entries:
            continue
        name = suite_file_name(category)
        write_jsonl(out / name, [e.question_entry() for e in entries])
        files = {"question": name}
        if category not in _NO_ANSWER:
            write_jsonl(out / "possible_answer" / name, [e.answer_entry() for e in entries])
            files["possible_answer"] = f"possible_answer/{name}"
        manifest["files"][category] = files
        for e in entries:
            manifest["entries"][e.id] = {
                "category": category,
                "env": e.env,
                "domain": e.domain,
                "task_id": e.task_id,
                "steps": e.steps,
            }
    manifest["digest"] = suite_digest(out)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tasks_path = out / TASKS_FILE
    if suite.tasks:
        write_tasks([suite.tasks[k] for k in sorted(suite.tasks)], tasks_path)
    elif tasks_path.exists():
        tasks_path.unlink()
    (out / _OLD_TASKS_FILE).unlink(missing_ok=True)
    suite.path = out
    return out


def load_suite(path: str | Path) -> Suite:
    """Read a suite folder written by :func:`write_suite`."""
    folder = Path(path)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise SuiteError(
            f"{folder}: not a suite folder (no {MANIFEST}); build one with 'envfactory eval-suite'"
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as e:
        raise SuiteError(f"{manifest_path}: {e}") from e
    if not isinstance(manifest, dict):
        raise SuiteError(f"{manifest_path}: a suite manifest must be a JSON object")
    found = [folder / name for name in (TASKS_FILE, _OLD_TASKS_FILE) if (folder / name).exists()]
    tasks = {t.task_id: t for t in load_tasks(found[0])} if found else {}
    try:
        func_docs = {p.stem: load_jsonl(p) for p in sorted((folder / FUNC_DOC_DIR).glob("*.json"))}
        entries = _load_entries(folder, manifest, func_docs)
    except (KeyError, TypeError, AttributeError, ValueError) as e:  # a hand-edited or truncated suite
        raise SuiteError(
            f"{folder}: malformed suite ({type(e).__name__}: {e}); rebuild it with 'envfactory eval-suite'"
        ) from e
    return Suite(
        manifest.get("domain", folder.name),
        entries,
        tasks,
        manifest.get("seed", 0),
        manifest.get("envs", {}),
        folder,
        func_docs,
    )


def _load_entries(
    folder: Path, manifest: dict[str, Any], func_docs: dict[str, list[dict[str, Any]]]
) -> list[SuiteEntry]:
    entries: list[SuiteEntry] = []
    for name, files in manifest.get("files", {}).items():
        category = canonical_category(name)  # suites written before BFCL v4 naming say "simple"
        if category not in CATEGORIES:
            raise SuiteError(
                f"{folder}: category {category!r} is not one this version reads "
                f"({', '.join(CATEGORIES)}); rebuild the suite with 'envfactory eval-suite'"
            )
        questions = load_jsonl(folder / files["question"])
        answers = (
            {a["id"]: a["ground_truth"] for a in load_jsonl(folder / files["possible_answer"])}
            if "possible_answer" in files
            else {}
        )
        for q in questions:
            meta = manifest["entries"].get(q["id"], {})
            config: dict[str, Any] = next(iter((q.get("initial_config") or {}).values()), {})
            env = meta.get("env", "")
            missed = q.get("missed_function") or {}
            held_out = {n for names in missed.values() for n in names}
            all_docs = func_docs.get(env, []) if "involved_classes" in q else []
            entries.append(
                SuiteEntry(
                    id=q["id"],
                    category=category,
                    question=q["question"],
                    functions=q["function"]
                    if "function" in q
                    else [f for f in all_docs if f["name"] not in held_out],
                    ground_truth=answers.get(q["id"], []),
                    env=env,
                    domain=meta.get("domain", manifest.get("domain", "")),
                    task_id=meta.get("task_id"),
                    steps=meta.get("steps", []),
                    initial_state=config.get("state", "template"),
                    initial_state_hash=config.get("state_hash"),
                    missed_function=missed,
                    all_functions=all_docs,
                )
            )
    return entries
