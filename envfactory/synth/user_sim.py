"""The simulated user: states a task one sub-goal per turn and reveals hidden facts only when asked.

``UserSimulator(task)`` with no model is rule-based and deterministic:

- ``opening()`` states the first sub-goal (the whole goal when the task has none);
- ``reply(message)`` reads the assistant's message. Questions that name a fact the user holds
  (matched on the fact's key and its humanized name: ``traveler.email`` is asked for by
  "what is your email?") are answered with exactly those facts; a request for confirmation
  is confirmed, or corrected when it names a fact with a wrong value; a statement (no
  question) means the current sub-goal is done, so the user raises the next one, or returns
  ``None`` when every sub-goal is done.

With a ``model`` the same state machine decides *what* happens (which facts may be revealed,
which sub-goal is current, when the user is done) and the model only words the reply: it is
prompted with the persona, the goal, the current sub-goal and the facts it may reveal now.
A user never volunteers a hidden fact nobody asked for, in either mode. The model's text is a
candidate: it is replaced by the rule-based reply when the model fails (``ModelError``), says
nothing, echoes its instructions, leaks a hidden fact, or states an id-like token (``BK-1042``) that nothing the user was
told contains; ``llm_stats`` counts the model's turns, how many were kept and why the others were
replaced.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from ..errors import ModelError
from ..llm import ChatMessage, ChatModel
from ..spec import Task
from ..text import english, format_plain, phrases, singular
from .invariants import says_answer

__all__ = ["UserSimulator", "fact_name", "fact_tokens", "match_asked_facts", "is_question"]

_WORD = re.compile(r"[a-z0-9]+")
_ASK = re.compile(
    r"\b(please (provide|share|tell|confirm|send|give)|let me know|i need (your|the)|could you (tell|give|share|provide))\b"
)
_ID_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{3,}")
_CONFIRM = re.compile(
    r"\b(shall i|should i|do you want|would you like|is that (right|correct|ok)|can i go ahead|"
    r"go ahead|confirm|correct\?|ok\?|proceed)\b"
)


def fact_name(key: str) -> str:
    """A person's name for a fact key: ``traveler.email`` -> "traveler email"; ``create_booking.passengers``
    -> "passengers" (a tool's parameter needs no tool name)."""
    owner, _, field = key.split("#", 1)[0].rpartition(".")
    words = field.replace("-", "_").split("_")
    if len(words) > 1 and words[0] in ("is", "has"):
        words = words[1:] + ["flag"]  # 'the purchase late flag is yes', not 'the purchase is late is yes'
    if owner and owner.split("_")[0] not in english().questions.tool_verbs:
        return " ".join(owner.split("_") + words)
    # a tool's parameter: named by the thing the tool makes ('create_file.name' -> "file name")
    rest = [w for w in owner.split("_")[1:] if w not in words]
    return " ".join(rest + words)


def _stem(w: str) -> str:
    return singular(w)


def _tokens(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower())}


def fact_tokens(key: str) -> tuple[set[str], set[str]]:
    """(field tokens that must all be named, owner tokens that make the match more specific)."""
    owner, _, field = key.split("#", 1)[0].rpartition(".")
    stop = english().questions.stop_words
    ftoks = {_stem(w) for w in _WORD.findall(field.replace("_", " ").lower())} - stop
    otoks = {_stem(w) for w in _WORD.findall(owner.replace("_", " ").lower())} - stop
    if owner.split("_")[0] in english().questions.tool_verbs:
        otoks -= {_stem(owner.split("_")[0])}  # 'create_product.price' is owned by the product
    return ftoks or {field.lower()}, otoks


def _mentions(words: set[str], need: set[str]) -> bool:
    for t in need:
        if t in words:
            continue
        if any(s in words for s in english().questions.synonyms.get(t, ())):
            continue
        return False
    return True


