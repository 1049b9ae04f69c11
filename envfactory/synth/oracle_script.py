"""The oracle's side of a conversation, written before it starts (no model).

Per sub-goal, in order: ask for the hidden facts its calls need (just before the call that needs
them), say what each call looks for in specific terms (the tool's documented purpose and the
values it is called with), confirm some writes first, and close the sub-goal with what was found
or done, stating that sub-goal's answers then and there. The last message repeats every answer
(the final answer the reward reads). A refusal sub-goal is declined with the reason.

A share of runs (``recover_rate``, by a hash of the task id) makes one call with a value in the
wrong form first (an enum in the wrong case, a date written out, a number as text): the service
rejects it, nothing changes, and the oracle says what was wrong and calls again correctly. The
rejected call is checked on a fresh session while the script is written, so the record and its
replay agree and the reward stays exact.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from ..llm import ChatMessage, ToolCall
from ..reward import fact_in_text
from ..spec import FieldType, Task, ToolKind
from ..text import english, format_plain, paraphrases, phrases, plural
from .user_sim import fact_name, match_asked_facts

__all__ = ["write_script", "call_id", "wrong_form"]


def call_id(task_id: str, n: int, attempt: int = 0) -> str:
    """A deterministic tool-call id: 9 alphanumeric characters (valid for OpenAI and Mistral templates)."""
    return hashlib.sha1(f"{task_id}:{attempt}:{n}".encode()).hexdigest()[:9]


def _unit(key: str) -> float:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


def _words(name: str) -> str:
    return name.replace("_", " ")


def _uses(value: Any, fact: Any) -> bool:
    if isinstance(value, list):
        return any(_uses(v, fact) for v in value)
    if isinstance(value, dict):
        return any(_uses(v, fact) for v in value.values())
    if isinstance(fact, bool) or isinstance(value, bool):
        return value is fact
    return value == fact


def _purpose(description: str) -> str | None:
    """The documented purpose of a tool as a verb phrase ('search flights by origin and date')."""
    first = (
        re.split(
            r"(?<=[.!?])\s|\n|;|\(|, (?:filtered|returns|returning|with optional)| - ",
            (description or "").strip(),
            maxsplit=1,
        )[0]
        .strip()
        .rstrip(".,")
    )
    if not first or len(first) > 90 or not re.match(r"^[A-Z][a-z]+s?\b", first):
        return None
    verb, _, rest = first.partition(" ")
    verb = verb.lower()
    if verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-1]  # 'Returns a list' -> 'return a list'
    if verb in ("this", "the", "a", "an", "returns", "return", "endpoint", "api"):
        return None
    said = f"{verb} {rest[:1].lower() + rest[1:]}".strip()
    return re.sub(r"\b(a) (?=[aeio])", r"\1n ", said)  # 'delete an appointment' (documents say 'a')


_PAGING = {"limit", "offset", "page", "page_size", "per_page", "cursor", "sort_by", "sort_order", "order"}


def _say_args(args: dict[str, Any]) -> str:
    bits = [
        f"{_words(k)} {format_plain(v)}"
        for k, v in args.items()
        if v not in (None, [], {}) and not isinstance(v, (dict,)) and k not in _PAGING
    ][:3]
    return (" with " + ", ".join(bits)) if bits else ""


def wrong_form(
    env: Any, tool: str, args: dict[str, Any], rng: random.Random | None = None
) -> tuple[dict[str, Any], str, str, str] | None:
    """(arguments with one mistake, the argument, the service's error message, the mistake's kind)
    for a call the service rejects on any state, or None when no such variant exists.

    Kinds: ``form`` (a value in a wrong form: 'Confirmed' for 'confirmed', '25' for 25, 'yes' for
    true) and ``missing`` (a required value left out, that the user had given). With ``rng`` one
    kind is drawn among those the call allows; without, the first found."""
    t = env.spec.tool(tool)
    found: dict[str, tuple[dict[str, Any], str, str, str]] = {}

    def rejected(bad: dict[str, Any]) -> str | None:
        with env.new_session() as s:
            r = s.try_call(tool, bad)
        return r["message"] if not r["ok"] and r.get("error") == "invalid_argument" else None

    for p in t.params:
        v = args.get(p.name)
        if v is None or isinstance(v, (list, dict)) or "form" in found:
            continue
        cands: list[Any] = []
        if isinstance(v, bool):
            cands = ["yes" if v else "no"]  # a yes/no said as a word, not a boolean
        elif p.enum and isinstance(v, str):
            cands = [v.title(), v.upper(), v.replace("_", " ")]
        elif p.type in (FieldType.date, FieldType.datetime) and isinstance(v, str) and len(v) >= 10:
            from ..text import format_date

            cands = [format_date(v[:10])]
        elif p.type in (FieldType.integer, FieldType.number) and isinstance(v, (int, float)):
            words = paraphrases("number_words")
            cands = [str(v)] + ([words[v]] if isinstance(v, int) and 0 <= v < len(words) else [])
        for c in cands:
            if c == v:
                continue
            bad = {**args, p.name: c}
            msg = rejected(bad)
            if msg is not None:
                found["form"] = (bad, p.name, msg, "form")
                break
        if rng is None and found:
            return found["form"]
    if rng is not None:
        # a required value the user gave, left out (never the row's key: that is looked up, not said)
        said = [
            p
            for p in t.params
            if p.required and not p.key and p.name in args and not isinstance(args[p.name], (list, dict))
        ]
        for p in said[:1] if len(args) > 1 else []:
            bad = {k: v for k, v in args.items() if k != p.name}
            msg = rejected(bad)
            if msg is not None:
                found["missing"] = (bad, p.name, msg, "missing")
        if found:
            return found[rng.choice(sorted(found))]
    return found.get("form")


class _Script:
    """One oracle script: messages in order and the running call counter."""

    def __init__(
        self, task: Task, env: Any, seed: int, attempt: int, confirm_rate: float, recover_rate: float
    ):
        self.task, self.env, self.attempt = task, env, attempt
        self.rng = random.Random(f"oracle:{task.task_id}:{seed}:{attempt}")
        self.confirm_rate = confirm_rate
        self.recover = _unit(f"recover:{task.task_id}:{seed}") < recover_rate
        self.msgs: list[ChatMessage] = []
        self.n_call = 0
        self.keys = list({**task.persona.known_facts, **task.persona.hidden_facts})
        self.revealed: set[str] = set()
        self.said: list[str] = []

    def call(self, text: str, tool: str, args: dict[str, Any], weight: int | None = None) -> None:
        c = ToolCall(
            id=call_id(self.task.task_id, self.n_call, self.attempt),
            name=tool,
            arguments=dict(args),
            raw_arguments=json.dumps(args, ensure_ascii=False),
        )
        self.n_call += 1
        m = ChatMessage.assistant(text, [c])
        m.weight = weight
        self.msgs.append(m)

    def ask(self, keys: list[str]) -> None:
        names = " and the ".join(fact_name(x) for x in keys)
        self.msgs.append(ChatMessage.assistant(self.rng.choice(phrases("oracle_ask")).format(names=names)))
        self.revealed.update(keys)

    def step_text(self, i: int, first: bool) -> tuple[str, str]:
        """The words before a step's call, as (words, arguments said): the arguments are said apart
        so that a call sent with a mistake is narrated with what it really sends."""
        step = self.task.gold[i]
        t = self.env.spec.tool(step.tool)
        purpose = _purpose(t.description)
        if purpose and self.rng.random() < 0.6:
            # 'First I'll ...' opens a turn and 'Next, I'll ...' follows a step, never the other way round
            skip = "Next" if first else "First"
            options = [o for o in phrases("oracle_purpose") if not o.startswith(skip)]
            text = self.rng.choice(options).format(what=purpose)
            return ((self.rng.choice(phrases("oracle_first")) + text) if first else text), "args"
        else:
            verb = " ".join(_words(step.tool).split()[:2])
            text = self.rng.choice(phrases("oracle_before")[t.kind.value]).format(
                ent=_words(t.entity), ents=plural(_words(t.entity)), verb=verb
            )
        return ((self.rng.choice(phrases("oracle_first")) + text) if first else text), ""

    def run_step(self, i: int, first: bool) -> None:
        step = self.task.gold[i]
        t = self.env.spec.tool(step.tool)
        if (
            t.writes
            and step.role == "goal"
            and (t.kind == ToolKind.delete or self.rng.random() < self.confirm_rate)
        ):
            # the tool's verb and the row's noun ('update the task'), not the tool name's first words
            verb = f"{_words(step.tool).split()[0]} the {_words(t.entity)}"
            c = self.rng.choice(phrases("oracle_confirm")).format(verb=verb)
            if not match_asked_facts(c, self.keys):  # a confirmation the user could read as naming a fact
                self.msgs.append(ChatMessage.assistant(c))
                first = False
        text, said = self.step_text(i, first)
        if self.recover:
            bad = wrong_form(self.env, step.tool, step.args, self.rng)
            if bad is not None:
                self.recover = False
                args, arg, message, kind = bad
                # narrated with the arguments it sends (not 'with app id 17' for a call without it)
                sent = text + (_say_args(args) + "." if said else "")
                self.call(sent, step.tool, args, weight=0)  # the mistake is not for learning
                key = "oracle_recover" if kind == "form" else "oracle_recover_missing"
                fix = self.rng.choice(phrases(key)).format(
                    arg=_words(arg), value=_sent(step.args[arg]), why=message.split(": ", 1)[-1]
                )
                self.call(fix, step.tool, step.args)
                return
        self.call(text + (_say_args(step.args) + "." if said else ""), step.tool, step.args)

    def close(self, steps: list[int], answers: list[str], last: bool) -> None:
        goal_steps = [i for i in steps if self.task.gold[i].role == "goal"]
        s = self.task.gold[(goal_steps or steps)[-1]] if steps else None
        done = _summary(self.env, s.tool, s.output, s.args) if s else "that is done"
        # a count the summary already says ('I found 3 matching statistics') is not said twice
        facts = [_state_fact(f, self.task.gold) for f in answers if not fact_in_text(f, done)]
        wrote = s is not None and self.env.spec.tool(s.tool).writes
        text = self.rng.choice(phrases("oracle_done" if wrote else "oracle_done_read")).format(done=done)
        if facts:
            text += " " + self.rng.choice(phrases("oracle_facts")).format(facts=_and(facts))
        if last:
            text += self.recap(answers)
        self.said.extend(answers)
        self.msgs.append(ChatMessage.assistant(text.replace("?", "")))

    def recap(self, now: list[str] = ()) -> str:  # type: ignore[assignment]
        """The answers not said yet, and a recap of those said in earlier turns (the final answer)."""
        rest = [f for f in self.task.answer_facts if f not in self.said and f not in now]
        earlier = [f for f in self.task.answer_facts if f in self.said and f not in now]
        out = ""
        if rest:
            out += " " + self.rng.choice(phrases("oracle_facts")).format(
                facts=_and([_state_fact(f, self.task.gold) for f in rest])
            )
        if earlier and len(self.task.subgoals) > 1:
            out += " To recap: " + _and([_state_fact(f, self.task.gold) for f in earlier]) + "."
        return out

    def decline(self, what: str) -> None:
        text = self.rng.choice(phrases("oracle_decline")).format(what=what)
        self.msgs.append(ChatMessage.assistant((text + self.recap()).replace("?", "")))


def groups(task: Task) -> list[tuple[int, list[int]]]:
    """(sub-goal index, gold step indices) per turn: every step runs in gold order, in the turn of the
    first request that needs it or a later step; a refusal gets no steps."""
    n = len(task.gold)
    if not task.subgoals:
        return [(0, list(range(n)))]
    requests = [k for k, sg in enumerate(task.subgoals) if sg.kind != "refusal"]
    out: list[tuple[int, list[int]]] = []
    done = 0
    for k, sg in enumerate(task.subgoals):
        if sg.kind == "refusal":
            out.append((k, []))
            continue
        upto = n if k == requests[-1] else (max(sg.steps) + 1 if sg.steps else done)
        upto = max(upto, done)
        out.append((k, list(range(done, upto))))
        done = upto
    return out


def write_script(
    task: Task,
    env: Any,
    *,
    seed: int = 0,
    attempt: int = 0,
    confirm_rate: float = 0.3,
    recover_rate: float = 0.3,
) -> list[ChatMessage]:
    """The oracle's messages for ``task``, in order (see the module docstring)."""
    sc = _Script(task, env, seed, attempt, confirm_rate, recover_rate)
    hidden = dict(task.persona.hidden_facts)
    gs = groups(task)
    for g, (k, steps) in enumerate(gs):
        sg = task.subgoals[k] if task.subgoals else None
        last = g == len(gs) - 1
        if sg is not None and sg.kind == "refusal":
            sc.decline(sg.decline)
            continue
        need_at: dict[int, list[str]] = {}
        for key, val in hidden.items():
            if key in sc.revealed:
                continue
            at = next((i for i in steps if _uses(task.gold[i].args, val)), None)
            if at is None and sg is not None and key in sg.reveals:
                at = steps[0] if steps else -1
            if at is not None:
                need_at.setdefault(at, []).append(key)
        first = True
        if -1 in need_at:
            sc.ask(need_at.pop(-1))
        for i in steps:
            ask = [x for x in need_at.get(i, []) if x not in sc.revealed]
            if ask:
                sc.ask(ask)
                first = False
            sc.run_step(i, first)
            first = False
        # Only what this request asks for: an answer to a later request waits until the user asks.
        answers = list(sg.answers) if sg is not None and task.subgoals else list(task.answer_facts)
        sc.close(steps, answers, last)
    return sc.msgs


