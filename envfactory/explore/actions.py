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
from dataclasses import dataclass, field

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
]


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

_R = ActionRule
ACTION_RULES: dict[str, ActionRule] = {
    r.verb: r
    for r in [
        _R(
            "cancel",
            ("cancelled", "canceled", "voided", "void"),
            (
                "pending",
                "confirmed",
                "scheduled",
                "booked",
                "active",
                "open",
                "placed",
                "accepted",
                "draft",
                "new",
                "requested",
                "authorized",
                "created",
                "processing",
            ),
            ("cancelled", "canceled", "is_cancelled"),
            True,
            ("cancelled_at", "canceled_at"),
            ("pending", "confirmed"),
        ),
        _R(
            "confirm",
            ("confirmed",),
            ("pending", "draft", "new", "requested", "tentative", "unconfirmed", "booked", "held"),
            ("confirmed", "is_confirmed"),
            True,
            ("confirmed_at",),
            ("pending",),
        ),
        _R(
            "approve",
            ("approved",),
            ("pending", "submitted", "requested", "in_review", "pending_approval", "draft", "new"),
            ("approved", "is_approved"),
            True,
            ("approved_at",),
            ("pending",),
        ),
        _R(
            "reject",
            ("rejected", "declined", "denied"),
            ("pending", "submitted", "requested", "in_review", "pending_approval", "new"),
            ("rejected",),
            True,
            ("rejected_at",),
            ("pending",),
        ),
        _R(
            "decline",
            ("declined", "rejected"),
            ("pending", "requested", "new", "submitted", "placed"),
            ("declined",),
            True,
            ("declined_at",),
            ("pending",),
        ),
        _R(
            "deny",
            ("denied", "rejected", "declined"),
            ("pending", "requested", "submitted"),
            (),
            True,
            ("denied_at",),
            ("pending",),
        ),
        _R(
            "accept",
            ("accepted", "confirmed", "approved"),
            ("pending", "placed", "submitted", "requested", "new", "offered", "invited"),
            ("accepted",),
            True,
            ("accepted_at",),
            ("pending",),
        ),
        _R(
            "complete",
            ("completed", "complete", "done", "finished", "fulfilled"),
            (
                "in_progress",
                "active",
                "started",
                "open",
                "pending",
                "confirmed",
                "scheduled",
                "todo",
                "picked_up",
                "in_transit",
                "accepted",
                "processing",
            ),
            ("completed", "is_completed", "done", "complete"),
            True,
            ("completed_at", "finished_at"),
            ("active",),
        ),
        _R(
            "finish",
            ("finished", "completed", "done"),
            ("in_progress", "active", "started", "running"),
            ("finished",),
            True,
            ("finished_at", "completed_at"),
            ("active",),
        ),
        _R(
            "fulfill",
            ("fulfilled", "completed"),
            ("pending", "paid", "confirmed", "processing", "accepted"),
            ("fulfilled",),
            True,
            ("fulfilled_at",),
            ("pending",),
        ),
        _R(
            "close",
            ("closed",),
            ("open", "active", "pending", "in_progress", "reopened", "resolved"),
            ("closed", "is_closed"),
            True,
            ("closed_at",),
            ("open",),
        ),
        _R(
            "reopen",
            ("reopened", "open", "active"),
            ("closed", "resolved", "completed", "done", "archived"),
            ("closed",),
            False,
            ("reopened_at",),
            ("closed",),
        ),
        _R(
            "resolve",
            ("resolved", "closed"),
            ("open", "pending", "in_progress", "active", "reopened"),
            ("resolved",),
            True,
            ("resolved_at",),
            ("open",),
        ),
        _R(
            "refund",
            ("refunded",),
            ("captured", "paid", "completed", "succeeded", "settled", "partially_refunded", "charged"),
            ("refunded", "is_refunded"),
            True,
            ("refunded_at",),
            ("paid",),
        ),
        _R(
            "capture",
            ("captured", "paid", "succeeded"),
            ("authorized", "approved", "pending", "requires_capture"),
            ("captured",),
            True,
            ("captured_at",),
            ("authorized",),
        ),
        _R(
            "authorize",
            ("authorized",),
            ("pending", "created", "new", "requires_action"),
            ("authorized",),
            True,
            ("authorized_at",),
            ("pending",),
        ),
        _R(
            "void",
            ("voided", "void", "cancelled", "canceled"),
            ("authorized", "pending", "open", "draft", "created", "issued"),
            ("voided",),
            True,
            ("voided_at",),
            ("authorized",),
        ),
        _R(
            "pay",
            ("paid", "succeeded", "completed"),
            ("pending", "open", "unpaid", "due", "issued", "confirmed", "overdue"),
            ("paid", "is_paid"),
            True,
            ("paid_at",),
            ("pending",),
        ),
        _R("archive", ("archived",), (), ("archived", "is_archived"), True, ("archived_at",), ("active",)),
        _R(
            "unarchive",
            ("active", "open", "unarchived"),
            ("archived",),
            ("archived", "is_archived"),
            False,
            (),
            ("archived",),
        ),
        _R(
            "trash",
            ("trashed", "deleted"),
            (),
            ("trashed", "is_trashed", "deleted"),
            True,
            ("trashed_at",),
            ("active",),
        ),
        _R(
            "untrash",
            ("active",),
            ("trashed", "deleted"),
            ("trashed", "is_trashed", "deleted"),
            False,
            (),
            ("trashed",),
        ),
        _R(
            "restore",
            ("active", "restored"),
            ("deleted", "archived", "trashed"),
            ("deleted", "trashed", "archived"),
            False,
            (),
            ("deleted",),
        ),
        _R(
            "activate",
            ("active", "activated", "enabled"),
            (
                "inactive",
                "pending",
                "draft",
                "deactivated",
                "disabled",
                "suspended",
                "paused",
                "new",
                "created",
            ),
            ("active", "is_active", "enabled"),
            True,
            ("activated_at",),
            ("inactive",),
        ),
        _R(
            "deactivate",
            ("inactive", "deactivated", "disabled"),
            ("active", "activated", "enabled"),
            ("active", "is_active", "enabled"),
            False,
            ("deactivated_at",),
            ("active",),
        ),
        _R(
            "enable",
            ("enabled", "active"),
            ("disabled", "inactive"),
            ("enabled", "is_enabled", "active"),
            True,
            (),
            ("disabled",),
        ),
        _R(
            "disable",
            ("disabled", "inactive"),
            ("enabled", "active"),
            ("enabled", "is_enabled", "active"),
            False,
            ("disabled_at",),
            ("enabled",),
        ),
        _R(
            "suspend",
            ("suspended",),
            ("active", "enabled", "trialing", "open"),
            ("suspended",),
            True,
            ("suspended_at",),
            ("active",),
        ),
        _R(
            "pause",
            ("paused", "suspended", "on_hold"),
            ("active", "open", "running", "trialing", "enabled"),
            ("paused", "is_paused"),
            True,
            ("paused_at",),
            ("active",),
        ),
        _R(
            "resume",
            ("active", "resumed", "running", "open"),
            ("paused", "suspended", "on_hold"),
            ("paused", "is_paused"),
            False,
            ("resumed_at",),
            ("paused",),
        ),
        _R(
            "submit",
            ("submitted", "pending", "in_review"),
            ("draft", "new", "created", "open"),
            ("submitted",),
            True,
            ("submitted_at",),
            ("draft",),
        ),
        _R(
            "publish",
            ("published", "live", "active"),
            ("draft", "unpublished", "scheduled"),
            ("published", "is_published"),
            True,
            ("published_at",),
            ("draft",),
        ),
        _R(
            "unpublish",
            ("unpublished", "draft"),
            ("published", "live"),
            ("published", "is_published"),
            False,
            (),
            ("published",),
        ),
        _R(
            "check_in",
            ("checked_in",),
            ("confirmed", "booked", "scheduled", "reserved", "arrived"),
            ("checked_in",),
            True,
            ("checked_in_at",),
            ("confirmed",),
        ),
        _R(
            "check_out",
            ("checked_out", "completed"),
            ("checked_in",),
            ("checked_out",),
            True,
            ("checked_out_at",),
            ("checked_in",),
        ),
        _R(
            "ship",
            ("shipped", "in_transit"),
            ("pending", "paid", "confirmed", "processing", "packed", "ready", "awaiting_shipment"),
            ("shipped",),
            True,
            ("shipped_at",),
            ("pending",),
        ),
        _R(
            "deliver",
            ("delivered", "completed"),
            ("shipped", "in_transit", "out_for_delivery", "picked_up", "dispatched"),
            ("delivered",),
            True,
            ("delivered_at",),
            ("shipped",),
        ),
        _R(
            "pickup",
            ("picked_up", "in_transit", "collected"),
            ("assigned", "pending", "ready", "accepted", "ready_for_pickup", "scheduled"),
            ("picked_up",),
            True,
            ("picked_up_at",),
            ("assigned",),
        ),
        _R(
            "dispatch",
            ("dispatched", "in_transit", "shipped"),
            ("pending", "ready", "assigned", "accepted", "preparing"),
            ("dispatched",),
            True,
            ("dispatched_at",),
            ("pending",),
        ),
        _R(
            "send",
            ("sent", "delivered", "queued"),
            ("draft", "scheduled", "pending", "queued", "unsent"),
            ("sent", "is_sent"),
            True,
            ("sent_at",),
            ("draft",),
        ),
        _R(
            "place",
            ("placed", "submitted", "pending", "confirmed"),
            ("draft", "cart", "new", "created", "open"),
            ("placed",),
            True,
            ("placed_at",),
            ("draft",),
        ),
        _R(
            "open",
            ("open", "opened", "active"),
            ("closed", "paused", "inactive", "draft"),
            ("open", "is_open"),
            True,
            ("opened_at",),
            ("closed",),
        ),
        _R(
            "start",
            ("in_progress", "started", "active", "running"),
            ("pending", "scheduled", "todo", "not_started", "new", "open", "draft", "stopped", "queued"),
            ("started",),
            True,
            ("started_at",),
            ("pending",),
        ),
        _R(
            "stop",
            ("stopped", "ended", "inactive"),
            ("running", "active", "started", "in_progress"),
            ("running",),
            False,
            ("stopped_at",),
            ("running",),
        ),
        _R(
            "end",
            ("ended", "completed", "closed"),
            ("active", "in_progress", "started", "running", "open"),
            ("ended",),
            True,
            ("ended_at",),
            ("active",),
        ),
        _R(
            "expire",
            ("expired",),
            ("active", "pending", "open", "valid"),
            ("expired",),
            True,
            ("expired_at",),
            ("active",),
        ),
        _R(
            "lock",
            ("locked",),
            ("unlocked", "open", "active"),
            ("locked", "is_locked"),
            True,
            ("locked_at",),
            ("unlocked",),
        ),
        _R(
            "unlock",
            ("unlocked", "open", "active"),
            ("locked",),
            ("locked", "is_locked"),
            False,
            (),
            ("locked",),
        ),
        _R(
            "block",
            ("blocked",),
            ("active", "open", "unblocked"),
            ("blocked", "is_blocked"),
            True,
            ("blocked_at",),
            ("active",),
        ),
        _R(
            "unblock",
            ("active", "unblocked"),
            ("blocked",),
            ("blocked", "is_blocked"),
            False,
            (),
            ("blocked",),
        ),
        _R(
            "issue",
            ("issued", "open", "sent"),
            ("draft", "pending", "new"),
            ("issued",),
            True,
            ("issued_at",),
            ("draft",),
        ),
        _R(
            "finalize",
            ("finalized", "final", "open", "issued"),
            ("draft", "pending"),
            ("finalized",),
            True,
            ("finalized_at",),
            ("draft",),
        ),
        _R(
            "return",
            ("returned",),
            ("delivered", "completed", "loaned", "checked_out", "borrowed", "active", "on_loan"),
            ("returned",),
            True,
            ("returned_at",),
            ("active",),
        ),
        # the row stays active; what changes is a counter/date (``renewal_count``, ``renewed_at``)
        _R(
            "renew",
            ("renewed",),
            ("active", "expiring", "expired", "on_loan", "borrowed", "overdue"),
            (),
            True,
            ("renewed_at", "last_renewed_at"),
            (),
            True,
        ),
        _R(
            "mark_read",
            ("read",),
            ("unread", "new", "delivered"),
            ("read", "is_read", "seen"),
            True,
            ("read_at",),
            ("unread",),
        ),
        _R("mark_unread", ("unread",), ("read",), ("read", "is_read", "seen"), False, (), ("read",)),
        _R(
            "star",
            ("starred",),
            (),
            ("starred", "is_starred", "favorite", "favorited"),
            True,
            (),
            ("unstarred",),
        ),
        _R(
            "unstar",
            ("unstarred",),
            (),
            ("starred", "is_starred", "favorite", "favorited"),
            False,
            (),
            ("starred",),
        ),
        _R("pin", ("pinned",), (), ("pinned", "is_pinned"), True, ("pinned_at",), ("unpinned",)),
        _R("unpin", ("unpinned",), (), ("pinned", "is_pinned"), False, (), ("pinned",)),
        _R("mute", ("muted",), (), ("muted", "is_muted"), True, (), ("unmuted",)),
        _R("unmute", ("unmuted",), (), ("muted", "is_muted"), False, (), ("muted",)),
        _R(
            "hold",
            ("on_hold", "held"),
            ("active", "pending", "open", "confirmed"),
            ("on_hold",),
            True,
            (),
            ("active",),
        ),
        _R(
            "release",
            ("released", "active"),
            ("on_hold", "held", "reserved", "pending"),
            ("on_hold",),
            False,
            ("released_at",),
            ("on_hold",),
        ),
        _R(
            "verify",
            ("verified",),
            ("pending", "unverified", "new"),
            ("verified", "is_verified"),
            True,
            ("verified_at",),
            ("unverified",),
        ),
        _R("reinstate", ("active",), ("suspended", "cancelled", "inactive"), (), True, (), ("suspended",)),
        _R(
            "dismiss",
            ("dismissed",),
            ("open", "active", "pending"),
            ("dismissed",),
            True,
            ("dismissed_at",),
            ("open",),
        ),
        _R(
            "drop",
            ("dropped", "withdrawn", "cancelled"),
            ("enrolled", "waitlisted", "registered", "active", "pending", "confirmed"),
            ("dropped",),
            True,
            ("dropped_at", "dropped_on"),
            ("enrolled", "waitlisted"),
        ),
        _R(
            "withdraw",
            ("withdrawn", "cancelled", "dropped"),
            ("pending", "submitted", "open", "active", "requested", "enrolled", "waitlisted", "in_review"),
            ("withdrawn",),
            True,
            ("withdrawn_at", "withdrawn_on"),
            ("pending",),
        ),
        _R(
            "lose",
            ("lost",),
            ("active", "on_loan", "borrowed", "checked_out", "overdue", "issued", "frozen"),
            ("lost", "is_lost"),
            True,
            ("lost_at", "lost_on", "declared_lost_at", "reported_lost_at"),
            ("active",),
        ),
        _R(
            "freeze",
            ("frozen", "locked", "suspended", "blocked"),
            ("active", "enabled", "open"),
            ("frozen", "is_frozen"),
            True,
            ("frozen_at",),
            ("active",),
        ),
        _R(
            "unfreeze",
            ("active", "enabled", "open"),
            ("frozen", "locked"),
            ("frozen", "is_frozen"),
            False,
            ("unfrozen_at",),
            ("frozen",),
        ),
        _R(
            "discontinue",
            ("discontinued", "stopped", "cancelled"),
            ("active", "on_hold", "pending", "paused"),
            ("discontinued",),
            True,
            ("discontinued_at", "discontinued_on"),
            ("active",),
        ),
        _R(
            "skip",
            ("skipped",),
            ("planned", "scheduled", "pending", "todo", "not_started", "upcoming"),
            ("skipped",),
            True,
            ("skipped_at",),
            ("planned",),
        ),
        _R(
            "abandon",
            ("abandoned",),
            ("active", "in_progress", "open", "pending", "started"),
            ("abandoned",),
            True,
            ("abandoned_at",),
            ("active",),
        ),
        _R(
            "dispute",
            ("disputed",),
            ("posted", "pending", "completed", "settled", "paid", "captured", "succeeded"),
            ("disputed",),
            True,
            ("disputed_at",),
            ("posted",),
        ),
        _R(
            "no_show",
            ("no_show", "noshow", "missed"),
            ("booked", "scheduled", "confirmed", "pending"),
            ("no_show",),
            True,
            (),
            ("booked",),
        ),
        _R(
            "collect",
            ("collected",),
            ("ordered", "pending", "requested", "scheduled"),
            ("collected",),
            True,
            ("collected_at",),
            ("ordered",),
        ),
        # field writers: a status move only where the enum already has the target
        _R(
            "assign",
            ("assigned",),
            ("open", "new", "unassigned", "pending", "reopened", "todo", "triage"),
            (),
            True,
            ("assigned_at",),
            (),
            True,
        ),
        _R("unassign", ("unassigned", "open"), ("assigned",), (), True, (), (), True),
        _R(
            "grade",
            ("graded",),
            ("enrolled", "completed", "active", "in_progress", "submitted", "finished"),
            (),
            True,
            ("graded_at", "graded_on"),
            (),
            True,
        ),
        _R(
            "reschedule",
            ("rescheduled",),
            ("scheduled", "booked", "confirmed", "pending", "rescheduled"),
            (),
            True,
            ("rescheduled_at",),
            (),
            True,
        ),
        _R(
            "refill",
            ("refilled",),
            ("active",),
            (),
            True,
            ("last_filled_on", "last_filled_at", "refilled_at"),
            (),
            True,
        ),
        _R("respond", ("responded",), (), (), True, ("responded_at",), (), True),
        _R(
            "acknowledge",
            ("acknowledged",),
            ("open", "triggered", "new", "pending"),
            ("acknowledged",),
            True,
            ("acknowledged_at",),
            ("open",),
        ),
    ]
}

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


def participles(word: str) -> tuple[str, ...]:
    """``skip`` -> (skipped,), ``discontinue`` -> (discontinued,), ``no_show`` -> (no_show,): status candidates."""
    w = word.lower()
    head, _, rest = w.partition("_")
    if rest:  # declare_lost -> lost; no_show -> no_show
        return tuple(dict.fromkeys([w, rest, _inflect(head)]))
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
    return ActionRule(verb, forms, (), (), True, stamps, (), True)


def action_rule(word: str) -> ActionRule | None:
    """The rule for a path word (``cancel``, ``cancellation``, ``check-in``), or None."""
    w = word.replace("-", "_").lower()
    if w in ACTION_RULES:
        return ACTION_RULES[w]
    v = NOUN_VERBS.get(w)
    return ACTION_RULES.get(v) if v else None