def match_asked_facts(text: str, keys: list[str]) -> list[str]:
    """The fact keys a piece of text names (all field words present), most specific first.

    When two matched keys differ only by owner (``booking.status`` and ``flight.status``),
    the ones whose owner is named win; a key whose words are a strict subset of another
    matched key's words (``name`` inside "first name") is dropped.
    """
    words = _tokens(text)
    hits = []
    for k in keys:
        f, o = fact_tokens(k)
        if _mentions(words, f):
            hits.append((k, f, o, len(o & words)))
    if not hits:
        return []
    # most specific field wins over a field that is a strict subset of it, unless the smaller one's
    # owner is named too ("the payment status" is payment.status, not order.payment_status)
    hits = [h for h in hits if not any(h[1] < g[1] for g in hits) or (h[2] and h[2] <= words)]
    out = []
    for h in hits:
        rivals = [g for g in hits if g[1] == h[1]]
        best = max(g[3] for g in rivals)
        if h[3] == best:
            out.append(h[0])
    return out


def is_question(sentence: str) -> bool:
    s = sentence.strip().lower()
    return s.endswith("?") or bool(_ASK.search(s))


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text or "")
    return [p.strip() for p in parts if p.strip()]


_LLM_SYSTEM = """You are role-playing a customer talking to an assistant. Stay in character.
Your name: {name}. Your style: {style}.
Your overall goal: {goal}
What you are asking for right now: {current}
Facts you have already stated: {known}
Facts you may reveal in this reply (the assistant just asked for them): {reveal}
Rules: never mention tools, APIs or internal ids you were not told; never reveal a fact that is not listed
as revealable; answer questions briefly; if the assistant asks you to confirm something that matches your
facts, confirm it; if it is wrong, correct it. {instruction}
Write only the customer's next message."""
_WAITING = "(The assistant is waiting for you to start.)"
# the prompt's own lines (a base model often continues its prompt): text that repeats one is refused
_SCAFFOLD = tuple(
    p.strip(" .")
    for p in re.split(r"\{\w+\}|\n|: ", _LLM_SYSTEM + "\n" + _WAITING.strip("()"))
    if len(p.strip(" .")) >= 9
)


