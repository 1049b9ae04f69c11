"""Evaluation suites in BFCL's own file format, built from our tasks and environments.

A suite is one folder per domain, laid out like BFCL's data folder so BFCL's tooling can read
the single-turn files as they are::

    eval/suites/<domain>/
        BFCL_v3_<domain>_<category>.json                  questions (JSON Lines)
        possible_answer/BFCL_v3_<domain>_<category>.json  ground truth (not for irrelevance)
        manifest.json                                     provenance: entry -> task, env, steps
        tasks.jsonl                                       the tasks behind multi-turn entries

Categories and how each is made (``build_suite``):

- ``simple``: one function offered, one call expected. The question is a single-step goal
  (a sub-goal served by one gold call, or a one-call task); values the call needs that the
  sentence does not state are appended as "Details: ..." so the question is answerable.
- ``multiple``: the same kind of question with the gold function among distractors from the
  same environment (other entities only, so no distractor serves the intent too).
- ``parallel``: two or three such questions for the same function, asked at once.
- ``parallel_multiple``: two or three questions for different functions, asked at once.
- ``irrelevance``: a question offered only functions that cannot serve it: another
  domain's functions when there is one, else its own environment's functions on other
  entities than the one it is about.
- ``multi_turn``: a task with two or more gold calls, one user turn per sub-goal, the gold
  calls of each turn as call strings, and the environment and initial state to run against
  (``involved_classes`` = [env], ``initial_config`` = {env: {state, state_hash}}).

Accepted values: the gold value and forms the API treats alike (a float for an integer-valued
number, "T" or a space in a date-time, any order of a set filter); ``""`` marks a parameter
that may be omitted (masked arguments, paging, parameters at their default). Calls use
keyword arguments only. The same tasks, environments and seed give the same bytes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SuiteError
from ..spec import Task, load_tasks, tool_input_schema, write_tasks
from ..text import format_plain
from .bfcl_format import format_call, load_jsonl, write_jsonl
from .categories import CATEGORIES, SINGLE_TURN_CATEGORIES

__all__ = [
    "CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "SuiteError",
    "SuiteEntry",
    "Suite",
    "bfcl_function_doc",
    "build_suite",
    "write_suite",
    "load_suite",
    "suite_file_name",
]

PAGING_PARAMS = frozenset({"limit", "offset", "sort_by", "sort_order"})
MANIFEST = "manifest.json"
TASKS_FILE = "tasks.jsonl"
FORMAT_VERSION = "BFCL_v3"


def suite_file_name(domain: str, category: str) -> str:
    return f"{FORMAT_VERSION}_{domain}_{category}.json"


@dataclass
class SuiteEntry:
    """One question entry with its ground truth and where it came from.

    ``question``: per turn, the messages of that turn (one turn for single-turn categories).
    ``ground_truth``: AST possible answers (single-turn; ``[]`` for irrelevance) or, for
    multi-turn, per turn the gold call strings.
    """

    id: str
    category: str
    question: list[list[dict[str, Any]]]
    functions: list[dict[str, Any]]
    ground_truth: list[Any]
    env: str
    domain: str
    task_id: str | None = None
    steps: list[int] = field(default_factory=list)
    initial_state: str = "template"
    initial_state_hash: str | None = None

    @property
    def is_multi_turn(self) -> bool:
        return self.category == "multi_turn"

    def question_entry(self) -> dict[str, Any]:
        """The entry as BFCL's question file holds it."""
        data: dict[str, Any] = {"id": self.id, "question": self.question, "function": self.functions}
        if self.is_multi_turn:
            data["initial_config"] = {self.env: {"state": self.initial_state, "state_hash": self.initial_state_hash}}
            data["path"] = [name for turn in self.ground_truth for name in (_call_name(c) for c in turn)]
            data["involved_classes"] = [self.env]
        return data

    def answer_entry(self) -> dict[str, Any]:
        return {"id": self.id, "ground_truth": self.ground_truth}


