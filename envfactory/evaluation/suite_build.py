"""Building a suite's entries from tasks (see :mod:`envfactory.evaluation.suites` for the layout).

Categories and how each is made:

Every single-call question asks for at least one argument (so a bare call of the right function
fails) and states no date its call does not use.

- ``simple_python``: one function offered, one call expected. The question is a single-step
  goal (a sub-goal served by one gold call, or a one-call task); values the call needs that the
  sentence does not state are appended as "Details: ..." so the question is answerable.
- ``multiple``: the same kind of question with the gold function among distractors from the
  same environment (other entities only, so no distractor serves the intent too).
- ``parallel`` / ``parallel_multiple``: two or three such questions for the same function /
  for different functions, asked at once.
- ``irrelevance``: a question offered only functions that cannot serve it (another domain's,
  else its own environment's functions on other entities).
- ``live_relevance``: a question offered functions of which one serves it; any call passes
  (BFCL's relevance rule), no call fails. No possible answer, as in BFCL.
- ``multi_turn_base``: a task with two or more gold calls, one user turn per sub-goal.
- ``multi_turn_miss_func``: the same, with the function a turn needs held out: that turn's
  gold is empty, and an empty user turn brings the function back (``missed_function``), whose
  gold is the held-out turn's calls.
- ``multi_turn_miss_param``: a turn whose question states a value the call needs has the value
  taken out; its gold is empty, and the next user turn gives the value.
"""

from __future__ import annotations

import hashlib
import keyword
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SuiteError
from ..spec import Task
from ..text import format_date
from .bfcl_format import format_call
from .categories import CATEGORIES, canonical_category
from .suite_docs import (
    PAGING_PARAMS,
    bfcl_function_doc,
    fit_gold_args,
    is_stated,
    possible_answer,
    question_text,
)
from .suite_model import Suite, SuiteEntry

__all__ = ["build_suite"]


@dataclass
class _Candidate:
    """A single-call question: one gold step of one task, stated by one sentence."""

    task: Task
    step: int
    text: str
    args: dict[str, Any]

    @property
    def tool(self) -> str:
        return self.task.gold[self.step].tool

    @property
    def key(self) -> tuple[str, str]:
        return (self.task.env, self.tool)


def _speakable(args: Mapping[str, Any]) -> bool:
    """A call BFCL's Python syntax can write: ``list_positions(from=...)`` is a syntax error, so an argument
    named like a keyword (Traccar's ``from``) cannot be a gold answer in any category."""
    return all(k.isidentifier() and not keyword.iskeyword(k) for k in args)


def _failed(output: Any) -> bool:
    return isinstance(output, Mapping) and ("error" in output or output.get("ok") is False)


def _candidates(tasks: Sequence[Task], docs: Mapping[str, Mapping[str, dict[str, Any]]]) -> list[_Candidate]:
    out = []
    for task in tasks:
        if task.initial_state != "template":
            continue
        picks = [
            (sub.steps[0], sub.text)
            for sub in task.subgoals
            if len(sub.steps) == 1 and 0 <= sub.steps[0] < len(task.gold)
        ]
        if not picks and len(task.gold) == 1:
            picks = [(0, task.goal)]
        for step, text in picks:
            gold = task.gold[step]
            doc = docs.get(task.env, {}).get(gold.tool)
            args = fit_gold_args(doc, gold.args) if doc is not None and not _failed(gold.output) else None
            if args is not None and _speakable(args):
                out.append(_Candidate(task, step, text, args))
    return out


_DATE_PHRASE = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{4}"
)


def _dates_of(value: Any) -> list[str]:
    if isinstance(value, list):
        return [d for v in value for d in _dates_of(v)]
    said = format_date(value) if isinstance(value, str) else None
    return [said] if said else []


