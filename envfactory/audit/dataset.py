"""``envfactory audit DATASET``: the meaning of a written trajectory dataset, measured.

Every rate is a share of rows (trajectories). Per row, from its messages, its reward spec and
its environment (the gold calls are replayed on a fresh session for their outputs):

- invented arguments: a gold argument whose value the user never said, never revealed when asked,
  no earlier result showed and no default documents (``synth.invariants``);
- unused calls: a gold read whose output feeds no later call and no required fact;
- goal/gold mismatches: the goal's descriptors, resolved on the initial state by an independent
  resolver, do not pick exactly the rows the gold run acts on;
- internal ids in goals; the assistant asking for an internal id; the user handing over an answer
  they asked for (a required fact in the user's words); double greetings in the first message;
- held-back answers: a fact found while serving an earlier sub-goal, not said when that sub-goal
  was answered; premature work: a call made for a sub-goal the user has not raised yet;
- recovered tool errors (a failed call, then a successful call of the same tool) and refusals
  (the assistant declines a request the tools cannot serve or the state forbids);
- language: distinct-2 over goals, the share of the most common assistant frame (a message with
  its values masked), and length and kind distributions; examples of each defect.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..synth.invariants import (
    GoldView,
    canon,
    goal_mismatches,
    has_value,
    internal_ids,
    invented_args,
    unsayable_facts,
    unused_calls,
)

__all__ = [
    "DatasetAudit",
    "DEFECTS",
    "SHARES",
    "audit_rows",
    "audit_dataset",
    "load_rows",
    "is_dataset_dir",
    "frame_of",
    "distinct_n",
    "audit_table",
    "pick_rows",
]

# (key, label, target as text): the order of the card's table
DEFECTS = (
    ("invented_args", "gold argument with no provenance (invented)", "0"),
    ("unused_calls", "gold call whose output is never used", "<= 2%"),
    ("goal_mismatch", "goal's words do not pick the gold run's rows", "0"),
    ("ids_in_goal", "internal id in the goal", "<= 1%"),
    ("unsayable", "goal states a detail no person says (filler, a stamp, a link)", "0"),
    ("asks_for_id", "assistant asks the user for an internal id", "0"),
    ("answer_handed_over", "user states an answer they asked for", "0"),
    ("double_greeting", "two greetings in the first user message", "0"),
    ("held_back", "earlier sub-goal's answer held back to the end", "<= 2%"),
    ("premature_work", "work on a sub-goal before the user raises it", "-"),
    ("stated_early", "answer stated before the user asks for it", "-"),
    ("short_facts", "required fact of <= 2 characters", "-"),
)
SHARES = (
    ("recovered_error", "tool error, then recovery", ">= 10%"),
    ("refusal", "justified refusal", ">= 5%"),
)
_GREETING = re.compile(r"\b(hello|hi|hey|hiya|good (morning|afternoon|evening)|greetings|howdy)\b", re.I)
_REFUSAL = re.compile(
    r"\b(i can(no|')t|i am not able|i'm not able|i'm unable|i am unable|not possible|"
    r"i'm afraid i can|there is no way for me)\b",
    re.I,
)
_QUESTION = re.compile(r"[^.!?]*\?")
_MASKS = [
    (re.compile(r"\S+@\S+"), "<email>"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<q>"),
    (re.compile(r"\S*\d\S*"), "<n>"),
]


def frame_of(text: str, words: int = 4) -> str:
    """How a message opens: its first ``words`` words, lower-case, with values masked (emails,
    quoted values, anything with a digit) -- "let me search the" is one frame whatever follows."""
    s = text.strip()
    for rx, rep in _MASKS:
        s = rx.sub(rep, s)
    return " ".join(re.findall(r"[a-z<>']+", s.lower())[:words])


def distinct_n(texts: Iterable[str], n: int = 2) -> float:
    """Distinct n-grams over all n-grams of the texts' words (Li et al., 2016)."""
    total, uniq = 0, set()
    for t in texts:
        w = re.findall(r"[a-z0-9']+", t.lower())
        grams = list(zip(*(w[i:] for i in range(n))))
        total += len(grams)
        uniq.update(grams)
    return round(len(uniq) / total, 4) if total else 0.0


@dataclass
class DatasetAudit:
    """The figures of one dataset. ``rates``: share of rows per defect; ``examples``: a few per defect."""

    path: str
    rows: int
    rates: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    distinct_2: float = 0.0
    top_frame: str = ""
    top_frame_share: float = 0.0
    distributions: dict[str, dict[str, int]] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_dataset_dir(path: str | Path) -> bool:
    """A folder written by ``envfactory synth`` (Parquet files under data/)."""
    p = Path(path)
    return p.is_dir() and any((p / "data").glob("*.parquet")) if (p / "data").is_dir() else False


