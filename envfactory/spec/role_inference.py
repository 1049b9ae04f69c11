"""Roles a spec does not state, inferred from an entity's and a field's names, its type, documented
format, description and example (``infer_role``); who is a person (``is_person_entity``); believable
ranges of count-like numbers (``realistic_range``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from typing import Any

from .role_values import ROLE_SHAPES
from .role_vocab import FieldRole

__all__ = ["infer_role", "is_person_entity", "realistic_range"]


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
# a string field that names no date but whose description says it holds one ("Completion date of the task
# (as a RFC 3339 timestamp)", "RFC 3339 date-time when this blog was last updated"); epoch counts stay numbers
_DATE_DESC = re.compile(
    r"\b(rfc ?3339|iso ?8601|date-time|datetime|timestamp)\b"
    r"|\b(creation|completion|modification|expiration|expiry|due|start|end) (date|time)\b",
    re.I,
)
_NOT_DATE_DESC = re.compile(r"epoch|milliseconds|seconds since|unix|format of|time ?zone", re.I)
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
    (
        r"(^|_)(hostname|host_name|host|domain|domain_name|subdomain|fqdn)($|_(?!id$|ids$))",
        FieldRole.hostname,
    ),
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
    # a postcode before an address: 'patient_address_postalcode' holds a postcode
    (r"postal|(^|_)zip|postcode", FieldRole.postcode),
    (r"(^|_)(address|street|address_line\d?|line\d)($|_)", FieldRole.address),
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


_ORDERING_DESC = re.compile(r"\b(among|siblings?|sort(ed|ing)?|ordering|order of|lexicograph\w*)\b", re.I)


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
        return _number_role(n)
    if n == "summary" and "description" in siblings:
        return FieldRole.title  # a summary beside a description is the title (Google's calendars, events)
    return _string_role(entity, n, ftype, description, example)


def _number_role(n: str) -> FieldRole | None:
    """The role of a number field named ``n`` (money, a percentage, a rating, a count ...)."""
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


def _string_role(entity: str, n: str, ftype: str, description: str, example: Any) -> FieldRole | None:
    """The role of a string field named ``n`` of ``entity``: from its name, most specific rule first."""
    if n in ("name", "code", "code_name"):  # a country's name is a country, a city's code an airport code
        place = {
            "country": (FieldRole.country, FieldRole.country_code),
            "city": (FieldRole.city, FieldRole.airport_code),
            "airport": (None, FieldRole.airport_code),
            "currency": (None, FieldRole.currency),
            "zone": (FieldRole.hostname, None),  # a DNS zone is named by its domain
            "domain": (FieldRole.hostname, None),
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
    if re.search(r"(^|_)(position|rank|order|sort_order|sort_key)$", n) and _ORDERING_DESC.search(
        description or ""
    ):
        return None  # Google Tasks' 'position among its sibling tasks' is an ordering key, not a job title
    for pat, role in _NAME_RULES:
        if re.search(pat, n):
            shape = ROLE_SHAPES.get(role)
            if shape is not None and isinstance(example, str) and example and not shape.match(example):
                return None  # the document's own example is not shaped so (Box's AI agent 'origin: CUSTOM')
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
    if _DATE_DESC.search(description or "") and not _NOT_DATE_DESC.search(description or ""):
        return FieldRole.datetime  # no name rule fired, and the document says it holds a timestamp
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
