"""Run an agent (a model behind an OpenAI-compatible API, or a reference agent) on a suite.

Single-turn entries: one request, the reply decoded into calls (``fc``: the message's tool
calls; ``prompt``: BFCL call strings parsed by :mod:`bfcl_format`), scored by ``check_ast``.

Multi-turn entries run live: the model's calls execute on a fresh ``Session`` of the entry's
environment and their results go back to the model, up to ``max_steps_per_turn`` replies per
user turn; the gold calls of each turn run on a second session. After each turn
``check_multi_turn`` compares the two states (state hashes) and looks for the gold results among
the model's; the state-based reward (``score_trajectory``) scores the whole episode. User turns
are the task's sub-goals (BFCL's multi-turn format) or, with ``user="simulator"``, come from a
user simulator built for the task (then the episode is checked as one turn).

Entries run concurrently (threads, ``concurrency`` at a time); results come back in suite order.
A model that fails after its retries fails that entry (``error_type`` ``model_error``), not the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import EnvFactoryError, ModelError, RuntimeToolError
from ..llm import ChatMessage, ChatResponse
from ..reward import CallRecord, score_trajectory
from ..spec import Task
from .agents import Agent, AgentContext
from .bfcl_format import BfclFormatError, format_call, parse_call, parse_calls
from .checker import check_ast
from .multi_turn import TurnExecution, check_multi_turn
from .suites import CATEGORIES, Suite, SuiteEntry, SuiteError

__all__ = [
    "PROMPT_SYSTEM",
    "EvalConfig",
    "EntryResult",
    "EvalReport",
    "run_eval",
    "openai_tools",
    "decode_reply",
    "load_suite_envs",
]

PROMPT_SYSTEM = (
    "You are an expert in composing functions. You are given a question and a set of possible "
    "functions. Based on the question, you will need to make one or more function/tool calls to "
    "achieve the purpose. If none of the functions can be used, point it out. If the given question "
    "lacks the parameters required by the function, also point it out. You should only return the "
    "function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]\n"
    "You SHOULD NOT include any other text in the response.\n\n"
    "At each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request "
    "to the best of your ability. Once you have no more functions to call, reply in plain text.\n\n"
    "Here is a list of functions in JSON format that you can invoke.\n{functions}\n"
)
FC_MULTI_TURN_SYSTEM = (
    "You are a helpful assistant with tools. Use them to do what the user asks; when the request "
    "is done, reply to the user in plain text."
)
_TOOL_KINDS_READ = frozenset({"get", "list"})


@dataclass
class EvalConfig:
    categories: tuple[str, ...] = CATEGORIES
    mode: Literal["fc", "prompt"] = "fc"
    concurrency: int = 8
    limit: int | None = None  # entries per category
    max_steps_per_turn: int = 10
    user: Literal["subgoals", "simulator"] = "subgoals"
    matching: Literal["greedy", "optimal"] = "greedy"
    seed: int = 0


@dataclass
class EntryResult:
    """One entry's outcome. ``model_calls``: single-turn decoded calls (None: did not decode);
    ``turns``: multi-turn, per turn the calls made (call strings), their results and the verdict."""

    id: str
    category: str
    valid: bool
    error_type: str | None = None
    errors: list[str] = field(default_factory=list)
    model_calls: list[dict[str, Any]] | None = None
    raw_output: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)
    reward: dict[str, Any] | None = None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EvalReport:
    suite: str
    agent: str
    mode: str
    config: dict[str, Any]
    results: list[EntryResult]
    wall_s: float = 0.0


# ----------------------------------------------------------------------------- conversions

_OPENAI_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def _openai_schema(prop: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k not in ("type", "items", "properties")}
    kind = prop.get("type")
    kind = _OPENAI_TYPES.get(kind, kind) if kind else None
    if kind:
        out["type"] = kind
    if "items" in prop:
        out["items"] = _openai_schema(prop["items"])
    if "properties" in prop:
        out["properties"] = {k: _openai_schema(v) for k, v in prop["properties"].items()}
    return out


def openai_tools(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs -> OpenAI ``tools`` (``dict`` -> ``object``, ``float`` -> ``number``)."""
    return [
        {"type": "function", "function": {
            "name": f["name"],
            "description": f.get("description", ""),
            "parameters": _openai_schema(f.get("parameters", {"type": "dict", "properties": {}})),
        }}
        for f in functions
    ]


