"""Verifiable rewards: score what an agent did in an environment against a task's gold run.

Components (each in [0, 1]):
- ``state``: 1 when the final state hash equals the gold final hash; otherwise the share of
  the gold diff's row changes the agent reproduced, minus the share of changes the gold run
  did not make (a run that also deletes something it should not loses credit).
- ``trace``: the share of gold calls matched by an agent call with the same tool and the same
  arguments, ignoring the arguments the user could not pin down (``masked``).
- ``facts``: the share of required facts (strings) the final answer states as values
  (``fact_in_text``: whole words, never a substring of a longer number or id).
- penalties for malformed calls (bad arguments, unknown tools) and extra writes.

``reward`` is the binary, verifiable outcome a trainer should use: 1.0 exactly when the final
state equals the gold state and the answer contains every required fact, else 0.0.
``partial`` is a shaped score for analysis, always < 1 unless ``reward`` is 1.

The ``RewardSpec`` a run is scored against is a data shape of the task contract
(``envfactory.spec``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from .spec import RewardSpec

__all__ = ["CallRecord", "RewardResult", "score_trajectory", "normalize_text", "fact_in_text"]


class CallRecord(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    error: str | None = None  # error code when not ok
    writes: bool = False


class RewardResult(BaseModel):
    reward: float
    partial: float
    state: float
    trace: float
    facts: float
    malformed_calls: int
    extra_writes: int
    state_match: bool
    missing_facts: list[str] = Field(default_factory=list)


def normalize_text(s: str) -> str:
    return " ".join(str(s).lower().replace(",", "").split())


_EDGE = re.compile(r"[.!?;:)\]\"'(\[]+(?=\s|$)|(?<=\s)[(\[\"']+|^[(\[\"']+")


def fact_in_text(fact: str, text: str) -> bool:
    """Whether ``text`` states ``fact`` as a value: whole words, case and commas aside, so '12' is
    not found in '120' nor 'TR1' in 'TR10' (sentence punctuation around a value is ignored)."""
    f = " ".join(_EDGE.sub(" ", normalize_text(fact)).split())
    if not f:
        return True
    return f" {f} " in " " + " ".join(_EDGE.sub(" ", normalize_text(text)).split()) + " "


def _diff_items(diff: dict[str, Any]) -> Counter:
    """Row-level changes as hashable items, so two diffs can be compared as multisets."""
    items: Counter = Counter()
    for kind in ("added", "removed", "changed"):
        for table, rows in (diff.get(kind) or {}).items():
            for r in rows:
                items[(kind, table, json.dumps(r, sort_keys=True))] += 1
    return items


def _state_score(spec: RewardSpec, final_hash: str, final_diff: dict[str, Any]) -> float:
    if final_hash == spec.gold_state_hash:
        return 1.0
    gold = _diff_items(spec.gold_diff)
    got = _diff_items(final_diff)
    if not gold:
        return 0.0  # nothing should have changed, and something did
    hit = sum((gold & got).values())
    extra = sum((got - gold).values())
    n = sum(gold.values())
    score = (hit - extra) / n
    return max(0.0, min(0.99, score))


def _call_key(tool: str, args: dict[str, Any], masked: list[str]) -> str:
    kept = {k: v for k, v in args.items() if k not in masked}
    return tool + json.dumps(kept, sort_keys=True)


def score_trajectory(
    spec: RewardSpec,
    *,
    final_state_hash: str,
    final_diff: dict[str, Any],
    calls: list[CallRecord | dict[str, Any]],
    final_answer: str = "",
) -> RewardResult:
    """Score one run. ``final_diff`` is ``Session.diff().to_dict()`` of the agent's session."""
    recs = [c if isinstance(c, CallRecord) else CallRecord.model_validate(c) for c in calls]
    state = _state_score(spec, final_state_hash, final_diff)
    # trace: order-free multiset match of gold calls. An agent call cannot say which gold call
    # it answers, so gold and agent keys both drop every argument masked in any gold call of
    # that tool (per-call masks on the gold side alone could make an exact gold call unmatched).
    mask_by_tool: dict[str, list[str]] = {}
    for i, g in enumerate(spec.gold_calls):
        mask_by_tool.setdefault(g["tool"], []).extend(
            spec.masked_args[i] if i < len(spec.masked_args) else []
        )
    gold_keys = [_call_key(g["tool"], g.get("args", {}), mask_by_tool[g["tool"]]) for g in spec.gold_calls]
    agent_keys: Counter = Counter()
    for r in recs:
        if r.ok:
            agent_keys[_call_key(r.tool, r.args, mask_by_tool.get(r.tool, []))] += 1
    matched = sum((Counter(gold_keys) & agent_keys).values())
    trace = matched / len(gold_keys) if gold_keys else 1.0
    missing = [f for f in spec.required_facts if not fact_in_text(f, final_answer)]
    facts = 1.0 - len(missing) / len(spec.required_facts) if spec.required_facts else 1.0
    malformed = sum(1 for r in recs if not r.ok and r.error in ("invalid_argument", "unknown_tool"))
    gold_writes = Counter(g["tool"] for g in spec.gold_calls)
    write_counts = Counter(r.tool for r in recs if r.ok and r.writes)
    extra_writes = sum((write_counts - gold_writes).values())
    state_match = final_state_hash == spec.gold_state_hash
    reward = 1.0 if state_match and not missing else 0.0
    if reward == 1.0:
        partial = 1.0
    else:
        if spec.changes_state:
            base = 0.5 * state + 0.3 * trace + 0.2 * (facts if spec.required_facts else 0.0)
        else:
            # a read-only task: the answer is the outcome; changing state is a mistake
            base = 0.6 * (facts if spec.required_facts else 0.0) + 0.4 * trace
            if final_state_hash != spec.initial_state_hash:
                base -= 0.3
        penalty = spec.malformed_penalty * malformed + spec.extra_write_penalty * extra_writes
        partial = max(0.0, min(0.99, base - penalty))
    return RewardResult(
        reward=reward,
        partial=round(partial, 4),
        state=round(state, 4),
        trace=round(trace, 4),
        facts=round(facts, 4),
        malformed_calls=malformed,
        extra_writes=extra_writes,
        state_match=state_match,
        missing_facts=missing,
    )
