from __future__ import annotations

import pytest

from envfactory.evaluation.bfcl_format import (
    BfclFormatError,
    BfclPossibleAnswer,
    BfclQuestion,
    format_call,
    format_calls,
    ground_truth_to_calls,
    load_possible_answers,
    load_questions,
    parse_call,
    parse_calls,
    write_jsonl,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("f(a=1, b='x')", {"f": {"a": 1, "b": "x"}}),
        ("math.hypot(x=-4, y=2.5e-3)", {"math.hypot": {"x": -4, "y": 0.0025}}),
        ("f(xs=[1, (2, 3)], d={'k': None}, t=True)", {"f": {"xs": [1, (2, 3)], "d": {"k": None}, "t": True}}),
        ("f('dropped', a=1)", {"f": {"a": 1}}),
        ("f(n=2 * 3, v=var)", {"f": {"n": 6, "v": "var"}}),
        ("f(g=inner(x=1), h=now())", {"f": {"g": {"inner": {"x": 1}}, "h": "now()"}}),
    ],
)
def test_parse_call_reads_keyword_arguments_like_bfcl(text, expected):
    assert parse_call(text) == expected


def test_parse_call_binds_positional_arguments_when_told_the_parameter_order():
    assert parse_call("sort('a.txt')", positional_params={"sort": ["file_name"]}) == {
        "sort": {"file_name": "a.txt"}
    }
    with pytest.raises(BfclFormatError):
        parse_call("sort('a', 'b')", positional_params={"sort": ["file_name"]})


@pytest.mark.parametrize("text", ["f(", "1 + 2", "f(**kw)", "f(a={1, 2})"])
def test_parse_call_rejects_what_is_not_a_literal_call(text):
    with pytest.raises(BfclFormatError):
        parse_call(text)


def test_parse_calls_accepts_prompting_format_and_round_trips():
    calls = [{"f": {"a": 1, "b": "it's"}}, {"g": {"xs": [1.5, -2], "t": (1,)}}]
    assert parse_calls(format_calls(calls)) == calls
    assert parse_calls("```\nf(a=1), g(b=2)\n```") == [{"f": {"a": 1}}, {"g": {"b": 2}}]
    assert format_call({"f": {"a": 1, "b": "x"}}) == "f(a=1, b='x')"
    with pytest.raises(BfclFormatError):
        parse_calls("I would call f(a=1).")


def test_ground_truth_to_calls_picks_first_accepted_value_and_omits_optional():
    functions = [
        {
            "name": "f",
            "parameters": {
                "properties": {
                    "a": {"type": "integer"},
                    "o": {"type": "string"},
                    "d": {"type": "dict"},
                    "l": {"type": "array", "items": {"type": "dict"}},
                }
            },
        }
    ]
    truth = [
        {
            "f": {
                "a": ["", 3, 4],
                "o": [""],
                "d": [{"k": ["v", "w"], "opt": [""]}],
                "l": [[{"n": [1]}, {"n": [2, 3]}]],
            }
        }
    ]
    assert ground_truth_to_calls(truth, functions) == [
        {"f": {"a": 3, "d": {"k": "v"}, "l": [{"n": 1}, {"n": 2}]}}
    ]


def test_questions_and_answers_round_trip_through_jsonl(tmp_path):
    question = BfclQuestion(
        id="simple_0", question=[[{"role": "user", "content": "hi"}]], function=[{"name": "f"}]
    )
    answer = BfclPossibleAnswer(id="simple_0", ground_truth=[{"f": {"a": [1]}}])
    write_jsonl(tmp_path / "q.json", [question])
    write_jsonl(tmp_path / "a.json", [answer.model_dump()])
    assert load_questions(tmp_path / "q.json") == [question]
    assert load_possible_answers(tmp_path / "a.json") == [answer]
    assert (tmp_path / "q.json").read_text().count("\n") == 1
    (tmp_path / "bad.json").write_text('{"id": 1}\n')
    with pytest.raises(BfclFormatError):
        load_questions(tmp_path / "bad.json")