class UserSimulator:
    """A simulated user for one task. ``reply`` returns ``None`` when the user is done."""

    def __init__(self, task: Task, *, model: ChatModel | None = None, seed: int = 0):
        self.task = task
        self.model = model
        self.rng = random.Random(f"{task.task_id}:{seed}")
        self.seed = seed
        self.subgoals = [sg.text for sg in task.subgoals] or [task.goal]
        self.index = 0
        self.known: dict[str, Any] = dict(task.persona.known_facts)
        self.hidden: dict[str, Any] = dict(task.persona.hidden_facts)
        self.revealed: dict[str, Any] = {}
        self.history: list[ChatMessage] = []
        self.done = False
        self.llm_stats: dict[str, int] = {}

    # ---- public -----------------------------------------------------------------------------

    @property
    def current(self) -> str:
        return self.subgoals[min(self.index, len(self.subgoals) - 1)]

    def opening(self) -> str:
        text = self._say("user_open", t=self.current, name=self.task.persona.name)
        if self.model is not None:
            text = self._llm(
                "Open the conversation by asking for what you need right now.", {}, fallback=text
            )
        self.history.append(ChatMessage.user(text))
        return text

    def reply(self, assistant_message: str) -> str | None:
        """The user's answer to the assistant's message, or ``None`` when every sub-goal is done."""
        if self.done:
            return None
        self.history.append(ChatMessage.assistant(assistant_message))
        questions = [s for s in _sentences(assistant_message) if is_question(s)]
        if not questions:
            return self._advance()
        ask_text = " ".join(questions)
        holdable = {**self.known, **self.hidden}
        asked = match_asked_facts(ask_text, list(holdable))
        reveal = {k: holdable[k] for k in asked}
        if reveal:
            for k in asked:
                if k in self.hidden:
                    self.revealed[k] = self.hidden[k]
            facts = "; ".join(f"the {fact_name(k)} is {format_plain(v)}" for k, v in reveal.items())
            text = self._say(
                "user_reveal", f=facts[0].upper() + facts[1:] if self.task.persona.style == "terse" else facts
            )
            if self.model is not None:
                text = self._llm(
                    "Answer the assistant's question with the revealable facts.", reveal, fallback=text
                )
        elif any(_CONFIRM.search(q.lower()) for q in questions):
            text = self._confirm(assistant_message)
            if self.model is not None:
                text = self._llm("Confirm or correct what the assistant proposed.", {}, fallback=text)
        else:
            text = phrases("user_unknown")[0].format(t=self.current)
            if self.model is not None:
                text = self._llm(
                    "You do not know the answer; say so and restate what you need.", {}, fallback=text
                )
        self.history.append(ChatMessage.user(text))
        return text

    # ---- internals --------------------------------------------------------------------------

    def _say(self, table_name: str, **kw: str) -> str:
        table = phrases(table_name)
        options = table.get(self.task.persona.style) or table["polite"]
        # A stock phrase never says an answer the user asked for ('Great, thanks' when the answer is 'great').
        clean = [o for o in options if not says_answer(self.task, re.sub(r"\{\w+\}", " ", o))]
        return self.rng.choice(clean or options).format(**kw)

    def _advance(self) -> str | None:
        self.index += 1
        if self.index >= len(self.subgoals):
            self.done = True
            return None
        text = self._say("user_next", t=self.current)
        if self.model is not None:
            text = self._llm(
                "The assistant finished the previous part; now ask for what you need next.", {}, fallback=text
            )
        self.history.append(ChatMessage.user(text))
        return text

    def _confirm(self, message: str) -> str:
        """Correct the first fact the message names with a value the user did not give; else confirm."""
        low = message.lower()
        holdable = {**self.known, **self.revealed}
        for k in match_asked_facts(message, list(holdable)):
            v = format_plain(holdable[k]).lower()
            if v and v not in low:
                return f"Not quite: the {fact_name(k)} is {format_plain(holdable[k])}."
        return self._say("user_confirm")

    def _llm(self, instruction: str, reveal: dict[str, Any], *, fallback: str) -> str:
        p = self.task.persona
        system = _LLM_SYSTEM.format(
            name=p.name,
            style=p.style,
            goal=self.task.goal,
            current=self.current,
            known=json.dumps(
                {fact_name(k): v for k, v in {**self.known, **self.revealed}.items()}, default=str
            ),
            reveal=json.dumps({fact_name(k): v for k, v in reveal.items()}, default=str)
            if reveal
            else "none",
            instruction=instruction,
        )
        # The model plays the user, so the roles flip: the assistant's words are its "user" input.
        msgs = [ChatMessage.system(system)]
        for m in self.history:
            msgs.append(ChatMessage.user(m.text) if m.role == "assistant" else ChatMessage.assistant(m.text))
        if len(msgs) == 1:
            msgs.append(ChatMessage.user(_WAITING))
        assert self.model is not None  # callers use _llm only when a model is set
        try:
            resp = self.model.complete(msgs, temperature=0.7, seed=self.seed)
            text = resp.content.strip()
        except ModelError:  # a timeout or a broken reply is data: the rule-based words stand
            text, why = "", "model_error"
        else:
            told = system + " " + " ".join(m.text for m in self.history)
            if not text:
                why = "empty"
            elif any(line in text for line in _SCAFFOLD):
                why = "echoed_prompt"
            elif not _guard_hidden(text, self.hidden, reveal, self.revealed):
                why = "hidden_fact"
            else:
                why = "invented_id" if _invented_ids(text, told) else ""
        key = f"replaced_{why}" if why else "accepted"
        for k in ("turns", key):
            self.llm_stats[k] = self.llm_stats.get(k, 0) + 1
        return fallback if why else text


def _invented_ids(text: str, told: str) -> list[str]:
    """Id-like tokens (letters and digits, 4+ characters) in ``text`` that ``told`` does not contain."""
    known = set(_ID_LIKE.findall(told))
    return [
        t
        for t in _ID_LIKE.findall(text)
        if t not in known and any(c.isdigit() for c in t) and any(c.isalpha() for c in t)
    ]


def _guard_hidden(text: str, hidden: dict[str, Any], reveal: dict[str, Any], revealed: dict[str, Any]) -> str:
    """Refuse model text that leaks a hidden fact nobody asked for (returns "" so the caller falls back)."""
    low = text.lower()
    for k, v in hidden.items():
        if k in reveal or k in revealed:
            continue
        s = format_plain(v).lower()
        if len(s) >= 3 and s in low:
            return ""
    return text
