"""The assistant side of a rollout: the gold-driven oracle (no model) and a teacher model.

A policy starts an episode per rollout (``policy.begin(task, env, tools)``); the episode's
``act(messages)`` returns the next assistant message (text, tool calls, or both), or ``None``
when it has nothing more to say.

- ``OraclePolicy``: replays the task's gold calls, sub-goal by sub-goal, in gold order (so
  every read sees the state it was planned against), with a short natural message before
  each call. Before the first gold call that needs a hidden fact it asks the user for it;
  before some writes it asks for confirmation; it closes each sub-goal with a summary and the
  last one with a final answer that states every ``answer_facts`` string. It needs no model
  and is deterministic for a seed.
- ``TeacherPolicy(model)``: OpenAI-compatible tool calling with the environment's tools as
  JSON Schemas. Rollouts are kept only when they earn full reward (rejection sampling, up to
  ``attempts`` tries per task; see ``envfactory.synth.rollout.run_task``).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..llm import ChatMessage, ChatModel, ToolCall
from ..spec import Task, ToolKind, tool_input_schema
from .user_sim import fact_name, format_value, match_asked_facts

__all__ = ["Episode", "Policy", "OraclePolicy", "TeacherPolicy", "build_tool_schemas", "build_system_prompt",
           "call_id"]


class Episode(Protocol):
    def act(self, messages: list[ChatMessage]) -> ChatMessage | None: ...


class Policy(Protocol):
    name: str
    attempts: int

    def begin(self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0) -> Episode: ...


def build_tool_schemas(env: Any, names: list[str] | None = None) -> list[dict[str, Any]]:
    """The env's tools (or ``names`` of them, in that order) in OpenAI function format."""
    spec = env.spec
    wanted = names or [t.name for t in spec.tools]
    out = []
    for n in wanted:
        t = spec.tool(n)
        out.append({"type": "function",
                    "function": {"name": t.name, "description": t.description or t.name.replace("_", " "),
                                 "parameters": tool_input_schema(t)}})
    return out


def build_system_prompt(task: Task, env: Any) -> str:
    spec = env.spec
    desc = (spec.description or f"the {spec.name.replace('_', ' ')} service").strip()
    return (f"You are a helpful assistant for {desc}\n"
            f"The current date and time is {spec.clock}.\n"
            "Use the tools to look things up and to act for the user. Ask the user for any detail you need "
            "and do not have; never invent ids or values. When a request is done, reply with a short answer "
            "that states the results.")


def call_id(task_id: str, n: int, attempt: int = 0) -> str:
    """A deterministic tool-call id: 9 alphanumeric characters (valid for OpenAI and Mistral templates)."""
    return hashlib.sha1(f"{task_id}:{attempt}:{n}".encode()).hexdigest()[:9]


# ---- the oracle ---------------------------------------------------------------------------------


def _words(name: str) -> str:
    return name.replace("_", " ")


def _plural(w: str) -> str:
    if w.endswith("y") and not w.endswith(("ay", "ey", "oy")):
        return w[:-1] + "ies"
    return w + ("es" if w.endswith(("s", "x", "ch", "sh")) else "s")


_BEFORE = {
    ToolKind.list: ["Let me search the {ents}.", "I'll look up the matching {ents}.", "Let me find the {ents}."],
    ToolKind.get: ["Let me pull up the {ent}.", "Checking the {ent} details.", "Let me look at that {ent}."],
    ToolKind.create: ["Now I'll create the {ent}.", "Creating the {ent} now.", "I'll set up the {ent}."],
    ToolKind.update: ["Updating the {ent} now.", "I'll update the {ent}."],
    ToolKind.delete: ["Removing the {ent} now.", "I'll delete the {ent}."],
    ToolKind.action: ["I'll {verb} now.", "Going ahead: {verb}."],
}
_FIRST = ["Sure, I can help with that. ", "Happy to help. ", "Of course. ", ""]
_ASK = ["Could you tell me the {names}?", "What is the {names}?", "To continue I need the {names}. What is it?"]
_CONFIRM = ["I'm about to {verb}. Shall I go ahead?", "Ready to {verb}. Do you want me to proceed?"]