def decode_reply(response: ChatResponse, mode: str) -> list[dict[str, Any]] | None:
    """The calls in a reply, in BFCL's decoded form; ``[]`` for none, None when they do not decode."""
    if mode == "fc":
        calls = response.tool_calls
        if any(not c.is_valid for c in calls):
            return None
        return [{c.name: dict(c.arguments)} for c in calls]
    text = response.content.strip()
    if not text:
        return None
    try:
        return parse_calls(text)
    except BfclFormatError:
        return None


def _prompt_messages(entry: SuiteEntry, mode: str) -> list[ChatMessage]:
    if mode == "prompt":
        return [ChatMessage.system(PROMPT_SYSTEM.format(functions=json.dumps(entry.functions, indent=1)))]
    if entry.is_multi_turn:
        return [ChatMessage.system(FC_MULTI_TURN_SYSTEM)]
    return []


def _result_text(value: Any) -> str:
    # Both runs go through this, so equal results give equal strings.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class _Usage:
    def __init__(self) -> None:
        self.requests = self.prompt = self.completion = 0
        self.latency = 0.0

    def add(self, response: ChatResponse, started: float) -> None:
        self.requests += 1
        self.prompt += response.usage.prompt_tokens
        self.completion += response.usage.completion_tokens
        self.latency += response.latency_s or (time.perf_counter() - started)

    def fill(self, result: EntryResult) -> EntryResult:
        result.requests, result.prompt_tokens = self.requests, self.prompt
        result.completion_tokens, result.latency_s = self.completion, round(self.latency, 6)
        return result


# ----------------------------------------------------------------------------- single-turn


def _run_single(entry: SuiteEntry, agent: Agent, config: EvalConfig) -> EntryResult:
    usage = _Usage()
    messages = _prompt_messages(entry, config.mode) + [ChatMessage.model_validate(m) for m in entry.question[0]]
    ctx = AgentContext(entry, 0, 0, config.mode, messages, openai_tools(entry.functions))
    started = time.perf_counter()
    try:
        response = agent.act(ctx)
    except ModelError as e:
        return usage.fill(EntryResult(entry.id, entry.category, False, "model_error", [str(e)], model_error=str(e)))
    usage.add(response, started)
    calls = decode_reply(response, config.mode)
    verdict = check_ast(entry.functions, calls, entry.ground_truth, entry.category, matching=config.matching)
    raw = response.content if config.mode == "prompt" or not response.tool_calls else \
        json.dumps([c.to_openai()["function"] for c in response.tool_calls])
    return usage.fill(EntryResult(
        entry.id, entry.category, verdict.valid, verdict.error_type, [str(e)[:500] for e in verdict.errors],
        model_calls=calls, raw_output=raw,
    ))


# ----------------------------------------------------------------------------- multi-turn


