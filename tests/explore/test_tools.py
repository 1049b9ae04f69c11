"""Tool drafts (explore/tools.py): list filters and the request controls that are none."""

from __future__ import annotations

from envfactory.explore import explore

from .conftest import ok, openapi, path_param, ref

EVENT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "summary": {"type": "string"},
        "status": {"type": "string", "enum": ["confirmed", "tentative", "cancelled"]},
    },
}


def _q(name: str, schema: dict, description: str) -> dict:
    return {"name": name, "in": "query", "schema": schema, "description": description}


def test_request_controls_are_no_filters_and_no_fields():
    # Google Calendar v3 GET /calendars/{calendarId}/events: showDeleted, singleEvents,
    # alwaysIncludeEmail, maxAttendees, syncToken and timeZone shape the answer; they had become
    # columns of an event (``show_deleted`` stored on every row) and filters on them
    params = [
        path_param("calendarId"),
        _q(
            "showDeleted",
            {"type": "boolean"},
            'Whether to include deleted events (with status equals "cancelled") in the result.',
        ),
        _q("singleEvents", {"type": "boolean"}, "Whether to expand recurring events into instances."),
        _q("alwaysIncludeEmail", {"type": "boolean"}, "Deprecated and ignored."),
        _q(
            "maxAttendees", {"type": "integer"}, "The maximum number of attendees to include in the response."
        ),
        _q("syncToken", {"type": "string"}, "Token obtained from the nextSyncToken field."),
        _q("timeZone", {"type": "string"}, "Time zone used in the response. Optional."),
        # Traccar 5.6 GET /devices, /drivers, /commands ...: flags of the request, not of a row
        _q("all", {"type": "boolean"}, "Can only be used by admins or managers to fetch all entities"),
        _q("refresh", {"type": "boolean"}, ""),
        _q("status", {"type": "string"}, "Only events with this status."),
    ]
    listing = {"type": "object", "properties": {"items": {"type": "array", "items": ref("Event")}}}
    doc = openapi(
        {"/calendars/{calendarId}/events": {"get": {"parameters": params, "responses": ok(listing)}}},
        {"Event": EVENT},
    )
    res = explore(doc, domain="lifestyle")
    tool = next(t for e in res.envs for t in e.tools if t.kind.value == "list")
    assert [p.name for p in tool.params] == ["calendar_id", "status"]
    fields = {f.name for e in res.envs for x in e.entities if x.name == "event" for f in x.fields}
    assert not fields & {
        "show_deleted", "single_events", "always_include_email", "sync_token", "time_zone", "all", "refresh"
    }  # fmt: skip