def _uses(value: Any, fact: Any) -> bool:
    if isinstance(value, list):
        return any(_uses(v, fact) for v in value)
    if isinstance(value, dict):
        return any(_uses(v, fact) for v in value.values())
    if isinstance(fact, bool) or isinstance(value, bool):
        return value is fact
    return value == fact


def _summary(env: Any, tool: str, output: Any) -> str:
    t = env.spec.tool(tool)
    ent = _words(t.entity)
    if t.kind == ToolKind.list and isinstance(output, dict):
        n = output.get("count", len(output.get("items") or []))
        return f"I found {n} matching {_plural(ent) if n != 1 else ent}"
    if t.kind == ToolKind.delete:
        return f"the {ent} is deleted"
    if isinstance(output, dict):
        pk = env.spec.entity(t.entity).primary_key
        bits = [f"{ent} {format_value(output[pk])}" if pk in output else f"the {ent}"]
        if output.get("status") is not None:
            bits.append(f"is now {format_value(output['status'])}" if t.writes else f"is {format_value(output['status'])}")
        elif t.writes:
            bits.append("is updated" if t.kind != ToolKind.create else "is created")
        return " ".join(bits)
    return f"the {ent} is done"


def _state_fact(fact: str, gold: list[Any]) -> str:
    """'booking id: BK00012' when a gold output holds the fact under a key, else the fact itself."""
    for step in reversed(gold):
        out = step.output
        if not isinstance(out, dict):
            continue
        rows = out["items"] if isinstance(out.get("items"), list) else [out]
        for row in rows:
            if isinstance(row, dict):
                for k, v in row.items():
                    if v is not None and not isinstance(v, (dict, list)) and str(v) == fact:
                        return f"{_words(k)}: {fact}"
    return fact


@dataclass
class _OracleEpisode:
    actions: list[ChatMessage]
    i: int = 0

    def act(self, messages: list[ChatMessage]) -> ChatMessage | None:
        if self.i >= len(self.actions):
            return None
        m = self.actions[self.i]
        self.i += 1
        return m


