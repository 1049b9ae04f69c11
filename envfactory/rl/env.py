"""A task as an RL environment: ``reset()`` and ``step(assistant_message)`` over a live session.

    env = envfactory.rl.make(row_or_task, source="trajectories/travel")
    obs = env.reset()                     # {"messages": [system, user], "tools": [...], ...}
    obs, reward, done, info = env.step({"role": "assistant", "tool_calls": [...]})   # tool results
    obs, reward, done, info = env.step("Your booking BK00012 is cancelled.")        # the user answers

An assistant message with tool calls runs them on the session (one transaction each; a failed
call is an error message the model sees, never a crash) and returns the tool messages. A message
with text only is the assistant talking to the user: the user simulator answers, raises the next
sub-goal, or ends the episode. The reward is 0 until the episode ends; then it is the task's
verifiable reward (``envfactory.reward.score_trajectory``: 1.0 exactly when the final state is
the gold state and the last answer states every required fact), with its parts in ``info``.

Everything that comes from the model is untrusted: arguments are validated by the runtime,
unparseable ones are an ``invalid_argument`` error, and text is cut at ``MAX_TEXT`` characters
before the user simulator reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..llm import ChatModel, ToolCall
from ..reward import CallRecord, RewardResult, score_trajectory
from ..runtime import Environment, Session
from ..spec import Task
from ..synth.policy import build_system_prompt, build_tool_schemas
from ..synth.rollout import load_initial_state, result_text
from ..synth.user_sim import UserSimulator

__all__ = ["ToolEnv", "Observation", "StepResult", "MAX_TEXT", "parse_assistant_message"]

MAX_TEXT = 20_000  # characters of one assistant message the user simulator reads
MAX_CALLS = 64  # tool calls executed from one assistant message

Observation = dict[str, Any]
StepResult = tuple[Observation, float, bool, dict[str, Any]]


def _call_from(i: int, c: Any) -> ToolCall:
    """One tool call in OpenAI form ``{"id", "function": {"name", "arguments"}}`` or flat ``{"name", "arguments"}``."""
    if isinstance(c, ToolCall):
        return c
    if not isinstance(c, Mapping):
        return ToolCall(
            id=f"call_{i}", name="?", parse_error=f"a tool call must be an object, got {type(c).__name__}"
        )
    inner = c.get("function")
    fn: Mapping[str, Any] = inner if isinstance(inner, Mapping) else c
    name = fn.get("name")
    cid = str(c.get("id") or f"call_{i}")[:64]
    if not isinstance(name, str) or not name:
        return ToolCall(id=cid, name="?", parse_error="a tool call needs a function name")
    return ToolCall.from_raw(cid, name[:128], fn.get("arguments"))


def parse_assistant_message(message: Any) -> tuple[str, list[ToolCall]]:
    """(text, tool calls) of an assistant message: a string, an OpenAI message dict, or a ChatMessage."""
    if message is None:
        return "", []
    if isinstance(message, str):
        return message, []
    if hasattr(message, "tool_calls") and hasattr(message, "text"):  # envfactory.llm.ChatMessage
        return message.text or "", list(message.tool_calls or [])
    if not isinstance(message, Mapping):
        raise ConfigError(f"an assistant message is a string or a dict, got {type(message).__name__}")
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        calls = [calls]
    return (content if isinstance(content, str) else ""), [_call_from(i, c) for i, c in enumerate(calls)]


class ToolEnv:
    """One task as a resettable multi-turn environment. Not thread-safe; cheap to make many."""

    def __init__(
        self,
        task: Task,
        environment: Environment,
        *,
        user_model: ChatModel | None = None,
        seed: int = 0,
        prompt: list[dict[str, Any]] | None = None,
    ):
        self.task = task
        self.environment = environment
        self.user_model = user_model
        self.seed = seed
        self.tools = build_tool_schemas(environment, task.tools or None)
        self._tool_names = {t["function"]["name"] for t in self.tools}
        self._writes = {t.name: t.writes for t in environment.spec.tools}
        self._prompt = prompt
        self.session: Session | None = None
        self.messages: list[dict[str, Any]] = []
        self.calls: list[CallRecord] = []
        self.final_answer = ""
        self.done = False
        self.turns = 0
        self.result: RewardResult | None = None
        self._user: UserSimulator | None = None
        self._n_call = 0

    # ---- the episode ----------------------------------------------------------------------------

    def reset(self) -> Observation:
        """A fresh session at the task's initial state; the system prompt, the tools and the user's
        first message."""
        self.close()
        self.session = self.environment.new_session(
            load_initial_state(self.environment, self.task.initial_state)
        )
        self._user = UserSimulator(self.task, model=self.user_model, seed=self.seed)
        opening = self._user.opening()
        if self._prompt:  # the dataset's own words for the first turn (what the row was rolled out with)
            self.messages = [dict(m) for m in self._prompt]
        else:
            self.messages = [
                {"role": "system", "content": build_system_prompt(self.task, self.environment)},
                {"role": "user", "content": opening},
            ]
        self.calls, self.final_answer, self.done, self.turns, self.result, self._n_call = (
            [],
            "",
            False,
            0,
            None,
            0,
        )
        return {
            "messages": list(self.messages),
            "tools": self.tools,
            "task_id": self.task.task_id,
            "state_hash": self.session.state_hash(),
        }

    def step(self, message: Any) -> StepResult:
        """Apply one assistant message; returns (observation, reward, done, info).

        ``observation["messages"]``: what answers it (tool messages, or the user's reply; empty
        when the episode ends). ``info["reward"]``, at the end: the parts of the reward.
        """
        if self.session is None:
            raise ConfigError("call reset() before step()")
        if self.done:
            raise ConfigError("the episode is over; call reset() to start another")
        text, calls = parse_assistant_message(message)
        self.turns += 1
        if calls:
            out = self._run_calls(text, calls[:MAX_CALLS])
        else:
            out = self._talk(text[:MAX_TEXT])
        info: dict[str, Any] = {"turns": self.turns, "tool_calls": len(self.calls)}
        if not self.done and self.turns >= self.task.turn_limit:
            self.done = True
            info["truncated"] = True
        reward = 0.0
        if self.done:
            res = self.score()
            reward = res.reward
            info["reward"] = res.model_dump()
        return {"messages": out}, reward, self.done, info

    def score(self) -> RewardResult:
        """The task's reward for the session as it is now (the last text message is the answer)."""
        if self.session is None:
            raise ConfigError("call reset() before score()")
        self.result = score_trajectory(
            self.task.reward,
            final_state_hash=self.session.state_hash(),
            final_diff=self.session.diff().to_dict(),
            calls=list[Any](self.calls),
            final_answer=self.final_answer,
        )
        return self.result

    def state_hash(self) -> str:
        if self.session is None:
            raise ConfigError("call reset() first")
        return self.session.state_hash()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    # ---- internals ------------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
        """Run one tool call on the session and record it; returns the tool message."""
        assert self.session is not None
        tc = (
            arguments
            if isinstance(arguments, ToolCall)
            else ToolCall.from_raw(call_id or "", name, arguments)
        )
        if tc.parse_error:
            ok, res = False, {"error": "invalid_argument", "message": f"{name}: {tc.parse_error}"}
        elif name not in self._tool_names:
            ok, res = (
                False,
                {
                    "error": "unknown_tool",
                    "message": f"unknown tool '{name}'; available tools: {', '.join(sorted(self._tool_names))}",
                },
            )
        else:
            r = self.session.try_call(name, tc.arguments)
            ok, res = (
                (True, r["result"]) if r["ok"] else (False, {"error": r["error"], "message": r["message"]})
            )
        self.calls.append(
            CallRecord(
                tool=name,
                args=tc.arguments,
                ok=ok,
                error=None if ok else res.get("error"),
                writes=ok and self._writes.get(name, False),
            )
        )
        return {"role": "tool", "tool_call_id": call_id or tc.id, "content": result_text(ok, res)}

    def _run_calls(self, text: str, calls: list[ToolCall]) -> list[dict[str, Any]]:
        ided = []
        for c in calls:
            cid = c.id or f"call_{self._n_call}"
            self._n_call += 1
            ided.append((cid, c))
        self.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)},
                    }
                    for cid, c in ided
                ],
            }
        )
        out = [self.call_tool(c.name, c, cid) for cid, c in ided]
        self.messages += out
        return out

    def _talk(self, text: str) -> list[dict[str, Any]]:
        assert self._user is not None
        self.messages.append({"role": "assistant", "content": text})
        self.final_answer = text
        reply = self._user.reply(text)
        if reply is None:
            self.done = True
            return []
        msg = {"role": "user", "content": reply}
        self.messages.append(msg)
        return [msg]
