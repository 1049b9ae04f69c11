"""What a field means, and how fields of a row must agree: field roles and cross-field constraints.

A field's ``type`` says how it is stored; its ``role`` says what a person would expect to read
in it. The vocabulary is small on purpose (``FieldRole``):

- people and organisations: ``person_name`` / ``given_name`` / ``family_name`` / ``username``,
  ``organisation`` (a company, hotel, airline, clinic ...);
- things: ``title`` (a product, a document, an event: a few words), ``label`` (a short
  category-like value: a type, a tag, a department);
- places: ``city``, ``country``, ``country_code`` (ISO 3166 alpha-2), ``airport_code`` (IATA),
  ``address``, ``postcode``, ``region``, ``latitude``, ``longitude``;
- contact: ``email``, ``phone``, ``url``, ``hostname`` (a domain name: a DNS zone, a tenant's host alias);
- amounts: ``money`` (``unit`` names the currency when the document does), ``currency``
  (ISO 4217), ``quantity`` (a count with a realistic range: ``minimum``/``maximum``),
  ``percentage``, ``rating``, ``duration``;
- time: ``date``, ``datetime``, ``time``, ``birth_date``;
- ``status`` (one of the documented values: ``enum``, or ``examples`` for a string field);
- ``code`` (a documented ``pattern`` such as ``??-####``, or an example); ``reference`` (a
  user-facing reference a person would know and say: a booking reference, an order number);
  ``internal_id`` (an opaque id no person would say);
- free text: ``sentence`` (a note, a reason), ``paragraph`` (a description, a message body).

Cross-field constraints (``ConstraintSpec``, on an entity), all checked by ``envfactory audit``,
satisfied by the seeder, and kept by tool writes (the runtime refuses a create, update or action
whose stored row would break one, or a role, or a number's believable range):

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

from .constraint_inference import infer_constraints
from .role_inference import infer_role, is_person_entity, realistic_range
from .role_vocab import (
    PERSON_ROLES,
    STATUS_FUTURE,
    STATUS_PAST,
    STATUS_WORDS,
    TEXT_ROLES,
    TIME_ROLES,
    ConstraintSpec,
    FieldRole,
)

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
