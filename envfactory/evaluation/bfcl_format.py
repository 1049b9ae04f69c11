"""BFCL's file format: JSON Lines question and possible-answer files, and Python call strings.

Question entry (one JSON object per line)::

    {"id": "simple_0", "question": [[{"role": "user", "content": "..."}]], "function": [{...}]}

multi-turn question entries add ``initial_config`` ({class: state}), ``path``,
``involved_classes`` and sometimes ``excluded_function`` / ``missed_function``; their
``question`` has one message list per turn.

Possible-answer entry::

    {"id": "simple_0", "ground_truth": [{"func": {"param": [accepted, values, ""]}}]}   # AST
    {"id": "multi_turn_base_0", "ground_truth": [["cd(folder='x')", "ls()"], [...]]}    # per turn

Calls are converted with :mod:`ast` only (nothing is evaluated): ``f(a=1, b='x')`` <->
``{"f": {"a": 1, "b": "x"}}``. Like BFCL's decoder, positional arguments are dropped unless the
caller says which parameter each position binds (``positional_params``).
"""

from __future__ import annotations

import ast
import json
import operator
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from envfactory.errors import BfclFormatError

__all__ = [
    "BfclFormatError",
    "BfclQuestion",
    "BfclPossibleAnswer",
    "Call",
    "load_jsonl",
    "write_jsonl",
    "load_questions",
    "load_possible_answers",
    "parse_call",
    "parse_calls",
    "format_call",
    "format_calls",
    "ground_truth_to_calls",
    "positional_params_from_functions",
]

# {"func_name": {"param": value}} -- one call in BFCL's decoded form.
Call = dict[str, dict[str, Any]]


class BfclQuestion(BaseModel):
    """One question entry; unknown keys are kept (BFCL adds new ones between versions)."""

    model_config = ConfigDict(extra="allow")

    id: str
    question: list[list[dict[str, Any]]]
    function: list[dict[str, Any]] = []
    initial_config: dict[str, Any] | None = None
    path: list[str] | None = None
    involved_classes: list[str] | None = None

    @property
    def is_multi_turn(self) -> bool:
        return self.involved_classes is not None


class BfclPossibleAnswer(BaseModel):
    """One possible-answer entry: AST ground truth (list of ``{func: {param: [values]}}``) or
    multi-turn ground truth (list of turns, each a list of call strings)."""

    model_config = ConfigDict(extra="allow")

    id: str
    ground_truth: list[Any]


# ----------------------------------------------------------------------------- files


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON Lines file (BFCL names them ``*.json``); blank lines are skipped."""
    path = Path(path)
    entries = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):  # noqa: B007 (the except clause names the line)
                if line.strip():
                    entries.append(json.loads(line))
    except json.JSONDecodeError as e:
        raise BfclFormatError(f"{path}:{number}: {e}") from e
    except OSError as e:
        raise BfclFormatError(f"{path}: {e}") from e
    return entries


def write_jsonl(path: str | Path, entries: Iterable[BaseModel | Mapping[str, Any]]) -> Path:
    """Write entries one JSON object per line, keys in their given order (same input, same bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for entry in entries:
            data = entry.model_dump(exclude_none=True) if isinstance(entry, BaseModel) else entry
            handle.write(json.dumps(data, ensure_ascii=False) + "\n")
    return path


def load_questions(path: str | Path) -> list[BfclQuestion]:
    try:
        return [BfclQuestion.model_validate(e) for e in load_jsonl(path)]
    except ValidationError as e:
        raise BfclFormatError(f"{path}: {e}") from e


def load_possible_answers(path: str | Path) -> list[BfclPossibleAnswer]:
    try:
        return [BfclPossibleAnswer.model_validate(e) for e in load_jsonl(path)]
    except ValidationError as e:
        raise BfclFormatError(f"{path}: {e}") from e


# ----------------------------------------------------------------------------- call strings

MAX_CALL_TEXT = 100_000  # characters of one reply the decoder reads; longer is a decode failure
MAX_VALUE_BITS = 65_536  # an integer result above this many bits is refused (9**9**9 would take hours)
MAX_VALUE_LENGTH = 100_000  # a string or list built by * or + longer than this is refused

_NUMBERS = (int, float)
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _dotted_name(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, bool)


def _check_size(node: ast.BinOp, left: Any, right: Any) -> None:
    """Refuse, before computing, what would take unbounded time or memory."""
    source = ast.unparse(node)[:80]
    if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        if right > 0 and abs(left) > 1 and right * max(1, abs(left).bit_length()) > MAX_VALUE_BITS:
            raise BfclFormatError(f"{source}: the value is too large to compute (over {MAX_VALUE_BITS} bits)")
    if isinstance(node.op, ast.Mult):
        sequence, count = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
        if (
            isinstance(sequence, (str, list, tuple))
            and isinstance(count, int)
            and len(sequence) * count > MAX_VALUE_LENGTH
        ):
            raise BfclFormatError(f"{source}: the value is too long (over {MAX_VALUE_LENGTH} items)")
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() > MAX_VALUE_BITS
        ):
            raise BfclFormatError(f"{source}: the value is too large to compute (over {MAX_VALUE_BITS} bits)")


