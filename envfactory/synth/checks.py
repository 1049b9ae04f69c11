"""Checks a candidate task must pass; each returns a ``Finding`` (ok or why not).

- ``solvable``: the gold calls, replayed on a fresh session, earn reward 1;
- ``not_presatisfied``: doing nothing earns reward 0 (a read-only task needs answer facts);
- ``complete``: every value the user must supply is recoverable from what they say or will
  reveal, and every row the gold run picked among several is singled out by those facts;
- ``not_overspecified``: no tool names, no ids the user could not know, no step lists, low
  word overlap with tool descriptions;
- ``decontaminated``: low 8-gram overlap with BFCL and tau2-bench questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import RuntimeToolError
from ..reward import normalize_text, score_trajectory
from ..spec import EnvSpec, Task, ToolKind
from ..text import date_forms, format_answer, format_plain
from .decontam import DEFAULT_THRESHOLD, NgramIndex
from .invariants import (
    GoldView,
    goal_mismatches,
    internal_ids,
    invented_args,
    says_answer,
    unsayable_facts,
    unused_calls,
)
from .phrasing import clock_year, ftype, id_like, parse_fact_key, say_value
from .selections import candidates_after_facts

__all__ = [
    "Finding",
    "CHECKS",
    "check_solvable",
    "check_not_presatisfied",
    "check_complete",
    "check_not_overspecified",
    "check_decontaminated",
    "check_provenance",
    "check_needed",
    "check_resolves",
    "check_not_handed_over",
    "check_sayable",
    "run_checks",
    "user_words",
    "DESCRIPTION_OVERLAP",
]

CHECKS = (
    "solvable",
    "not_presatisfied",
    "complete",
    "not_overspecified",
    "provenance",
    "needed",
    "resolves",
    "not_handed_over",
    "sayable",
    "decontaminated",
)
DESCRIPTION_OVERLAP = 0.6
_STEP_LIST = re.compile(
    r"\b(first(ly)?\b.{0,80}\b(then|next|after that|afterwards)\b|step \d|^\s*\d[.)]\s|"
    r"\bthen call\b|\bfinally,? (call|use)\b)",
    re.I | re.S,
)
_STOP = set(
    "a an the and or of to for in on at by with from is are be it its this that your you i me my "
    "we our please can could would will if as any all one get find by not no".split()
)


@dataclass(frozen=True)
class Finding:
    """One check's outcome. ``ran`` is False when the check could not run (its data was missing)."""

    check: str
    ok: bool
    message: str = ""
    ran: bool = True


