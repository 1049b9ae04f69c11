"""Singletons: one object a path names with no id of its own.

``GET/PUT /settings``, ``PATCH /users/@me`` and ``GET/PUT/DELETE /mypreferences/locale`` read
and change the one object of the API (a *global* singleton: one row, tools with no key);
``GET/PUT/DELETE /files/{file_id}/watermark`` and ``GET /guilds/{guild_id}/welcome-screen``
name one object per row of the parent (a *per-parent* singleton: its key is the parent's id,
a foreign key, and its tools take only that id). A DELETE of a singleton clears it (its fields
go back to their defaults): the object is still there, as ``GET`` after ``DELETE
/mypreferences/locale`` answers the default locale.

Paths that name many rows stay out: ids listed in the query or the body (``DELETE
/me/albums?ids=``), an array body, or a required query argument that selects what is read
(``GET /delivery/estimate?toLat=``: a computed answer, not a stored object).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import Effect, FieldType
from .drafts import ToolDraft, human
from .entities import EntityDraft, FieldDraft, parent_field_name
from .entities import _add_props as add_props
from .fidelity import documented_body
from .naming import entity_name, snake
from .shapes import singleton_plan

if TYPE_CHECKING:
    from .resources import OpPlan

__all__ = [
    "unify_singleton_paths",
    "shape_singletons",
    "finish_singleton_tools",
    "singleton_head",
]


def unify_singleton_paths(plans: list[OpPlan]) -> None:
    """``PUT /files/{file_id}/watermark`` (read as an update of the file's ``watermark``) beside a
    singleton ``GET`` or ``DELETE`` of that path is the singleton's update; and a singleton whose
    name is also a collection's (``GET /account`` beside ``GET /account/{id}``) is no singleton."""
    from .resources import _segments  # resources imports this module

    by_path = {p.op.path: p for p in plans if p.singleton and p.reason is None}
    for p in plans:
        s = by_path.get(p.op.path)
        if (
            s is None
            or p.singleton
            or p.reason is not None
            or p.kind != "update"
            or not documented_body(p.op)[0]
        ):
            continue
        keep = p.op
        fresh = singleton_plan(type(p)(op=keep, parents=list(s.parents)), _segments(keep.path))
        if fresh is not None and fresh.entity == s.entity:
            p.entity, p.kind, p.key_param, p.parents = fresh.entity, "update", fresh.key_param, fresh.parents
            p.singleton, p.qualifier = fresh.singleton, None
    collections = {p.entity for p in plans if not p.singleton and p.reason is None}
    collections |= {parent for p in plans if p.reason is None for _, parent in p.parents}
    for p in plans:
        if p.singleton != "parent" or p.reason is not None:
            continue
        word = next((w for k, w in reversed(_segments(p.op.path)) if k == "s"), "")
        writes_object = p.kind != "delete" and bool(documented_body(p.op)[0])  # PUT .../fees {"bagFee": ...}
        if snake(word).endswith("s") and entity_name(word) in collections and not writes_object:
            p.reason = (  # DELETE /locations/{id}/services, PUT /pools/{id}/restaurants
                f"{p.op.method.upper()} on the {human(snake(word))} of a {human(p.parents[-1][1])}: "
                f"many rows of a collection at once, not one object"
            )
    for p in plans:
        if not p.singleton or p.reason is not None or p.entity not in collections:
            continue
        if p.singleton == "global" and f"current_{p.entity}" not in collections:
            p.entity = (
                f"current_{p.entity}"  # GET /v1/account beside /v1/accounts/{account}: the caller's own
            )
        else:
            p.reason = (
                f"reads or changes one {human(p.entity)} with no id, while the API also has a "
                f"collection of {human(p.entity)}s; which row it means is not documented"
            )


_MADE_UP = "Unique id of the {}."  # entities._choose_pk's words for a key it had to make up


def _rename_clashes(ents: dict[str, EntityDraft], plans: list[OpPlan]) -> None:
    """``guild_widget`` beside ``guild.widget_channel_id``: SQLite would name the indexes of
    ``guild_widget.channel_id`` and ``guild.widget_channel_id`` alike; call the singleton
    ``guild_widget_info``."""
    renamed: dict[str, str] = {}
    for p in plans:
        if p.singleton != "parent" or not p.parents or p.entity in renamed:
            continue
        parent, own = ents.get(p.parents[-1][1]), ents.get(p.entity)
        tail = p.entity[len(p.parents[-1][1]) + 1 :]
        if parent is not None and own is not None and any(f"{tail}_{g}" in parent.fields for g in own.fields):
            new = f"{p.entity}_info"
            if new not in ents and p.entity in ents:
                renamed[p.entity] = new
    for old, new in renamed.items():
        ent = ents.pop(old)
        ent.name = new
        ents[new] = ent
    for p in plans:
        p.entity = renamed.get(p.entity, p.entity)


def shape_singletons(ents: dict[str, EntityDraft], plans: list[OpPlan]) -> set[str]:
    """Key each per-parent singleton by its parent's id (a foreign key); the singleton names."""
    _rename_clashes(ents, plans)
    out: set[str] = set()
    for p in plans:
        if not p.singleton or p.reason is not None or p.entity not in ents:
            continue
        ent = ents[p.entity]
        out.add(ent.name)
        resp = p.op.success_response()
        if p.kind == "delete" and resp is not None and resp.schema_:
            add_props(ent, resp.schema_)  # DELETE /v1/customers/{customer}/discount answers the discount
        if p.singleton != "parent" or not p.parents:
            continue
        param, parent = p.parents[-1]
        fname = parent_field_name(param, parent)
        old = ent.fields.get(ent.pk)
        if ent.pk != fname and old is not None and old.description == _MADE_UP.format(human(ent.name)):
            del ent.fields[ent.pk]  # the id the explorer made up when the object documents none
        f = ent.fields.get(fname) or FieldDraft(name=fname, type=FieldType.string)
        f.nullable, f.ref, f.link = False, parent, None
        if not f.description or f.description == _MADE_UP.format(human(ent.name)):
            f.description = f"Id of the {human(parent)} this {human(ent.name)} belongs to."
        ent.fields = {fname: f, **{k: v for k, v in ent.fields.items() if k != fname}}
        ent.pk = fname
    return out


def _reset_effects(ent: EntityDraft) -> list[Effect]:
    return [
        Effect(field=f.name, set=f.default)
        for f in ent.fields.values()
        if f.name != ent.pk and not f.ref and f.nullable and not f.read_only
    ]


def finish_singleton_tools(
    drafts: list[ToolDraft], ents: dict[str, EntityDraft]
) -> tuple[list[ToolDraft], list[tuple[ToolDraft, str]]]:
    """A global singleton's tools lose their key; a singleton's DELETE becomes ``clear_<x>``, an
    action that sets its fields back to their defaults. Returns (drafts, (dropped, reason))."""
    out: list[ToolDraft] = []
    dropped: list[tuple[ToolDraft, str]] = []
    for t in drafts:
        kind = t.plan.singleton
        if kind is None:
            out.append(t)
            continue
        ent = ents[t.entity]
        if t.kind == "delete":
            effects = _reset_effects(ent)
            if not effects:
                dropped.append((t, f"clears the {human(ent.name)}, which documents no field to clear"))
                continue
            t.kind, t.base_name, t.effects = "action", f"clear_{ent.name}", effects
            t.action_note = "sets its fields back to their defaults (the object stays)"
        if kind == "global":
            t.params = [p for p in t.params if not p.key]
        out.append(t)
    return out, dropped


def singleton_head(t: ToolDraft, ent: EntityDraft) -> str | None:
    """The opening of a singleton tool's description, or None for any other tool."""
    kind = t.plan.singleton
    if kind is None:
        return None
    h = human(ent.name)
    which = (
        f"the {h}"
        if kind == "global"
        else f"the {h} of one {human(ent.fields[ent.pk].ref or '')} (by {ent.pk})"
    )
    head = {
        "get": f"Get {which}; there is exactly one.",
        "update": f"Change {which}; pass only the fields to change.",
        "action": f"Clear {which}: its fields go back to their defaults.",
    }.get(t.kind)
    return head