def _turns(messages: list[dict[str, Any]], subgoals: list[str] | None = None) -> list[list[dict[str, Any]]]:
    """Messages split where the user raises a sub-goal (a user message holding a sub-goal's text; a
    reply with a fact stays in its turn); without sub-goals, at every user message."""
    marks = [canon(t).strip() for t in subgoals or [] if t]
    out: list[list[dict[str, Any]]] = []
    for m in messages:
        raises = m["role"] == "user" and (
            not marks or not out or any(k in canon(m.get("content") or "") for k in marks)
        )
        if raises:
            out.append([m])
        elif out:
            out[-1].append(m)
    return out


def _closing(turn: list[dict[str, Any]]) -> str:
    texts = [m.get("content") or "" for m in turn if m["role"] == "assistant" and not m.get("tool_calls")]
    return texts[-1] if texts else ""


def _tool_results(turn: list[dict[str, Any]]) -> list[str]:
    return [m.get("content") or "" for m in turn if m["role"] == "tool"]


def _calls(messages: list[dict[str, Any]]) -> list[tuple[int, str, dict[str, Any], bool]]:
    """(turn, tool, args, ok) per call in order."""
    results = {m.get("tool_call_id"): m.get("content") or "" for m in messages if m["role"] == "tool"}
    out, turn = [], -1
    for m in messages:
        if m["role"] == "user":
            turn += 1
        for c in m.get("tool_calls") or []:
            fn = c["function"]
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            res = results.get(c["id"], "")
            ok = not (res.startswith('{"error"'))
            out.append((max(turn, 0), fn["name"], args, ok))
    return out


class _EnvCache:
    """Environments by env id, with a state index of the initial state and replayed gold outputs."""

    def __init__(self, root: Path, envs: dict[str, Any] | None = None):
        self.root = root
        self.envs: dict[str, Any] = {}
        self.states: dict[str, Any] = {}
        from ..graph.state import StateIndex

        for env_id, env in (envs or {}).items():
            self.envs[env_id] = env
            with env.new_session() as s:
                self.states[env_id] = StateIndex(env.spec, s)

    def get(self, env_id: str) -> tuple[Any, Any] | None:
        if env_id not in self.envs:
            from ..graph.state import StateIndex
            from ..runtime import load_environment

            folder = self.root / "domains" / env_id
            if not (folder / "env.yaml").is_file():
                self.envs[env_id] = None
            else:
                env = load_environment(folder)
                self.envs[env_id] = env
                with env.new_session() as s:
                    self.states[env_id] = StateIndex(env.spec, s)
        env = self.envs[env_id]
        return None if env is None else (env, self.states[env_id])


def _gold_outputs(env: Any, calls: list[dict[str, Any]], initial_state: str) -> list[Any]:
    from ..synth.rollout import InProcessBackend

    be = InProcessBackend(env, initial_state)
    try:
        return [be.call(c["tool"], c.get("args") or {})[1] for c in calls]
    finally:
        be.close()


def _row_defects(row: dict[str, Any], env: Any, state: Any) -> dict[str, list[str]]:
    """Defect -> what is wrong (empty when the row is clean)."""
    spec = env.spec
    msgs = row["messages"]
    rs = row["reward_spec"]
    user = row.get("user") or {}
    persona = user.get("persona") or {}
    facts = {**(persona.get("known_facts") or {}), **(persona.get("hidden_facts") or {})}
    calls = rs.get("gold_calls") or []
    view = GoldView(
        calls,
        _gold_outputs(env, calls, row.get("initial_state") or "template"),
        facts,
        list(rs.get("required_facts") or []),
    )
    goal = user.get("goal") or ""
    user_words = " ".join(m.get("content") or "" for m in msgs if m["role"] == "user")
    user_c = canon(user_words)
    out: dict[str, list[str]] = {}
    out["invented_args"] = invented_args(spec, view, user_words)
    out["unused_calls"] = unused_calls(spec, view)
    out["goal_mismatch"] = goal_mismatches(spec, state, view)
    out["ids_in_goal"] = internal_ids(spec, view, goal)
    out["unsayable"] = unsayable_facts(spec, facts)
    out["asks_for_id"] = _asks_for_id(spec, view, msgs)
    out["answer_handed_over"] = [f for f in view.required if has_value(user_c, {canon(f).strip()})]
    first = next((m.get("content") or "" for m in msgs if m["role"] == "user"), "")
    out["double_greeting"] = [first[:80]] if len(_GREETING.findall(first)) >= 2 else []
    out["held_back"], out["premature_work"], out["stated_early"] = _turn_taking(msgs, user, view)
    out["short_facts"] = [f for f in view.required if len(str(f).strip()) <= 2]
    return out


