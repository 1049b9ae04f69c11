"""The action table (explore/actions.py): verbs that move a status or set a flag."""

from __future__ import annotations

from envfactory.explore import explore
from envfactory.explore.actions import participles

from .conftest import ok, openapi, path_param, ref

DRIVE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "hidden": {"type": "boolean", "description": "Whether the shared drive is hidden from default view."},
    },
}


def test_an_irregular_participle_names_the_flag_a_verb_sets():
    assert participles("hide")[0] == "hidden"
    assert participles("archive")[0] == "archived"  # the regular forms are unchanged


def test_hide_and_unhide_set_the_documented_hidden_flag():
    # Google Drive v3: POST /drives/{driveId}/hide and /unhide ("Hides a shared drive from the
    # default view"); they used to be dropped as "no field, status or verb to express it"
    paths: dict = {
        "/drives": {
            "get": {
                "responses": ok(
                    {"type": "object", "properties": {"drives": {"type": "array", "items": ref("Drive")}}}
                )
            }
        },
        "/drives/{driveId}": {"parameters": [path_param("driveId")], "get": {"responses": ok(ref("Drive"))}},
    }
    for verb in ("hide", "unhide"):
        paths[f"/drives/{{driveId}}/{verb}"] = {
            "parameters": [path_param("driveId")],
            "post": {"summary": f"{verb.capitalize()}s a shared drive.", "responses": ok(ref("Drive"))},
        }
    res = explore(openapi(paths, {"Drive": DRIVE}), domain="d")
    tools = {t.name: t for e in res.envs for t in e.tools}
    effects = {n: [(e.field, e.set) for e in t.effects] for n, t in tools.items() if t.kind.value == "action"}
    assert effects == {"hide_drive": [("hidden", True)], "unhide_drive": [("hidden", False)]}, res.excluded


FOLLOWER = {"type": "object", "properties": {"gid": {"type": "string"}, "name": {"type": "string"}}}
TASK = {
    "type": "object",
    "properties": {
        "gid": {"type": "string"},
        "name": {"type": "string"},
        "followers": {"type": "array", "items": FOLLOWER, "example": [{"gid": "1234", "name": "Greg"}]},
        "tags": {"type": "array", "items": FOLLOWER, "example": [{"gid": "59746", "name": "Grade A"}]},
    },
}


def _asana_op(prop: str, schema: dict) -> dict:
    req = {
        "type": "object",
        "properties": {"data": {"type": "object", "required": [prop], "properties": {prop: schema}}},
    }
    return {
        "parameters": [path_param("task_gid")],
        "post": {
            "requestBody": {"content": {"application/json": {"schema": req}}},
            "responses": ok(ref("Task")),
        },
    }


def test_add_and_remove_join_and_leave_an_array_instead_of_replacing_it():
    # Asana: POST /tasks/{task_gid}/addFollowers {followers} set the task's followers to the
    # argument (dropping the others), removeFollowers was a create of a made-up 'remove_follower'
    # row, and addTag/removeTag were dropped ("no status, flag or documented field")
    ids = {"type": "array", "items": {"type": "string"}}
    paths: dict = {
        "/tasks/{task_gid}": {"parameters": [path_param("task_gid")], "get": {"responses": ok(ref("Task"))}},
        "/tasks/{task_gid}/addFollowers": _asana_op("followers", ids),
        "/tasks/{task_gid}/removeFollowers": _asana_op("followers", ids),
        "/tasks/{task_gid}/addTag": _asana_op("tag", {"type": "string"}),
        "/tasks/{task_gid}/removeTag": _asana_op("tag", {"type": "string"}),
    }
    res = explore(openapi(paths, {"Task": TASK}), domain="tasks")
    tools = {t.source.rsplit("/", 1)[-1]: t for e in res.envs for t in e.tools if t.kind.value == "action"}
    got = {
        k: [(e.field, e.append_param, e.remove_param, e.match_key) for e in t.effects]
        for k, t in tools.items()
    }
    assert got == {
        "addFollowers": [("followers", "followers", None, "gid")],
        "removeFollowers": [("followers", None, "followers", "gid")],
        "addTag": [("tags", "tag", None, "gid")],
        "removeTag": [("tags", None, "tag", "gid")],
    }, res.excluded
    assert [(p.name, p.type.value, p.field) for p in tools["addTag"].params][1:] == [("tag", "string", None)]
