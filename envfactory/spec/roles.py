"""What a field means, and how fields of a row must agree: field roles and cross-field constraints.

A field's ``type`` says how it is stored; its ``role`` says what a person would expect to read
in it. The vocabulary is small on purpose (``FieldRole``):

- people and organisations: ``person_name`` / ``given_name`` / ``family_name`` / ``username``,
  ``organisation`` (a company, hotel, airline, clinic ...);
- things: ``title`` (a product, a document, an event: a few words), ``label`` (a short
  category-like value: a type, a tag, a department);
- places: ``city``, ``country``, ``country_code`` (ISO 3166 alpha-2), ``airport_code`` (IATA),
  ``address``, ``postcode``, ``region``, ``latitude``, ``longitude``;
- contact: ``email``, ``phone``, ``url``;
- amounts: ``money`` (``unit`` names the currency when the document does), ``currency``
  (ISO 4217), ``quantity`` (a count with a realistic range: ``minimum``/``maximum``),
  ``percentage``, ``rating``, ``duration``;
- time: ``date``, ``datetime``, ``time``, ``birth_date``;
- ``status`` (one of the documented values: ``enum``, or ``examples`` for a string field);
- ``code`` (a documented ``pattern`` such as ``??-####``, or an example); ``reference`` (a
  user-facing reference a person would know and say: a booking reference, an order number);
  ``internal_id`` (an opaque id no person would say);
- free text: ``sentence`` (a note, a reason), ``paragraph`` (a description, a message body).

Cross-field constraints (``ConstraintSpec``, on an entity), all checked by ``envfactory audit``
and satisfied by the seeder:

- ``order``: ``fields = [earlier, later]``; ``later`` is not before ``earlier`` and, when
  ``max`` is set, at most ``max`` hours after it (``min``: at least that many hours);
- ``clock``: ``fields = [f]`` lies in the ``past`` or ``future`` of the environment clock;
- ``age``: ``fields = [birth_date]``: the age at the clock lies in [``min``, ``max``] years;
- ``status_time``: ``fields = [time, status]``: rows whose status is in ``past`` lie before the
  clock, rows whose status is in ``future`` after it (``completed`` visits happened);
- ``product``: ``fields = [total, quantity, price]``: ``total = quantity * price``.
- ``set_when``: ``fields = [stamp, status]``: ``stamp`` is set only on rows whose status is in
  ``past`` (a ``cancelled_at`` only on cancelled rows).

Roles and constraints a spec does not state are inferred from names, types and enums
(``infer_role``, ``infer_constraints``), so old specs are judged and seeded the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum, StrEnum
from typing import Any, Literal

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
    "is_person_entity",
    "infer_role",
    "infer_constraints",
    "realistic_range",
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


# ---- who is a person ---------------------------------------------------------------------------

_PERSON_WORDS = {
    "user",
    "users",
    "customer",
    "patient",
    "traveler",
    "traveller",
    "person",
    "people",
    "employee",
    "member",
    "guest",
    "passenger",
    "contact",
    "author",
    "practitioner",
    "doctor",
    "physician",
    "staff",
    "driver",
    "agent",
    "owner",
    "student",
    "teacher",
    "instructor",
    "artist",
    "speaker",
    "attendee",
    "participant",
    "client",
    "lead",
    "recipient",
    "sender",
    "buyer",
    "seller",
    "holder",
    "profile",
    "account_holder",
    "applicant",
    "candidate",
    "volunteer",
    "nurse",
    "provider",
    "therapist",
    "trainer",
    "coach",
    "tenant",
    "landlord",
    "subscriber",
    "friend",
    "follower",
    "reviewer",
    "assignee",
    "reporter",
    "creator",
    "manager",
    "worker",
    "rider",
    "host",
    "player",
    "musician",
    "writer",
    "persona",
    "individual",
    "beneficiary",
    "payee",
    "cardholder",
    "consumer",
    "shopper",
    "visitor",
    "admin",
    "administrator",
    "operator",
    "teammate",
    "colleague",
    "caregiver",
    "dependent",
    "child",
}
_ANIMAL_WORDS = {"pet", "animal", "dog", "cat"}
_ORG_WORDS = {
    "company",
    "organization",
    "organisation",
    "org",
    "hotel",
    "airline",
    "carrier",
    "vendor",
    "merchant",
    "restaurant",
    "clinic",
    "pharmacy",
    "store",
    "shop",
    "bank",
    "brand",
    "business",
    "supplier",
    "partner",
    "institution",
    "university",
    "school",
    "hospital",
    "agency",
    "firm",
    "employer",
    "team",
    "workspace",
    "venue",
    "lab",
    "laboratory",
    "insurer",
    "club",
    "gym",
    "studio",
    "chain",
    "property",
    "operator_company",
}


def _words(name: str) -> list[str]:
    return [w for w in name.lower().split("_") if w]


def is_person_entity(entity: str) -> bool:
    """True when rows of ``entity`` are people (a traveler, a patient, a user ...)."""
    words = _words(entity)
    return bool(words) and (words[-1] in _PERSON_WORDS or "_".join(words[-2:]) in _PERSON_WORDS)


def _is_org_entity(entity: str) -> bool:
    words = _words(entity)
    return bool(words) and words[-1] in _ORG_WORDS


# ---- roles from names ----------------------------------------------------------------------------

_DATE_NAME = re.compile(
    r"(^|_)(date|dob|birthday|deadline|timestamp)($|_)|_at$|^(due|starts|ends|created|updated|completed|born)_on$"
    r"|(^|_)(since|until|expires|expiry|expiration)($|_)|(^|_)(check_in|check_out|checkin|checkout)$"
    r"|(^|_)(departure|arrival)(_time)?$|(^|_)(start|end)_(time|date)$|(^|_)(start|end)$"
    r"|^last_(update|updated|modified|seen|login)$|^(date|time)_(created|modified|updated)$|._time$"
)
_TIME_ONLY = re.compile(
    r"(^|_)(opens|closes|opening_time|closing_time|check_in_time|check_out_time)$|^time$"
    r"|_time_of_day$"
)
_BIRTH = re.compile(r"birth|(^|_)dob($|_)|birthday")
_STATUS = re.compile(r"^(status|state)$|_(status|state)$|^status_")
_ID = re.compile(r"(^|_)(id|uuid|guid|uid)$")
_REFERENCE = re.compile(
    r"reference|(^|_)ref$|confirmation|locator|pnr|(^|_)(order|invoice|ticket|booking|"
    r"tracking|receipt|account|policy|member|case|claim)_(number|no|code)$|^number$"
)
_CODE = re.compile(
    r"(^|_)code$|sku|_(number|no|num)$|last_?4|(^|_)(token|hash|secret|signature|cursor|etag|"
    r"gate|terminal|seat_number|row_number|column|aisle|bay|dock)$|(^|_)(iban|bic|swift|vin|isbn|barcode|upc|ean|mrn|npi|plate)($|_)"
)
# (name pattern, typical low, typical high, believable low, believable high): seeds draw from the
# typical range, the audit flags values outside the believable one.
_QUANTITY_RANGES: list[tuple[str, float, float, float, float]] = [
    (r"(^|_)stops?($|_)", 0, 2, 0, 4),
    (r"bags", 0, 2, 0, 10),
    (r"(^|_)doors$", 2, 5, 1, 8),
    (r"(^|_)row$", 1, 40, 1, 120),
    (r"_count$|^num_|number_of|^count$", 0, 20, 0, 10_000_000),
    (r"children|kids|infants", 0, 3, 0, 8),
    (r"guests|adults|travell?ers|passengers|party(_size)?|occupan", 1, 4, 1, 12),
    (r"nights", 1, 10, 1, 60),
    (r"rooms", 1, 3, 1, 10),
    (r"(^|_)(quantity|qty)($|_)", 1, 5, 1, 500),
    (r"seats?_available|capacity|seats", 0, 300, 0, 900),
    (r"(^|_)age$", 18, 85, 0, 110),
    (r"rating|stars", 1, 5, 0, 5),
    (r"percent|pct|percentage", 0, 60, 0, 100),
    (r"(^|_)(duration|length)(_minutes|_mins)?$|minutes|_mins$", 15, 240, 1, 1440),
    (r"hours", 1, 12, 0, 168),
    (r"(^|_)days($|_)", 1, 30, 0, 366),
    (r"year", 1990, 2026, 1900, 2100),
    (r"refills?", 0, 5, 0, 12),
    (r"(^|_)floor", 0, 20, -5, 150),
    (r"priority", 1, 5, 0, 10),
]
_MONEY = re.compile(
    r"price|amount|(^|_)total|cost|fare|fee|balance|budget|salary|subtotal|(^|_)tax|tip|"
    r"charge|payment$|refund|deposit|credit_limit|spend|revenue|value_money"
)
_NAME_FIELD = re.compile(r"^(name|full_name|display_name|nickname)$|_name$")
_PERSON_FIELD = re.compile(
    r"(^|_)(first|given|last|family|middle|full|contact|owner|holder|guest|passenger|traveler|traveller|patient|"
    r"customer|author|driver|recipient|sender|assignee|reporter|emergency_contact|cardholder|person|"
    r"beneficiary|payee|user)_name$|^(holder|cardholder|assignee|author|surname|username|user_name)$"
)

_NAME_RULES: list[tuple[str, FieldRole]] = [
    (r"email", FieldRole.email),
    (
        r"^(first_name|given_name|forename|firstname|givenname)$|_first_?name$|_given_name$",
        FieldRole.given_name,
    ),
    (
        r"^(last_name|family_name|surname|lastname|familyname)$|_last_?name$|_family_name$|_surname$",
        FieldRole.family_name,
    ),
    (
        r"(^|_)(created|booked|updated|modified|assigned|requested|approved|reviewed|completed|cancelled|"
        r"submitted|deleted)_by$",
        FieldRole.person_name,
    ),
    (r"(^|_)(logo|image|avatar|icon|photo|picture|thumbnail)$", FieldRole.url),
    (r"(^|_)(username|user_name|login|handle|screen_name)$", FieldRole.username),
    (r"phone|mobile|(^|_)fax($|_)|telephone", FieldRole.phone),
    (r"(^|_)(url|uri|website|link|href|homepage)($|_)|_url$", FieldRole.url),
    (r"country_code|(^|_)country_iso|^iso_country$", FieldRole.country_code),
    (r"(^|_)(country|nationality)($|_)", FieldRole.country),
    (r"(^|_)city($|_(?!code))|(^|_)town$", FieldRole.city),
    (
        r"iata|airport(_code)?$|(^|_)city_code$|(^|_)(origin|destination)(_code)?$|(^|_)(from|to)_airport",
        FieldRole.airport_code,
    ),
    (r"currency", FieldRole.currency),
    (r"(^|_)(address|street|address_line\d?|line\d)($|_)", FieldRole.address),
    (r"postal|(^|_)zip|postcode", FieldRole.postcode),
    (r"(^|_)(province|region|county|state)$", FieldRole.region),
    (r"(^|_)(lat|latitude)$", FieldRole.latitude),
    (r"(^|_)(lon|lng|long|longitude)$", FieldRole.longitude),
    (
        r"company|airline|carrier|brand|vendor|merchant|organi[sz]ation|employer|manufacturer|supplier|publisher|"
        r"insurer|(^|_)(hotel|clinic|pharmacy|bank|store|restaurant|agency)(_name)?$",
        FieldRole.organisation,
    ),
    (r"(^|_)(title|subject|headline|caption|summary_title)$", FieldRole.title),
    (
        r"description|(^|_)(body|content|message|text|bio|biography|details|instructions|summary|abstract|"
        r"html|markdown|transcript)$",
        FieldRole.paragraph,
    ),
    (
        r"(^|_)(notes?|comments?|reason|remarks?|requests?|special_requests|memo|feedback|review|purpose|justification|explanation|"
        r"note_text|reply|answer|question|label_text)$|_reason$|_notes?$",
        FieldRole.sentence,
    ),
    (
        r"type$|(^|_)(kind|category|categories|tag|genre|department|group|channel|source|method|mode|level|tier|"
        r"plan|gender|segment|class|cabin|specialty|speciality|unit|format|role|position|occupation|topic|"
        r"industry|color|colour|size|flavor|language|locale|timezone|time_zone|visibility|frequency|"
        r"interval|platform|device|provider|network|brand_name|model|style|cuisine|room_type|sport)$",
        FieldRole.label,
    ),
]


def _status_field(name: str, siblings: Iterable[str]) -> bool:
    if not _STATUS.search(name):
        return False
    if name == "state" and any(re.search(r"city|zip|postal|country|street|address", s) for s in siblings):
        return False  # a state of an address is a region
    return True


def infer_role(
    entity: str,
    name: str,
    ftype: str,
    *,
    enum: list[str] | None = None,
    description: str = "",
    fmt: str | None = None,
    example: Any = None,
    primary_key: bool = False,
    ref: bool = False,
    siblings: Iterable[str] = (),
) -> FieldRole | None:
    """The role a field most likely has, from its entity, name, type and documented format; None when
    nothing says (a plain string, a flag)."""
    n = name.lower()
    t = ftype.value if isinstance(ftype, Enum) else str(ftype)
    if primary_key or ref:
        return FieldRole.reference if _REFERENCE.search(n) and not _ID.search(n) else FieldRole.internal_id
    if t == "boolean":
        return None
    hinted = _from_description(description, t) if t == "string" and not enum else None
    if hinted is not None and not _ID.search(n):
        return hinted
    if fmt == "email":
        return FieldRole.email
    if fmt in ("uri", "url", "uri-reference"):
        return FieldRole.url
    if _BIRTH.search(n) and t in ("date", "datetime", "string"):
        return FieldRole.birth_date
    if t == "date" or fmt == "date":
        return FieldRole.date
    if t == "datetime" or fmt in ("date-time", "datetime"):
        return FieldRole.datetime
    if fmt == "time":
        return FieldRole.time
    if _status_field(n, siblings) and t in ("enum", "string"):
        return FieldRole.status
    if t in ("object", "array"):
        return None
    if t == "enum":
        return FieldRole.label
    if t in ("integer", "number"):
        if _MONEY.search(n) and not re.search(r"count|number_of|_id$", n):
            return FieldRole.money
        if re.search(r"percent|pct|percentage", n):
            return FieldRole.percentage
        if re.search(r"rating|stars|score", n):
            return FieldRole.rating
        if re.search(r"(^|_)(lat|latitude)$", n):
            return FieldRole.latitude
        if re.search(r"(^|_)(lon|lng|long|longitude)$", n):
            return FieldRole.longitude
        if re.search(r"duration|minutes|_mins$|(^|_)hours$", n):
            return FieldRole.duration
        if realistic_range(n) is not None or re.search(r"count|number_of|num_|total_", n):
            return FieldRole.quantity
        return None
    # a string
    if n in ("name", "code", "code_name"):  # a country's name is a country, a city's code an airport code
        place = {
            "country": (FieldRole.country, FieldRole.country_code),
            "city": (FieldRole.city, FieldRole.airport_code),
            "airport": (None, FieldRole.airport_code),
            "currency": (None, FieldRole.currency),
        }.get(entity)
        if place is not None and place[0 if n == "name" else 1] is not None:
            return place[0 if n == "name" else 1]
    if _TIME_ONLY.search(n):
        return FieldRole.time
    if _DATE_NAME.search(n) and not re.search(r"^update$|(^|_)(date_format|timezone|time_zone)$", n):
        ex = str(example) if example is not None else ""
        return (
            FieldRole.date
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", ex) or n == "date" or n.endswith(("_date", "_on", "dob"))
            else FieldRole.datetime
        )
    if _ID.search(n):
        return FieldRole.internal_id
    for pat, role in _NAME_RULES:
        if re.search(pat, n):
            return role
    if _PERSON_FIELD.search(n):
        return FieldRole.person_name
    if _REFERENCE.search(n):
        return FieldRole.reference
    if _CODE.search(n):
        return FieldRole.code
    if re.search(r"duration", n):
        return FieldRole.duration
    if _MONEY.search(n) and not re.search(r"_(type|method|status|currency|code|name|description|id)$", n):
        return FieldRole.money
    if n.endswith("_name") and n != f"{entity}_name" and len(n) > 5:
        if is_person_entity(n[:-5]):
            return FieldRole.person_name  # courier_name, doctor_name
        inner = infer_role(entity, n[:-5], ftype, description=description, example=example)
        if inner not in (None, FieldRole.internal_id, FieldRole.reference, FieldRole.code):
            return inner  # city_name is a city, time_zone_name a label
    if _NAME_FIELD.search(n):
        own = n in ("name", "full_name", "display_name", "nickname") or n == f"{entity}_name"
        if own and is_person_entity(entity):
            return FieldRole.person_name
        if own and _is_org_entity(entity):
            return FieldRole.organisation
        return FieldRole.title
    return None


_DESCRIPTION_HINTS: list[tuple[str, FieldRole]] = [
    (r"\bISO[ -]?4217\b", FieldRole.currency),
    (r"\bISO[ -]?3166(-1)?( alpha-2)?\b|two-letter country code", FieldRole.country_code),
    (r"\bIATA\b.*\b(airport|city|location) code|\b(airport|city) code\b.*\bIATA\b", FieldRole.airport_code),
    (r"\bISO[ -]?8601\b.*\bduration\b|\bduration\b.*\bISO[ -]?8601\b", FieldRole.duration),
    (r"^(the |an? )?e-?mail address\b", FieldRole.email),
    (r"^(the |an? )?(phone|telephone|mobile) number\b", FieldRole.phone),
]


def _from_description(description: str, t: str) -> FieldRole | None:
    """A role the documentation states in words ('ISO 4217 currency code', 'IATA airport code')."""
    d = (description or "")[:300]
    for pat, role in _DESCRIPTION_HINTS:
        if re.search(pat, d, re.IGNORECASE):
            return role
    return None


def realistic_range(name: str, *, typical: bool = False) -> tuple[float, float] | None:
    """The range a person would believe for a count-like number named ``name`` (None: no opinion);
    ``typical``: the narrower range most values fall in (what a seed draws from)."""
    n = name.lower()
    for pat, tlo, thi, lo, hi in _QUANTITY_RANGES:
        if re.search(pat, n):
            return (tlo, thi) if typical else (lo, hi)
    return None


# ---- constraints from names ----------------------------------------------------------------------

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

# (earlier word, later word, least gap hours, largest gap hours) for a pair named alike.
_PAIRS: list[tuple[str, str, float, float]] = [
    ("departure", "arrival", 0.5, 20.0),
    ("departs", "arrives", 0.5, 20.0),
    ("depart", "arrive", 0.5, 20.0),
    ("check_in", "check_out", 24.0, 21 * 24.0),
    ("checkin", "checkout", 24.0, 21 * 24.0),
    ("pickup", "dropoff", 2.0, 30 * 24.0),
    ("pick_up", "drop_off", 2.0, 30 * 24.0),
    ("pickup", "return", 2.0, 30 * 24.0),
    ("start", "end", 0.25, 12.0),
    ("starts", "ends", 0.25, 12.0),
    ("begin", "end", 0.25, 12.0),
    ("from", "to", 0.0, 90 * 24.0),
    ("from", "until", 0.0, 365 * 24.0),
    ("valid_from", "valid_until", 24.0, 3 * 365 * 24.0),
    ("valid_from", "valid_to", 24.0, 3 * 365 * 24.0),
    ("opened", "closed", 0.0, 365 * 24.0),
    ("issued", "expires", 24.0, 5 * 365 * 24.0),
    ("issue", "expiry", 24.0, 5 * 365 * 24.0),
    ("shipped", "delivered", 2.0, 14 * 24.0),
    ("created", "updated", 0.0, 2 * 365 * 24.0),
    ("created", "modified", 0.0, 2 * 365 * 24.0),
    ("creation", "modification", 0.0, 2 * 365 * 24.0),
]
_DATE_SPAN = {"start": 365 * 24.0, "starts": 365 * 24.0, "begin": 365 * 24.0}  # start/end *dates* span longer
_PAST_STAMP = re.compile(
    r"^((date|time)_)?(created|last_update|creation|updated|modified|completed|cancell?ed|canceled|deleted|paid|delivered|shipped|closed|resolved|"
    r"submitted|sent|received|registered|joined|signed_up|archived|approved|rejected|refunded|processed|"
    r"fulfilled|checked_in|last_login|last_seen|last_modified|last_updated|last_active|last_activity|verified|"
    r"confirmed|dispensed|collected|reported|posted|read|opened|accepted|declined|ended|returned|discharged|"
    r"issued|voided|captured|authorized|requested|started|finished|ordered|placed|purchased|reviewed|"
    r"acknowledged|booked|reserved|redeemed|settled|expired|first_seen|last_sign_in|last_signed_in)(_at|_on|_date|_time|_timestamp)?$"
)
_PRINCIPAL_TIME = re.compile(
    r"^(start_time|start_at|starts_at|start_date|start|scheduled_at|scheduled_for|scheduled_time|scheduled_date|"
    r"appointment_time|appointment_date|date|datetime|departure_time|departure_at|departure_date|departure|"
    r"check_in|check_in_date|checkin_date|pickup_time|pickup_at|pickup_date|event_date|event_time|"
    r"due_date|due_at|due_on|delivery_date|session_date|visit_date|reservation_time|reservation_date)$"
)


# Stamps of a state a row is in only at the end (a cancelled_at only on cancelled rows).
_EXCLUSIVE = re.compile(
    r"^(cancell?ed|canceled|refunded|deleted|rejected|declined|failed|voided|archived|"
    r"discontinued|expired)(_at|_on|_date|_time)?$"
)


def _swap(name: str, a: str, b: str) -> str | None:
    parts = name.split("_")
    aw = a.split("_")
    for i in range(len(parts) - len(aw) + 1):
        if parts[i : i + len(aw)] == aw:
            return "_".join(parts[:i] + b.split("_") + parts[i + len(aw) :])
    return None


def infer_constraints(
    entity: str, fields: list[tuple[str, str, FieldRole | None, list[str] | None]]
) -> list[ConstraintSpec]:
    """Constraints a person would expect of an entity's rows, from ``(name, type, role, enum)`` of each
    field: start before end (within a realistic gap), past stamps before the clock, birth dates of
    adults, completed rows in the past and scheduled ones ahead, line totals = quantity x price."""
    by_name = {n: (t, r, e) for n, t, r, e in fields}
    timeish = {n for n, (t, r, _) in by_name.items() if r in (FieldRole.date, FieldRole.datetime)}
    out: list[ConstraintSpec] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def add(c: ConstraintSpec) -> None:
        if c.key() not in seen:
            seen.add(c.key())
            out.append(c)

    for n in sorted(timeish):
        for a, b, lo, hi in _PAIRS:
            other = _swap(n, a, b)
            if other and other != n and other in timeish:
                dates = by_name[n][1] == FieldRole.date or by_name[other][1] == FieldRole.date
                span = _DATE_SPAN.get(a, hi) if dates else hi
                least = 0.0 if dates and lo < 24 else lo
                add(ConstraintSpec(kind="order", fields=[n, other], min=least, max=max(span, least)))
                break
    stamps = [n for n in sorted(timeish) if _PAST_STAMP.match(n)]
    for n in stamps:
        add(ConstraintSpec(kind="clock", fields=[n], relation="past"))
    created = next(
        (
            c
            for c in (
                "created_at",
                "created",
                "created_on",
                "created_date",
                "creation_date",
                "date_created",
                "created_time",
                "creation_time",
            )
            if c in timeish
        ),
        None,
    )
    if created:
        for n in stamps:
            if n != created:
                add(ConstraintSpec(kind="order", fields=[created, n], min=0.0))
    for n, (t, r, _) in sorted(by_name.items()):
        if r == FieldRole.birth_date and t in ("date", "datetime", "string"):
            young = any(w in _ANIMAL_WORDS or w in ("child", "dependent", "minor") for w in _words(entity))
            add(
                ConstraintSpec(
                    kind="age", fields=[n], min=0.0 if young else 18.0, max=20.0 if young else 90.0
                )
            )
    status = next((n for n, (_, r, e) in sorted(by_name.items()) if r == FieldRole.status and e), None)
    principal = next((n for n in sorted(timeish) if _PRINCIPAL_TIME.match(n)), None)
    if status and principal and principal not in stamps:
        values = by_name[status][2] or []
        past = [v for v in values if v.lower() in STATUS_PAST]
        future = [v for v in values if v.lower() in STATUS_FUTURE]
        if past or future:
            add(
                ConstraintSpec(
                    kind="status_time", fields=[principal, status], past=past or None, future=future or None
                )
            )
    if status:
        values = by_name[status][2] or []
        for n in stamps:
            m = _EXCLUSIVE.match(n)
            if m:
                same = [
                    v
                    for v in values
                    if v.lower()
                    .replace("canceled", "cancelled")
                    .startswith(m.group(1).replace("canceled", "cancelled")[:6])
                ]
                if same:
                    add(ConstraintSpec(kind="set_when", fields=[n, status], past=same))
    numbers = {n for n, (t, _, _) in by_name.items() if t in ("integer", "number")}
    qty = next((q for q in ("quantity", "qty", "count", "units") if q in numbers), None)
    price = next(
        (p for p in ("unit_price", "price_per_unit", "unit_amount", "unit_cost", "price") if p in numbers),
        None,
    )
    total = next(
        (
            s
            for s in ("line_total", "total_price", "total_amount", "total", "subtotal", "amount")
            if s in numbers and s != price
        ),
        None,
    )
    if qty and price and total:
        add(ConstraintSpec(kind="product", fields=[total, qty, price]))
    return out
