"""The multi-turn checker: scores an episode the way BFCL's ``multi_turn_checker.py`` does.

:func:`check_multi_turn` scores a multi-turn episode from what each turn's calls returned and a
callback that compares the model's and the gold run's environment states after each turn (state
equal, and every gold result of the turn among the results the model has produced so far, as a
multiset). A pure function over data, like the single-turn rules in
:mod:`envfactory.evaluation.checker`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MultiTurnResult",
    "StateDiff",
    "TurnExecution",
    "TurnVerdict",
    "check_multi_turn",
    "compare_object_states",
    "compare_state_mappings",
    "normalize_execution_result",
]

# Per environment, the fields whose values differ: {env: {field: {"model": .., "ground_truth": ..}}}.
# An environment that matches maps to an empty mapping (or is absent).
StateDiff = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class TurnExecution:
    """What one turn's calls did: the calls (any form; only their number matters here) and their
    execution results, one per call, normalized the same way on both sides
    (:func:`normalize_execution_result`)."""

    calls: Sequence[Any] = ()
    results: Sequence[Any] = ()


@dataclass(frozen=True)
class TurnVerdict:
    turn: int
    valid: bool
    error_type: str | None = None
    errors: tuple[str, ...] = ()
    checked: bool = True  # False for a turn with no gold call (BFCL checks nothing there)
    state_differences: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    missing_results: tuple[Any, ...] = ()


@dataclass(frozen=True)
class MultiTurnResult:
    """``valid`` and ``error_type`` are BFCL's entry verdict (its first failing turn);
    ``turns`` has a verdict for every turn."""

    valid: bool
    error_type: str | None
    errors: tuple[str, ...]
    turns: tuple[TurnVerdict, ...]

    @property
    def first_failure(self) -> TurnVerdict | None:
        return next((t for t in self.turns if not t.valid), None)


def normalize_execution_result(value: Any) -> str:
    """BFCL's form of a call result: strings as is, dicts as JSON (``str`` if not serializable),
    anything else ``str``."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _missing_from(gold: Sequence[Any], produced: Sequence[Any]) -> list[Any]:
    # Multiset containment: each produced result can vouch for one gold result.
    pool = list(produced)
    missing = []
    for item in gold:
        try:
            pool.remove(item)
        except ValueError:
            missing.append(item)
    return missing


def check_multi_turn(
    model_turns: Sequence[TurnExecution],
    gold_turns: Sequence[TurnExecution],
    state_diff: Callable[[int], StateDiff],
    *,
    require_no_calls_on_empty_gold_turns: bool = False,
    stop_at_first_failure: bool = False,
) -> MultiTurnResult:
    """Score a multi-turn episode with BFCL's rules, turn by turn.

    model_turns / gold_turns: per turn, the calls made and their results.
    state_diff(turn): differences between the model's and the gold run's environment states
        after that turn (see :func:`compare_object_states`, :func:`compare_state_mappings`, or an
        envfactory session's state hash); called once per checked turn, in order.

    A turn with gold calls passes when the model made at least one call in it, every environment
    state matches, and each gold result of the turn is among the model's results of this and all
    earlier turns (a model may fetch something a turn early). A turn without gold calls is not
    checked unless ``require_no_calls_on_empty_gold_turns`` (BFCL's irrelevance variant).
    """
    if len(model_turns) != len(gold_turns):
        message = f"The model produced {len(model_turns)} turns; the ground truth has {len(gold_turns)}."
        return MultiTurnResult(False, "multi_turn:force_terminated", (message,), ())

    verdicts: list[TurnVerdict] = []
    produced: list[Any] = []
    for turn, (model, gold) in enumerate(zip(model_turns, gold_turns)):
        produced.extend(model.results)
        if stop_at_first_failure and verdicts and not verdicts[-1].valid:
            break
        if len(gold.calls) == 0:
            if require_no_calls_on_empty_gold_turns and len(model.calls) > 0:
                verdicts.append(
                    TurnVerdict(
                        turn,
                        False,
                        "multi_turn:irrelevance_error:decoder_success",
                        (f"Model outputs valid function calls when it should not for turn {turn}.",),
                        checked=False,
                    )
                )
            else:
                verdicts.append(TurnVerdict(turn, True, checked=False))
            continue
        if len(model.calls) == 0:
            verdicts.append(
                TurnVerdict(
                    turn,
                    False,
                    "multi_turn:empty_turn_model_response",
                    (f"Model response list is empty for turn {turn}",),
                )
            )
            continue
        differences = {env: dict(d) for env, d in (state_diff(turn) or {}).items() if d}
        if differences:
            verdicts.append(
                TurnVerdict(
                    turn,
                    False,
                    "multi_turn:instance_state_mismatch",
                    tuple(
                        f"Model instance for {env} does not match the state with ground truth instance."
                        for env in differences
                    ),
                    state_differences=differences,
                )
            )
            continue
        missing = _missing_from(gold.results, produced)
        if missing:
            verdicts.append(
                TurnVerdict(
                    turn,
                    False,
                    "multi_turn:execution_response_mismatch",
                    (
                        f"Model response execution results so far does not contain all the ground truth "
                        f"response execution results for turn {turn}.",
                    ),
                    missing_results=tuple(missing),
                )
            )
            continue
        verdicts.append(TurnVerdict(turn, True))

    failure = next((v for v in verdicts if not v.valid), None)
    if failure is None:
        return MultiTurnResult(True, None, (), tuple(verdicts))
    return MultiTurnResult(False, failure.error_type, failure.errors, tuple(verdicts))


def compare_state_mappings(model: Mapping[str, Any], gold: Mapping[str, Any]) -> dict[str, Any]:
    """Fields of ``gold`` (except ``_private`` ones) whose value differs in ``model``."""
    return {
        key: {"model": model.get(key), "ground_truth": value}
        for key, value in gold.items()
        if not key.startswith("_") and model.get(key) != value
    }


def compare_object_states(model: object, gold: object) -> dict[str, Any]:
    """BFCL's state rule for backend objects: every public attribute of the gold object equals
    the model object's."""
    return compare_state_mappings(vars(model), vars(gold))
