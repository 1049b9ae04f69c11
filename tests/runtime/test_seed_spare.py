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