def _sent(v: Any) -> str:
    """A corrected argument as it is sent: a boolean as true/false (the literal the call carries,
    not the 'no' a person says), anything else as a person reads it."""
    return json.dumps(v) if isinstance(v, bool) or v is None else format_plain(v)


def _summary(env: Any, tool: str, output: Any, args: dict[str, Any] | None = None) -> str:
    t = env.spec.tool(tool)
    ent = _words(t.entity)
    if t.kind == ToolKind.list and isinstance(output, dict):
        n = output.get("count", len(output.get("items") or []))
        return f"I found {n} matching {plural(ent) if n != 1 else ent}"
    if t.kind == ToolKind.delete:
        return f"the {ent} is deleted"
    if isinstance(output, dict):
        pk = env.spec.entity(t.entity).primary_key
        bits = [f"{ent} {format_plain(output[pk])}" if pk in output else f"the {ent}"]
        if (
            not t.writes and pk in output
        ):  # a look-up: 'hotel HT00192 is the one you mean', not 'hotel HT00192.'
            return f"{bits[0]} is the one you mean"
        state = next((f for f in english().fields.state_fields if output.get(f) is not None), None)
        # A status is news only when the call is what set it (an action, or a write that names it);
        # after a read or an unrelated edit nobody asked for it (an asked field is in the facts).
        if state is not None and t.writes and (t.kind == ToolKind.action or state in (args or {})):
            bits.append(f"is now {format_plain(output[state])}")
        elif t.writes:
            bits.append("is updated" if t.kind != ToolKind.create else "is created")
        return " ".join(bits)
    return f"the {ent} is done"