class _Episode:
    """One live run of a multi-turn entry: the model's session, the gold session, the records."""

    def __init__(self, entry: SuiteEntry, env: Any, agent: Agent, config: EvalConfig, task: Task | None):
        self.entry, self.env, self.agent, self.config, self.task = entry, env, agent, config, task
        self.kinds = {t.name: str(getattr(t.kind, "value", t.kind)) for t in env.spec.tools}
        self.model = env.new_session()
        self.gold = env.new_session()
        self.messages = _prompt_messages(entry, config.mode)
        self.tools = openai_tools(entry.functions)
        self.records: list[CallRecord] = []
        self.usage = _Usage()
        self.final_text = ""
        self.model_error: str | None = None

    def close(self) -> None:
        self.model.close()
        self.gold.close()

    def execute(self, session: Any, tool: str, args: dict[str, Any], record: bool) -> str:
        try:
            out = session.call(tool, args)
            ok, error = True, None
        except RuntimeToolError as e:
            out = e.to_dict()
            ok, error = False, out.get("error")
        if record:
            self.records.append(CallRecord(tool=tool, args=args, ok=ok, error=error,
                                           writes=ok and self.kinds.get(tool) not in _TOOL_KINDS_READ))
        return _result_text(out)

    def gold_turn(self, calls: Sequence[str]) -> TurnExecution:
        results = []
        for text in calls:
            (tool, args), = parse_call(text).items()
            results.append(self.execute(self.gold, tool, args, record=False))
        return TurnExecution(calls=tuple(calls), results=tuple(results))

    def model_turn(self, turn: int, last_turn: bool) -> TurnExecution:
        calls: list[str] = []
        results: list[str] = []
        for step in range(self.config.max_steps_per_turn):
            ctx = AgentContext(self.entry, turn, step, self.config.mode, list(self.messages), self.tools,
                               self.task, last_turn)
            started = time.perf_counter()
            try:
                response = self.agent.act(ctx)
            except ModelError as e:
                self.model_error = str(e)
                break
            self.usage.add(response, started)
            decoded = decode_reply(response, self.config.mode)
            if self.config.mode == "fc":
                tool_calls = response.tool_calls
                self.messages.append(ChatMessage.assistant(response.content or None, tool_calls or None))
                if not tool_calls:
                    self.final_text = response.content
                    break
                for call in tool_calls:
                    calls.append(format_call({call.name: call.arguments}))
                    if call.is_valid:
                        result = self.execute(self.model, call.name, dict(call.arguments), record=True)
                    else:
                        self.records.append(CallRecord(tool=call.name, args={}, ok=False, error="invalid_argument"))
                        result = json.dumps({"error": "invalid_argument", "message": call.parse_error})
                    results.append(result)
                    self.messages.append(ChatMessage.tool(result, call.id, call.name))
            else:
                self.messages.append(ChatMessage.assistant(response.content))
                if not decoded:
                    self.final_text = response.content
                    break
                lines = []
                for call in decoded:
                    (tool, args), = call.items()
                    calls.append(format_call(call))
                    result = self.execute(self.model, tool, args, record=True)
                    results.append(result)
                    lines.append(f"{format_call(call)} -> {result}")
                self.messages.append(ChatMessage.user("Results of your function calls:\n" + "\n".join(lines)))
        return TurnExecution(calls=tuple(calls), results=tuple(results))

    def state_diff(self) -> dict[str, Any]:
        model_hash, gold_hash = self.model.state_hash(), self.gold.state_hash()
        if model_hash == gold_hash:
            return {}
        return {self.entry.env: {"state_hash": {"model": model_hash, "ground_truth": gold_hash}}}


def _make_user(factory: Callable[[Task], Any] | None, task: Task | None) -> Any:
    if task is None:
        raise SuiteError("the simulator needs the entry's task (tasks.jsonl in the suite folder)")
    if factory is None:
        # the simulator is synth's (``envfactory.synth.UserSimulator``); the harness does not import synth
        raise SuiteError("user='simulator' needs a user_factory (e.g. lambda task: UserSimulator(task, seed=...)); "
                         "or run with user='subgoals'")
    return factory(task)


def _run_multi_turn(entry: SuiteEntry, agent: Agent, config: EvalConfig, env: Any, task: Task | None,
                    user_factory: Callable[[Task], Any] | None) -> EntryResult:
    if entry.initial_state != "template":
        return EntryResult(entry.id, entry.category, False, "suite_error",
                           [f"initial state {entry.initial_state!r} is not supported (only 'template')"])
    episode = _Episode(entry, env, agent, config, task)
    try:
        if entry.initial_state_hash and episode.model.state_hash() != entry.initial_state_hash:
            return EntryResult(entry.id, entry.category, False, "suite_error",
                               [f"environment {entry.env} changed since the suite was built (state hash differs); "
                                "rebuild the suite"])
        model_turns: list[TurnExecution] = []
        gold_turns: list[TurnExecution] = []
        diffs: list[dict[str, Any]] = []
        if config.user == "simulator":
            user = _make_user(user_factory, task)
            message: str | None = user.opening()
            turn, calls, results = 0, [], []
            limit = task.turn_limit if task else 30
            while message is not None and turn < limit and episode.model_error is None:
                episode.messages.append(ChatMessage.user(message))
                done = episode.model_turn(min(turn, len(entry.ground_truth) - 1), True)
                calls += done.calls
                results += done.results
                turn += 1
                message = user.reply(episode.final_text)
            model_turns.append(TurnExecution(tuple(calls), tuple(results)))
            gold_turns.append(episode.gold_turn([c for t in entry.ground_truth for c in t]))
            diffs.append(episode.state_diff())
        else:
            for turn, turn_messages in enumerate(entry.question):
                gold_turns.append(episode.gold_turn(entry.ground_truth[turn] if turn < len(entry.ground_truth) else []))
                if episode.model_error is None:
                    episode.messages += [ChatMessage.model_validate(m) for m in turn_messages]
                    model_turns.append(episode.model_turn(turn, turn == len(entry.question) - 1))
                else:
                    model_turns.append(TurnExecution())
                diffs.append(episode.state_diff())
        verdict = check_multi_turn(model_turns, gold_turns, lambda t: diffs[t])
        reward = None
        if task is not None:
            reward = score_trajectory(
                task.reward, final_state_hash=episode.model.state_hash(),
                final_diff=episode.model.diff().to_dict(), calls=episode.records, final_answer=episode.final_text,
            ).model_dump()
        turns = [
            {"calls": list(m.calls), "results": [r[:2000] for r in m.results], "gold_calls": list(g.calls),
             "valid": v.valid, "checked": v.checked, "error_type": v.error_type}
            for m, g, v in zip(model_turns, gold_turns, verdict.turns)
        ]
        error_type = "model_error" if episode.model_error and not verdict.valid else verdict.error_type
        errors = list(verdict.errors) + ([episode.model_error] if episode.model_error else [])
        return episode.usage.fill(EntryResult(
            entry.id, entry.category, verdict.valid, error_type, errors, raw_output=episode.final_text,
            turns=turns, reward=reward, model_error=episode.model_error,
        ))
    finally:
        episode.close()