@dataclass
class Suite:
    """A domain's entries, by category, and the tasks behind the multi-turn ones."""

    domain: str
    entries: list[SuiteEntry]
    tasks: dict[str, Task] = field(default_factory=dict)
    seed: int = 0
    envs: dict[str, str] = field(default_factory=dict)  # env name -> folder under the domains root
    path: Path | None = None

    def by_category(self, category: str) -> list[SuiteEntry]:
        return [e for e in self.entries if e.category == category]

    @property
    def counts(self) -> dict[str, int]:
        return {c: len(self.by_category(c)) for c in CATEGORIES if self.by_category(c)}


# ----------------------------------------------------------------------------- function docs

_BFCL_TYPES = {"string": "string", "integer": "integer", "number": "float", "boolean": "boolean",
               "array": "array", "object": "dict"}


def _bfcl_property(schema: Mapping[str, Any]) -> dict[str, Any]:
    if "anyOf" in schema:  # nullable: the non-null branch
        base = next((s for s in schema["anyOf"] if s.get("type") != "null"), {"type": "string"})
        schema = {**base, **{k: v for k, v in schema.items() if k != "anyOf"}}
    out: dict[str, Any] = {"type": _BFCL_TYPES.get(schema.get("type", "string"), "string")}
    description = schema.get("description", "")
    fmt = schema.get("format")
    if fmt == "date":
        description = (description + " " if description else "") + "Format: YYYY-MM-DD."
    elif fmt == "date-time":
        description = (description + " " if description else "") + "Format: YYYY-MM-DDTHH:MM:SS."
    if description:
        out["description"] = description
    if "enum" in schema:
        out["enum"] = list(schema["enum"])
    if "items" in schema:
        out["items"] = _bfcl_property(schema["items"])
    if "default" in schema:
        out["default"] = schema["default"]
    return out


def bfcl_function_doc(tool: Any) -> dict[str, Any]:
    """A ``ToolSpec`` as a BFCL function doc (``parameters.type`` is ``dict``, numbers ``float``)."""
    schema = tool_input_schema(tool)
    return {
        "name": tool.name,
        "description": tool.description or tool.name.replace("_", " "),
        "parameters": {
            "type": "dict",
            "properties": {k: _bfcl_property(v) for k, v in schema.get("properties", {}).items()},
            "required": list(schema.get("required", [])),
        },
    }


# ----------------------------------------------------------------------------- accepted values


def _forms(value: Any, prop: Mapping[str, Any]) -> list[Any]:
    declared = prop.get("type")
    if declared == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if declared == "integer" and isinstance(value, float) and value.is_integer():
        return [int(value)]
    if declared == "string" and isinstance(value, str):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", value):
            return [value, value.replace("T", " ")]
        return [value]
    if declared == "array" and isinstance(value, list):
        item_prop = prop.get("items", {})
        items = [(_forms(v, item_prop) or [v])[0] for v in value]
        if 1 < len(items) <= 3:
            seen: list[list[Any]] = []
            for perm in itertools.permutations(items):
                if list(perm) not in seen:
                    seen.append(list(perm))
            return seen
        return [items]
    if declared == "dict" and isinstance(value, dict):
        return [{k: [v] for k, v in value.items()}]
    return [value]


def _possible_answer(doc: Mapping[str, Any], args: Mapping[str, Any], masked: Iterable[str]) -> dict[str, Any]:
    masked = set(masked)
    properties = doc["parameters"]["properties"]
    accepted: dict[str, list[Any]] = {}
    for param, prop in properties.items():
        if param in args:
            forms = _forms(args[param], prop)
            if param in masked or param in PAGING_PARAMS or ("default" in prop and args[param] == prop["default"]):
                forms = [*forms, ""]
            accepted[param] = forms
        elif "default" in prop:
            accepted[param] = [*_forms(prop["default"], prop), ""]
    return {doc["name"]: accepted}


# ----------------------------------------------------------------------------- questions


def _label(param: str) -> str:
    return param.replace("_", " ")


