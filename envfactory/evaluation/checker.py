"""Checkers that score tool calls the way the Berkeley Function Calling Leaderboard (BFCL) does.

The single-turn checker, a pure function over data (nothing here executes a call); the
multi-turn one is :mod:`envfactory.evaluation.multi_turn`:

- :func:`check_ast` scores one single-turn entry: the model's decoded calls against the function
  docs and BFCL's ``possible_answer`` (accepted values per parameter, ``""`` = may be omitted).
  The rules follow ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` rule for rule, including its
  quirks, because results are compared with numbers published on the leaderboard:
  strict ``type(x) == T`` checks except int -> float; one level of element-type checking for
  arrays; strings compared after :func:`standardize_string`; a possible answer whose type differs
  from the declared type marks the value as a "variable" compared exactly; parallel calls matched
  greedily in possible-answer order (``matching="optimal"`` gives a maximum matching instead).

Calls are BFCL's decoded form: ``[{"func_name": {"param": value, ...}}, ...]``
(:mod:`envfactory.evaluation.bfcl_format` converts call strings to and from it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "AST_CATEGORIES",
    "CheckResult",
    "ast_category_kind",
    "category_of",
    "check_ast",
    "check_call",
    "check_irrelevance",
    "is_empty_output",
    "standardize_string",
]

AST_CATEGORIES = (
    "simple",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)

# BFCL's declared-type vocabulary (Python categories) and the Python type each must have.
_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,  # JSON has no tuples; BFCL turns a tuple value into a list before checking
    "dict": dict,
    "any": str,
}
_NESTED_TYPES = ("array", "tuple")
_STANDARDIZE_RE = re.compile(r"[ \,\.\/\-\_\*\^]")


@dataclass(frozen=True)
class CheckResult:
    """Verdict on one entry (or one call). ``error_type`` uses BFCL's strings, None when valid."""

    valid: bool
    error_type: str | None = None
    errors: tuple[Any, ...] = ()

    @classmethod
    def ok(cls) -> CheckResult:
        return cls(True)

    @classmethod
    def fail(cls, error_type: str, *errors: Any) -> CheckResult:
        return cls(False, error_type, tuple(errors))


# ----------------------------------------------------------------------------- helpers


def standardize_string(text: str) -> str:
    """BFCL's string normal form: drop spaces and ``,./-_*^``, lowercase, ``'`` -> ``"``.

    So "April 1, 2024", "april 1,2024" and "April-1 2024" compare equal.
    """
    return _STANDARDIZE_RE.sub("", text).lower().replace("'", '"')


def category_of(entry_id: str) -> str:
    """``"live_parallel_multiple_3"`` -> ``"live_parallel_multiple"`` (BFCL's id scheme)."""
    return entry_id.rsplit("_", 1)[0]


def ast_category_kind(category: str) -> Literal["irrelevance", "relevance", "parallel", "multiple", "simple"]:
    """Which rule set a category uses, decided by substring as BFCL does
    (``parallel_multiple`` is parallel; ``simple_python`` is simple)."""
    if "irrelevance" in category:
        return "irrelevance"
    if "relevance" in category:
        return "relevance"
    if "parallel" in category:
        return "parallel"
    if "multiple" in category:
        return "multiple"
    return "simple"


def _is_call_format(calls: Any) -> bool:
    # [{name: {param: value}}, ...]; an empty list is well-formed.
    if type(calls) is not list:
        return False
    return all(
        type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict for item in calls
    )


def is_empty_output(calls: Any) -> bool:
    """True when decoded output holds no call: None, ``[]``, ``[{}]`` or anything not in call
    format (a text reply). BFCL counts those as "no function call" for (ir)relevance."""
    if calls is None or not _is_call_format(calls):
        return True
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)


def _first_typed(accepted: Sequence[Any]) -> type | None:
    for answer in accepted:
        if answer != "":
            return type(answer)
    return None


