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
