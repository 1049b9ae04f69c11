"""The action table: which verbs move a status field, to what, and from where.

Conservative on purpose: an action is only emitted when its verb is in this table and the
entity has a field it can move (a status/state enum or string, or a boolean flag). Each
row says the target status candidates (the first one present in the field's enum wins),
the statuses the action is allowed from (intersected with the enum; when that leaves
nothing, the action is allowed from any status that is neither the target nor terminal),
and the boolean flag it may set instead (``archived`` for archive).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ActionRule", "ACTION_RULES", "TERMINAL", "action_rule", "NOUN_VERBS"]


@dataclass(frozen=True)
class ActionRule:
    verb: str
    targets: tuple[str, ...]
    allowed_from: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()          # boolean fields the action sets to ``flag_value``
    flag_value: bool = True
    timestamps: tuple[str, ...] = field(default=())  # datetime fields set to now when present
    synth_from: tuple[str, ...] = ("active",)  # states used when we must synthesize a status enum


TERMINAL = frozenset({
    "cancelled", "canceled", "completed", "complete", "closed", "refunded", "failed", "expired", "rejected",
    "declined", "void", "voided", "deleted", "archived", "fulfilled", "delivered", "done", "finished",
    "resolved", "denied", "terminated", "checked_out", "returned",
})

_R = ActionRule
ACTION_RULES: dict[str, ActionRule] = {r.verb: r for r in [
    _R("cancel", ("cancelled", "canceled", "voided", "void"), ("pending", "confirmed", "scheduled", "booked", "active",
       "open", "placed", "accepted", "draft", "new", "requested", "authorized", "created", "processing"),
       ("cancelled", "canceled", "is_cancelled"), True, ("cancelled_at", "canceled_at"), ("pending", "confirmed")),
    _R("confirm", ("confirmed",), ("pending", "draft", "new", "requested", "tentative", "unconfirmed", "booked", "held"),
       ("confirmed", "is_confirmed"), True, ("confirmed_at",), ("pending",)),
    _R("approve", ("approved",), ("pending", "submitted", "requested", "in_review", "pending_approval", "draft", "new"),
       ("approved", "is_approved"), True, ("approved_at",), ("pending",)),
    _R("reject", ("rejected", "declined", "denied"), ("pending", "submitted", "requested", "in_review", "pending_approval", "new"),
       ("rejected",), True, ("rejected_at",), ("pending",)),
    _R("decline", ("declined", "rejected"), ("pending", "requested", "new", "submitted", "placed"), ("declined",), True,
       ("declined_at",), ("pending",)),
    _R("deny", ("denied", "rejected", "declined"), ("pending", "requested", "submitted"), (), True, ("denied_at",), ("pending",)),
    _R("accept", ("accepted", "confirmed", "approved"), ("pending", "placed", "submitted", "requested", "new", "offered", "invited"),
       ("accepted",), True, ("accepted_at",), ("pending",)),
    _R("complete", ("completed", "complete", "done", "finished", "fulfilled"), ("in_progress", "active", "started", "open",
       "pending", "confirmed", "scheduled", "todo", "picked_up", "in_transit", "accepted", "processing"),
       ("completed", "is_completed", "done", "complete"), True, ("completed_at", "finished_at"), ("active",)),
    _R("finish", ("finished", "completed", "done"), ("in_progress", "active", "started", "running"), ("finished",), True,
       ("finished_at", "completed_at"), ("active",)),
    _R("fulfill", ("fulfilled", "completed"), ("pending", "paid", "confirmed", "processing", "accepted"), ("fulfilled",), True,
       ("fulfilled_at",), ("pending",)),
    _R("close", ("closed",), ("open", "active", "pending", "in_progress", "reopened", "resolved"), ("closed", "is_closed"), True,
       ("closed_at",), ("open",)),
    _R("reopen", ("reopened", "open", "active"), ("closed", "resolved", "completed", "done", "archived"), ("closed",), False,
       ("reopened_at",), ("closed",)),
    _R("resolve", ("resolved", "closed"), ("open", "pending", "in_progress", "active", "reopened"), ("resolved",), True,
       ("resolved_at",), ("open",)),
    _R("refund", ("refunded",), ("captured", "paid", "completed", "succeeded", "settled", "partially_refunded", "charged"),
       ("refunded", "is_refunded"), True, ("refunded_at",), ("paid",)),
    _R("capture", ("captured", "paid", "succeeded"), ("authorized", "approved", "pending", "requires_capture"), ("captured",), True,
       ("captured_at",), ("authorized",)),
    _R("authorize", ("authorized",), ("pending", "created", "new", "requires_action"), ("authorized",), True,
       ("authorized_at",), ("pending",)),
    _R("void", ("voided", "void", "cancelled", "canceled"), ("authorized", "pending", "open", "draft", "created", "issued"),
       ("voided",), True, ("voided_at",), ("authorized",)),
    _R("pay", ("paid", "succeeded", "completed"), ("pending", "open", "unpaid", "due", "issued", "confirmed", "overdue"),
       ("paid", "is_paid"), True, ("paid_at",), ("pending",)),
    _R("archive", ("archived",), (), ("archived", "is_archived"), True, ("archived_at",), ("active",)),
    _R("unarchive", ("active", "open", "unarchived"), ("archived",), ("archived", "is_archived"), False, (), ("archived",)),
    _R("trash", ("trashed", "deleted"), (), ("trashed", "is_trashed", "deleted"), True, ("trashed_at",), ("active",)),
    _R("untrash", ("active",), ("trashed", "deleted"), ("trashed", "is_trashed", "deleted"), False, (), ("trashed",)),
    _R("restore", ("active", "restored"), ("deleted", "archived", "trashed"), ("deleted", "trashed", "archived"), False, (),
       ("deleted",)),
    _R("activate", ("active", "activated", "enabled"), ("inactive", "pending", "draft", "deactivated", "disabled", "suspended",
       "paused", "new", "created"), ("active", "is_active", "enabled"), True, ("activated_at",), ("inactive",)),
    _R("deactivate", ("inactive", "deactivated", "disabled"), ("active", "activated", "enabled"), ("active", "is_active",
       "enabled"), False, ("deactivated_at",), ("active",)),
    _R("enable", ("enabled", "active"), ("disabled", "inactive"), ("enabled", "is_enabled", "active"), True, (), ("disabled",)),
    _R("disable", ("disabled", "inactive"), ("enabled", "active"), ("enabled", "is_enabled", "active"), False, ("disabled_at",),
       ("enabled",)),
    _R("suspend", ("suspended",), ("active", "enabled", "trialing", "open"), ("suspended",), True, ("suspended_at",), ("active",)),
    _R("pause", ("paused", "suspended", "on_hold"), ("active", "open", "running", "trialing", "enabled"), ("paused", "is_paused"),
       True, ("paused_at",), ("active",)),
    _R("resume", ("active", "resumed", "running", "open"), ("paused", "suspended", "on_hold"), ("paused", "is_paused"), False,
       ("resumed_at",), ("paused",)),
    _R("submit", ("submitted", "pending", "in_review"), ("draft", "new", "created", "open"), ("submitted",), True,
       ("submitted_at",), ("draft",)),
    _R("publish", ("published", "live", "active"), ("draft", "unpublished", "scheduled"), ("published", "is_published"), True,
       ("published_at",), ("draft",)),
    _R("unpublish", ("unpublished", "draft"), ("published", "live"), ("published", "is_published"), False, (), ("published",)),
    _R("check_in", ("checked_in",), ("confirmed", "booked", "scheduled", "reserved", "arrived"), ("checked_in",), True,
       ("checked_in_at",), ("confirmed",)),
    _R("check_out", ("checked_out", "completed"), ("checked_in",), ("checked_out",), True, ("checked_out_at",), ("checked_in",)),
    _R("ship", ("shipped", "in_transit"), ("pending", "paid", "confirmed", "processing", "packed", "ready", "awaiting_shipment"),
       ("shipped",), True, ("shipped_at",), ("pending",)),
    _R("deliver", ("delivered", "completed"), ("shipped", "in_transit", "out_for_delivery", "picked_up", "dispatched"),
       ("delivered",), True, ("delivered_at",), ("shipped",)),
    _R("pickup", ("picked_up", "in_transit", "collected"), ("assigned", "pending", "ready", "accepted", "ready_for_pickup",
       "scheduled"), ("picked_up",), True, ("picked_up_at",), ("assigned",)),
    _R("dispatch", ("dispatched", "in_transit", "shipped"), ("pending", "ready", "assigned", "accepted", "preparing"),
       ("dispatched",), True, ("dispatched_at",), ("pending",)),
    _R("send", ("sent", "delivered", "queued"), ("draft", "scheduled", "pending", "queued", "unsent"), ("sent", "is_sent"), True,
       ("sent_at",), ("draft",)),
    _R("place", ("placed", "submitted", "pending", "confirmed"), ("draft", "cart", "new", "created", "open"), ("placed",), True,
       ("placed_at",), ("draft",)),
    _R("open", ("open", "opened", "active"), ("closed", "paused", "inactive", "draft"), ("open", "is_open"), True,
       ("opened_at",), ("closed",)),
    _R("start", ("in_progress", "started", "active", "running"), ("pending", "scheduled", "todo", "not_started", "new", "open",
       "draft", "stopped", "queued"), ("started",), True, ("started_at",), ("pending",)),
    _R("stop", ("stopped", "ended", "inactive"), ("running", "active", "started", "in_progress"), ("running",), False,
       ("stopped_at",), ("running",)),
    _R("end", ("ended", "completed", "closed"), ("active", "in_progress", "started", "running", "open"), ("ended",), True,
       ("ended_at",), ("active",)),
    _R("expire", ("expired",), ("active", "pending", "open", "valid"), ("expired",), True, ("expired_at",), ("active",)),
    _R("lock", ("locked",), ("unlocked", "open", "active"), ("locked", "is_locked"), True, ("locked_at",), ("unlocked",)),
    _R("unlock", ("unlocked", "open", "active"), ("locked",), ("locked", "is_locked"), False, (), ("locked",)),
    _R("block", ("blocked",), ("active", "open", "unblocked"), ("blocked", "is_blocked"), True, ("blocked_at",), ("active",)),
    _R("unblock", ("active", "unblocked"), ("blocked",), ("blocked", "is_blocked"), False, (), ("blocked",)),
    _R("issue", ("issued", "open", "sent"), ("draft", "pending", "new"), ("issued",), True, ("issued_at",), ("draft",)),
    _R("finalize", ("finalized", "final", "open", "issued"), ("draft", "pending"), ("finalized",), True, ("finalized_at",),
       ("draft",)),
    _R("return", ("returned",), ("delivered", "completed", "loaned", "checked_out", "borrowed", "active", "on_loan"),
       ("returned",), True, ("returned_at",), ("active",)),
    _R("renew", ("active", "renewed"), ("active", "expiring", "expired", "on_loan", "borrowed"), (), True, ("renewed_at",),
       ("active",)),
    _R("mark_read", ("read",), ("unread", "new", "delivered"), ("read", "is_read", "seen"), True, ("read_at",), ("unread",)),
    _R("mark_unread", ("unread",), ("read",), ("read", "is_read", "seen"), False, (), ("read",)),
    _R("star", ("starred",), (), ("starred", "is_starred", "favorite", "favorited"), True, (), ("unstarred",)),
    _R("unstar", ("unstarred",), (), ("starred", "is_starred", "favorite", "favorited"), False, (), ("starred",)),
    _R("pin", ("pinned",), (), ("pinned", "is_pinned"), True, ("pinned_at",), ("unpinned",)),
    _R("unpin", ("unpinned",), (), ("pinned", "is_pinned"), False, (), ("pinned",)),
    _R("mute", ("muted",), (), ("muted", "is_muted"), True, (), ("unmuted",)),
    _R("unmute", ("unmuted",), (), ("muted", "is_muted"), False, (), ("muted",)),
    _R("hold", ("on_hold", "held"), ("active", "pending", "open", "confirmed"), ("on_hold",), True, (), ("active",)),
    _R("release", ("released", "active"), ("on_hold", "held", "reserved", "pending"), ("on_hold",), False, ("released_at",),
       ("on_hold",)),
    _R("verify", ("verified",), ("pending", "unverified", "new"), ("verified", "is_verified"), True, ("verified_at",),
       ("unverified",)),
    _R("reinstate", ("active",), ("suspended", "cancelled", "inactive"), (), True, (), ("suspended",)),
    _R("dismiss", ("dismissed",), ("open", "active", "pending"), ("dismissed",), True, ("dismissed_at",), ("open",)),
    _R("acknowledge", ("acknowledged",), ("open", "triggered", "new", "pending"), ("acknowledged",), True, ("acknowledged_at",),
       ("open",)),
]}

# Noun forms seen in paths (``/orders/{id}/cancellation``) and synonyms.
NOUN_VERBS = {
    "cancellation": "cancel", "cancelation": "cancel", "confirmation": "confirm", "approval": "approve",
    "rejection": "reject", "completion": "complete", "activation": "activate", "deactivation": "deactivate",
    "refunds": None, "checkin": "check_in", "check_in": "check_in", "checkout": "check_out", "check_out": "check_out",
    "pick_up": "pickup", "picked_up": "pickup", "submission": "submit", "publication": "publish", "closure": "close",
    "archival": "archive", "suspension": "suspend", "verification": "verify", "acknowledgement": "acknowledge",
    "reactivate": "activate", "mark_as_read": "mark_read", "mark_as_unread": "mark_unread", "read": "mark_read",
    "unread": "mark_unread", "accept": "accept", "terminate": "cancel", "revoke": "cancel", "withdraw": "cancel",
    "abort": "cancel", "checkin_booking": "check_in",
}


def action_rule(word: str) -> ActionRule | None:
    """The rule for a path word (``cancel``, ``cancellation``, ``check-in``), or None."""
    w = word.replace("-", "_").lower()
    if w in ACTION_RULES:
        return ACTION_RULES[w]
    v = NOUN_VERBS.get(w)
    return ACTION_RULES.get(v) if v else None
