"""The vocabulary of field roles, cross-field constraints and status words (documented in
``envfactory.spec.roles``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "FieldRole",
    "ConstraintSpec",
    "PERSON_ROLES",
    "TEXT_ROLES",
    "TIME_ROLES",
    "STATUS_PAST",
    "STATUS_FUTURE",
    "STATUS_WORDS",
]


class FieldRole(StrEnum):
    person_name = "person_name"
    given_name = "given_name"
    family_name = "family_name"
    username = "username"
    organisation = "organisation"
    title = "title"  # type: ignore[assignment]  # the role, not str.title
    label = "label"
    city = "city"
    country = "country"
    country_code = "country_code"
    airport_code = "airport_code"
    address = "address"
    postcode = "postcode"
    region = "region"
    latitude = "latitude"
    longitude = "longitude"
    email = "email"
    phone = "phone"
    url = "url"
    hostname = "hostname"
    money = "money"
    currency = "currency"
    quantity = "quantity"
    percentage = "percentage"
    rating = "rating"
    duration = "duration"
    date = "date"
    datetime = "datetime"
    time = "time"
    birth_date = "birth_date"
    status = "status"
    code = "code"
    reference = "reference"
    internal_id = "internal_id"
    sentence = "sentence"
    paragraph = "paragraph"


PERSON_ROLES = frozenset(
    {FieldRole.person_name, FieldRole.given_name, FieldRole.family_name, FieldRole.username}
)
TEXT_ROLES = frozenset({FieldRole.title, FieldRole.label, FieldRole.sentence, FieldRole.paragraph})
TIME_ROLES = frozenset({FieldRole.date, FieldRole.datetime, FieldRole.time, FieldRole.birth_date})


class ConstraintSpec(BaseModel):
    """A rule the rows of one entity keep (see the module docstring for each ``kind``)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["order", "clock", "age", "status_time", "product", "set_when"]
    fields: list[str] = Field(min_length=1, max_length=3)
    min: float | None = Field(default=None, description="order: least gap (hours); age: least age (years).")
    max: float | None = Field(
        default=None, description="order: largest gap (hours); age: largest age (years)."
    )
    relation: Literal["past", "future"] | None = Field(
        default=None, description="clock: where the value lies."
    )
    past: list[str] | None = Field(default=None, description="status_time: statuses whose time has passed.")
    future: list[str] | None = Field(default=None, description="status_time: statuses whose time is ahead.")

    @model_validator(mode="after")
    def _check(self) -> ConstraintSpec:
        need = {"order": 2, "clock": 1, "age": 1, "status_time": 2, "product": 3, "set_when": 2}[self.kind]
        if len(self.fields) != need:
            raise ValueError(f"{self.kind} constraint needs {need} field(s), got {self.fields}")
        if self.kind == "clock" and self.relation is None:
            raise ValueError(f"clock constraint on {self.fields[0]!r} needs relation: past or future")
        if self.kind == "status_time" and not (self.past or self.future):
            raise ValueError(f"status_time constraint on {self.fields[0]!r} needs past or future statuses")
        if self.kind == "set_when" and not self.past:
            raise ValueError(
                f"set_when constraint on {self.fields[0]!r} needs the statuses it is set in (past)"
            )
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"{self.kind} constraint on {self.fields}: min {self.min} > max {self.max}")
        return self

    def key(self) -> tuple[str, tuple[str, ...]]:
        return self.kind, tuple(self.fields)


# ---- status words ------------------------------------------------------------------------------

STATUS_PAST = frozenset(
    {
        "completed",
        "complete",
        "done",
        "finished",
        "delivered",
        "arrived",
        "landed",
        "checked_out",
        "no_show",
        "fulfilled",
        "closed",
        "attended",
        "departed",
        "expired",
        "resolved",
        "returned",
        "refunded",
        "past",
        "cancelled_late",
        "discharged",
        "dispensed",
        "picked_up",
        "shipped_and_delivered",
        "ended",
        "archived",
    }
)
STATUS_FUTURE = frozenset(
    {
        "scheduled",
        "booked",
        "upcoming",
        "planned",
        "reserved",
        "not_started",
        "awaiting_arrival",
        "future",
        "tentative",
    }
)
STATUS_WORDS = (
    STATUS_PAST
    | STATUS_FUTURE
    | frozenset(
        {
            "active",
            "inactive",
            "pending",
            "confirmed",
            "cancelled",
            "canceled",
            "draft",
            "open",
            "new",
            "approved",
            "rejected",
            "declined",
            "failed",
            "succeeded",
            "success",
            "processing",
            "in_progress",
            "on_hold",
            "paused",
            "suspended",
            "blocked",
            "enabled",
            "disabled",
            "deleted",
            "verified",
            "unverified",
            "paid",
            "unpaid",
            "overdue",
            "partially_paid",
            "authorized",
            "captured",
            "voided",
            "refund_pending",
            "shipped",
            "in_transit",
            "ready",
            "queued",
            "running",
            "waiting",
            "accepted",
            "submitted",
            "under_review",
            "review",
            "published",
            "unpublished",
            "available",
            "unavailable",
            "sold_out",
            "out_of_stock",
            "in_stock",
            "discontinued",
            "checked_in",
            "boarding",
            "delayed",
            "on_time",
            "diverted",
            "valid",
            "invalid",
            "trial",
            "trialing",
            "past_due",
            "incomplete",
            "requires_action",
            "requires_payment_method",
            "sent",
            "received",
            "read",
            "unread",
            "delivered",
            "bounced",
            "error",
            "ok",
            "live",
            "sandbox",
            "pending_review",
            "awaiting_payment",
            "awaiting_fulfillment",
            "awaiting_shipment",
            "partially_shipped",
            "partially_refunded",
            "disputed",
            "verification_required",
            "incomplete_expired",
            "open_for_booking",
            "waitlisted",
            "held",
            "locked",
            "unlocked",
            "online",
            "offline",
            "busy",
            "away",
            "idle",
            "todo",
            "backlog",
            "started",
            "unstarted",
            "in_review",
            "merged",
            "triage",
            "resolved",
            "reopened",
            "escalated",
            "abandoned",
            "converted",
            "won",
            "lost",
            "qualified",
            "unqualified",
            "contacted",
            "prospect",
            "preliminary",
            "final",
            "amended",
            "corrected",
            "entered_in_error",
            "registered",
            "cancelled_by_customer",
            "proposed",
            "arrived",
            "fulfilled",
            "returned",
            "activated",
            "deactivated",
            "frozen",
            "issued",
            "revoked",
        }
    )
)