def _is_stated(param: str, value: Any, text: str) -> bool:
    lowered = text.lower()
    if isinstance(value, bool):
        return _label(param) in lowered
    if isinstance(value, (int, float)):
        plain = lowered.replace(",", "")
        forms = {str(value)}
        if isinstance(value, float) and value.is_integer():
            forms.add(str(int(value)))
        return any(re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", plain) for f in forms)
    if isinstance(value, list):
        return all(_is_stated(param, v, text) for v in value)
    if isinstance(value, dict):
        return all(_is_stated(k, v, text) for k, v in value.items())
    return str(value).lower() in lowered


def _question_text(text: str, args: Mapping[str, Any], optional: set[str]) -> str:
    """The sentence, plus the values the call needs that it does not state."""
    text = text.strip()
    missing = [(p, v) for p, v in args.items() if p not in optional and not _is_stated(p, v, text)]
    if not missing:
        return text
    if text and text[-1] not in ".?!":
        text += "."
    details = "; ".join(f"{_label(p)}: {format_plain(v)}" for p, v in missing)
    return f"{text} Details: {details}."


@dataclass
class _Candidate:
    """A single-call question: one gold step of one task, stated by one sentence."""

    task: Task
    step: int
    text: str

    @property
    def tool(self) -> str:
        return self.task.gold[self.step].tool

    @property
    def key(self) -> tuple[str, str]:
        return (self.task.env, self.tool)


def _candidates(tasks: Sequence[Task]) -> list[_Candidate]:
    out = []
    for task in tasks:
        if task.initial_state != "template":
            continue
        found = False
        for sub in task.subgoals:
            if len(sub.steps) == 1 and 0 <= sub.steps[0] < len(task.gold):
                out.append(_Candidate(task, sub.steps[0], sub.text))
                found = True
        if not found and len(task.gold) == 1:
            out.append(_Candidate(task, 0, task.goal))
    return out


def _call_name(call: str) -> str:
    return call.split("(", 1)[0]


def _rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("/".join([str(seed), *parts]).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


# ----------------------------------------------------------------------------- building


class _Builder:
    def __init__(self, envs: Mapping[str, Any], other_envs: Sequence[Any], seed: int, domain: str):
        self.envs = envs
        self.other_envs = [e for e in other_envs if e.spec.name not in envs]
        self.seed = seed
        self.domain = domain
        self.docs = {name: {t.name: bfcl_function_doc(t) for t in env.spec.tools} for name, env in envs.items()}
        self.entity = {name: {t.name: t.entity for t in env.spec.tools} for name, env in envs.items()}
        self.counters: dict[str, int] = {}

    def next_id(self, category: str) -> str:
        n = self.counters.get(category, 0)
        self.counters[category] = n + 1
        return f"{self.domain}_{category}_{n}"

    def single(self, c: _Candidate) -> tuple[str, dict[str, Any], dict[str, Any]]:
        step = c.task.gold[c.step]
        doc = self.docs[c.task.env][step.tool]
        masked = set(step.masked_args) | PAGING_PARAMS
        text = _question_text(c.text, step.args, masked)
        return text, doc, _possible_answer(doc, step.args, step.masked_args)

    def distractors(self, env: str, exclude_tools: Iterable[str], k: int, rng: random.Random) -> list[dict[str, Any]]:
        entities = {self.entity[env][t] for t in exclude_tools}
        pool = sorted(t for t, e in self.entity[env].items() if e not in entities)
        return [self.docs[env][t] for t in rng.sample(pool, min(k, len(pool)))]

    def entry(self, category: str, texts: list[str], functions: list[dict[str, Any]], answers: list[Any],
              members: list[_Candidate]) -> SuiteEntry:
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

    # -- categories

    def simple(self, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        out = []
        for c in cands[:n]:
            text, doc, answer = self.single(c)
            out.append(self.entry("simple", [text], [doc], [answer], [c]))
        return out

    def multiple(self, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        out = []
        for c in cands[:n]:
            text, doc, answer = self.single(c)
            rng = _rng(self.seed, "multiple", c.task.task_id, str(c.step))
            functions = self.distractors(c.task.env, [c.tool], 3, rng)
            if not functions:
                continue
            functions.insert(rng.randrange(len(functions) + 1), doc)
            out.append(self.entry("multiple", [text], functions, [answer], [c]))
        return out

    def grouped(self, category: str, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        rng = _rng(self.seed, category)
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
                        and c.task.gold[c.step].args != g.task.gold[g.step].args
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
        out = []
        for group in groups[:n]:
            texts, docs, answers = [], {}, []
            for c in group:
                text, doc, answer = self.single(c)
                texts.append(text)
                docs[doc["name"]] = doc
                answers.append(answer)
            functions = list(docs.values())
            if not same_tool:
                functions += self.distractors(group[0].task.env, [c.tool for c in group], 2, rng)
                rng.shuffle(functions)
            out.append(self.entry(category, texts, functions, answers, group))
        return out

    def irrelevance(self, cands: list[_Candidate], n: int) -> list[SuiteEntry]:
        out = []
        for c in cands[:n]:
            text, _, _ = self.single(c)
            rng = _rng(self.seed, "irrelevance", c.task.task_id, str(c.step))
            if self.other_envs:
                other = self.other_envs[rng.randrange(len(self.other_envs))]
                tools = sorted(other.spec.tools, key=lambda t: t.name)
                functions = [bfcl_function_doc(t) for t in rng.sample(tools, min(4, len(tools)))]
            else:
                functions = self.distractors(c.task.env, [c.tool], 4, rng)
            if not functions:
                continue
            out.append(self.entry("irrelevance", [text], functions, [], [c]))
        return out

    def multi_turn(self, tasks: Sequence[Task], n: int) -> list[SuiteEntry]:
        out = []
        for task in tasks:
            if len(out) >= n:
                break
            if task.initial_state != "template" or len(task.gold) < 2 or task.env not in self.envs:
                continue
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
            turns: list[list[str]] = [[] for _ in texts]
            for i, step in enumerate(task.gold):
                turns[owner[i]].append(format_call({step.tool: step.args}))
            docs = [self.docs[task.env][t.name] for t in self.envs[task.env].spec.tools]
            out.append(SuiteEntry(
                id=self.next_id("multi_turn"),
                category="multi_turn",
                question=[[{"role": "user", "content": t}] for t in texts],
                functions=docs,
                ground_truth=turns,
                env=task.env,
                domain=task.domain,
                task_id=task.task_id,
                steps=list(range(len(task.gold))),
                initial_state=task.initial_state,
                initial_state_hash=task.reward.initial_state_hash,
            ))
        return out


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
    unknown = sorted(set(categories) - set(CATEGORIES))
    if unknown:
        raise SuiteError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    tasks = sorted((t for t in tasks if t.env in envs), key=lambda t: t.task_id)
    if not tasks:
        raise SuiteError("no tasks for these environments: build tasks first (envfactory.synth.tasks.build_tasks)")
    domain = domain or tasks[0].domain
    builder = _Builder(envs, other_envs, seed, domain)
    cands = _candidates(tasks)
    _rng(seed, "candidates").shuffle(cands)
    # Deal candidates out so categories use different questions while there are enough.
    share = max(1, len(cands) // 3) if cands else 0
    dealt = {
        "simple": cands[:share] + cands[share:],
        "multiple": cands[share:2 * share] + cands[:share] + cands[2 * share:],
        "irrelevance": cands[2 * share:] + cands[:2 * share],
    }
    entries: list[SuiteEntry] = []
    for category in CATEGORIES:
        if category not in categories:
            continue
        if category == "simple":
            entries += builder.simple(dealt["simple"], n_per_category)
        elif category == "multiple":
            entries += builder.multiple(dealt["multiple"], n_per_category)
        elif category in ("parallel", "parallel_multiple"):
            entries += builder.grouped(category, cands, n_per_category)
        elif category == "irrelevance":
            entries += builder.irrelevance(dealt["irrelevance"], n_per_category)
        else:
            mt_tasks = list(tasks)
            _rng(seed, "multi_turn").shuffle(mt_tasks)
            entries += builder.multi_turn(mt_tasks, n_per_category)
    used = {e.task_id for e in entries if e.is_multi_turn}
    env_dirs = {}
    for name, env in envs.items():
        path = getattr(env, "path", None)
        env_dirs[name] = f"{env.spec.domain}/{path.name}" if path is not None else f"{env.spec.domain}/{name}"
    return Suite(domain, entries, {t.task_id: t for t in tasks if t.task_id in used}, seed, env_dirs)


# ----------------------------------------------------------------------------- files


def write_suite(suite: Suite, out_dir: str | Path) -> Path:
    """Write the suite's files under ``out_dir`` (the domain's folder); returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in list(out.glob(f"{FORMAT_VERSION}_*.json")) + list((out / "possible_answer").glob("*.json")):
        old.unlink()
    manifest: dict[str, Any] = {
        "format": f"{FORMAT_VERSION} (BFCL question / possible_answer JSON Lines)",
        "domain": suite.domain,
        "seed": suite.seed,
        "envs": dict(sorted(suite.envs.items())),
        "counts": suite.counts,
        "files": {},
        "entries": {},
    }
    for category in CATEGORIES:
        entries = suite.by_category(category)
        if not entries:
            continue
        name = suite_file_name(suite.domain, category)
        write_jsonl(out / name, [e.question_entry() for e in entries])
        files = {"question": name}
        if category != "irrelevance":
            write_jsonl(out / "possible_answer" / name, [e.answer_entry() for e in entries])
            files["possible_answer"] = f"possible_answer/{name}"
        manifest["files"][category] = files
        for e in entries:
            manifest["entries"][e.id] = {"category": category, "env": e.env, "domain": e.domain,
                                         "task_id": e.task_id, "steps": e.steps}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tasks_path = out / TASKS_FILE
    if suite.tasks:
        write_tasks([suite.tasks[k] for k in sorted(suite.tasks)], tasks_path)
    elif tasks_path.exists():
        tasks_path.unlink()
    suite.path = out
    return out


def load_suite(path: str | Path) -> Suite:
    """Read a suite folder written by :func:`write_suite`."""
    folder = Path(path)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise SuiteError(f"{folder}: not a suite folder (no {MANIFEST}); build one with 'envfactory eval-suite'")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as e:
        raise SuiteError(f"{manifest_path}: {e}") from e
    if not isinstance(manifest, dict):
        raise SuiteError(f"{manifest_path}: a suite manifest must be a JSON object")
    tasks = {t.task_id: t for t in load_tasks(folder / TASKS_FILE)} if (folder / TASKS_FILE).exists() else {}
    try:
        entries = _load_entries(folder, manifest)
    except (KeyError, TypeError, AttributeError) as e:  # a hand-edited or truncated suite
        raise SuiteError(f"{folder}: malformed suite ({type(e).__name__}: {e}); rebuild it with "
                         "'envfactory eval-suite'") from e
    return Suite(manifest.get("domain", folder.name), entries, tasks, manifest.get("seed", 0),
                 manifest.get("envs", {}), folder)


def _load_entries(folder: Path, manifest: dict[str, Any]) -> list[SuiteEntry]:
    entries: list[SuiteEntry] = []
    for category in CATEGORIES:
        files = manifest.get("files", {}).get(category)
        if not files:
            continue
        questions = load_jsonl(folder / files["question"])
        answers = {a["id"]: a["ground_truth"] for a in load_jsonl(folder / files["possible_answer"])} \
            if "possible_answer" in files else {}
        for q in questions:
            meta = manifest["entries"].get(q["id"], {})
            config = next(iter((q.get("initial_config") or {}).values()), {})
            entries.append(SuiteEntry(
                id=q["id"],
                category=category,
                question=q["question"],
                functions=q.get("function", []),
                ground_truth=answers.get(q["id"], []),
                env=meta.get("env", ""),
                domain=meta.get("domain", manifest.get("domain", "")),
                task_id=meta.get("task_id"),
                steps=meta.get("steps", []),
                initial_state=config.get("state", "template"),
                initial_state_hash=config.get("state_hash"),
            ))
    return entries