def _replay(env: Any, task: Task) -> tuple[str, dict, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    with env.new_session() as s:
        for g in task.gold:
            try:
                s.call(g.tool, g.args)
                calls.append(
                    {"tool": g.tool, "args": g.args, "ok": True, "writes": env.spec.tool(g.tool).writes}
                )
            except RuntimeToolError as e:  # the gold run no longer works
                calls.append(
                    {"tool": g.tool, "args": g.args, "ok": False, "error": getattr(e, "code", "error")}
                )
        return s.state_hash(), s.diff().to_dict(), calls


def check_solvable(task: Task, env: Any) -> Finding:
    h, diff, calls = _replay(env, task)
    bad = [c["tool"] for c in calls if not c["ok"]]
    if bad:
        return Finding("solvable", False, f"gold call {bad[0]} fails on a fresh session")
    r = score_trajectory(
        task.reward,
        final_state_hash=h,
        final_diff=diff,
        calls=list(calls),  # a copy typed as score_trajectory's (invariant) list
        final_answer=" ; ".join(task.answer_facts),
    )
    return Finding("solvable", r.reward == 1.0, "" if r.reward == 1.0 else f"gold replay earns {r.reward}")


def check_not_presatisfied(task: Task, env: Any | None = None) -> Finding:
    spec = task.reward
    if not spec.changes_state and not spec.required_facts:
        return Finding(
            "not_presatisfied", False, "read-only task without answer facts: doing nothing would pass"
        )
    r = score_trajectory(
        spec, final_state_hash=spec.initial_state_hash, final_diff={}, calls=[], final_answer=""
    )
    return Finding(
        "not_presatisfied", r.reward == 0.0, "" if r.reward == 0.0 else "the initial state already earns 1"
    )


def _value_forms(spec: EnvSpec | None, entity: str | None, fname: str, v: Any) -> set[str]:
    forms = {normalize_text(format_answer(v)), normalize_text(str(v))}
    if spec is not None and entity:
        ft = ftype(spec, entity, fname)
        forms.add(normalize_text(say_value(ft, fname, v)))
        forms.add(normalize_text(say_value(ft, fname, v, clock_year(spec))))
    if isinstance(v, str):
        forms |= {normalize_text(d) for d in date_forms(v)}  # a date in any of the ways it is written
    return {f for f in forms if f}


def check_complete(task: Task, spec: EnvSpec) -> Finding:
    """Write/get literal arguments recoverable; every picked list row singled out by the facts."""
    text = normalize_text(task.goal)
    facts = {**task.persona.known_facts, **task.persona.hidden_facts}
    fact_vals = {normalize_text(format_answer(v)) for v in facts.values()} | {
        normalize_text(str(v)) for v in facts.values()
    }
    outputs: list[Any] = [g.output for g in task.gold]
    for i, g in enumerate(task.gold):
        t = spec.tool(g.tool)
        if t.kind == ToolKind.list:
            continue  # filters are the agent's choice (masked); the picked rows are checked below
        for name, v in g.args.items():
            if name in g.masked_args:
                continue
            p = next((p for p in t.params if p.name == name), None)
            fname = p.field if p and p.field else name
            if _derived(task, i, name):
                continue
            forms = _value_forms(spec, t.entity, fname, v)
            if not (forms & fact_vals) and not any(f in text for f in forms):
                return Finding(
                    "complete", False, f"{g.tool}.{name}={v!r} is neither stated nor known to the user"
                )
    for i, g in enumerate(task.gold):
        t = spec.tool(g.tool)
        if t.kind != ToolKind.list:
            continue
        items = (outputs[i] or {}).get("items") or []
        for k in sorted(_picked(task, i)):
            if k >= len(items):
                continue
            if len(items) == 1 and not (outputs[i] or {}).get("has_more"):
                continue
            if candidates_after_facts(spec, t.entity, items, k, facts) != [k]:
                return Finding(
                    "complete",
                    False,
                    f"{g.tool} result {k} is one of {len(items)} rows and nothing the user says singles it out",
                )
    return Finding("complete", True)


def _derived(task: Task, i: int, name: str) -> bool:
    refs = task.reward.gold_calls[i].get("refs", {}) if i < len(task.reward.gold_calls) else {}
    return name in refs


def _picked(task: Task, i: int) -> set[int]:
    out = set()
    for c in task.reward.gold_calls:
        for r in (c.get("refs") or {}).values():
            if r and r[0] == i and len(r) > 2 and r[1] == "items" and isinstance(r[2], int):
                out.add(r[2])
    return out


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 2}


def check_not_overspecified(task: Task, spec: EnvSpec) -> Finding:
    goal = task.goal
    low = goal.lower()
    for t in spec.tools:
        if re.search(rf"\b{re.escape(t.name)}\b", low):
            return Finding("not_overspecified", False, f"names the tool {t.name}")
    known = {
        normalize_text(str(v)) for v in {**task.persona.known_facts, **task.persona.hidden_facts}.values()
    }
    ids: set[str] = set()
    for g in task.gold:
        t = spec.tool(g.tool)
        rows = [g.args]
        out = g.output
        if isinstance(out, dict):
            page = t.kind == ToolKind.list and isinstance(out.get("items"), list)
            rows += out["items"] if page else [out]
        ent_for = {p.name: (p.field or p.name) for p in t.params}
        for row in rows:
            for k, v in row.items() if isinstance(row, dict) else ():
                if not isinstance(v, str) or len(v) < 3:
                    continue
                if id_like(spec, t.entity, ent_for.get(k, k)):
                    ids.add(v)
    tokens = set(re.findall(r"[A-Za-z0-9_\-]+", goal))
    for v in sorted(ids):
        if v in tokens and normalize_text(v) not in known:
            return Finding("not_overspecified", False, f"states the id {v}, which the user could not know")
    if _STEP_LIST.search(goal):
        return Finding("not_overspecified", False, "spells out steps")
    words = _content(goal)
    for t in spec.tools:
        d = _content(t.description)
        if len(d) >= 8 and len(words & d) / len(d) >= DESCRIPTION_OVERLAP:
            return Finding("not_overspecified", False, f"paraphrases the description of {t.name}")
    return Finding("not_overspecified", True)