class OraclePolicy:
    """Gold calls with natural messages; asks for hidden facts before the step that needs them."""

    name = "oracle"
    attempts = 1

    def __init__(self, *, seed: int = 0, confirm_rate: float = 0.3):
        self.seed = seed
        self.confirm_rate = confirm_rate

    def begin(self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0) -> _OracleEpisode:
        return _OracleEpisode(self.script(task, env, attempt=attempt))

    def groups(self, task: Task) -> list[tuple[int, list[int]]]:
        """(sub-goal index, gold step indices) per turn: every step runs in gold order, in the turn of
        the first sub-goal that needs it or a later step."""
        n = len(task.gold)
        if not task.subgoals:
            return [(0, list(range(n)))]
        out, done = [], 0
        for k, sg in enumerate(task.subgoals):
            last = k == len(task.subgoals) - 1
            upto = n if last else (max(sg.steps) + 1 if sg.steps else done)
            upto = max(upto, done)
            out.append((k, list(range(done, upto))))
            done = upto
        return out

    def script(self, task: Task, env: Any, *, attempt: int = 0) -> list[ChatMessage]:
        rng = random.Random(f"oracle:{task.task_id}:{self.seed}:{attempt}")
        hidden = dict(task.persona.hidden_facts)
        keys = list({**task.persona.known_facts, **hidden})
        revealed: set[str] = set()
        msgs: list[ChatMessage] = []
        n_call = 0
        groups = self.groups(task)
        for g, (k, steps) in enumerate(groups):
            sg = task.subgoals[k] if task.subgoals else None
            first = True
            # hidden facts this turn needs: those its steps use, plus the sub-goal's declared reveals
            need_at: dict[int, list[str]] = {}
            for key, val in hidden.items():
                if key in revealed:
                    continue
                at = next((i for i in steps if _uses(task.gold[i].args, val)), None)
                if at is None and sg is not None and key in sg.reveals:
                    at = steps[0] if steps else -1
                if at is not None:
                    need_at.setdefault(at, []).append(key)
            if -1 in need_at:
                ask = need_at.pop(-1)
                msgs.append(self._ask(rng, ask, keys))
                revealed.update(ask)
            for i in steps:
                ask = [x for x in need_at.get(i, []) if x not in revealed]
                if ask:
                    msgs.append(self._ask(rng, ask, keys))
                    revealed.update(ask)
                    first = False
                step = task.gold[i]
                t = env.spec.tool(step.tool)
                parts = step.tool.split("_")
                verb = f"{parts[0]} the {parts[1]}" if len(parts) == 2 else _words(step.tool)
                if t.writes and step.role == "goal" and rng.random() < self.confirm_rate:
                    c = rng.choice(_CONFIRM).format(verb=verb)
                    if not match_asked_facts(c, keys):  # a confirmation the user could read as naming a fact
                        msgs.append(ChatMessage.assistant(c))
                        first = False
                text = rng.choice(_BEFORE[t.kind]).format(ent=_words(t.entity), ents=_plural(_words(t.entity)),
                                                          verb=verb)
                if first:
                    text = rng.choice(_FIRST) + text
                    first = False
                call = ToolCall(id=call_id(task.task_id, n_call, attempt), name=step.tool,
                                arguments=dict(step.args), raw_arguments=json.dumps(step.args, ensure_ascii=False))
                n_call += 1
                msgs.append(ChatMessage.assistant(text, [call]))
            goal_steps = [i for i in steps if task.gold[i].role == "goal"]
            last_step = task.gold[(goal_steps or steps)[-1]] if steps else None
            done = _summary(env, last_step.tool, last_step.output) if last_step else "that is done"
            if g < len(groups) - 1:
                msgs.append(ChatMessage.assistant(f"Done: {done}."))
            else:
                facts = [_state_fact(f, task.gold) for f in task.answer_facts]
                text = f"All set: {done}."
                if facts:
                    text += " Here are the details: " + "; ".join(facts) + "."
                msgs.append(ChatMessage.assistant(text.replace("?", "")))
        return msgs

    def _ask(self, rng: random.Random, ask: list[str], keys: list[str]) -> ChatMessage:
        names = " and the ".join(fact_name(x) for x in ask)
        return ChatMessage.assistant(rng.choice(_ASK).format(names=names))


# ---- the teacher --------------------------------------------------------------------------------


@dataclass
class _TeacherEpisode:
    model: ChatModel
    tools: list[dict[str, Any]]
    temperature: float | None
    seed: int
    calls: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def act(self, messages: list[ChatMessage]) -> ChatMessage | None:
        resp = self.model.complete(messages, tools=self.tools, tool_choice="auto", temperature=self.temperature,
                                   seed=self.seed + self.calls)
        self.calls += 1
        self.usage["prompt_tokens"] += resp.usage.prompt_tokens
        self.usage["completion_tokens"] += resp.usage.completion_tokens
        m = resp.message
        return ChatMessage.assistant(m.content if m.content else None, m.tool_calls)


class TeacherPolicy:
    """A model behind an OpenAI-compatible API drives the assistant side.

    ``attempts``: rollouts tried per task until one earns full reward (rejection sampling);
    each attempt uses seed ``seed + attempt`` and ``temperature``.
    """

    def __init__(self, model: ChatModel, *, attempts: int = 3, temperature: float | None = 0.7, seed: int = 0,
                 model_name: str | None = None):
        self.model = model
        self.attempts = max(1, attempts)
        self.temperature = temperature
        self.seed = seed
        self.model_name = model_name or getattr(model, "model", None) or type(model).__name__
        self.name = f"teacher:{self.model_name}"

    def begin(self, task: Task, env: Any, tools: list[dict[str, Any]], *, attempt: int = 0) -> _TeacherEpisode:
        return _TeacherEpisode(self.model, tools, self.temperature, self.seed * 1000 + attempt * 100)
