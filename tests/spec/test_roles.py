"""Field roles and cross-field constraints: inference, validation, round trip, JSON Schema."""

from __future__ import annotations

import pytest

from envfactory.spec import (
    ConstraintSpec,
    FieldRole,
    dump_spec,
    infer_constraints,
    infer_role,
    is_person_entity,
    parse_spec,
    spec_json_schema,
)

R = FieldRole


@pytest.mark.parametrize(
    "entity, name, ftype, extra, role",
    [
        ("traveler", "name", "string", {}, R.person_name),
        ("traveler", "first_name", "string", {}, R.given_name),
        ("traveler", "last_name", "string", {}, R.family_name),
        ("account", "username", "string", {}, R.username),
        ("hotel", "name", "string", {}, R.organisation),
        ("product", "name", "string", {}, R.title),
        ("category", "name", "string", {}, R.title),
        ("order", "shipping_city", "string", {}, R.city),
        ("customer", "country", "string", {}, R.country),
        ("customer", "country_code", "string", {}, R.country_code),
        ("appointment", "patient_address_postalcode", "string", {}, R.postcode),
        ("app", "hostname_alias", "string", {}, R.hostname),
        ("zone", "name", "string", {}, R.hostname),
        ("calendar", "summary", "string", {"siblings": ["summary", "description"]}, R.title),
        ("flight", "origin", "string", {}, R.airport_code),
        ("customer", "email", "string", {}, R.email),
        ("customer", "phone", "string", {}, R.phone),
        ("shop", "website", "string", {}, R.url),
        ("item", "price", "number", {}, R.money),
        ("offer", "total", "string", {}, R.money),
        ("order", "currency", "string", {}, R.currency),
        ("booking", "guests", "integer", {}, R.quantity),
        ("deal", "discount_percent", "number", {}, R.percentage),
        ("flight", "departure_time", "datetime", {}, R.datetime),
        ("todo", "due_on", "string", {}, R.date),
        ("event", "created_at", "string", {}, R.datetime),
        ("patient", "date_of_birth", "date", {}, R.birth_date),
        ("venue", "opens", "string", {}, R.time),
        ("segment", "duration", "string", {}, R.duration),
        ("booking", "status", "enum", {"enum": ["confirmed"]}, R.status),
        ("booking", "booking_reference", "string", {}, R.reference),
        ("product", "sku", "string", {}, R.code),
        ("order", "merchant_id", "string", {}, R.internal_id),
        ("ticket", "description", "string", {}, R.paragraph),
        ("visit", "reason", "string", {}, R.sentence),
        ("product", "category", "string", {}, R.label),
        ("item", "price_code", "string", {"description": "ISO 4217 currency code of the price."}, R.currency),
        ("flag", "enabled", "boolean", {}, None),
    ],
)
def test_infer_role_reads_names_types_and_descriptions(entity, name, ftype, extra, role):
    assert infer_role(entity, name, ftype, **extra) == role


def test_state_next_to_an_address_is_a_region_not_a_status():
    assert infer_role("address", "state", "string", siblings=["city", "zip"]) == R.region
    assert infer_role("ticket", "state", "string", siblings=["title"]) == R.status


def test_person_entities():
    assert is_person_entity("traveler") and is_person_entity("account_holder")
    assert not is_person_entity("hotel") and not is_person_entity("category")


def _facts(*fields):
    return [(n, t, infer_role("booking", n, t, enum=e), e) for n, t, e in fields]


def test_infer_constraints_covers_every_kind():
    cons = infer_constraints(
        "booking",
        _facts(
            ("check_in", "date", None),
            ("check_out", "date", None),
            ("created_at", "datetime", None),
            ("updated_at", "datetime", None),
            ("status", "enum", ["booked", "completed", "cancelled"]),
            ("cancelled_at", "datetime", None),
            ("quantity", "integer", None),
            ("unit_price", "number", None),
            ("line_total", "number", None),
        ),
    ) + infer_constraints("traveler", [("birth_date", "date", R.birth_date, None)])
    kinds = {(c.kind, tuple(c.fields)) for c in cons}
    assert ("order", ("check_in", "check_out")) in kinds
    assert ("order", ("created_at", "updated_at")) in kinds
    assert ("clock", ("updated_at",)) in kinds
    assert ("age", ("birth_date",)) in kinds
    assert ("status_time", ("check_in", "status")) in kinds
    assert ("product", ("line_total", "quantity", "unit_price")) in kinds
    assert ("set_when", ("cancelled_at", "status")) in kinds
    st = next(c for c in cons if c.kind == "status_time")
    assert st.past == ["completed"] and st.future == ["booked"]


def test_a_due_date_is_not_the_time_a_status_is_about():
    # a todo completed before it is due is believable (and one open after it is overdue): the
    # runtime would otherwise refuse to complete a todo due next week
    cons = infer_constraints(
        "todo", _facts(("due_on", "date", None), ("status", "enum", ["open", "completed", "scheduled"]))
    )
    assert not [c for c in cons if c.kind == "status_time"]


