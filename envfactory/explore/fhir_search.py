"""FHIR search parameters that name another resource: a FHIR API's filters by a parent.

FHIR searches link resources in two documented ways (hl7.org/fhir/search.html):

- a type modifier, ``<path>:<Type>``: NHS Booking and Referral's ``GET /Slot`` takes
  ``Schedule.actor:HealthcareService`` ("a single service ID ... for which appointment slots
  are returned"): the slots of one HealthcareService;
- reverse chaining, ``_has:<Type>...``: its ``GET /Endpoint`` takes ``_has`` ("The
  healthcareService you want the Endpoints returned for", ``_has:HealthcareService.Id=<id>``):
  the endpoints of one HealthcareService.

Both filter a resource by the id of a row of another entity. Read as plain names they became a
text column ``schedule_actor_healthcare_service`` and an enum column ``has``
(``HealthcareService.Id``), which no row of the other entity fills and no agent can use to go
from a service to its slots. Read as references, they are a ``healthcare_service_id`` field that
the explorer links to ``healthcare_service`` like any other foreign key.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ..ingest import Parameter
from .naming import entity_name

__all__ = ["referenced_entity"]

# ``Schedule.actor:HealthcareService``: a path, then a resource type (capitalised, as FHIR names types);
# ``subject:identifier`` or ``status:not`` end in a lower-case modifier and name no type
_TYPED = re.compile(r"^[A-Za-z][\w.\-]*:([A-Z][A-Za-z]+)$")
# ``_has:HealthcareService.Id=...`` / ``_has:Observation:patient:code=...`` in the parameter's text
_HAS_TEXT = re.compile(r"_has:([A-Z][A-Za-z]+)[.:]")
# the parameter's documented values: ``HealthcareService.Id`` (by the row's id; ``.Identifier`` is a business id)
_HAS_VALUE = re.compile(r"^([A-Z][A-Za-z]+)\.[Ii]d$")


def referenced_entity(p: Parameter, entities: Collection[str]) -> str | None:
    """The entity whose row id this FHIR search parameter takes, when it names one of ``entities``."""
    if p.name == "_has":
        s = p.schema_ or {}
        values = [v for v in s.get("enum") or () if isinstance(v, str)]
        types = [m.group(1) for v in values if (m := _HAS_VALUE.match(v))]
        types += _HAS_TEXT.findall(p.description or "")
    else:
        m = _TYPED.match(p.name)
        types = [m.group(1)] if m else []
    for t in types:
        name = entity_name(t)
        if name in entities:
            return name
    return None
