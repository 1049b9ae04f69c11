"""From raw model text to verdict, ours against BFCL's decoder + checker (bfcl-eval's own code).

Each case is what a model returns -- reply text in prompt mode, tool calls with their JSON
argument strings (or a text reply) in fc mode -- for an entry of our suites. Ours:
``decode_reply`` then ``check_ast``. BFCL's: its OpenAI handler's ``decode_ast`` inside its
eval runner's ``_evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry``. Cases are
the gold output, planted errors, and planted decoder edge cases (unary plus, string
concatenation, nested values, positional arguments, backticks, text replies, malformed JSON).

Differences are documented in envfactory/evaluation/bfcl_format.py and listed in DOCUMENTED;
every other case must agree. The pow bomb ``f(a=9**9**9)`` is not given to BFCL (its decoder
eval()s it and does not return); ours must refuse it as a decode failure.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import pytest

from envfactory.evaluation import bfcl_compat, check_ast, decode_reply, ground_truth_to_calls
from envfactory.llm import ChatMessage, ChatResponse, ToolCall

from ._fixtures import REPO, trip_desk_suite
from .test_bfcl_agreement import bfcl_data  # noqa: F401 - the fixture that installs bfcl-eval

pytestmark = pytest.mark.slow

SEED = 7
# variant -> why ours and BFCL's verdicts may differ (each is counted and printed)
DOCUMENTED = {
    "unary_plus": "BFCL negates every unary operand (limit=+10 decodes to -10); ours keeps +10",
}


def _suites():
    from envfactory.evaluation import load_suite

    yield trip_desk_suite()
    for manifest in sorted((REPO / "eval" / "suites").glob("*/manifest.json")):
        yield load_suite(manifest.parent)


def _literal(value: Any, plant: str | None) -> str:
    if plant == "concat" and isinstance(value, str) and len(value) >= 2:
        cut = len(value) // 2
        return f"{value[:cut]!r} + {value[cut:]!r}"
    if plant == "unary_plus" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return f"+{value}"
    return repr(value)


def _text(calls: list[dict], plant: str | None = None, positional: bool = False) -> str:
    parts = []
    for call in calls:
        ((name, args),) = call.items()
        rendered = [f"{k}={_literal(v, plant)}" for k, v in args.items()]
        if positional and rendered:
            rendered[0] = rendered[0].split("=", 1)[1]
        parts.append(f"{name}({', '.join(rendered)})")
    return "[" + ", ".join(parts) + "]"


def _planted(calls: list[dict], rng: random.Random) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if not calls:
        return out
    i = rng.randrange(len(calls))
    ((name, args),) = calls[i].items()

    def with_args(new: dict) -> list[dict]:
        changed = copy.deepcopy(calls)
        changed[i] = {name: new}
        return changed

    if args:
        param = rng.choice(sorted(args))
        value = args[param]
        wrong = (
            (not value)
            if isinstance(value, bool)
            else (value + 7919 if isinstance(value, (int, float)) else f"{value}zq9")
        )
        out["wrong_value"] = with_args({**args, param: wrong})
        out["missing_arg"] = with_args({k: v for k, v in args.items() if k != param})
    out["extra_arg"] = with_args({**args, "zq_unexpected": 1})
    out["wrong_name"] = [*calls[:i], {name + "_zq": args}, *calls[i + 1 :]]
    out["bare"] = with_args({})
    return out


def _cases(suite, rng: random.Random):
    """(entry, variant, prompt_text | None, fc_raw | None)."""
    for entry in suite.entries:
        if entry.is_multi_turn:
            continue
        gold = (
            ground_truth_to_calls(entry.ground_truth, entry.functions)
            if entry.ground_truth
            else ([{entry.functions[0]["name"]: {}}] if entry.category == "live_relevance" else [])
        )
        variants = {"gold": gold, **_planted(gold, rng)}
        for variant, calls in variants.items():
            fc = [{"name": n, "arguments": json.dumps(a)} for c in calls for n, a in c.items()]
            yield entry, variant, _text(calls), fc
        if gold:
            yield entry, "concat", _text(gold, "concat"), None
            yield entry, "unary_plus", _text(gold, "unary_plus"), None
            yield entry, "positional", _text(gold, positional=True), None
            yield entry, "backticks", "```\n" + _text(gold) + "\n```", None
            yield entry, "no_brackets", _text(gold)[1:-1], None
            bad = [{"name": n, "arguments": json.dumps(a)[:-1] or "{"} for c in gold for n, a in c.items()]
            yield entry, "malformed_json", None, bad
        yield (
            entry,
            "text_reply",
            "I cannot do that with these functions.",
            "I cannot do that with these functions.",
        )
        yield entry, "empty_list", "[]", []


def _ours(entry, mode: str, raw: Any):
    if mode == "prompt":
        response = ChatResponse(message=ChatMessage.assistant(raw))
    elif isinstance(raw, str):
        response = ChatResponse(message=ChatMessage.assistant(raw))
    else:
        calls = [ToolCall.from_raw(f"c{i}", c["name"], c["arguments"]) for i, c in enumerate(raw)]
        response = ChatResponse(message=ChatMessage.assistant(None, calls or None))
    return check_ast(entry.functions, decode_reply(response, mode), entry.ground_truth, entry.category)


def _theirs(runner, handler, entry, raw: Any):
    from bfcl_eval.constants.enums import Language, ReturnFormat

    if not isinstance(raw, str):  # BFCL's FC handlers keep tool calls as {name: arguments_json}
        raw = [{c["name"]: c["arguments"]} for c in raw]
    prompt_entry = {"id": entry.id, "question": entry.question, "function": copy.deepcopy(entry.functions)}
    if "relevance" in entry.category:
        result = runner._evaluate_single_relevance_entry(
            handler, entry.id, raw, prompt_entry, "ours", entry.category
        )
    else:
        result = runner._evaluate_single_ast_entry(
            handler,
            entry.id,
            raw,
            copy.deepcopy(entry.ground_truth),
            prompt_entry,
            "ours",
            entry.category,
            language=Language.PYTHON,
            return_format=ReturnFormat.PYTHON,
        )
    return result["valid"], result.get("error_type")


def test_raw_model_text_gets_bfcls_verdict_in_fc_and_prompt_mode(bfcl_data, capsys):  # noqa: F811
    runner = bfcl_compat.bfcl_eval_runner()
    handlers = {mode: bfcl_compat.bfcl_handler(mode) for mode in ("fc", "prompt")}
    rng = random.Random(SEED)
    total: Counter[tuple[str, str]] = Counter()
    agree: Counter[tuple[str, str]] = Counter()
    bfcl_invalid: Counter[tuple[str, str]] = Counter()
    # (mode, variant) counts over entries that are not relevance ones: under BFCL's relevance rule any
    # call passes, so a planted error there is not an error for BFCL (nor for us)
    checked: Counter[tuple[str, str]] = Counter()
    checked_invalid: Counter[tuple[str, str]] = Counter()
    undocumented = []
    for suite in _suites():
        for entry, variant, text, fc in _cases(suite, rng):
            for mode, raw in (("prompt", text), ("fc", fc)):
                if raw is None:
                    continue
                ours = _ours(entry, mode, raw)
                valid, error_type = _theirs(runner, handlers[mode], entry, raw)
                key = (mode, variant)
                total[key] += 1
                bfcl_invalid[key] += not valid
                if "relevance" not in entry.category:
                    checked[key] += 1
                    checked_invalid[key] += not valid
                if ours.valid == valid:
                    agree[key] += 1
                elif variant not in DOCUMENTED:
                    undocumented.append(
                        f"{suite.domain}/{entry.id} [{mode} {variant}] ours={ours.valid} "
                        f"({ours.error_type}) bfcl={valid} ({error_type}): {str(raw)[:200]}"
                    )
    lines = [f"raw-text agreement: {sum(agree.values())}/{sum(total.values())} cases"]
    for key in sorted(total):
        note = (
            f"  (documented: {DOCUMENTED[key[1]]})"
            if key[1] in DOCUMENTED and agree[key] < total[key]
            else ""
        )
        lines.append(
            f"  {key[0]:6} {key[1]:14} {agree[key]}/{total[key]} agree; BFCL marks "
            f"{bfcl_invalid[key]}/{total[key]} invalid{note}"
        )
    lines += [f"undocumented disagreements ({len(undocumented)}):", *undocumented[:40]]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert sum(total.values()) > 1000
    assert undocumented == [], "\n".join(lines)
    # the planted errors are errors for BFCL too, or agreement would prove little
    for variant in ("wrong_value", "wrong_name", "extra_arg", "bare"):
        key = ("prompt", variant)
        assert checked[key] > 0 and checked_invalid[key] >= 0.9 * checked[key], (
            variant,
            checked_invalid[key],
            checked[key],
        )
    assert bfcl_invalid[("prompt", "gold")] == bfcl_invalid[("fc", "gold")] == 0


def test_a_pow_bomb_is_a_decode_failure_not_a_hang():
    entry = trip_desk_suite().by_category("simple_python")[0]
    name = entry.functions[0]["name"]
    for text in (f"[{name}(a=9**9**9)]", f"[{name}(a='x' * 10**10)]", f"[{name}(a=(((((2)))))**99999999)]"):
        verdict = _ours(entry, "prompt", text)
        assert (verdict.valid, verdict.error_type) == (False, "ast_decoder:decoder_failed")