def _asks_for_id(spec: Any, view: GoldView, msgs: list[dict[str, Any]]) -> list[str]:
    """Assistant questions that name an id, or that the user answers with an internal id."""
    out = []
    for k, m in enumerate(msgs):
        if m["role"] != "assistant" or m.get("tool_calls") or not m.get("content"):
            continue
        qs = " ".join(_QUESTION.findall(m["content"]))
        if not qs:
            continue
        nxt = msgs[k + 1].get("content") or "" if k + 1 < len(msgs) and msgs[k + 1]["role"] == "user" else ""
        if re.search(r"\b(id|ids|uuid|identifier)\b", qs, re.I) or (nxt and internal_ids(spec, view, nxt)):
            out.append(qs.strip()[:100])
    return out


def _turn_taking(
    msgs: list[dict[str, Any]], user: dict[str, Any], view: GoldView
) -> tuple[list[str], list[str], list[str]]:
    """(answers held back past the turn that asks for them, gold calls made before their sub-goal is
    raised, answers said in an earlier turn's closing than the one that asks for them). The turn that
    asks for a fact is the sub-goal whose ``answers`` list it; where no sub-goal lists answers (older
    datasets), the first turn whose tool results hold it."""
    subgoals = user.get("subgoals") or []
    turns = _turns(msgs, [sg.get("text") or "" for sg in subgoals])
    due_of: dict[str, int] = {}
    for k, sg in enumerate(subgoals):
        for f in sg.get("answers") or []:
            due_of.setdefault(f, k)
    held: list[str] = []
    early: list[str] = []
    if len(turns) > 1:
        for f in view.required:
            fc = {canon(f).strip()}
            at = due_of.get(f) if due_of else None
            if at is None:
                at = next(
                    (
                        k
                        for k, t in enumerate(turns)
                        if any(has_value(canon(r), fc) for r in _tool_results(t))
                    ),
                    None,
                )
            if at is not None and at < len(turns) - 1 and not has_value(canon(_closing(turns[at])), fc):
                held.append(f)
            if f in due_of and any(
                has_value(canon(_closing(t)), fc) for t in turns[: min(at or 0, len(turns))]
            ):
                early.append(f)
    premature: list[str] = []
    first_sg: dict[int, int] = {}
    for k, sg in enumerate(subgoals):
        for s in sg.get("steps") or []:
            first_sg.setdefault(s, k)
    made = [(turn, tool, args) for turn, tool, args, ok in _calls(msgs) if ok]
    j = 0
    for i, c in enumerate(view.calls):  # gold calls in order, matched to the calls made
        while j < len(made) and not (made[j][1] == c["tool"] and made[j][2] == c.get("args")):
            j += 1
        if j >= len(made):
            break
        if i in first_sg and made[j][0] < first_sg[i]:
            premature.append(c["tool"])
        j += 1
    return held, premature, early


def _recovered(msgs: list[dict[str, Any]]) -> bool:
    calls = _calls(msgs)
    return any(
        not ok and any(t2 == tool and ok2 for _, t2, _, ok2 in calls[i + 1 :])
        for i, (_, tool, _, ok) in enumerate(calls)
    )


def _refused(row: dict[str, Any]) -> bool:
    kinds = [sg.get("kind") for sg in (row.get("user") or {}).get("subgoals") or []]
    said = any(
        _REFUSAL.search(m.get("content") or "")
        for m in row["messages"]
        if m["role"] == "assistant" and not m.get("tool_calls")
    )
    return said and "refusal" in kinds


def _bucket(n: int, edges: tuple[int, ...]) -> str:
    for a, b in zip(edges, edges[1:]):
        if a <= n < b:
            return f"{a}" if b == a + 1 else f"{a}-{b - 1}"
    return f">={edges[-1]}"