def check_decontaminated(
    task: Task, index: NgramIndex | None, threshold: float = DEFAULT_THRESHOLD
) -> Finding:
    if index is None or not index.sources:
        why = "; ".join(index.unavailable.values()) if index else "bfcl index unavailable"
        return Finding("decontaminated", True, f"skipped: {why}", ran=False)
    texts = [task.goal] + [s.text for s in task.subgoals]
    for tx in texts:
        r, src = index.overlap(tx)
        if r >= threshold and r > 0:
            return Finding("decontaminated", False, f"{r:.0%} of its 8-grams appear in {src} questions")
    return Finding("decontaminated", True)


def user_words(task: Task) -> str:
    """What the user says over a conversation: the goal, and each hidden fact when asked for it."""
    return " ".join([task.goal] + [format_plain(v) for v in task.persona.hidden_facts.values()])


def check_provenance(task: Task, spec: EnvSpec) -> Finding:
    """Every gold argument comes from the user's words, an earlier result or a documented default."""
    bad = invented_args(spec, GoldView.of_task(task), user_words(task))
    return Finding("provenance", not bad, f"invented: {bad[0]}" if bad else "")


def check_needed(task: Task, spec: EnvSpec) -> Finding:
    """Every gold read feeds a later call or the answer."""
    bad = unused_calls(spec, GoldView.of_task(task))
    return Finding("needed", not bad, f"the output of {bad[0]} is never used" if bad else "")


def check_resolves(task: Task, spec: EnvSpec, state: Any | None) -> Finding:
    """The goal's descriptors pick exactly the rows the gold run acts on; no internal id is said."""
    if state is None:
        return Finding("resolves", True, "skipped: no state index", ran=False)
    view = GoldView.of_task(task)
    ids = internal_ids(spec, view, task.goal)
    if ids:
        return Finding("resolves", False, f"states the internal id {ids[0]}")
    for k, v in {**task.persona.known_facts, **task.persona.hidden_facts}.items():
        pk = parse_fact_key(spec, k)
        if pk is not None and pk[0] != "prefer" and id_like(spec, pk[1], pk[2]):
            return Finding("resolves", False, f"the user would have to know the internal id {v}")
    bad = goal_mismatches(spec, state, view)
    return Finding("resolves", not bad, bad[0] if bad else "")


def check_not_handed_over(task: Task) -> Finding:
    """No required fact is among the user's own words (an answer that repeats them earns nothing)."""
    words = " ".join([user_words(task), task.persona.name] + [s.text for s in task.subgoals])
    bad = says_answer(task, words)
    return Finding("not_handed_over", not bad, f"the user already says {bad[0]!r}" if bad else "")


def check_sayable(task: Task, spec: EnvSpec) -> Finding:
    """Every fact the user states is one a person knows and says (not filler, a stamp or a link)."""
    bad = unsayable_facts(spec, {**task.persona.known_facts, **task.persona.hidden_facts})
    return Finding("sayable", not bad, f"no person says {bad[0]}" if bad else "")


def run_checks(
    task: Task,
    env: Any,
    index: NgramIndex | None = None,
    state: Any | None = None,
    *,
    first_failure: bool = False,
) -> list[Finding]:
    """Every check, in ``CHECKS`` order (up to the first that fails with ``first_failure``); ``state``:
    a ``StateIndex`` of the initial state (the resolver's ground truth; without it ``resolves`` does
    not run)."""
    spec = env.spec
    out = []
    for run in (
        lambda: check_solvable(task, env),
        lambda: check_not_presatisfied(task, env),
        lambda: check_complete(task, spec),
        lambda: check_not_overspecified(task, spec),
        lambda: check_provenance(task, spec),
        lambda: check_needed(task, spec),
        lambda: check_resolves(task, spec, state),
        lambda: check_not_handed_over(task),
        lambda: check_sayable(task, spec),
        lambda: check_decontaminated(task, index),
    ):
        f = run()
        out.append(f)
        if first_failure and not f.ok:
            break
    return out
