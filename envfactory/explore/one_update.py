"""A PUT and a PATCH of the same row are one update tool.

Google Calendar documents ``PUT /calendars/{calendarId}`` ("Updates metadata for a calendar")
and ``PATCH /calendars/{calendarId}`` ("Updates ... This method supports patch semantics") with
the same body; both became tools (``update_calendar`` and ``update_calendar_calendars_patch``),
two names for one change. An update tool changes only the fields a call passes, which is the
PATCH, so the PATCH's tool is kept and the PUT is recorded as served by it (the fidelity report
counts it with the tool that serves it, and compares the tool with the PATCH's body).

They are one only when they are: same entity and key, and the PUT's body documents nothing the
PATCH's does not (Discord's ``PUT /guilds/{id}/members/{user_id}`` adds a member with an
``access_token``; a FHIR PATCH takes JSON Patch operations; ``PUT .../templates/{code}`` with no
body syncs a template): those stay tools of their own. Two that document no body are one when the
document says the same of both (drchrono: "Update an existing patient allergy").
"""

from __future__ import annotations

from .drafts import ToolDraft
from .fidelity import documented_body
from .naming import snake
from .shapes import summary_verb

__all__ = ["one_update"]


def _props(t: ToolDraft) -> set[str]:
    return {snake(k) for k in documented_body(t.plan.op)[0]}


def _same(put: ToolDraft, patch: ToolDraft) -> bool:
    if (put.entity, put.plan.key_param, put.plan.op.path) != (
        patch.entity,
        patch.plan.key_param,
        patch.plan.op.path,
    ):
        return False
    if summary_verb(put.plan.op) == "create" or put.plan.qualifier != patch.plan.qualifier:
        return False
    mine, theirs = _props(put), _props(patch)
    if not mine:  # drchrono documents neither body: one description ("Update an existing patient allergy")
        said = (put.plan.op.summary, put.plan.op.description)
        return not theirs and any(said) and said == (patch.plan.op.summary, patch.plan.op.description)
    return mine <= theirs | {snake(put.plan.key_param or "")}


def one_update(drafts: list[ToolDraft]) -> tuple[list[ToolDraft], list[tuple[ToolDraft, ToolDraft]]]:
    """The drafts without the PUTs a PATCH of the same row serves, and (PUT, PATCH) pairs."""
    patches = [t for t in drafts if t.kind == "update" and t.plan.op.method == "patch"]
    served: list[tuple[ToolDraft, ToolDraft]] = []
    for t in drafts:
        if t.kind != "update" or t.plan.op.method != "put":
            continue
        patch = next((p for p in patches if _same(t, p)), None)
        if patch is not None:
            served.append((t, patch))
    gone = {id(t) for t, _ in served}
    return [t for t in drafts if id(t) not in gone], served
