"""What a person can say about a row: fields that name a row, values a person states, filler."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import yaml

from envfactory.runtime import load_environment
from envfactory.spec import (
    FieldRole,
    default_generator,
    is_filler,
    is_stamp,
    names_row,
    parse_spec,
    states_value,
)

from ..conftest import REPO

SPEC = parse_spec(
    yaml.safe_load(
        """
name: shop
domain: commerce
clock: "2026-06-01T09:00:00"
entities:
  - name: customer
    primary_key: customer_id
    fields:
      - {name: customer_id, type: string, id_prefix: CU}
      - {name: last_name, type: string}
      - {name: email, type: string}
      - {name: tier, type: enum, enum: [basic, gold]}
      - {name: loyalty_points, type: integer}
      - {name: hostname_alias, type: string}
      - {name: gadget, type: string}
      - {name: seat, type: string, examples: ["12A", "3C"]}
      - {name: note, type: string}
      - {name: description, type: string}
      - {name: self_link, type: string}
      - {name: updated, type: datetime}
      - {name: last_access_at, type: datetime}
      - {name: created_at, type: datetime}
      - {name: address, type: object}
  - name: order
    primary_key: order_id
    fields:
      - {name: order_id, type: string}
      - {name: customer_id, type: string, ref: customer}
      - {name: total, type: number}
tools: []
"""
    )
)


@pytest.mark.parametrize(
    "field, names, states",
    [
        ("last_name", True, True),  # a family name, not a 'last_*' stamp
        ("email", True, True),
        ("tier", True, True),
        ("loyalty_points", False, True),  # a bare number names nothing, but a person may state it
        ("hostname_alias", True, True),  # a domain name (role hostname), seeded as one
        ("gadget", False, False),  # no role, no example: the seeder fills it with catch-phrases
        ("seat", True, True),  # no role, but documented examples: '12A' is said as it is
        ("note", False, True),  # a sentence is stated, never used to name a row
        ("description", False, False),  # a paragraph is too long to say
        ("self_link", False, False),  # a link to the record itself
        ("updated", False, False),  # bookkeeping the service writes
        ("last_access_at", False, False),
        ("created_at", True, True),
        ("address", False, False),  # an object
        ("customer_id", False, False),  # the key
    ],
)
def test_fields_a_person_names_a_row_by_and_states(field, names, states):
    assert names_row(SPEC, "customer", field) is names
    assert states_value(SPEC, "customer", field) is states


def test_a_foreign_key_is_neither_said_nor_named():
    assert not names_row(SPEC, "order", "customer_id") and not states_value(SPEC, "order", "customer_id")


def test_filler_is_the_seeders_catch_phrase_fallback():
    ent = SPEC.entity("customer")
    assert is_filler(SPEC, ent, ent.field("gadget"))
    assert not is_filler(SPEC, ent, ent.field("seat")) and not is_filler(SPEC, ent, ent.field("email"))


@pytest.mark.parametrize("name", ["updated", "modified_at", "last_access_at", "etag", "row_version"])
def test_stamps(name):
    assert is_stamp(name)


@pytest.mark.parametrize("name", ["last_name", "created_at", "due_date", "version_name"])
def test_not_stamps(name):
    assert not is_stamp(name)


def test_hostname_role_is_inferred_and_seeded_as_a_domain_name():
    ent = SPEC.entity("customer")
    f = ent.field("hostname_alias")
    assert ent.role_of(f) == FieldRole.hostname
    g = default_generator(ent, f, dt.datetime(2026, 6, 1))
    assert (g.kind, g.provider) == ("faker", "domain_name")


def test_every_seeded_hostname_has_the_shape_of_one():
    from envfactory.graph.state import StateIndex

    env = load_environment(REPO / "domains" / "utilities" / "power_dns_authoritative")
    with env.new_session() as s:
        names = [r["name"] for r in StateIndex(env.spec, s).rows["zone"] if r["name"]]
    assert names and all(re.fullmatch(r"([a-z0-9-]+\.)+[a-z]{2,}", n) for n in names), names[:5]
