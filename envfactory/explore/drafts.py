"""Tool drafts (the records the explorer fills per operation) and the small readings every drafter uses:
an entity's display and status field, the document's spelling of an enum value."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ingest import Parameter
from ..spec import Condition, Effect, FieldType
from .entities import EntityDraft, FieldDraft
from .naming import first_sentence
from .resources import OpPlan

__all__ = [
    "ParamDraft",
    "ToolDraft",
    "SERVER_SET",
    "display_field",
    "status_field",
    "fold",
    "doc_value",
    "styled",
    "param_desc",
    "human",
]

SERVER_SET = re.compile(
    r"^(created|updated|modified|deleted|last_modified|last_updated)(_at|_on|_date|_time|_by)?$|"
    r"^(date_created|date_updated|date_modified|creation_date|last_modified_date)$|"
    r"^(grand_)?total$|^subtotal|_total$|_count$|^(etag|version|revision)$"
)
_DISPLAY = (
    "name",
    "title",
    "display_name",
    "full_name",
    "subject",
    "label",
    "summary",
    "last_name",
    "username",
    "email",
    "code",
    "number",
    "description",
)


@dataclass
class ParamDraft:
    name: str
    field: str
    op: str = "eq"
    required: bool = False
    key: bool = False
    description: str = ""
    elem_schema: dict | None = None  # for op 'in': the items schema
    ftype: FieldType | None = None  # type of an argument that maps to no field (an amount to pay)
    minimum: float | None = None


@dataclass
class ToolDraft:
    plan: OpPlan
    kind: str
    entity: str
    base_name: str
    params: list[ParamDraft] = field(default_factory=list)
    preconditions: list[Condition] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    sortable: bool = False
    summary: str = ""
    action_note: str = ""
    name: str = ""
    upsert: bool = False  # an update that creates the row its (optional) key does not name


def display_field(ent: EntityDraft) -> str | None:
    for n in _DISPLAY:
        f = ent.fields.get(n)
        if f is not None and f.type == FieldType.string and not f.ref:
            return n
    return None


def status_field(ent: EntityDraft) -> FieldDraft | None:
    for n in ("status", "state", f"{ent.name}_status", f"{ent.name}_state"):
        if n in ent.fields and (n != ent.name or ent.fields[n].type == FieldType.enum):
            return ent.fields[n]  # (a Mastodon status's ``status`` is its text, not a state)
    for f in ent.fields.values():
        if f.name.endswith(("_status", "_state")) and f.type == FieldType.enum:
            return f
    return None


def fold(v: str) -> str:
    return v.strip().lower().replace("-", "_").replace(" ", "_")


def doc_value(enum: list[str] | None, value: str) -> str | None:
    """The document's spelling of an action-table value (``SENT`` for ``sent``), None if absent."""
    want = fold(value)
    return next((e for e in enum or [] if fold(e) == want), None)


def styled(enum: list[str], value: str) -> str:
    """A value added to a documented enum, written in the document's case style."""
    if enum and all(e.isupper() for e in enum if any(c.isalpha() for c in e)):
        return value.upper()
    return value


def param_desc(p: Parameter | None, fallback: str) -> str:
    d = first_sentence(p.description, 160) if p is not None else ""
    return d or fallback


def human(name: str) -> str:
    return name.replace("_", " ")
