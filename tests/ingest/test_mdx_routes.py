"""Defect 8 (issue 14): endpoints written as MDX components are read (Discord's docs style)."""

from __future__ import annotations

from envfactory.ingest import load_apidoc

DOC = """\
# Guild Scheduled Event

## List Scheduled Events for Guild
<Route method="GET">/guilds/[{guild.id}](#DOCS_RESOURCES_GUILD/guild-object)/scheduled-events</Route>

Returns a list of guild scheduled event objects for the given guild.

###### Query String Params

| Field        | Type    | Description                               | Required |
|--------------|---------|-------------------------------------------|----------|
| with_user_count? | boolean | include number of users subscribed to each event | false |

## Create Guild Scheduled Event
<Route method="POST">/guilds/[{guild.id}](#DOCS_RESOURCES_GUILD/guild-object)/scheduled-events</Route>

Create a guild scheduled event in the guild.

## Delete Guild Scheduled Event
<Route method='DELETE'>/guilds/{guild.id}/scheduled-events/{guild_scheduled_event.id}</Route>

Delete a guild scheduled event.
"""


def test_route_components_are_endpoints():
    doc = load_apidoc(DOC.encode(), source="guild_scheduled_event.mdx")
    keys = {op.key for op in doc.operations}
    assert any(k.startswith("GET /guilds/{") and k.endswith("/scheduled-events") for k in keys), keys
    assert any(k.startswith("POST /guilds/{") for k in keys), keys
    assert any(k.startswith("DELETE /guilds/{") for k in keys), keys
    get = next(op for op in doc.operations if op.method == "get")
    assert get.summary.startswith("List Scheduled Events")
