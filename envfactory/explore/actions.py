"""The action table: which verbs move a status field, to what, and from where.

Conservative on purpose: an action is only emitted when its verb is in this table and the
entity has a field it can move (a status/state enum or string, or a boolean flag). Each
row says the target status candidates (the first one present in the field's enum wins),
the statuses the action is allowed from (intersected with the enum; when that leaves
nothing, the action is allowed from any status that is neither the target nor terminal),
and the boolean flag it may set instead (``archived`` for archive).

A ``writes_only`` rule (assign, grade, reschedule ...) is mostly about the fields its request
body writes: it moves the status only when the entity's enum already has a target (it never
adds one), and otherwise just guards against dead statuses. Verbs not in the table get such
a rule on the fly from ``rule_for`` (``discontinue`` -> target ``discontinued`` if the enum
has it), so ``POST /x/{id}/verb`` becomes an action on ``x`` instead of a made-up resource.
"""

from __future__ import annotations

import re

from .action_rule import ActionRule
from .handling_rules import HANDLING_RULES
from .lifecycle_rules import LIFECYCLE_RULES

__all__ = [
    "ActionRule",
    "ACTION_RULES",
    "TERMINAL",
    "DEAD",
    "action_rule",
    "NOUN_VERBS",
    "VERB_NOUNS",
    "participles",
    "rule_for",
    "READ_VERBS",
    "UNLINK_VERBS",
]


TERMINAL = frozenset(
    {
        "cancelled",
        "canceled",
        "completed",
        "complete",
        "closed",
        "refunded",
        "failed",
        "expired",
        "rejected",
        "declined",
        "void",
        "voided",
        "deleted",
        "archived",
        "fulfilled",
        "delivered",
        "done",
        "finished",
        "resolved",
        "denied",
        "terminated",
        "checked_out",
        "returned",
    }
)
# Statuses after which a record takes no more edits (a writes-only action is blocked there).
DEAD = frozenset(
    {
        "cancelled",
        "canceled",
        "closed",
        "deleted",
        "archived",
        "void",
        "voided",
        "expired",
        "terminated",
        "failed",
        "trashed",
        "dropped",
        "withdrawn",
        "discontinued",
        "lost",
        "abandoned",
        "rejected",
        "denied",
    }
)
# Verbs that compute a result (a quote, a validation) and change nothing.
READ_VERBS = frozenset(
    {
        "price",
        "quote",
        "validate",
        "preview",
        "calculate",
        "estimate",
        "check",
        "simulate",
        "availability",
        "pricing",
        "dry_run",
        "test",
        "render",
        "count",
    }
)

# The table itself: its rows live in lifecycle_rules.py and handling_rules.py, in this order.
ACTION_RULES: dict[str, ActionRule] = {r.verb: r for r in [*LIFECYCLE_RULES, *HANDLING_RULES]}

# Noun forms seen in paths (``/orders/{id}/cancellation``) and synonyms.
NOUN_VERBS = {
    "cancellation": "cancel",
    "cancelation": "cancel",
    "confirmation": "confirm",
    "approval": "approve",
    "rejection": "reject",
    "completion": "complete",
    "activation": "activate",
    "deactivation": "deactivate",
    "refunds": None,
    "checkin": "check_in",
    "check_in": "check_in",
    "checkout": "check_out",
    "check_out": "check_out",
    "pick_up": "pickup",
    "picked_up": "pickup",
    "submission": "submit",
    "publication": "publish",
    "closure": "close",
    "archival": "archive",
    "suspension": "suspend",
    "verification": "verify",
    "acknowledgement": "acknowledge",
    "reactivate": "activate",
    "declare_lost": "lose",
    "report_lost": "lose",
    "mark_lost": "lose",
    "lost": "lose",
    "noshow": "no_show",
    "mark_no_show": "no_show",
    "dropout": "drop",
    "freezing": "freeze",
    "mark_as_read": "mark_read",
    "mark_as_unread": "mark_unread",
    "read": "mark_read",
    "unread": "mark_unread",
    "accept": "accept",
    "terminate": "cancel",
    "revoke": "cancel",
    "withdrawal": "withdraw",
    "abort": "cancel",
    "checkin_booking": "check_in",
}


# Verbs that undo a link to another row: the action clears that reference (action_tools)
UNLINK_VERBS = frozenset({"detach", "unlink", "disconnect", "dissociate", "unassign"})

# Verb -> the noun of its reason/timestamp fields (``suspend`` -> ``suspension_reason``).
VERB_NOUNS: dict[str, str] = {}
for _noun, _verb in NOUN_VERBS.items():
    if (
        _verb
        and _noun.isalpha()
        and _noun not in ACTION_RULES
        and _noun.endswith(("ion", "al", "ure", "ment"))
    ):
        VERB_NOUNS.setdefault(_verb, _noun)
VERB_NOUNS.update(
    {"renew": "renewal", "deny": "denial", "cancel": "cancellation", "refund": "refund", "dispute": "dispute"}
)


_IRREGULAR = {"hide": "hidden"}  # a participle the rules below do not make (the flag a verb sets)


def participles(word: str) -> tuple[str, ...]:
    """``skip`` -> (skipped,), ``discontinue`` -> (discontinued,), ``no_show`` -> (no_show,): status candidates."""
    w = word.lower()
    if w in _IRREGULAR:  # hide -> hidden (Drive's POST /drives/{id}/hide sets ``hidden``)
        return (_IRREGULAR[w], w)
    head, _, rest = w.partition("_")
    if rest.startswith("to_"):  # convert_to_private -> private (the flag is_private)
        return tuple(dict.fromkeys([w, rest[3:], _inflect(head)]))
    if rest:  # declare_lost -> lost; no_show -> no_show
        return tuple(dict.fromkeys([w, rest, _inflect(head)]))
    if re.fullmatch(r".*[^aeiou][aeiou][bglmnprt]", w) and len(w) > 4:
        return tuple(dict.fromkeys([_inflect(w), w, w + w[-1] + "ed"]))  # reblog -> reblogged
    return (_inflect(w), w)


def _inflect(v: str) -> str:
    if v.endswith("e"):
        return v + "d"
    if v.endswith("y") and len(v) > 2 and v[-2] not in "aeiou":
        return v[:-1] + "ied"
    if len(v) <= 4 and re.fullmatch(r".*[^aeiou][aeiou][^aeiouwxy]", v):
        return v + v[-1] + "ed"
    return v + "ed"


def rule_for(verb: str) -> ActionRule:
    """The table rule for ``verb``, or a writes-only rule made up for a verb the table lacks."""
    rule = ACTION_RULES.get(verb)
    if rule is not None:
        return rule
    forms = participles(verb)
    stamps = tuple(f"{p}{s}" for p in forms[:2] for s in ("_at", "_on"))
    # a documented boolean named by the verb is its flag: bookmark -> bookmarked,
    # unbookmark -> bookmarked = false, reblog -> reblogged, favourite -> favourited
    undo = verb.startswith("un") and len(verb) > 4 and verb[2:] not in ("lock", "do")
    base = participles(verb[2:]) if undo else forms
    flags = tuple(dict.fromkeys(x for p in base for x in (p, f"is_{p}")))
    return ActionRule(verb, forms, (), flags, not undo, stamps, (), True)


def action_rule(word: str) -> ActionRule | None:
    """The rule for a path word (``cancel``, ``cancellation``, ``check-in``), or None."""
    w = word.replace("-", "_").lower()
    if w in ACTION_RULES:
        return ACTION_RULES[w]
    v = NOUN_VERBS.get(w)
    return ACTION_RULES.get(v) if v else None
