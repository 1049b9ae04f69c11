"""Suites in BFCL's file format, built from tasks over trip_desk (test-only tasks, see _fixtures)."""

from __future__ import annotations

import json

import pytest

from envfactory.evaluation import (
    CATEGORIES,
    SuiteError,
    build_suite,
    check_ast,
    ground_truth_to_calls,
    load_jsonl,
    load_suite,
    parse_call,
    write_suite,
)
from envfactory.evaluation.suites import suite_file_name

from ._fixtures import trip_desk, trip_desk_suite, trip_desk_tasks


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_suite_has_every_category_and_bfcl_layout(tmp_path):
    suite = trip_desk_suite()
    assert set(suite.counts) == set(CATEGORIES)
    folder = write_suite(suite, tmp_path / "travel")
    for category in CATEGORIES:
        name = suite_file_name("travel", category)
        questions = load_jsonl(folder / name)
        assert questions and all(q["id"].startswith(f"travel_{category}_") for q in questions)
        answer_file = folder / "possible_answer" / name
        assert answer_file.exists() == (category != "irrelevance")
    assert (folder / "manifest.json").exists() and (folder / "tasks.jsonl").exists()


def test_same_tasks_and_seed_give_the_same_bytes_and_another_seed_differs(tmp_path):
    tasks, env = trip_desk_tasks(), trip_desk()
    a = _files(write_suite(build_suite(tasks, [env], n_per_category=10, seed=3), tmp_path / "a"))
    b = _files(write_suite(build_suite(list(reversed(tasks)), [env], n_per_category=10, seed=3), tmp_path / "b"))
    c = _files(write_suite(build_suite(tasks, [env], n_per_category=10, seed=4), tmp_path / "c"))
    assert a == b
    assert a != c


def test_suite_round_trips_through_its_files(tmp_path):
    suite = trip_desk_suite()
    loaded = load_suite(write_suite(suite, tmp_path / "travel"))
    assert [(e.id, e.category, e.question, e.functions, e.ground_truth, e.env) for e in loaded.entries] == [
        (e.id, e.category, e.question, e.functions, e.ground_truth, e.env) for e in suite.entries
    ]
    assert set(loaded.tasks) == {e.task_id for e in suite.entries if e.is_multi_turn}


def test_single_call_questions_state_every_value_the_call_needs():
    for entry in trip_desk_suite().by_category("simple"):
        text = entry.question[0][0]["content"]
        (name, accepted), = entry.ground_truth[0].items()
        for param, values in accepted.items():
            if "" in values:
                continue
            value = values[0]
            if isinstance(value, str):
                assert value.lower() in text.lower(), (entry.id, param, value, text)


def test_possible_answers_accept_gold_and_mark_paging_and_defaults_omittable():
    suite = trip_desk_suite()
    functions = {f["name"]: f for e in suite.entries for f in e.functions}
    seen_paging = False
    for entry in suite.by_category("simple") + suite.by_category("multiple"):
        (name, accepted), = entry.ground_truth[0].items()
        properties = functions[name]["parameters"]["properties"]
        for param, values in accepted.items():
            if param in ("limit", "offset"):
                seen_paging = True
                assert "" in values
            if "default" in properties[param] and param not in ("limit", "offset"):
                assert "" in values
        # The gold call itself passes.
        gold = ground_truth_to_calls(entry.ground_truth, entry.functions)
        assert check_ast(entry.functions, gold, entry.ground_truth, entry.category).valid
    assert seen_paging


def test_multiple_offers_distractors_on_other_entities_and_irrelevance_leaves_out_the_entity():
    suite = trip_desk_suite()
    entity = {t.name: t.entity for t in trip_desk().spec.tools}
    for entry in suite.by_category("multiple"):
        (gold,) = [next(iter(a)) for a in entry.ground_truth]
        others = [f["name"] for f in entry.functions if f["name"] != gold]
        assert len(others) >= 2 and all(entity[o] != entity[gold] for o in others)
    manifest_steps = {e.id: e for e in suite.entries}
    tasks = {t.task_id: t for t in trip_desk_tasks()}
    for entry in suite.by_category("irrelevance"):
        meta = manifest_steps[entry.id]
        gold_tool = tasks[meta.task_id].gold[meta.steps[0]].tool
        assert all(entity[f["name"]] != entity[gold_tool] for f in entry.functions)
        assert entry.ground_truth == []


def test_parallel_entries_repeat_one_function_and_parallel_multiple_mix_functions():
    suite = trip_desk_suite()
    for entry in suite.by_category("parallel"):
        names = [next(iter(a)) for a in entry.ground_truth]
        assert len(names) >= 2 and len(set(names)) == 1 and len(entry.functions) == 1
    for entry in suite.by_category("parallel_multiple"):
        names = [next(iter(a)) for a in entry.ground_truth]
        assert len(names) >= 2 and len(set(names)) == len(names)
        assert {f["name"] for f in entry.functions} > set(names)


def test_multi_turn_entries_carry_env_state_and_gold_calls_per_turn(tmp_path):
    suite = trip_desk_suite()
    folder = write_suite(suite, tmp_path / "travel")
    questions = load_jsonl(folder / suite_file_name("travel", "multi_turn"))
    with trip_desk().new_session() as session:
        template_hash = session.state_hash()
    for q, entry in zip(questions, suite.by_category("multi_turn")):
        assert q["involved_classes"] == ["trip_desk"]
        assert q["initial_config"] == {"trip_desk": {"state": "template", "state_hash": template_hash}}
        assert len(q["question"]) == len(entry.ground_truth)
        calls = [c for turn in entry.ground_truth for c in turn]
        assert len(calls) >= 2
        assert q["path"] == [next(iter(parse_call(c))) for c in calls]


def test_function_docs_use_bfcl_types():
    docs = {f["name"]: f for e in trip_desk_suite().entries for f in e.functions}
    assert docs["search_flights"]["parameters"]["type"] == "dict"
    assert docs["search_flights"]["parameters"]["properties"]["max_price"]["type"] == "float"
    assert json.dumps(docs).count('"type": "number"') == 0


def test_unknown_category_and_no_tasks_are_errors():
    with pytest.raises(SuiteError, match="unknown categories"):
        build_suite(trip_desk_tasks(), [trip_desk()], categories=("simple", "bogus"))
    with pytest.raises(SuiteError, match="no tasks"):
        build_suite([], [trip_desk()])