def audit_rows(
    rows: list[dict[str, Any]],
    root: str | Path,
    *,
    path: str = "",
    examples: int = 3,
    envs: dict[str, Any] | None = None,
) -> DatasetAudit:
    """Audit dataset rows (dicts as written by ``envfactory synth``); ``root`` holds domains/
    (``envs``: environments already loaded, by env id 'domain/env')."""
    cache = _EnvCache(Path(root), envs)
    res = DatasetAudit(path=path, rows=len(rows))
    counts: Counter = Counter()
    ex: dict[str, list[str]] = {}
    dist: dict[str, Counter] = {
        "user_turns": Counter(),
        "tool_calls": Counter(),
        "messages": Counter(),
        "goal_words": Counter(),
        "kind": Counter(),
    }
    frames: Counter = Counter()
    for row in rows:
        got = cache.get(row["env_id"])
        if got is None:
            res.skipped[row["env_id"]] = res.skipped.get(row["env_id"], 0) + 1
            continue
        env, state = got
        for k, what in _row_defects(row, env, state).items():
            if what:
                counts[k] += 1
                if len(ex.setdefault(k, [])) < examples:
                    ex[k].append(f"{row['id']}: {'; '.join(map(str, what))[:200]}")
        for k, hit in (("recovered_error", _recovered(row["messages"])), ("refusal", _refused(row))):
            if hit:
                counts[k] += 1
                if len(ex.setdefault(k, [])) < examples:
                    ex[k].append(row["id"])
        for m in row["messages"]:
            if m["role"] == "assistant" and m.get("content"):
                frames[frame_of(m["content"])] += 1
        dist["user_turns"][_bucket(row.get("num_turns", 0), (1, 2, 3, 4, 6))] += 1
        dist["tool_calls"][_bucket(row.get("num_tool_calls", 0), (0, 1, 2, 3, 4, 6, 9))] += 1
        dist["messages"][_bucket(len(row["messages"]), (0, 5, 10, 15, 20, 30))] += 1
        dist["goal_words"][
            _bucket(len((row.get("user") or {}).get("goal", "").split()), (0, 10, 20, 30, 45))
        ] += 1
        dist["kind"][(row.get("user") or {}).get("intent") or "unknown"] += 1
    n = max(1, res.rows - sum(res.skipped.values()))
    res.counts = dict(counts)
    res.rates = {k: round(counts.get(k, 0) / n, 4) for k, *_ in DEFECTS + SHARES}
    res.distinct_2 = distinct_n((r.get("user") or {}).get("goal", "") for r in rows)
    total = sum(frames.values())
    if total:
        res.top_frame, top = frames.most_common(1)[0]
        res.top_frame_share = round(top / total, 4)
    res.distributions = {k: dict(sorted(v.items())) for k, v in dist.items()}
    res.examples = ex
    return res


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a dataset folder's config ``default`` (any split, any older column set), JSON
    columns decoded."""
    import pyarrow.parquet as pq

    rows = []
    for f in sorted((Path(path) / "data").glob("*.parquet")):
        for r in pq.read_table(f).to_pylist():
            for k in ("messages", "tools", "prompt"):
                if isinstance(r.get(k), list):
                    r[k] = [json.loads(x) if isinstance(x, str) else x for x in r[k]]
            for k in ("reward_spec", "user"):
                if isinstance(r.get(k), str):
                    r[k] = json.loads(r[k])
            rows.append(r)
    return rows


def audit_dataset(path: str | Path, root: str | Path | None = None) -> DatasetAudit:
    """Audit a dataset folder written by ``envfactory synth`` (environments under ``root``/domains)."""
    from ..config import project_paths

    p = Path(path)
    return audit_rows(load_rows(p), root if root is not None else project_paths().root, path=str(p))


def audit_table(a: DatasetAudit) -> list[tuple[str, str, str]]:
    """(figure, value, target) rows: the table the card and the command print."""
    out = [(label, f"{a.rates.get(k, 0.0):.1%}", target) for k, label, target in DEFECTS]
    out += [(label, f"{a.rates.get(k, 0.0):.1%}", target) for k, label, target in SHARES]
    out.append(("distinct-2 over goals", f"{a.distinct_2:.3f}", ">= 0.5"))
    out.append((f"most common assistant frame ({a.top_frame[:40]!r})", f"{a.top_frame_share:.1%}", "<= 5%"))
    return out


def pick_rows(rows: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` rows chosen by a seeded generator, in id order first so the choice does not depend on the
    order the Parquet files were read in (``envfactory audit DATASET --show N --seed S``)."""
    import random

    ordered = sorted(rows, key=lambda r: str(r.get("id")))
    return random.Random(seed).sample(ordered, min(max(n, 0), len(ordered)))