def _binary(node: ast.BinOp) -> Any:
    # BFCL eval()s a binary operation (so 'S' + 'outh' is 'South'); the same Python operators on
    # literal operands are computed here, with size bounds, and nothing is eval'd.
    left, right = _value(node.left), _value(node.right)
    literal = (str, list, tuple, int, float)
    if type(node.op) not in _BINARY or not isinstance(left, literal) or not isinstance(right, literal):
        raise BfclFormatError(f"unsupported expression: {ast.unparse(node)[:80]}")
    if isinstance(left, str) and isinstance(node.op, ast.Mod):  # printf-style formatting: not a value
        raise BfclFormatError(f"unsupported expression: {ast.unparse(node)[:80]}")
    _check_size(node, left, right)
    try:
        result = _BINARY[type(node.op)](left, right)
    except (ArithmeticError, ValueError, TypeError) as e:
        raise BfclFormatError(f"{ast.unparse(node)[:80]}: {e}") from e
    if isinstance(result, (str, list, tuple)) and len(result) > MAX_VALUE_LENGTH:
        raise BfclFormatError(f"{ast.unparse(node)[:80]}: the value is too long")
    return result


def _value(node: ast.expr) -> Any:
    # Mirrors BFCL's resolve_ast_by_type (bfcl_eval/model_handler/utils.py), except that nothing
    # is eval'd. Documented differences (counted by tests/evaluation/test_bfcl_raw_agreement.py):
    # unary plus keeps the number (BFCL negates every unary operand: limit=+10 -> -10), and
    # `not x` / `~x` are refused (BFCL turns `not True` into -1).
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand)
        if _is_number(operand):
            return -operand if isinstance(node.op, ast.USub) else operand
        raise BfclFormatError(f"unsupported unary operand: {ast.unparse(node)[:80]}")
    if isinstance(node, ast.List):
        return [_value(v) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(v) for v in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise BfclFormatError(f"dict unpacking is not a value: {ast.unparse(node)[:80]}")
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.Name):
        return node.id  # a variable name stands for itself, as in BFCL
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else _call(node, None)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node)
    raise BfclFormatError(f"unsupported value: {ast.unparse(node)[:80]}")


def _call(node: ast.Call, positional_params: Mapping[str, Sequence[str]] | None) -> Call:
    name = _dotted_name(node.func)
    if not name:
        raise BfclFormatError(f"not a function name: {ast.unparse(node.func)}")
    arguments: dict[str, Any] = {}
    if positional_params is not None and node.args:
        names = positional_params.get(name)
        if names is None or len(node.args) > len(names):
            raise BfclFormatError(f"{ast.unparse(node)}: cannot bind {len(node.args)} positional arguments")
        for param, arg in zip(names, node.args):
            arguments[param] = _value(arg)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise BfclFormatError(f"{ast.unparse(node)}: **kwargs is not supported")
        arguments[keyword.arg] = _value(keyword.value)
    return {name: arguments}


# CPython 3.11's AST construction keeps its recursion-depth count in shared state: two threads parsing
# at once (eval runs entries concurrently) can raise "SystemError: AST constructor recursion depth
# mismatch" (seen here on 3.11.7; a CPython bug). Parses are short, so they take turns.
_PARSE_LOCK = threading.Lock()


def _parse(text: str) -> ast.expr:
    if len(text) > MAX_CALL_TEXT:
        raise BfclFormatError(
            f"the reply is {len(text)} characters; the decoder reads at most {MAX_CALL_TEXT}"
        )
    try:
        with _PARSE_LOCK:
            return ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise BfclFormatError(f"{text[:80]!r}: {e.msg}") from e
    except (RecursionError, MemoryError, ValueError) as e:  # nesting too deep; NUL bytes
        raise BfclFormatError(f"{text[:80]!r}: {type(e).__name__}") from None


