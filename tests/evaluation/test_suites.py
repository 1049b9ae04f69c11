"""Suites in BFCL's file format, built from tasks over trip_desk (test-only tasks, see _fixtures)."""

from __future__ import annotations

import json

import pytest

from envfactory.evaluation import (
    CATEGORIES,
    EvalConfig,
    SuiteError,
    build_reference_agent,
    build_suite,
    check_ast,
    ground_truth_to_calls,
    load_jsonl,
    load_suite,
    parse_call,
    run_eval,
    write_suite,
)
from envfactory.evaluation.suite_docs import fit_gold_args, possible_answer
from envfactory.evaluation.suites import suite_file_name

from ._fixtures import trip_desk, trip_desk_suite, trip_desk_tasks


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_suite_has_every_category_and_bfcl_layout(tmp_path):
    suite = trip_desk_suite()
    assert set(suite.counts) == set(CATEGORIES)
    folder = write_suite(suite, tmp_path / "travel")
    for category in CATEGORIES:
        name = suite_file_name(category)
        assert name == f"BFCL_v4_{category}.json"  # BFCL's current naming: its loaders find the file
        questions = load_jsonl(folder / name)
        assert questions and all(
            q["id"].rsplit("_", 1) == [category, q["id"].rsplit("_", 1)[1]] for q in questions
        )
        answer_file = folder / "possible_answer" / name
        assert answer_file.exists() == (category not in ("irrelevance", "live_relevance"))
    assert (folder / "manifest.json").exists() and (folder / "tasks.jsonl.gz").exists()


def test_same_tasks_and_seed_give_the_same_bytes_and_another_seed_differs(tmp_path):
    tasks, env = trip_desk_tasks(), trip_desk()
    a = _files(write_suite(build_suite(tasks, [env], n_per_category=10, seed=3), tmp_path / "a"))
    b = _files(
        write_suite(build_suite(list(reversed(tasks)), [env], n_per_category=10, seed=3), tmp_path / "b")
    )
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
    for entry in trip_desk_suite().by_category("simple_python"):
        text = entry.question[0][0]["content"]
        ((name, accepted),) = entry.ground_truth[0].items()
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
    for entry in suite.by_category("simple_python") + suite.by_category("multiple"):
        ((name, accepted),) = entry.ground_truth[0].items()
        properties = functions[name]["parameters"]["properties"]
        for param, values in accepted.items():
            if param in ("limit", "offset"):
                seen_paging = True
                assert "" in values
            if "default" in properties[param] and values[0] == properties[param]["default"]:
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
    questions = load_jsonl(folder / suite_file_name("multi_turn_base"))
    with trip_desk().new_session() as session:
        template_hash = session.state_hash()
    for q, entry in zip(questions, suite.by_category("multi_turn_base")):
        assert q["involved_classes"] == ["trip_desk"]
        assert "function" not in q  # BFCL's multi-turn entries have none: docs are in multi_turn_func_doc/
        assert set(q) <= {"id", "question", "initial_config", "path", "involved_classes", "missed_function"}
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
        build_suite(trip_desk_tasks(), [trip_desk()], categories=("simple_python", "bogus"))
    with pytest.raises(SuiteError, match="no tasks"):
        build_suite([], [trip_desk()])


def test_an_argument_the_question_states_is_required_so_a_bare_call_fails():
    suite = trip_desk_suite()
    bare = run_eval(
        suite,
        build_reference_agent("bare"),
        envs={"trip_desk": trip_desk()},
        config=EvalConfig(categories=("simple_python", "multiple", "parallel", "parallel_multiple")),
    )
    assert bare.results and not any(r.valid for r in bare.results)
    for entry in suite.by_category("simple_python"):
        (accepted,) = entry.ground_truth[0].values()
        assert any("" not in values for values in accepted.values()), entry.id


def test_a_masked_argument_is_required_when_stated_and_omittable_when_not():
    doc = {
        "name": "search_hotels",
        "parameters": {
            "type": "dict",
            "required": [],
            "properties": {
                "city": {"type": "string"},
                "min_stars": {"type": "integer"},
                "limit": {"type": "integer", "default": 10},
            },
        },
    }
    args = {"city": "South Jessicatown", "min_stars": 4, "limit": 10}
    answer = possible_answer(doc, args, ["city", "min_stars"], "Find hotels in South Jessicatown.")
    assert answer == {
        "search_hotels": {"city": ["South Jessicatown"], "min_stars": [4, ""], "limit": [10, ""]}
    }
    dated = {
        "name": "f",
        "parameters": {"type": "dict", "required": [], "properties": {"day": {"type": "string"}}},
    }
    assert possible_answer(dated, {"day": "2026-09-27"}, ["day"], "Flights on September 27, 2026.") == {
        "f": {"day": ["2026-09-27"]}
    }