def _state_fact(fact: str, gold: list[Any]) -> str:
    """'the booking id is BK00012' when a gold output holds the fact under a key, '3 in all' when it is the
    number of rows a look-up found (not 'id: 3' because some row's id happens to be 3), else the fact."""
    for step in reversed(gold):
        out = step.output
        if isinstance(out, dict) and isinstance(out.get("items"), list) and str(len(out["items"])) == fact:
            return f"{fact} in all"
    keys = []
    for step in reversed(gold):
        out = step.output
        if not isinstance(out, dict):
            continue
        rows = out["items"] if isinstance(out.get("items"), list) else [out]
        for row in rows:
            if isinstance(row, dict):
                for k, v in row.items():
                    if v is not None and not isinstance(v, (dict, list)) and str(v) == fact:
                        keys.append(k)
    # a quantity of 1 is not labelled 'id' because some row's id is 1: a key that is no id first
    plain = [k for k in keys if k != "id" and not k.endswith("_id")]
    if plain or keys:
        return f"the {_words((plain or keys)[0])} is {fact}"
    return fact


def _and(facts: list[str]) -> str:
    """'the country is X and the rating is 2.9', not a list of 'label: value' pairs."""
    return facts[0] if len(facts) == 1 else ", ".join(facts[:-1]) + " and " + facts[-1]