def test_departure_arrival_has_a_realistic_largest_gap():
    (c,) = [
        c
        for c in infer_constraints(
            "flight", _facts(("departure_time", "datetime", None), ("arrival_time", "datetime", None))
        )
        if c.kind == "order"
    ]
    assert c.max is not None and c.max <= 24


@pytest.mark.parametrize(
    "bad, needle",
    [
        ({"kind": "order", "fields": ["a"]}, "needs 2 field"),
        ({"kind": "clock", "fields": ["a"]}, "relation"),
        ({"kind": "status_time", "fields": ["a", "s"]}, "past or future"),
        ({"kind": "age", "fields": ["a"], "min": 90, "max": 18}, "min 90"),
    ],
)
def test_bad_constraints_are_refused(bad, needle):
    with pytest.raises(ValueError, match=needle):
        ConstraintSpec(**bad)


SPEC = {
    "name": "stays",
    "domain": "test",
    "entities": [
        {
            "name": "stay",
            "primary_key": "stay_id",
            "fields": [
                {"name": "stay_id", "type": "string"},
                {"name": "hotel", "type": "string", "role": "organisation", "examples": ["Harbor Inn"]},
                {"name": "code", "type": "string", "role": "code", "pattern": "??-####"},
                {"name": "guests", "type": "integer", "role": "quantity", "minimum": 1, "maximum": 6},
                {"name": "price", "type": "number", "role": "money", "unit": "EUR"},
                {"name": "check_in", "type": "date"},
                {"name": "check_out", "type": "date"},
            ],
            "constraints": [{"kind": "order", "fields": ["check_in", "check_out"], "min": 24, "max": 336}],
        }
    ],
    "tools": [
        {
            "name": "get_stay",
            "kind": "get",
            "entity": "stay",
            "description": "Get a stay.",
            "params": [
                {"name": "stay_id", "type": "string", "required": True, "key": True, "field": "stay_id"}
            ],
        }
    ],
}


def test_roles_and_constraints_round_trip_and_old_specs_still_load():
    spec = parse_spec(SPEC)
    again = parse_spec(__import__("yaml").safe_load(dump_spec(spec)))
    assert again == spec
    assert again.entity("stay").field("hotel").role == R.organisation
    assert again.entity("stay").constraints[0].max == 336
    old = {
        **SPEC,
        "entities": [
            {
                **SPEC["entities"][0],
                "constraints": None,
                "fields": [{"name": f["name"], "type": f["type"]} for f in SPEC["entities"][0]["fields"]],
            }
        ],
    }
    ent = parse_spec(old).entity("stay")
    assert ent.constraints is None and ent.field("guests").role is None
    assert ent.role_of(ent.field("guests")) == R.quantity  # inferred
    assert any(c.kind == "order" for c in ent.effective_constraints())
    assert "role:" not in dump_spec(parse_spec(old))


def test_constraint_on_unknown_field_is_refused():
    bad = {
        **SPEC,
        "entities": [
            {
                **SPEC["entities"][0],
                "constraints": [{"kind": "clock", "fields": ["nope"], "relation": "past"}],
            }
        ],
    }
    with pytest.raises(Exception, match="unknown field 'nope'"):
        parse_spec(bad)


def test_json_schema_covers_roles_and_constraints():
    defs = spec_json_schema()["$defs"]
    assert {"role", "examples", "pattern", "minimum", "maximum", "unit"} <= set(
        defs["FieldSpec"]["properties"]
    )
    assert "constraints" in defs["EntitySpec"]["properties"]
    assert "person_name" in defs["FieldRole"]["enum"]
    assert set(defs["ConstraintSpec"]["properties"]["kind"]["enum"]) == {
        "order",
        "clock",
        "age",
        "status_time",
        "product",
        "set_when",
    }


def test_a_string_whose_description_says_timestamp_is_a_date_time():
    # Google Tasks: 'completed' / 'updated' are strings documented as RFC 3339 timestamps; they were seeded
    # with catch-phrases ('completed: Vision-oriented didactic Graphic Interface') because no name rule fired
    desc = "Completion date of the task (as a RFC 3339 timestamp)."
    assert infer_role("task", "completed", "string", description=desc) == R.datetime
    assert (
        infer_role(
            "blog", "updated", "string", description="RFC 3339 date-time when this blog was last updated."
        )
        == R.datetime
    )
    # a count of seconds stays what it is, and an id documented with a timestamp is still an id
    epoch = "The timestamp of when this profile was created, in seconds since epoch."
    assert infer_role("profile", "created", "string", description=epoch) != R.datetime
    assert (
        infer_role("task", "etag_id", "string", description="ETag timestamp of the resource.")
        == R.internal_id
    )


def test_a_name_rule_gives_way_to_the_documents_own_example():
    # Box documents an AI agent's 'origin' as the provider ('CUSTOM'): not an airport, whatever the name says
    assert infer_role("ai_agent", "origin", "string", example="CUSTOM") is None
    assert infer_role("flight", "origin", "string", example="JFK") == R.airport_code
    assert infer_role("flight", "origin", "string") == R.airport_code