def test_nonsense_gold_values_are_dropped_or_the_step_is_skipped():
    doc = {
        "name": "create_customer",
        "parameters": {
            "type": "dict",
            "required": ["email"],
            "properties": {
                "email": {"type": "string"},
                "default_address": {"type": "dict"},
                "status": {"type": "string", "enum": ["active", "closed"]},
            },
        },
    }
    assert fit_gold_args(doc, {"email": "a@b.org", "default_address": {}}) == {"email": "a@b.org"}
    assert fit_gold_args(doc, {"email": ""}) is None
    assert fit_gold_args(doc, {"email": "a@b.org", "status": "bad"}) is None


def test_every_array_parameter_has_items_and_multi_turn_docs_are_bfcl_func_doc_files(tmp_path):
    suite = trip_desk_suite()
    folder = write_suite(suite, tmp_path / "travel")

    def arrays(prop):
        if prop.get("type") == "array":
            yield prop
            yield from arrays(prop["items"])
        for p in prop.get("properties", {}).values():
            yield from arrays(p)

    docs = load_jsonl(folder / "multi_turn_func_doc" / "trip_desk.json")
    every = docs + [f for e in suite.entries for f in e.functions]
    found = [a for f in every for p in f["parameters"]["properties"].values() for a in arrays(p)]
    assert found and all("items" in a and "type" in a["items"] for a in found)
    assert {d["name"] for d in docs} == {t.name for t in trip_desk().spec.tools}


def test_miss_func_holds_a_function_out_until_an_empty_turn_and_miss_param_asks_again(tmp_path):
    suite = load_suite(write_suite(trip_desk_suite(), tmp_path / "travel"))
    miss_func = suite.by_category("multi_turn_miss_func")
    assert miss_func
    for entry in miss_func:
        ((turn, (name,)),) = entry.missed_function.items()
        t = int(turn)
        assert entry.question[t] == [] and entry.ground_truth[t - 1] == []
        assert name not in {f["name"] for f in entry.functions}
        assert name in {f["name"] for f in entry.functions_at(t)}
        assert any(c.startswith(name + "(") for c in entry.ground_truth[t])
    miss_param = suite.by_category("multi_turn_miss_param")
    assert miss_param
    for entry in miss_param:
        empty = [i for i, turn in enumerate(entry.ground_truth) if not turn]
        assert empty and all(entry.question[i + 1][0]["content"].startswith("The ") for i in empty)


def test_a_suite_written_with_the_earlier_category_names_still_loads(tmp_path):
    folder = write_suite(trip_desk_suite(), tmp_path / "travel")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] = {
        {"simple_python": "simple", "multi_turn_base": "multi_turn"}.get(k, k): v
        for k, v in manifest["files"].items()
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_suite(folder)
    assert loaded.by_category("simple_python") and loaded.by_category("multi_turn_base")
    manifest["files"]["bogus"] = manifest["files"]["simple"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match="not one this version reads"):
        load_suite(folder)


def test_suite_tasks_are_gzipped_byte_stable_and_old_suites_still_load(tmp_path):
    from envfactory.evaluation import load_suite, write_suite

    suite = trip_desk_suite()
    a = write_suite(suite, tmp_path / "a")
    b = write_suite(suite, tmp_path / "b")
    assert (a / "tasks.jsonl.gz").read_bytes() == (b / "tasks.jsonl.gz").read_bytes()  # no timestamp inside
    assert not (a / "tasks.jsonl").exists()
    # a suite written before (plain tasks.jsonl) loads the same tasks
    from envfactory.spec import load_tasks, write_tasks

    write_tasks(load_tasks(b / "tasks.jsonl.gz"), b / "tasks.jsonl")
    (b / "tasks.jsonl.gz").unlink()
    assert load_suite(b).tasks.keys() == load_suite(a).tasks.keys() != set()