# ----------------------------------------------------------------------------- the run


def load_suite_envs(suite: Suite, domains_root: str | Path) -> dict[str, Any]:
    """The environments a suite's multi-turn entries run against, from ``domains_root``."""
    from ..runtime import load_environment  # the runtime is needed only for multi-turn entries

    root = Path(domains_root)
    envs = {}
    needed = {e.env for e in suite.entries if e.is_multi_turn}
    for name in sorted(needed):
        folder = root / suite.envs.get(name, f"{suite.domain}/{name}")
        if not (folder / "env.yaml").is_file():
            raise SuiteError(f"environment {name!r} of suite {suite.domain!r} not found at {folder}")
        envs[name] = load_environment(folder)
    return envs


def run_eval(
    suite: Suite,
    agent: Agent,
    *,
    config: EvalConfig | None = None,
    envs: Mapping[str, Any] | None = None,
    domains_root: str | Path | None = None,
    user_factory: Callable[[Task], Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Evaluate ``agent`` on ``suite``; see the module docstring.

    envs: environments by name for multi-turn entries (else loaded from ``domains_root``).
    user_factory: builds the user simulator for a task; required with ``user="simulator"``
        (the CLI passes ``envfactory.synth.UserSimulator``).
    on_progress(done, total): called from the calling thread as entries finish.
    """
    config = config or EvalConfig()
    unknown = sorted(set(config.categories) - set(CATEGORIES))
    if unknown:
        raise SuiteError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    if config.mode not in ("fc", "prompt"):
        raise SuiteError(f"mode must be 'fc' or 'prompt', got {config.mode!r}")
    if config.concurrency < 1 or config.max_steps_per_turn < 1:
        raise SuiteError("concurrency and max_steps_per_turn must be >= 1")
    if config.limit is not None and config.limit < 0:
        raise SuiteError(f"limit must be >= 0 entries per category, got {config.limit}")
    entries: list[SuiteEntry] = []
    for category in CATEGORIES:
        if category in config.categories:
            chosen = suite.by_category(category)
            entries += chosen[: config.limit] if config.limit is not None else chosen
    if any(e.is_multi_turn for e in entries) and envs is None:
        if domains_root is None:
            from ..config import project_paths

            domains_root = project_paths().domains_dir
        envs = load_suite_envs(suite, domains_root)

    def one(entry: SuiteEntry) -> EntryResult:
        if entry.is_multi_turn:
            env = (envs or {}).get(entry.env)
            if env is None:
                return EntryResult(entry.id, entry.category, False, "suite_error", [f"no environment {entry.env!r}"])
            return _run_multi_turn(entry, agent, config, env, suite.tasks.get(entry.task_id or ""), user_factory)
        return _run_single(entry, agent, config)

    started = time.perf_counter()
    results: dict[str, EntryResult] = {}
    with ThreadPoolExecutor(max_workers=min(config.concurrency, max(1, len(entries)))) as pool:
        futures = {pool.submit(one, e): e for e in entries}
        for done, future in enumerate(as_completed(futures), 1):
            entry = futures[future]
            try:
                results[entry.id] = future.result()
            except EnvFactoryError as e:  # a bad entry is data; our own bugs still raise
                results[entry.id] = EntryResult(entry.id, entry.category, False, "suite_error", [str(e)])
            if on_progress is not None:
                on_progress(done, len(entries))
    return EvalReport(
        suite=suite.domain,
        agent=agent.name,
        mode=config.mode,
        config={k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()},
        results=[results[e.id] for e in entries],
        wall_s=round(time.perf_counter() - started, 3),
    )
