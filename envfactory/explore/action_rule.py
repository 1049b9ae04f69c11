"""One row of the action table (see actions.py): a verb, the statuses it moves to and from, the flag it sets."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ActionRule"]


@dataclass(frozen=True)
class ActionRule:
    verb: str
    targets: tuple[str, ...]
    allowed_from: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # boolean fields the action sets to ``flag_value``
    flag_value: bool = True
    timestamps: tuple[str, ...] = field(default=())  # datetime fields set to now when present
    synth_from: tuple[str, ...] = ("active",)  # states used when we must synthesize a status enum
    writes_only: bool = False  # never synthesize/extend a status enum for this verb