def _bounded(decode: Any) -> Any:
    try:
        return decode()
    except (RecursionError, MemoryError) as e:
        raise BfclFormatError(f"the reply nests too deeply to decode ({type(e).__name__})") from None


def parse_call(text: str, *, positional_params: Mapping[str, Sequence[str]] | None = None) -> Call:
    """``"f(a=1, b='x')"`` -> ``{"f": {"a": 1, "b": "x"}}`` (bounded: see ``MAX_*``).

    Positional arguments are dropped (as BFCL's decoder does) unless ``positional_params`` maps
    the function name to its parameter names in order.
    """
    node = _parse(text.strip())
    if not isinstance(node, ast.Call):
        raise BfclFormatError(f"{text[:80]!r}: not a function call")
    return _bounded(lambda: _call(node, positional_params))


def parse_calls(text: str, *, positional_params: Mapping[str, Sequence[str]] | None = None) -> list[Call]:
    """A model's reply in BFCL's prompting format, ``[f(a=1), g(b=2)]`` (brackets optional,
    surrounding backticks ignored), -> a list of calls. Raises BfclFormatError when the reply is
    not a list of calls (BFCL's "decoder failed")."""
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    node = _parse(text.strip().strip("'"))
    elements = [node] if isinstance(node, ast.Call) else getattr(node, "elts", None)
    if elements is None or not all(isinstance(e, ast.Call) for e in elements):
        raise BfclFormatError(f"{text[:80]!r}: not a list of function calls")
    return _bounded(lambda: [_call(e, positional_params) for e in elements])


def format_call(call: Mapping[str, Mapping[str, Any]]) -> str:
    """``{"f": {"a": 1, "b": "x"}}`` -> ``"f(a=1, b='x')"`` (keyword arguments, ``repr`` values)."""
    if len(call) != 1:
        raise BfclFormatError(f"a call has exactly one function name, got {list(call)}")
    name, arguments = next(iter(call.items()))
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def format_calls(calls: Iterable[Mapping[str, Mapping[str, Any]]]) -> str:
    """A list of calls in BFCL's prompting format: ``[f(a=1), g(b=2)]``."""
    return "[" + ", ".join(format_call(c) for c in calls) + "]"


def positional_params_from_functions(functions: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Function docs -> {name: parameter names in declared order}, for ``positional_params``."""
    return {f["name"]: list(f.get("parameters", {}).get("properties", {})) for f in functions}


def _first_accepted(values: Any) -> tuple[bool, Any]:
    if not isinstance(values, list):
        return True, values
    for value in values:
        if value != "":
            return True, value
    return False, None


def _expand(value: Any, declared: str | None, items: str | None) -> Any:
    # In a possible answer, a dict value maps each key to its accepted values, and so does each
    # dict of a list of dicts; pick the first accepted value there too.
    def pick(candidate: Mapping[str, Any]) -> dict[str, Any]:
        chosen = {}
        for key, values in candidate.items():
            present, item = _first_accepted(values)
            if present:
                chosen[key] = item
        return chosen

    if isinstance(value, dict) and declared in (None, "dict"):
        return pick(value)
    if (
        isinstance(value, list)
        and declared in (None, "array")
        and items in (None, "dict")
        and value
        and all(isinstance(v, dict) for v in value)
    ):
        return [pick(v) for v in value]
    return value


def ground_truth_to_calls(
    ground_truth: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    functions: Sequence[Mapping[str, Any]] | None = None,
) -> list[Call]:
    """An AST possible answer -> the calls a perfect model would make: for each parameter the
    first accepted value, omitting parameters whose only accepted value is "" (optional)."""
    properties: dict[str, Mapping[str, Any]] = {}
    for function in functions or ():
        properties[function["name"]] = function.get("parameters", {}).get("properties", {})
    calls: list[Call] = []
    for answer in ground_truth:
        name, accepted_by_param = next(iter(answer.items()))
        arguments = {}
        for param, accepted in accepted_by_param.items():
            present, value = _first_accepted(accepted)
            if not present:
                continue
            detail = properties.get(name, {}).get(param) if functions else None
            declared = detail.get("type") if detail else None
            items = detail.get("items", {}).get("type") if detail else None
            arguments[param] = _expand(value, declared, items)
        calls.append({name: arguments})
    return calls