def _find_function(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    for function in functions:
        if function.get("name") == name:
            return function
    return None


# ----------------------------------------------------------------------------- value rules


@dataclass
class _TypeVerdict:
    valid: bool
    is_variable: bool = False
    error_type: str = "type_error:simple"
    error: str = ""


def _check_type(
    param: str,
    value: Any,
    accepted: Sequence[Any],
    declared: str,
    expected: type,
    nested: type | None,
) -> _TypeVerdict:
    # A possible answer of another type than the declared one is a "variable" (e.g. a name the
    # model should pass through); the value is then compared exactly, never standardized.
    answer_type = _first_typed(accepted)
    is_variable = answer_type is not None and answer_type is not expected

    if type(value) is expected:
        if nested is None:
            return _TypeVerdict(True, is_variable)
        for candidate in accepted:
            # Only list candidates constrain element types ("" and other non-lists pass).
            if type(candidate) is not list or all(
                _check_type(param, item, candidate, str(nested), nested, None).valid
                for item in value  # type: ignore[attr-defined]  # a list: type(value) is expected
            ):
                return _TypeVerdict(True, is_variable)
        nested_error = (
            f"Nested type checking failed for parameter {param!r}. Expected outer type {declared} "
            f"with inner type {nested}. Parameter value: {value!r}."
        )
        if answer_type is not None and type(value) is answer_type:
            return _TypeVerdict(False, True, "type_error:nested", nested_error)
        return _TypeVerdict(
            False,
            False,
            "type_error:simple",
            f"Incorrect type for parameter {param!r}. Expected type {declared}, got "
            f"{type(value).__name__}. Parameter value: {value!r}.",
        )

    if answer_type is not None and type(value) is answer_type:
        return _TypeVerdict(True, True)
    return _TypeVerdict(
        False,
        False,
        "type_error:simple",
        f"Incorrect type for parameter {param!r}. Expected type {declared}, got "
        f"{type(value).__name__}. Parameter value: {value!r}.",
    )


def _standardized(values: Sequence[Any]) -> list[Any]:
    return [standardize_string(v) if type(v) is str else v for v in values]


def _check_string(param: str, value: str, accepted: Sequence[Any]) -> CheckResult:
    wanted = [standardize_string(a) for a in accepted if type(a) is str]
    if standardize_string(value) not in wanted:
        return CheckResult.fail(
            "value_error:string",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {list(accepted)}. "
            "Case insensitive.",
        )
    return CheckResult.ok()


def _check_list(param: str, value: list, accepted: Sequence[Any]) -> CheckResult:
    # Top-level string elements are standardized on both sides; "" becomes [] (BFCL iterates it).
    candidates = [_standardized(candidate) for candidate in accepted]
    if _standardized(value) not in candidates:
        return CheckResult.fail(
            "value_error:list/tuple",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {list(accepted)}.",
        )
    return CheckResult.ok()


def _check_dict(param: str, value: dict, accepted: Sequence[Any]) -> CheckResult:
    # Each candidate maps key -> accepted values; a key whose values include "" may be omitted.
    result: CheckResult | None = CheckResult.fail("dict_checker:unclear")
    for candidate in accepted:
        if candidate == "":
            continue
        result = None
        for key, item in value.items():
            if key not in candidate:
                result = CheckResult.fail("value_error:dict_key", f"Unexpected dict key parameter: {key!r}.")
                break
            wanted = _standardized(candidate[key])
            got = standardize_string(item) if type(item) is str else item
            if got not in wanted:
                result = CheckResult.fail(
                    "value_error:dict_value",
                    f"Invalid value for parameter {key!r}: {item!r}. Expected one of {wanted}.",
                )
                break
        if result is None:
            for key, values in candidate.items():
                if key not in value and "" not in values:
                    result = CheckResult.fail("value_error:dict_key", f"Missing dict key parameter: {key!r}.")
                    break
        if result is None:
            return CheckResult.ok()
    return result or CheckResult.fail("dict_checker:unclear")


def _check_list_of_dicts(param: str, value: list, accepted: Sequence[Any]) -> CheckResult:
    # Dictionaries are compared position by position with one candidate list at a time.
    result = CheckResult.fail("list_dict_checker:unclear")
    for candidate in accepted:
        if len(value) != len(candidate):
            result = CheckResult.fail(
                "value_error:list_dict_count", "Wrong number of dictionaries in the list."
            )
            continue
        for item, wanted in zip(value, candidate):
            result = _check_dict(param, item, [wanted])
            if not result.valid:
                break
        else:
            return CheckResult.ok()
    return result


# ----------------------------------------------------------------------------- call rules


def check_call(
    function: Mapping[str, Any],
    model_call: Mapping[str, Mapping[str, Any]],
    possible_answer: Mapping[str, Mapping[str, Sequence[Any]]],
) -> CheckResult:
    """Check one decoded call ``{name: {param: value}}`` against one function doc and one
    possible answer ``{name: {param: [accepted values]}}`` (BFCL's ``simple_function_checker``).

    Order of checks (it decides the reported error): name; required parameters; each given
    parameter in the model's order (unexpected, type, value); parameters in the possible answer
    that were omitted but may not be.
    """
    accepted_by_param = next(iter(possible_answer.values()))
    name = function["name"]
    parameters = function.get("parameters", {})
    details = parameters.get("properties", {})

    if name not in model_call:
        return CheckResult.fail(
            "simple_function_checker:wrong_func_name", f"Function name {name!r} not found in model output."
        )
    arguments = model_call[name]

    for param in parameters.get("required", []):
        if param not in arguments:
            return CheckResult.fail(
                "simple_function_checker:missing_required", f"Missing required parameter: {param!r}."
            )

    for param, value in arguments.items():
        if param not in details or param not in accepted_by_param:
            return CheckResult.fail(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        accepted = accepted_by_param[param]
        declared = details[param].get("type", "any")
        expected = _PYTHON_TYPES.get(declared, str)
        nested = None
        if declared in _NESTED_TYPES and "items" in details[param]:
            nested = _PYTHON_TYPES.get(details[param]["items"].get("type", "any"), str)

        if declared == "tuple" and type(value) is tuple:
            value = list(value)
        if declared == "float" and type(value) is int:
            value = float(value)  # Python would accept an int where a float is declared

        verdict = _check_type(param, value, accepted, declared, expected, nested)
        if not verdict.valid:
            return CheckResult.fail(verdict.error_type, verdict.error)

        if not verdict.is_variable:
            if expected is dict:
                result = _check_dict(param, value, accepted)
            elif expected is list and nested is dict:
                result = _check_list_of_dicts(param, value, accepted)
            elif expected is str:
                result = _check_string(param, value, accepted)
            elif expected is list:
                result = _check_list(param, value, accepted)
            else:
                result = None
            if result is not None:
                if not result.valid:
                    return result
                continue

        if value not in accepted:
            return CheckResult.fail(
                "value_error:others",
                f"Invalid value for parameter {param!r}: {value!r}. Expected one of {list(accepted)}.",
            )

    for param, accepted in accepted_by_param.items():
        if param not in arguments and "" not in accepted:
            return CheckResult.fail(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return CheckResult.ok()


def _check_parallel(
    functions: Sequence[Mapping[str, Any]],
    model_calls: Sequence[Mapping[str, Mapping[str, Any]]],
    possible_answers: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    matching: str,
) -> CheckResult:
    if len(model_calls) != len(possible_answers):
        return CheckResult.fail(
            "parallel_function_checker_no_order:wrong_count", "Wrong number of functions."
        )

    def check(answer_index: int, call_index: int) -> CheckResult:
        answer = possible_answers[answer_index]
        function = _find_function(functions, next(iter(answer)))
        if function is None:
            return CheckResult.fail("parallel_function_checker_no_order:unknown_function", "No function doc.")
        return check_call(function, model_calls[call_index], answer)

    if matching == "optimal":
        return _check_parallel_optimal(len(model_calls), check)

    # BFCL's order: each possible answer, in turn, takes the first unmatched call that fits it.
    matched: set[int] = set()
    for answer_index in range(len(possible_answers)):
        failures = []
        for call_index in range(len(model_calls)):
            if call_index in matched:
                continue
            result = check(answer_index, call_index)
            if result.valid:
                matched.add(call_index)
                break
            failures.append(
                {
                    f"Model Result Index {call_index}": {
                        "sub_error": list(result.errors),
                        "sub_error_type": result.error_type,
                    }
                }
            )
        else:
            unmatched = [i for i in range(len(model_calls)) if i not in matched]
            return CheckResult.fail(
                "parallel_function_checker_no_order:cannot_find_match",
                f"Could not find a matching function among index {unmatched} of model output for index "
                f"{answer_index} of possible answers.",
                *failures,
            )
    return CheckResult.ok()


def _check_parallel_optimal(n: int, check: Callable[[int, int], CheckResult]) -> CheckResult:
    # Maximum bipartite matching (augmenting paths): succeeds whenever some assignment of distinct
    # calls to answers exists, where BFCL's greedy pass can miss one.
    fits = [[check(a, c).valid for c in range(n)] for a in range(n)]
    owner: list[int | None] = [None] * n

    def augment(a: int, seen: set[int]) -> bool:
        for c in range(n):
            if fits[a][c] and c not in seen:
                seen.add(c)
                held = owner[c]
                if held is None or augment(held, seen):
                    owner[c] = a
                    return True
        return False

    for a in range(n):
        if not augment(a, set()):
            return CheckResult.fail(
                "parallel_function_checker_no_order:cannot_find_match",
                f"No assignment of distinct model calls fits possible answer index {a}.",
            )
    return CheckResult.ok()


def check_irrelevance(model_calls: Any) -> CheckResult:
    """No call is expected: valid when the output decodes to no call (None, [], [{}], text)."""
    if is_empty_output(model_calls):
        return CheckResult.ok()
    return CheckResult.fail(
        "irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not."
    )


def check_ast(
    functions: Sequence[Mapping[str, Any]],
    model_calls: Sequence[Mapping[str, Mapping[str, Any]]] | None,
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]] | None,
    category: str,
    *,
    matching: Literal["greedy", "optimal"] = "greedy",
) -> CheckResult:
    """Score one single-turn entry the way BFCL does.

    functions: the entry's function docs (``entry["function"]``).
    model_calls: decoded calls ``[{name: {param: value}}]``; None when the reply did not decode
        into calls (text, syntax error).
    possible_answer: ``ground_truth`` of the possible-answer entry; ignored for (ir)relevance.
    category: a BFCL category or entry id prefix (``simple``, ``live_parallel_multiple``, ...).
    matching: ``greedy`` reproduces BFCL's parallel matching; ``optimal`` accepts any assignment
        of distinct calls to possible answers.
    """
    kind = ast_category_kind(category)
    if kind == "irrelevance":
        return check_irrelevance(model_calls)
    if kind == "relevance":
        if is_empty_output(model_calls):
            return CheckResult.fail(
                "relevance_error:decoder_failed", "Invalid syntax. Failed to decode AST when it should have."
            )
        return CheckResult.ok()
    if model_calls is None:
        return CheckResult.fail("ast_decoder:decoder_failed", "Invalid syntax. Failed to decode AST.")
    if not _is_call_format(list(model_calls)):
        return CheckResult.fail(
            "ast_decoder:decoder_wrong_output_format", "Did not output in the specified format."
        )
    model_calls = list(model_calls)
    answers = list(possible_answer or [])

    if kind == "parallel":
        return _check_parallel(functions, model_calls, answers, matching)
    if kind == "multiple":
        if len(model_calls) != len(answers):
            return CheckResult.fail("multiple_function_checker:wrong_count", "Wrong number of functions.")
        function = _find_function(functions, next(iter(answers[0])))
        if function is None:
            return CheckResult.fail("multiple_function_checker:unknown_function", "No function doc.")
        return check_call(function, model_calls[0], answers[0])
    if len(model_calls) != 1:
        return CheckResult.fail("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_call(functions[0], model_calls[0], answers[0])
