"""A suite's data: entries by category, and what each entry looks like in BFCL's files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..spec import Task
from .categories import CATEGORIES, is_multi_turn_category

__all__ = ["SuiteEntry", "Suite", "call_name"]


def call_name(call: str) -> str:
    return call.split("(", 1)[0]


@dataclass
class SuiteEntry:
    """One question entry with its ground truth and where it came from.

    ``question``: per turn, the messages of that turn (one turn for single-turn categories; a
    turn with no message is where held-out functions come back, as in BFCL's miss_func).
    ``ground_truth``: AST possible answers (single-turn; ``[]`` for (ir)relevance) or, for
    multi-turn, per turn the gold call strings (``[]``: the turn cannot be served).
    ``functions``: the docs offered at the start; ``missed_function``: for miss_func, per turn
    index (a string, as in BFCL) the names of the functions that come back at that turn.
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
    missed_function: dict[str, list[str]] = field(default_factory=dict)
    all_functions: list[dict[str, Any]] = field(default_factory=list)  # multi-turn: the env's full doc

    @property
    def is_multi_turn(self) -> bool:
        return is_multi_turn_category(self.category)

    def functions_at(self, turn: int) -> list[dict[str, Any]]:
        """The functions offered at ``turn`` (held-out ones join at their turn and stay)."""
        back = {name for t, names in self.missed_function.items() if int(t) <= turn for name in names}
        if not back:
            return self.functions
        return self.functions + [f for f in self.all_functions if f["name"] in back]

    def question_entry(self) -> dict[str, Any]:
        """The entry as BFCL's question file holds it (multi-turn: no ``function``; BFCL reads the
        docs from ``multi_turn_func_doc/<class>.json``)."""
        data: dict[str, Any] = {"id": self.id, "question": self.question}
        if not self.is_multi_turn:
            data["function"] = self.functions
            return data
        data["initial_config"] = {
            self.env: {"state": self.initial_state, "state_hash": self.initial_state_hash}
        }
        data["path"] = [call_name(c) for turn in self.ground_truth for c in turn]
        data["involved_classes"] = [self.env]
        if self.missed_function:
            data["missed_function"] = self.missed_function
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
    func_docs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # env -> its function docs

    def by_category(self, category: str) -> list[SuiteEntry]:
        return [e for e in self.entries if e.category == category]

    @property
    def counts(self) -> dict[str, int]:
        return {c: len(self.by_category(c)) for c in CATEGORIES if self.by_category(c)}
