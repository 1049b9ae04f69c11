"""Hand-written cases for each BFCL rule our checker implements."""

from __future__ import annotations

import pytest

from envfactory.evaluation.checker import (
    ast_category_kind,
    category_of,
    check_ast,
    check_call,
    standardize_string,
)
from envfactory.evaluation.multi_turn import (
    TurnExecution,
    check_multi_turn,
    compare_state_mappings,
    normalize_execution_result,
)

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "threshold": {"type": "float"},
            "metric": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "weights": {"type": "array", "items": {"type": "float"}},
            "point": {"type": "tuple", "items": {"type": "integer"}},
            "filters": {"type": "dict"},
            "stops": {"type": "array", "items": {"type": "dict"}},
        },
        "required": ["city"],
    },
}
ANSWER = {
    "get_weather": {
        "city": ["San Francisco, CA", "SF"],
        "days": [3, ""],
        "threshold": [2.5, 2.0, ""],
        "metric": [True, ""],
        "tags": [["rain", "wind"], ""],
        "weights": [[1.0, 2.0], ""],
        "point": [[1, 2], ""],
        "filters": [{"unit": ["celsius", "c"], "alerts": [True, ""]}, ""],
        "stops": [[{"name": ["Oslo"]}, {"name": ["Bergen"]}], ""],
    }
}


def call(**arguments):
    return {"get_weather": {"city": "SF", **arguments}}


CALL_CASES = [
    # function name
    (call(), None),
    ({"get_weather_v2": {"city": "SF"}}, "simple_function_checker:wrong_func_name"),
    ({"Get_Weather": {"city": "SF"}}, "simple_function_checker:wrong_func_name"),
    # required parameters
    ({"get_weather": {"days": 3}}, "simple_function_checker:missing_required"),
    # unexpected parameters: not in the doc, or in the doc but not in the possible answer
    (call(country="US"), "simple_function_checker:unexpected_param"),
    # types, with int -> float leniency only
    (call(days="3"), "type_error:simple"),
    (call(days=3.0), "type_error:simple"),
    (call(metric=1), "type_error:simple"),
    (call(threshold=2), None),
    (call(threshold=2.5), None),
    (call(threshold=3), "value_error:others"),
    (call(threshold="2.5"), "type_error:simple"),
    # string standardization: case, spaces and ,./-_*^ are ignored; other characters are not
    (call(city="san francisco ca"), None),
    (call(city="San-Francisco,CA."), None),
    (call(city="S_F"), None),
    (call(city="San Francisco CA!"), "value_error:string"),
    (call(city="Oakland"), "value_error:string"),
    # optional values: "" means the parameter may be omitted
    (call(days=3), None),
    (call(days=4), "value_error:others"),
    # nested lists: element types (one level) then values, strings standardized
    (call(tags=["Rain", "WIND"]), None),
    (call(tags=["wind", "rain"]), "value_error:list/tuple"),
    (call(tags="rain"), "type_error:simple"),
    (call(weights=[1.0, 2.0]), None),
    # BFCL quirk: an optional ("") candidate satisfies the element-type check, and values then
    # compare with ==, so ints pass for floats and a wrong element is a value error
    (call(tags=["rain", 5]), "value_error:list/tuple"),
    (call(weights=[1, 2]), None),
    (call(point=(1, 2)), None),
    (call(point=[1, 2]), None),
    # dicts: keys and values checked, "" marks an optional key
    (call(filters={"unit": "Celsius"}), None),
    (call(filters={"unit": "c", "alerts": True}), None),
    (call(filters={"unit": "kelvin"}), "value_error:dict_value"),
    (call(filters={"alerts": True}), "value_error:dict_key"),
    (call(filters={"unit": "c", "extra": 1}), "value_error:dict_key"),
    # lists of dicts: position by position
    (call(stops=[{"name": "oslo"}, {"name": "bergen"}]), None),
    # (the last candidate tried, "", reports its count mismatch)
    (call(stops=[{"name": "Bergen"}, {"name": "Oslo"}]), "value_error:list_dict_count"),
    (call(stops=[{"name": "Oslo"}]), "value_error:list_dict_count"),
]


@pytest.mark.parametrize(("model_call", "error_type"), CALL_CASES)
def test_check_call_applies_bfcl_rules(model_call, error_type):
    result = check_call(WEATHER, model_call, ANSWER)
    assert result.valid is (error_type is None)
    assert result.error_type == error_type
    assert bool(result.errors) is (error_type is not None)


