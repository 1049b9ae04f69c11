"""``EntitySeed.spare``: the last rows of an entity that no seeded row references."""

from __future__ import annotations

from envfactory.runtime import Environment
from envfactory.spec import EnvSpec


def _spec(spare: int) -> EnvSpec:
    return EnvSpec.model_validate(
        {
            "name": "files",
            "domain": "d",
            "clock": "2026-06-01T09:00:00",
            "entities": [
                {"name": "file", "primary_key": "id", "fields": [{"name": "id", "type": "string"}]},
                {
                    "name": "comment",
                    "primary_key": "id",
                    "fields": [
                        {"name": "id", "type": "string"},
                        {"name": "file_id", "type": "string", "ref": "file"},
                    ],
                },
            ],
            "tools": [],
            "seed": {"entities": {"file": {"rows": 6, "spare": spare}, "comment": {"rows": 200}}},
        }
    )


def test_the_last_spare_rows_are_referenced_by_no_seeded_row():
    env = Environment.from_spec(_spec(2))
    with env.new_session() as s:
        files = [r[0] for r in s.query('SELECT id FROM "file" ORDER BY id')]
        used = {r[0] for r in s.query('SELECT DISTINCT file_id FROM "comment"')}
    assert used == set(files[:4])  # 200 comments over 6 files reach all four that are not spare
    env0 = Environment.from_spec(_spec(0))
    with env0.new_session() as s:
        assert {r[0] for r in s.query('SELECT DISTINCT file_id FROM "comment"')} == set(files)


def test_a_row_redrawn_to_close_a_diamond_keeps_the_spare_rows_free():
    # Plaid: a bank income points at an item and at an institution the item also points at; the
    # seeder re-draws the item among the institution's own, which must not take a spare item
    spec = EnvSpec.model_validate(
        {
            "name": "plaid",
            "domain": "d",
            "clock": "2026-06-01T09:00:00",
            "entities": [
                {"name": "institution", "primary_key": "id", "fields": [{"name": "id", "type": "string"}]},
                {
                    "name": "item",
                    "primary_key": "id",
                    "fields": [
                        {"name": "id", "type": "string"},
                        {"name": "institution_id", "type": "string", "ref": "institution"},
                    ],
                },
                {
                    "name": "bank_income",
                    "primary_key": "id",
                    "fields": [
                        {"name": "id", "type": "string"},
                        {"name": "institution_id", "type": "string", "ref": "institution"},
                        {"name": "item_id", "type": "string", "ref": "item"},
                    ],
                },
            ],
            "tools": [],
            "seed": {
                "entities": {
                    "institution": {"rows": 3},
                    "item": {"rows": 10, "spare": 3},
                    "bank_income": {"rows": 300},
                }
            },
        }
    )
    env = Environment.from_spec(spec)
    with env.new_session() as s:
        items = [r[0] for r in s.query('SELECT id FROM "item" ORDER BY id')]
        used = {r[0] for r in s.query('SELECT DISTINCT item_id FROM "bank_income"')}
    assert not used & set(items[-3:])
