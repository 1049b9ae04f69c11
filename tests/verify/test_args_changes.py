"""Valid arguments of a write prefer a change: an update of a one-value enum (Box's watermark
``imprint: default``) is called on a row that does not hold that value yet, so the smoke check
sees the state move instead of dropping the tool."""

from __future__ import annotations

import random

from envfactory.runtime import Environment
from envfactory.spec import parse_spec
from envfactory.verify import smoke_check, valid_args

SPEC = {
    "name": "marks",
    "domain": "test",
    "entities": [
        {
            "name": "mark",
            "primary_key": "mark_id",
            "fields": [
                {"name": "mark_id", "type": "string", "id_prefix": "MK"},
                {"name": "imprint", "type": "enum", "enum": ["default"], "nullable": True},
            ],
        }
    ],
    "tools": [
        {
            "name": "update_mark",
            "kind": "update",
            "entity": "mark",
            "description": "Apply the watermark.",
            "params": [
                {"name": "mark_id", "type": "string", "required": True, "field": "mark_id", "key": True},
                {
                    "name": "imprint",
                    "type": "enum",
                    "enum": ["default"],
                    "required": True,
                    "field": "imprint",
                },
            ],
        },
        {
            "name": "clear_mark",
            "kind": "action",
            "entity": "mark",
            "description": "Remove the watermark.",
            "params": [
                {"name": "mark_id", "type": "string", "required": True, "field": "mark_id", "key": True}
            ],
            "effects": [{"field": "imprint", "set": None}],
        },
    ],
    "seed": {
        "entities": {
            "mark": {
                "rows": 30,
                "fields": {
                    "imprint": {
                        "kind": "null_or",
                        "p_null": 0.3,
                        "inner": {"kind": "const", "value": "default"},
                    }
                },
            }
        }
    },
}


def test_writes_are_called_on_rows_they_change():
    env = Environment.from_spec(parse_spec(SPEC))
    for name, unchanged in (("update_mark", "default"), ("clear_mark", None)):
        for seed in range(12):
            with env.new_session() as s:
                args = valid_args(s, env, env.spec.tool(name), random.Random(seed))
                assert args is not None
                held = s.query("SELECT imprint FROM mark WHERE mark_id = ?", [args["mark_id"]])[0][0]
                assert held != unchanged, (name, seed, args)
    assert all(c.ok for c in smoke_check(env)), [c.detail for c in smoke_check(env) if not c.ok]