@pytest.mark.parametrize(
    ("arguments", "error_type"),
    [
        ({"tags": ["rain", 5]}, "type_error:nested"),
        ({"weights": [1, 2]}, "type_error:nested"),
        ({"weights": [1.0, 2]}, "type_error:nested"),
        ({"stops": [{"name": "Bergen"}, {"name": "Oslo"}]}, "value_error:dict_value"),
    ],
)
def test_required_nested_values_check_element_types_and_order(arguments, error_type):
    answer = {
        "get_weather": {
            "city": ["SF"],
            **{
                k: [v]
                for k, v in {
                    "tags": ["rain", "wind"],
                    "weights": [1.0, 2.0],
                    "stops": [{"name": ["Oslo"]}, {"name": ["Bergen"]}],
                }.items()
                if k in arguments
            },
        }
    }
    assert check_call(WEATHER, call(**arguments), answer).error_type == error_type


def test_omitted_parameter_without_empty_marker_is_missing_optional():
    answer = {"get_weather": {"city": ["SF"], "days": [3]}}
    result = check_call(WEATHER, call(), answer)
    assert result.error_type == "simple_function_checker:missing_optional"


def test_possible_answer_of_other_type_is_a_variable_compared_exactly():
    # "days" is declared integer but the answer is a variable name: compared without standardizing.
    answer = {"get_weather": {"city": ["SF"], "days": ["num_days"]}}
    assert check_call(WEATHER, call(days="num_days"), answer).valid
    assert check_call(WEATHER, call(days="NUM_DAYS"), answer).error_type == "value_error:others"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("April 1, 2024", "april12024"), ("a-b_c*d^e/f.g", "abcdefg"), ("It's", 'it"s'), ("Ünïcode", "ünïcode")],
)
def test_standardize_string(text, expected):
    assert standardize_string(text) == expected


