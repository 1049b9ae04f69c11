"""One live run of a multi-turn entry: the model's session, the gold session, the loop.

The loop follows BFCL's inference loop by default (``EvalConfig.loop == "bfcl"``; see
``bfcl_eval/model_handler/base_handler.py``): per user turn the model replies until a reply
has no call or does not decode (malformed tool-call arguments end the turn, nothing of that
reply runs); a step count above ``max_steps_per_turn`` (BFCL: 20) force-quits the episode, so
the turns not reached make it ``multi_turn:force_terminated``. A turn whose question is empty
is where held-out functions come back (miss_func): the model gets BFCL's "I have updated some
more functions" message and the new tools. ``loop="lenient"`` keeps envfactory's earlier
loop: a malformed call gets an error result and the turn goes on; a turn is cut after
``max_steps_per_turn`` replies and scored as it stands.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ModelError, RuntimeToolError
from ..llm import ChatMessage, ChatResponse
from ..reward import CallRecord, score_trajectory
from ..spec import Task
from .agents import Agent, AgentContext
from .bfcl_format import format_call, parse_call
from .conversation import (
    ADDITIONAL_FUNCTION_PROMPT,
    EntryResult,
    EvalConfig,
    Usage,
    decode_reply,
    openai_tools,
    prompt_messages,
)
from .multi_turn import TurnExecution, check_multi_turn
from .suite_model import SuiteEntry
from .suites import SuiteError

__all__ = ["run_multi_turn"]

_TOOL_KINDS_READ = frozenset({"get", "list"})


def _result_text(value: Any) -> str:
    # Both runs go through this, so equal results give equal strings.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class _Episode:
    def __init__(self, entry: SuiteEntry, env: Any, agent: Agent, config: EvalConfig, task: Task | None):
        self.entry, self.env, self.agent, self.config, self.task = entry, env, agent, config, task
        self.kinds = {t.name: str(getattr(t.kind, "value", t.kind)) for t in env.spec.tools}
        self.model = env.new_session()
        self.gold = env.new_session()
        self.messages = prompt_messages(entry, config.mode)
        self.tools = openai_tools(entry.functions)
        self.records: list[CallRecord] = []
        self.usage = Usage()
        self.final_text = ""
        self.model_error: str | None = None
        self.force_quit = False

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
            self.records.append(
                CallRecord(
                    tool=tool,
                    args=args,
                    ok=ok,
                    error=error,
                    writes=ok and self.kinds.get(tool) not in _TOOL_KINDS_READ,
                )
            )
        return _result_text(out)

    def gold_turn(self, calls: Sequence[str]) -> TurnExecution:
        results = []
        for text in calls:
            ((tool, args),) = parse_call(text).items()
            results.append(self.execute(self.gold, tool, args, record=False))
        return TurnExecution(calls=tuple(calls), results=tuple(results))

    def open_turn(self, turn: int, turn_messages: list[dict[str, Any]]) -> None:
        """Add a user turn; an empty one brings held-out functions back (BFCL's miss_func)."""
        if str(turn) in self.entry.missed_function:
            functions = self.entry.functions_at(turn)
            self.tools = openai_tools(functions)
            text = ADDITIONAL_FUNCTION_PROMPT
            if self.config.mode == "prompt":
                back = [f for f in functions if f not in self.entry.functions_at(turn - 1)]
                text = json.dumps(back, indent=1) + "\n" + text
            self.messages.append(ChatMessage.user(text))
        self.messages += [ChatMessage.model_validate(m) for m in turn_messages]

    def _fc_step(self, response: ChatResponse, calls: list[str], results: list[str]) -> bool:
        """Run one fc reply; False when the turn ends."""
        tool_calls = response.tool_calls
        malformed = any(not c.is_valid for c in tool_calls)
        if malformed and self.config.loop == "bfcl":
            # BFCL: the reply does not decode, nothing of it runs, the turn ends. The message is
            # kept without its calls, so the conversation stays one an API accepts.
            self.messages.append(ChatMessage.assistant(response.content or "(malformed tool call)"))
            return False
        self.messages.append(ChatMessage.assistant(response.content or None, tool_calls or None))
        if not tool_calls:
            self.final_text = response.content
            return False
        for call in tool_calls:
            calls.append(format_call({call.name: call.arguments}))
            if call.is_valid:
                result = self.execute(self.model, call.name, dict(call.arguments), record=True)
            else:
                self.records.append(CallRecord(tool=call.name, args={}, ok=False, error="invalid_argument"))
                result = json.dumps({"error": "invalid_argument", "message": call.parse_error})
            results.append(result)
            self.messages.append(ChatMessage.tool(result, call.id, call.name))
        return True

    def _prompt_step(self, response: ChatResponse, calls: list[str], results: list[str]) -> bool:
        self.messages.append(ChatMessage.assistant(response.content))
        decoded = decode_reply(response, "prompt")
        if not decoded:
            self.final_text = response.content
            return False
        lines = []
        for call in decoded:
            ((tool, args),) = call.items()
            calls.append(format_call(call))
            result = self.execute(self.model, tool, args, record=True)
            results.append(result)
            lines.append(f"{format_call(call)} -> {result}")
        self.messages.append(ChatMessage.user("Results of your function calls:\n" + "\n".join(lines)))
        return True

    def model_turn(self, turn: int, last_turn: bool) -> TurnExecution:
        calls: list[str] = []
        results: list[str] = []
        steps = 0
        while True:
            if self.config.loop == "lenient" and steps >= self.config.max_steps_per_turn:
                break
            ctx = AgentContext(
                self.entry,
                turn,
                steps,
                self.config.mode,
                list(self.messages),
                self.tools,
                self.task,
                last_turn,
            )
            started = time.perf_counter()
            try:
                response = self.agent.act(ctx)
            except ModelError as e:
                self.model_error = str(e)
                break
            self.usage.add(response, started)
            step = self._fc_step if self.config.mode == "fc" else self._prompt_step
            if not step(response, calls, results):
                break
            steps += 1
            if self.config.loop == "bfcl" and steps > self.config.max_steps_per_turn:
                self.force_quit = True
                break
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
        raise SuiteError(
            "user='simulator' needs a user_factory (e.g. lambda task: UserSimulator(task, seed=...)); "
            "or run with user='subgoals'"
        )
    return factory(task)


def _simulated(episode: _Episode, user_factory: Callable[[Task], Any] | None):
    entry, task = episode.entry, episode.task
    user = _make_user(user_factory, task)
    message: str | None = user.opening()
    turn = 0
    calls: list[Any] = []
    results: list[Any] = []
    limit = task.turn_limit if task else 30
    while message is not None and turn < limit and episode.model_error is None and not episode.force_quit:
        episode.messages.append(ChatMessage.user(message))
        done = episode.model_turn(min(turn, len(entry.ground_truth) - 1), True)
        calls += done.calls
        results += done.results
        turn += 1
        message = user.reply(episode.final_text)
    model_turns = [TurnExecution(tuple(calls), tuple(results))]
    gold_turns = [episode.gold_turn([c for t in entry.ground_truth for c in t])]
    return model_turns, gold_turns, [episode.state_diff()]


def _scripted(episode: _Episode):
    entry = episode.entry
    model_turns: list[TurnExecution] = []
    gold_turns: list[TurnExecution] = []
    diffs: list[dict[str, Any]] = []
    for turn, turn_messages in enumerate(entry.question):
        gold_turns.append(
            episode.gold_turn(entry.ground_truth[turn] if turn < len(entry.ground_truth) else [])
        )
        if episode.force_quit:
            continue  # BFCL stops the episode; the missing turns make it force_terminated
        if episode.model_error is None:
            episode.open_turn(turn, turn_messages)
            model_turns.append(episode.model_turn(turn, turn == len(entry.question) - 1))
        else:
            model_turns.append(TurnExecution())
        diffs.append(episode.state_diff())
    return model_turns, gold_turns, diffs


def _turn_rows(model_turns, gold_turns, verdict) -> list[dict[str, Any]]:
    return [
        {
            "calls": list(m.calls),
            "results": [r[:2000] for r in m.results],
            "gold_calls": list(g.calls),
            "valid": v.valid,
            "checked": v.checked,
            "error_type": v.error_type,
        }
        for m, g, v in zip(model_turns, gold_turns, verdict.turns)
    ]


def run_multi_turn(
    entry: SuiteEntry,
    agent: Agent,
    config: EvalConfig,
    env: Any,
    task: Task | None,
    user_factory: Callable[[Task], Any] | None,
) -> EntryResult:
    """Run and score one multi-turn entry (see the module docstring)."""
    if entry.initial_state != "template":
        return EntryResult(
            entry.id,
            entry.category,
            False,
            "suite_error",
            [f"initial state {entry.initial_state!r} is not supported (only 'template')"],
        )
    episode = _Episode(entry, env, agent, config, task)
    try:
        if entry.initial_state_hash and episode.model.state_hash() != entry.initial_state_hash:
            return EntryResult(
                entry.id,
                entry.category,
                False,
                "suite_error",
                [
                    f"environment {entry.env} changed since the suite was built (state hash differs); "
                    "rebuild the suite"
                ],
            )
        if config.user == "simulator":
            model_turns, gold_turns, diffs = _simulated(episode, user_factory)
        else:
            model_turns, gold_turns, diffs = _scripted(episode)
        verdict = check_multi_turn(model_turns, gold_turns, lambda t: diffs[t])
        reward = None
        if task is not None:
            reward = score_trajectory(
                task.reward,
                final_state_hash=episode.model.state_hash(),
                final_diff=episode.model.diff().to_dict(),
                calls=list[Any](episode.records),
                final_answer=episode.final_text,
            ).model_dump()
        error_type = "model_error" if episode.model_error and not verdict.valid else verdict.error_type
        errors = list(verdict.errors) + ([episode.model_error] if episode.model_error else [])
        if episode.force_quit:
            errors.append(
                f"force-quit after {config.max_steps_per_turn} steps in one turn (BFCL's step limit)"
            )
        return episode.usage.fill(
            EntryResult(
                entry.id,
                entry.category,
                verdict.valid,
                error_type,
                errors,
                raw_output=episode.final_text,
                turns=_turn_rows(model_turns, gold_turns, verdict),
                reward=reward,
                model_error=episode.model_error,
            )
        )
    finally:
        episode.close()
