"""Operations that document nothing to store or read back, read once entities are known.

Sinao's ``GET /apps/{appId}/invoices/nextnumber`` ("Get the next invoice number for preview") and
``GET /apps/{appId}/ping`` answer nothing the document describes, and ``POST
/apps/{appId}/subscription/pay_all`` ("Pay all due invoices") sends nothing and answers nothing.
Read by path shape they became lists and creates of invented ``nextnumber``, ``ping`` and
``pay_all`` tables whose rows hold only an id. An operation is excluded here only when all of it
is silent: the answer (no schema, no example), the request (no body, no argument beyond paging),
and every other operation on the same entity (it has no documented field). A word that names a
resource with documented fields elsewhere, or a POST the document says creates one, stays.
"""

from __future__ import annotations

from ..ingest import Operation
from .entities import EntityDraft
from .naming import snake
from .resources import PAGING_PARAMS, OpPlan
from .shapes import says_creates

__all__ = ["documents_nothing"]

_PROBES = {"ping", "health", "healthcheck", "heartbeat"}


def _answers_nothing(op: Operation) -> bool:
    r = op.success_response()
    return r is None or (not r.schema_ and r.example is None)


def _sends_nothing(op: Operation) -> bool:
    if op.request_body:
        return False
    return not any(
        p.location in ("query", "body") and snake(p.name) not in PAGING_PARAMS for p in op.parameters
    )


def _last_word(op: Operation) -> str:
    words = [w for w in op.path.split("?", 1)[0].split("/") if w and not w.startswith("{")]
    return snake(words[-1]) if words else ""


def _why(p: OpPlan, empty: bool) -> str | None:
    op, word = p.op, _last_word(p.op)
    if p.kind == "list" and op.method == "get" and word in _PROBES and _answers_nothing(op):
        return "health check"  # GET /apps/{appId}/ping "Ping app web hostname"
    if not empty or not _answers_nothing(op) or p.item is not None:
        return None
    what = (op.summary or "").strip().rstrip(".")
    said = f"{what!r} " if what else ""
    if p.kind == "list" and op.method == "get" and not word.endswith("s"):
        return f"{said}documents no answer it describes (no response schema or JSON example) and no field of a {word!r}: nothing stored to read"
    if p.kind == "create" and op.method == "post" and _sends_nothing(op) and not says_creates(op):
        return f"{said}sends nothing and answers nothing: it acts on rows it does not name, and stores no {word!r}"
    return None


def documents_nothing(plans: list[OpPlan], ents: dict[str, EntityDraft]) -> list[tuple[OpPlan, str]]:
    """The plans to exclude (each with its reason; their ``reason`` is set)."""
    out = []
    for p in plans:
        ent = ents.get(p.entity)
        empty = ent is not None and not ent.stub and set(ent.fields) <= {ent.pk}
        why = _why(p, empty)
        if why is not None:
            p.reason = why
            out.append((p, why))
    return out
