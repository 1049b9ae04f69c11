"""Membership effects: an argument's values join or leave an array field, each once
(``Effect.append_param`` / ``remove_param``, ``match_key`` for arrays of objects)."""

from __future__ import annotations

import json

import pytest

from envfactory.runtime import Environment
from envfactory.spec import EnvSpec

TASK_SPEC = {
    "name": "tasks",
    "domain": "d",
    "clock": "2026-06-01T09:00:00",
    "entities": [
        {
            "name": "task",
            "primary_key": "gid",
            "fields": [
                {"name": "gid", "type": "string"},
                {"name": "name", "type": "string"},
                {"name": "tags", "type": "array", "nullable": True},
                {"name": "label_ids", "type": "array", "nullable": True},
            ],
        }
    ],
    "tools": [
        {
            "name": "get_task",
            "kind": "get",
            "entity": "task",
            "description": "Get a task.",
            "params": [{"name": "gid", "type": "string", "required": True, "key": True, "field": "gid"}],
        },
        {
            "name": "add_task_tag",
            "kind": "action",
            "entity": "task",
            "description": "Add a tag to a task.",
            "params": [
                {"name": "gid", "type": "string", "required": True, "key": True, "field": "gid"},
                {"name": "tag", "type": "string", "required": True},
            ],
            "effects": [{"field": "tags", "append_param": "tag", "match_key": "gid"}],
        },
        {
            "name": "remove_task_tag",
            "kind": "action",
            "entity": "task",
            "description": "Remove a tag from a task.",
            "params": [
                {"name": "gid", "type": "string", "required": True, "key": True, "field": "gid"},
                {"name": "tag", "type": "string", "required": True},
            ],
            "effects": [{"field": "tags", "remove_param": "tag", "match_key": "gid"}],
        },
        {
            "name": "modify_task",
            "kind": "action",
            "entity": "task",
            "description": "Change a task's labels.",
            "params": [
                {"name": "gid", "type": "string", "required": True, "key": True, "field": "gid"},
                {"name": "add_label_ids", "type": "array"},
                {"name": "remove_label_ids", "type": "array"},
            ],
            "effects": [
                {"field": "label_ids", "append_param": "add_label_ids"},
                {"field": "label_ids", "remove_param": "remove_label_ids"},
            ],
        },
    ],
    "seed": {
        "entities": {
            "task": {
                "rows": 5,
                "fields": {
                    "tags": {"kind": "const", "value": [{"gid": "T1", "name": "urgent"}]},
                    "label_ids": {"kind": "const", "value": ["INBOX", "UNREAD"]},
                },
            }
        }
    },
}


def _env() -> Environment:
    return Environment.from_spec(EnvSpec.model_validate(TASK_SPEC))


def test_values_join_and_leave_an_array_each_once():
    env = _env()
    with env.new_session() as s:
        gid = s.query('SELECT gid FROM "task" LIMIT 1')[0][0]
        assert s.call("add_task_tag", {"gid": gid, "tag": "T2"})["tags"] == [
            {"gid": "T1", "name": "urgent"},
            {"gid": "T2"},
        ]
        h = s.state_hash()
        s.call("add_task_tag", {"gid": gid, "tag": "T2"})  # already there: nothing changes
        assert s.state_hash() == h
        assert s.call("remove_task_tag", {"gid": gid, "tag": "T1"})["tags"] == [{"gid": "T2"}]
        out = s.call(
            "modify_task", {"gid": gid, "add_label_ids": ["STARRED"], "remove_label_ids": ["UNREAD"]}
        )
        assert out["label_ids"] == ["INBOX", "STARRED"]
        stored = s.query('SELECT label_ids FROM "task" WHERE gid = ?', [gid])[0][0]
        assert json.loads(stored) == ["INBOX", "STARRED"]


def test_a_membership_effect_needs_an_array_field_and_its_parameter():
    bad = json.loads(json.dumps(TASK_SPEC))
    bad["tools"][1]["effects"] = [{"field": "name", "append_param": "tag"}]
    with pytest.raises(ValueError, match="only an array field"):
        EnvSpec.model_validate(bad)
    bad["tools"][1]["effects"] = [{"field": "tags", "append_param": "nope"}]
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        EnvSpec.model_validate(bad)
    bad["tools"][1]["effects"] = [{"field": "tags", "set": None, "match_key": "gid"}]
    with pytest.raises(ValueError, match="match_key goes with"):
        EnvSpec.model_validate(bad)
