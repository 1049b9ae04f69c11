"""Seeded person names are names people go by: no Faker honorifics or post-nominals."""

from __future__ import annotations

import re

from envfactory.runtime.seed import plain_name


def test_honorifics_and_post_nominals_are_left_out():
    assert plain_name("Dr. Amber Snow MD") == "Amber Snow"
    assert plain_name("Alexandria Dyer DDS") == "Alexandria Dyer"
    assert plain_name("Mrs. Ann Lee") == "Ann Lee"
    assert plain_name("John Smith Jr.") == "John Smith"
    assert plain_name("Eve Park") == "Eve Park"


def test_a_seeded_person_name_column_has_none():
    from envfactory.runtime import Environment
    from envfactory.spec import parse_spec

    spec = {
        "name": "people",
        "domain": "test",
        "clock": "2026-06-01T09:00:00",
        "entities": [
            {
                "name": "patient",
                "primary_key": "patient_id",
                "fields": [
                    {"name": "patient_id", "type": "string", "id_prefix": "PT"},
                    {"name": "full_name", "type": "string"},
                ],
            }
        ],
        "tools": [
            {
                "name": "list_patients",
                "kind": "list",
                "entity": "patient",
                "description": "List.",
                "params": [],
            }
        ],
        "seed": {"entities": {"patient": {"rows": 100}}},
    }
    env = Environment.from_spec(parse_spec(spec))
    with env.new_session() as s:
        names = [r["full_name"] for r in s.try_call("list_patients", {"limit": 100})["result"]["items"]]
    assert len(names) == 100
    bad = [n for n in names if re.search(r"^(Dr|Mr|Mrs|Ms|Miss)\.? |\b(MD|DDS|DVM|PhD)$", n)]
    assert not bad, bad[:5]
