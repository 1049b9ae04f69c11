"""A PUT and a PATCH of the same row are one update tool (explore/one_update.py), and the
fidelity report counts the PUT with the tool that serves it. Shaped after Google Calendar v3
(resources/lifestyle) and Discord (corpus)."""

from __future__ import annotations

from envfactory.explore import build_fidelity, explore

from .conftest import body, ok, openapi, path_param, ref

CALENDAR = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "summary": {"type": "string", "description": "Title of the calendar."},
        "timeZone": {"type": "string"},
    },
}
MEMBER = {
    "type": "object",
    "properties": {"user_id": {"type": "string"}, "nick": {"type": "string"}, "mute": {"type": "boolean"}},
}


def _calendar_doc():
    item = {"parameters": [path_param("calendarId")]}
    item["get"] = {"description": "Returns metadata for a calendar.", "responses": ok(ref("Calendar"))}
    item["put"] = {
        "description": "Updates metadata for a calendar.",
        "requestBody": body(ref("Calendar")),
        "responses": ok(ref("Calendar")),
    }
    item["patch"] = {
        "description": "Updates metadata for a calendar. This method supports patch semantics.",
        "requestBody": body(ref("Calendar")),
        "responses": ok(ref("Calendar")),
    }
    return openapi(
        {
            "/calendars": {
                "post": {
                    "description": "Creates a secondary calendar.",
                    "requestBody": body(ref("Calendar")),
                    "responses": ok(ref("Calendar")),
                }
            },
            "/calendars/{calendarId}": item,
        },
        {"Calendar": CALENDAR},
    )


def test_put_and_patch_of_one_row_are_one_update_tool():
    doc = _calendar_doc()
    res = explore(doc, domain="lifestyle")
    updates = [(t.name, t.source) for e in res.envs for t in e.tools if t.kind.value == "update"]
    assert updates == [("update_calendar", "PATCH /calendars/{calendarId}")]
    put = next(x for x in res.excluded if x.operation == "PUT /calendars/{calendarId}")
    assert put.served_by == "PATCH /calendars/{calendarId}"
    fid = build_fidelity([doc], res.excluded, res.envs, res.envs, {}, {}, res.origins).documents[0]
    assert (fid.operations, fid.tools_made, fid.verified) == (4, 4, 4)
    assert fid.served == [
        "PUT /calendars/{calendarId}: served by update_calendar (PATCH /calendars/{calendarId})"
    ]
    assert not fid.dropped


def test_a_put_that_documents_more_than_the_patch_stays_its_own_tool():
    # Discord: PUT /guilds/{guild_id}/members/{user_id} adds a member (with an access_token);
    # PATCH modifies one: two operations, two tools
    item = {"parameters": [path_param("guild_id"), path_param("user_id")]}
    put_body = {
        "type": "object",
        "required": ["access_token"],
        "properties": {"access_token": {"type": "string"}, "nick": {"type": "string"}},
    }
    item["put"] = {
        "operationId": "add_guild_member",
        "requestBody": body(put_body),
        "responses": ok(ref("Member")),
    }
    item["patch"] = {
        "operationId": "update_guild_member",
        "requestBody": body(
            {"type": "object", "properties": {"nick": {"type": "string"}, "mute": {"type": "boolean"}}}
        ),
        "responses": ok(ref("Member")),
    }
    item["get"] = {"operationId": "get_guild_member", "responses": ok(ref("Member"))}
    doc = openapi({"/guilds/{guild_id}/members/{user_id}": item}, {"Member": MEMBER})
    res = explore(doc, domain="messaging")
    sources = {t.source for e in res.envs for t in e.tools}
    assert {
        "PUT /guilds/{guild_id}/members/{user_id}",
        "PATCH /guilds/{guild_id}/members/{user_id}",
    } <= sources
    assert not any(x.served_by for x in res.excluded)