SUM = {
    "name": "add",
    "parameters": {
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
MUL = {
    "name": "mul",
    "parameters": {
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


@pytest.mark.parametrize(
    ("calls", "error_type"),
    [
        ([{"add": {"a": 1, "b": 2}}, {"add": {"a": 3, "b": 4}}, {"mul": {"a": 5, "b": 6}}], None),
        ([{"mul": {"a": 5, "b": 6}}, {"add": {"a": 3, "b": 4}}, {"add": {"a": 1, "b": 2}}], None),
        (
            [{"add": {"a": 1, "b": 2}}, {"add": {"a": 1, "b": 2}}, {"mul": {"a": 5, "b": 6}}],
            "parallel_function_checker_no_order:cannot_find_match",
        ),
        (
            [{"add": {"a": 1, "b": 2}}, {"mul": {"a": 5, "b": 6}}],
            "parallel_function_checker_no_order:wrong_count",
        ),
    ],
)
def test_parallel_calls_match_distinct_answers_in_any_order(calls, error_type):
    answers = [{"add": {"a": [1], "b": [2]}}, {"add": {"a": [3], "b": [4]}}, {"mul": {"a": [5], "b": [6]}}]
    result = check_ast([SUM, MUL], calls, answers, "parallel_multiple")
    assert result.error_type == error_type


def test_greedy_parallel_matching_is_bfcls_and_optimal_matching_is_available():
    # Answer 0 accepts a in {1, 2}, answer 1 only a=1. Greedy gives a=1 to answer 0 and fails.
    answers = [{"add": {"a": [1, 2], "b": [0]}}, {"add": {"a": [1], "b": [0]}}]
    calls = [{"add": {"a": 1, "b": 0}}, {"add": {"a": 2, "b": 0}}]
    assert not check_ast([SUM], calls, answers, "parallel").valid
    assert check_ast([SUM], calls, answers, "parallel", matching="optimal").valid


@pytest.mark.parametrize(
    ("category", "calls", "error_type"),
    [
        ("simple", [{"add": {"a": 1, "b": 2}}], None),
        (
            "simple",
            [{"add": {"a": 1, "b": 2}}, {"add": {"a": 1, "b": 2}}],
            "simple_function_checker:wrong_count",
        ),
        ("live_multiple", [{"mul": {"a": 1, "b": 2}}], "simple_function_checker:wrong_func_name"),
        ("multiple", [], "multiple_function_checker:wrong_count"),
        ("simple", None, "ast_decoder:decoder_failed"),
        ("simple", [{"add": 1}], "ast_decoder:decoder_wrong_output_format"),
    ],
)
def test_check_ast_dispatches_on_category(category, calls, error_type):
    answers = [{"add": {"a": [1], "b": [2]}}]
    assert check_ast([SUM, MUL], calls, answers, category).error_type == error_type


@pytest.mark.parametrize(
    ("calls", "valid"),
    [
        ([], True),
        (None, True),
        ([{}], True),
        ("I cannot help with that.", True),
        ([{"add": {}}], False),
        ([{"add": {"a": 1}}], False),
    ],
)
def test_irrelevance_passes_only_without_a_call(calls, valid):
    result = check_ast([SUM], calls, None, "live_irrelevance")
    assert result.valid is valid
    assert result.error_type == (None if valid else "irrelevance_error:decoder_success")


def test_category_helpers_follow_bfcl_id_scheme():
    assert category_of("live_parallel_multiple_3-1-0") == "live_parallel_multiple"
    assert ast_category_kind("parallel_multiple") == "parallel"
    assert ast_category_kind("simple_python") == "simple"
    assert ast_category_kind("live_relevance") == "relevance"


# ----------------------------------------------------------------------------- multi-turn


def turn(*results):
    return TurnExecution(calls=tuple(f"call{i}()" for i in range(len(results))), results=tuple(results))


def no_diff(_turn):
    return {}


def test_multi_turn_passes_when_states_match_and_gold_results_appear():
    gold = [turn("a", "b"), turn("c")]
    model = [turn("b", "x", "a"), turn("c")]
    result = check_multi_turn(model, gold, no_diff)
    assert result.valid and [t.valid for t in result.turns] == [True, True]


def test_multi_turn_accepts_a_result_fetched_in_an_earlier_turn():
    gold = [turn("a"), turn("b")]
    model = [turn("a", "b"), turn("z")]
    assert check_multi_turn(model, gold, no_diff).valid


def test_multi_turn_counts_results_as_a_multiset():
    gold = [turn("ok", "ok")]
    model = [turn("ok")]
    result = check_multi_turn(model, gold, no_diff)
    assert result.error_type == "multi_turn:execution_response_mismatch"
    assert result.turns[0].missing_results == ("ok",)


def test_multi_turn_state_mismatch_fails_that_turn_and_reports_fields():
    diffs = {1: {"Files": {"cwd": {"model": "/", "ground_truth": "/docs"}}, "Math": {}}}
    result = check_multi_turn([turn("a"), turn("b")], [turn("a"), turn("b")], lambda t: diffs.get(t, {}))
    assert [t.valid for t in result.turns] == [True, False]
    assert result.error_type == "multi_turn:instance_state_mismatch"
    assert result.first_failure.state_differences == {
        "Files": {"cwd": {"model": "/", "ground_truth": "/docs"}}
    }


def test_multi_turn_empty_model_turn_fails_and_empty_gold_turn_is_not_checked():
    result = check_multi_turn([TurnExecution(), turn("x")], [turn("a"), TurnExecution()], no_diff)
    assert result.error_type == "multi_turn:empty_turn_model_response"
    assert [(t.valid, t.checked) for t in result.turns] == [(False, True), (True, False)]
    strict = check_multi_turn(
        [turn("a"), turn("x")],
        [turn("a"), TurnExecution()],
        no_diff,
        require_no_calls_on_empty_gold_turns=True,
    )
    assert strict.error_type == "multi_turn:irrelevance_error:decoder_success"


def test_multi_turn_turn_count_mismatch_is_force_terminated():
    result = check_multi_turn([turn("a")], [turn("a"), turn("b")], no_diff)
    assert not result.valid and result.error_type == "multi_turn:force_terminated"


def test_state_and_result_helpers():
    assert compare_state_mappings({"a": 1, "b": 2, "_c": 3}, {"a": 1, "b": 5, "_c": 4}) == {
        "b": {"model": 2, "ground_truth": 5}
    }
    assert normalize_execution_result({"x": 1}) == '{"x": 1}'
    assert normalize_execution_result("s") == "s"
    assert normalize_execution_result(None) == "None"
