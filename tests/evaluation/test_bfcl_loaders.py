"""BFCL's own tooling reads our suites unchanged and scores the gold outputs 1.0.

For every suite shipped under eval/suites/ (and one built here from trip_desk): BFCL's
``extract_test_category`` names each file's category, ``load_dataset_entry`` /
``load_ground_truth_entry`` load it (``PROMPT_PATH`` pointed at the suite folder, as BFCL's data
folder), and BFCL's ``ast_file_runner`` / ``relevance_file_runner`` score the gold outputs --
decoded by BFCL's own OpenAI handler in fc and prompt mode -- at accuracy 1.0. Multi-turn files
load through ``populate_test_cases_with_predefined_functions`` from ``multi_turn_func_doc/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envfactory.evaluation import (
    CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    bfcl_compat,
    format_calls,
    ground_truth_to_calls,
    load_jsonl,
    write_suite,
)

from ._fixtures import REPO, trip_desk_suite
from .test_bfcl_agreement import bfcl_data  # noqa: F401 - the fixture that installs bfcl-eval

pytestmark = pytest.mark.slow  # bfcl-eval comes from the package registry on first use

SHIPPED = sorted(p.parent for p in (REPO / "eval" / "suites").glob("*/manifest.json"))


@pytest.fixture(params=["trip_desk", *[p.name for p in SHIPPED]])
def suite_dir(request, tmp_path_factory) -> Path:
    if request.param == "trip_desk":
        return write_suite(trip_desk_suite(), tmp_path_factory.mktemp("suites") / "travel")
    return REPO / "eval" / "suites" / request.param


@pytest.fixture
def bfcl_over(bfcl_data, suite_dir, monkeypatch):  # noqa: F811
    """bfcl_eval.utils reading the suite folder as its data folder."""
    bfcl_compat.bfcl_eval_runner()
    from bfcl_eval import utils

    monkeypatch.setattr(utils, "PROMPT_PATH", suite_dir)
    monkeypatch.setattr(utils, "POSSIBLE_ANSWER_PATH", suite_dir / "possible_answer")
    monkeypatch.setattr(utils, "MULTI_TURN_FUNC_DOC_PATH", suite_dir / "multi_turn_func_doc")
    for doc in (suite_dir / "multi_turn_func_doc").glob("*.json"):
        monkeypatch.setitem(utils.MULTI_TURN_FUNC_DOC_FILE_MAPPING, doc.stem, doc.name)
    return utils


def _gold_output(entry: dict, answer: dict | None, category: str, mode: str):
    """What a perfect model returns, in the raw form BFCL's handler decodes."""
    if category == "irrelevance":
        return "None of the functions can do that."
    if category == "live_relevance":
        calls = [{entry["function"][0]["name"]: {}}]
    else:
        calls = ground_truth_to_calls(answer["ground_truth"], entry["function"])
    if mode == "prompt":
        return format_calls(calls)
    return [{name: json.dumps(args)} for call in calls for name, args in call.items()]


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_bfcl_loads_and_scores_gold_outputs_one_on_every_single_turn_category(
    bfcl_over, suite_dir, mode, tmp_path
):
    utils = bfcl_over
    runner = bfcl_compat.bfcl_eval_runner()
    handler = bfcl_compat.bfcl_handler(mode)
    files = sorted(suite_dir.glob("BFCL_v*_*.json"))
    assert {utils.extract_test_category(f) for f in files} <= set(CATEGORIES)
    scored = {}
    for category in sorted({utils.extract_test_category(f) for f in files} & set(SINGLE_TURN_CATEGORIES)):
        prompt = utils.load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
        assert prompt and all(utils.extract_test_category_from_id(e["id"]) == category for e in prompt)
        if utils.is_relevance_or_irrelevance(category):
            answers = [None] * len(prompt)
        else:
            answers = utils.load_ground_truth_entry(category)
            assert [a["id"] for a in answers] == [e["id"] for e in prompt]
        result = [
            {"id": e["id"], "result": _gold_output(e, a, category, mode)} for e, a in zip(prompt, answers)
        ]
        if utils.is_relevance_or_irrelevance(category):
            accuracy, total = runner.relevance_file_runner(
                handler, result, prompt, "gold", category, tmp_path
            )
        else:
            accuracy, total = runner.ast_file_runner(
                handler, result, prompt, answers, category, "gold", tmp_path
            )
        scored[category] = (accuracy, total)
    print(
        f"\nBFCL ast_file_runner / relevance_file_runner on {suite_dir.name} ({mode}): "
        + ", ".join(f"{c} {a:.0%} of {n}" for c, (a, n) in scored.items())
    )
    assert set(scored) >= {"simple_python", "multiple", "irrelevance"}, scored
    assert all(accuracy == 1.0 and total > 0 for accuracy, total in scored.values()), scored


def test_bfcl_loads_multi_turn_files_with_their_function_docs(bfcl_over, suite_dir):
    utils = bfcl_over
    for path in sorted(suite_dir.glob("BFCL_v*_multi_turn_*.json")):
        category = utils.extract_test_category(path)
        assert utils.is_multi_turn(category)
        loaded = utils.load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
        raw = load_jsonl(path)
        assert len(loaded) == len(raw) > 0
        for entry, question in zip(loaded, raw):
            assert "function" not in question  # the file holds none; BFCL adds the class's docs
            docs = load_jsonl(suite_dir / "multi_turn_func_doc" / f"{question['involved_classes'][0]}.json")
            held_out = {d["name"] for docs_ in entry.get("missed_function", {}).values() for d in docs_}
            assert {f["name"] for f in entry["function"]} == {d["name"] for d in docs} - held_out
            answers = {a["id"]: a for a in utils.load_ground_truth_entry(category)}
            assert len(answers[entry["id"]]["ground_truth"]) == len(entry["question"])