def _rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("/".join([str(seed), *parts]).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _subgoal_turns(task: Task) -> tuple[list[str], list[list[int]]]:
    """The user turns of a task and, per turn, the gold steps it owns."""
    subgoals = [s for s in task.subgoals if s.text.strip()] or None
    texts = [s.text for s in subgoals] if subgoals else [task.goal]
    owner = [-1] * len(task.gold)
    for t, sub in enumerate(subgoals or []):
        for i in sub.steps:
            if 0 <= i < len(owner) and owner[i] < 0:
                owner[i] = t
    # A step no sub-goal claims joins the turn of the next claimed step (or the last turn).
    for i in range(len(owner) - 1, -1, -1):
        if owner[i] < 0:
            owner[i] = owner[i + 1] if i + 1 < len(owner) else len(texts) - 1
    steps: list[list[int]] = [[] for _ in texts]
    for i, t in enumerate(owner):
        steps[t].append(i)
    return texts, steps


class _Builder:
    def __init__(self, envs: Mapping[str, Any], other_envs: Sequence[Any], seed: int, domain: str):
        self.envs = envs
        self.other_envs = [e for e in other_envs if e.spec.name not in envs]
        self.seed = seed
        self.domain = domain
        self.docs = {
            name: {t.name: bfcl_function_doc(t) for t in env.spec.tools} for name, env in envs.items()
        }
        self.entity = {name: {t.name: t.entity for t in env.spec.tools} for name, env in envs.items()}
        self.counters: dict[str, int] = {}

    def next_id(self, category: str) -> str:
        # BFCL's id form, <category>_<n>: extract_test_category_from_id gives the category back.
        n = self.counters.get(category, 0)
        self.counters[category] = n + 1
        return f"{category}_{n}"

    def single(self, c: _Candidate) -> tuple[str, dict[str, Any], dict[str, Any]]:
        step = c.task.gold[c.step]
        doc = self.docs[c.task.env][step.tool]
        text = question_text(c.text, c.args, set(step.masked_args) | PAGING_PARAMS)
        return text, doc, possible_answer(doc, c.args, step.masked_args, text)

    def discriminates(self, c: _Candidate) -> bool:
        """The question asks for at least one argument (a bare call must fail), and every date it
        states is one the call uses (a sentence about another step's row is not this call's)."""
        text, _, answer = self.single(c)
        (accepted,) = answer.values()
        if not any("" not in values for values in accepted.values()):
            return False
        said = {d for v in c.args.values() for d in _dates_of(v)}
        return all(d in said for d in _DATE_PHRASE.findall(text))

    def distractors(
        self, env: str, exclude_tools: Iterable[str], k: int, rng: random.Random
    ) -> list[dict[str, Any]]:
        entities = {self.entity[env][t] for t in exclude_tools}
        pool = sorted(t for t, e in self.entity[env].items() if e not in entities)
        return [self.docs[env][t] for t in rng.sample(pool, min(k, len(pool)))]

    def entry(
        self,
        category: str,
        texts: list[str],
        functions: list[dict[str, Any]],
        answers: list[Any],
        members: list[_Candidate],
    ) -> SuiteEntry:
        first = members[0]
        return SuiteEntry(
            id=self.next_id(category),
            category=category,
            question=[[{"role": "user", "content": " ".join(texts)}]],
            functions=functions,
            ground_truth=answers,
            env=first.task.env,
            domain=first.task.domain,
            task_id=",".join(dict.fromkeys(m.task.task_id for m in members)),
            steps=[m.step for m in members],
            initial_state_hash=first.task.reward.initial_state_hash,
        )

    # -- single-turn categories

    def simple(self, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        out: list[SuiteEntry] = []
        for c in cands[:n]:
            text, doc, answer = self.single(c)
            out.append(self.entry("simple_python", [text], [doc], [answer], [c]))
        return out

    def multiple(self, cands: list[_Candidate], n: int, category: str = "multiple") -> list[SuiteEntry]:
        out: list[SuiteEntry] = []
        for c in cands:
            if len(out) >= n:
                break
            text, doc, answer = self.single(c)
            rng = _rng(self.seed, category, c.task.task_id, str(c.step))
            functions = self.distractors(c.task.env, [c.tool], 3, rng)
            if not functions:
                continue
            functions.insert(rng.randrange(len(functions) + 1), doc)
            out.append(
                self.entry(category, [text], functions, [] if category == "live_relevance" else [answer], [c])
            )
        return out

    def _groups(self, category: str, cands: list[_Candidate], rng: random.Random) -> list[list[_Candidate]]:
        same_tool = category == "parallel"
        by_key: dict[Any, list[_Candidate]] = {}
        for c in cands:
            by_key.setdefault(c.key if same_tool else c.task.env, []).append(c)
        groups: list[list[_Candidate]] = []
        for key in sorted(by_key):
            pool = list(by_key[key])
            rng.shuffle(pool)
            while len(pool) >= 2:
                size = min(len(pool), rng.choice((2, 3)))
                group: list[_Candidate] = []
                rest = []
                for c in pool:
                    distinct = all(
                        c.task.task_id != g.task.task_id
                        and (same_tool or c.tool != g.tool)
                        and c.args != g.args
                        for g in group
                    )
                    if len(group) < size and distinct:
                        group.append(c)
                    else:
                        rest.append(c)
                if len(group) < 2:
                    break
                groups.append(group)
                pool = rest
        rng.shuffle(groups)
        return groups

    def grouped(self, category: str, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        rng = _rng(self.seed, category)
        out: list[SuiteEntry] = []
        for group in self._groups(category, cands, rng)[:n]:
            texts, docs, answers = [], {}, []
            for c in group:
                text, doc, answer = self.single(c)
                texts.append(text)
                docs[doc["name"]] = doc
                answers.append(answer)
            functions = list(docs.values())
            if category != "parallel":
                functions += self.distractors(group[0].task.env, [c.tool for c in group], 2, rng)
                rng.shuffle(functions)
            out.append(self.entry(category, texts, functions, answers, group))
        return out

    def irrelevance(self, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        out: list[SuiteEntry] = []
        for c in cands:
            if len(out) >= n:
                break
            text, _, _ = self.single(c)
            rng = _rng(self.seed, "irrelevance", c.task.task_id, str(c.step))
            if self.other_envs:
                other = self.other_envs[rng.randrange(len(self.other_envs))]
                tools = sorted(other.spec.tools, key=lambda t: t.name)
                functions = [bfcl_function_doc(t) for t in rng.sample(tools, min(4, len(tools)))]
            else:
                functions = self.distractors(c.task.env, [c.tool], 4, rng)
            if functions:
                out.append(self.entry("irrelevance", [text], functions, [], [c]))
        return out

    # -- multi-turn categories

    def multi_turn(
        self, tasks: Sequence[Task], n: int, category: str = "multi_turn_base"
    ) -> list[SuiteEntry]:
        out: list[SuiteEntry] = []
        for task in tasks:
            if len(out) >= n:
                break
            if task.initial_state != "template" or len(task.gold) < 2 or task.env not in self.envs:
                continue
            if any(_failed(s.output) or not _speakable(s.args) for s in task.gold):
                continue
            texts, owned = _subgoal_turns(task)
            turns = [[format_call({task.gold[i].tool: task.gold[i].args}) for i in steps] for steps in owned]
            docs = [self.docs[task.env][t.name] for t in self.envs[task.env].spec.tools]
            entry = SuiteEntry(
                id="",
                category=category,
                question=[[{"role": "user", "content": t}] for t in texts],
                functions=docs,
                ground_truth=turns,
                env=task.env,
                domain=task.domain,
                task_id=task.task_id,
                steps=list(range(len(task.gold))),
                initial_state=task.initial_state,
                initial_state_hash=task.reward.initial_state_hash,
                all_functions=docs,
            )
            if category == "multi_turn_miss_func" and not _hold_out_function(entry, task, owned):
                continue
            if category == "multi_turn_miss_param" and not _hold_out_param(entry, task, owned):
                continue
            entry.id = self.next_id(category)
            out.append(entry)
        return out


def _hold_out_function(entry: SuiteEntry, task: Task, owned: list[list[int]]) -> bool:
    """Hold out the first tool of the first turn (after the first) that no earlier turn uses."""
    for k in range(1, len(owned)):
        if not owned[k]:
            continue
        tool = task.gold[owned[k][0]].tool
        if any(task.gold[i].tool == tool for steps in owned[:k] for i in steps):
            continue
        entry.question = entry.question[: k + 1] + [[]] + entry.question[k + 1 :]
        entry.ground_truth = entry.ground_truth[:k] + [[]] + entry.ground_truth[k:]
        entry.missed_function = {str(k + 1): [tool]}
        entry.functions = [f for f in entry.functions if f["name"] != tool]
        return True
    return False


def _hold_out_param(entry: SuiteEntry, task: Task, owned: list[list[int]]) -> bool:
    """Take a stated value out of a turn's question; the next user turn gives it."""
    for k, steps in enumerate(owned):
        text = entry.question[k][0]["content"]
        for i in steps:
            for param, value in task.gold[i].args.items():
                if not (isinstance(value, str) and len(value) >= 3 and is_stated(param, value, text)):
                    continue
                if any(is_stated(param, value, entry.question[j][0]["content"]) for j in range(k)):
                    continue
                label = param.replace("_", " ")
                vague = re.sub(re.escape(value), f"(the {label} I will give you)", text, count=1, flags=re.I)
                entry.question[k] = [{"role": "user", "content": vague}]
                entry.question.insert(k + 1, [{"role": "user", "content": f"The {label} is {value}."}])
                entry.ground_truth.insert(k, [])
                return True
    return False


def _deal(cands: list[_Candidate]) -> dict[str, list[_Candidate]]:
    # Deal candidates out so categories use different questions while there are enough.
    share = max(1, len(cands) // 4) if cands else 0
    rotated = [cands[i * share :] + cands[: i * share] for i in range(4)]
    return {
        "simple_python": rotated[0],
        "multiple": rotated[1],
        "irrelevance": rotated[2],
        "live_relevance": rotated[3],
    }


def build_suite(
    tasks: Sequence[Task],
    envs: Mapping[str, Any] | Sequence[Any],
    *,
    domain: str | None = None,
    n_per_category: int = 20,
    categories: Sequence[str] = CATEGORIES,
    seed: int = 0,
    other_envs: Sequence[Any] = (),
) -> Suite:
    """Build a suite from tasks over ``envs`` (``Environment``s of one domain).

    ``other_envs``: environments of other domains, whose functions make irrelevance entries
    (without them, irrelevance offers the same environment's functions on other entities).
    At most ``n_per_category`` entries per category; fewer when the tasks do not allow more.
    """
    if not isinstance(envs, Mapping):
        envs = {e.spec.name: e for e in envs}
    categories = [canonical_category(c) for c in categories]
    unknown = sorted(set(categories) - set(CATEGORIES))
    if unknown:
        raise SuiteError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    from ..spec import account_key_args

    # a task whose calls need the account's own key (Basecamp's to-do set) relies on the system
    # prompt that states it; BFCL's entries carry none, so such a task makes no entry
    tasks = sorted(
        (t for t in tasks if t.env in envs and not account_key_args(envs[t.env].spec, t.reward.gold_calls)),
        key=lambda t: t.task_id,
    )
    if not tasks:
        raise SuiteError(
            "no tasks for these environments: build tasks first (envfactory.synth.tasks.build_tasks)"
        )
    domain = domain or tasks[0].domain
    builder = _Builder(envs, other_envs, seed, domain)
    cands = [c for c in _candidates(tasks, builder.docs) if builder.discriminates(c)]
    _rng(seed, "candidates").shuffle(cands)
    dealt = _deal(cands)
    entries: list[SuiteEntry] = []
    for category in (c for c in CATEGORIES if c in categories):
        if category == "simple_python":
            entries += builder.simple(dealt[category], n_per_category)
        elif category in ("multiple", "live_relevance"):
            entries += builder.multiple(dealt[category], n_per_category, category)
        elif category in ("parallel", "parallel_multiple"):
            entries += builder.grouped(category, cands, n_per_category)
        elif category == "irrelevance":
            entries += builder.irrelevance(dealt[category], n_per_category)
        elif category.startswith("multi_turn_"):
            mt_tasks = list(tasks)
            _rng(seed, category).shuffle(mt_tasks)
            entries += builder.multi_turn(mt_tasks, n_per_category, category)
    used = {e.task_id for e in entries if e.is_multi_turn}
    env_dirs = {}
    for name, env in envs.items():
        path = getattr(env, "path", None)
        env_dirs[name] = f"{env.spec.domain}/{path.name}" if path is not None else f"{env.spec.domain}/{name}"
    func_docs = {
        name: list(builder.docs[name].values())
        for name in sorted({e.env for e in entries if e.is_multi_turn})
    }
    return Suite(
        domain,
        entries,
        {t.task_id: t for t in tasks if t.task_id in used},
        seed,
        env_dirs,
        func_docs=func_docs,
    )
