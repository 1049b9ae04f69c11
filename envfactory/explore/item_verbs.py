"""``POST /x/{x_id}/word``: a sub-resource create, or an action on ``x``?

The path alone cannot tell ``/orders/{id}/refunds`` (a Refund with its own id) from
``/enrollments/{id}/grade`` (writes the enrollment's ``grade``). Once entities are known, a
word the action table lacks becomes an action on ``x`` when the operation answers with ``x``
itself (or with no other resource) and its body writes fields of ``x``, the word names a
field of ``x``, or the word names a status of ``x``. It stays a create only when the
response is clearly another resource with its own id (then of the entity that response
describes, when one matches). Unclear cases are excluded with a reason, never invented.
"""

from __future__ import annotations

from ..spec import FieldType
from .actions import READ_VERBS, UNLINK_VERBS, action_rule, participles, rule_for
from .entities import EntityDraft, props_of, unwrap
from .naming import singular, snake
from .resources import OpPlan

__all__ = ["resolve_item_verbs"]

_VERB_HEADS = {
    "pay",
    "declare",
    "report",
    "mark",
    "record",
    "add",
    "remove",
    "set",
    "clear",
    "request",
    "flag",
    "waive",
}


def _response_row(plan: OpPlan, hint: str) -> tuple[dict[str, object], str]:
    resp = plan.op.success_response()
    if resp is None or not resp.schema_:
        return {}, ""
    row = unwrap(resp.schema_, hint)
    return (props_of(row)[0] if row else {}), resp.status


def _overlap(names: set[str], ent: EntityDraft) -> float:
    return len(names & set(ent.fields)) / len(names) if names else 0.0


def _body_names(plan: OpPlan) -> set[str]:
    body = plan.op.request_body
    names = set(props_of(body)[0]) if isinstance(body, dict) else set()
    names |= {p.name for p in plan.op.parameters if p.location == "body"}
    return {snake(n) for n in names}


def _status_values(ent: EntityDraft) -> set[str]:
    from .tools import status_field  # tools imports this module's neighbours; keep the cycle lazy

    sf = status_field(ent)
    return set(sf.enum or []) if sf is not None and sf.type == FieldType.enum else set()


def _join_row(xname: str, made: str, rnames: set[str], ents: dict[str, EntityDraft]) -> str | None:
    """The entity of x's own join rows (``team_membership`` of a team, ``goal_relationship`` of a
    goal, a ``custom_field_setting`` naming its ``project``) that an add's answer is, with its key;
    None when the answer is no such row (Asana's workspace addUser answers the user it adds, which
    names no workspace: no user is created)."""
    for e in sorted(ents.values(), key=lambda e: e.name):
        keyed = e.pk in rnames or (e.pk == "id" and bool(rnames & {"gid", "uuid"}))  # Asana's gid is the id
        joins = e.name.startswith(f"{xname}_") or bool(rnames & {xname, f"{xname}_id"})  # it names x back
        if joins and e.name not in (xname, made) and not e.stub and keyed and _overlap(rnames, e) >= 0.8:
            return e.name
    return None


def resolve_item_verbs(plans: list[OpPlan], ents: dict[str, EntityDraft]) -> list[tuple[OpPlan, str]]:
    """Turn creates of made-up resources into actions on their parent item; return exclusions.

    Changes plans in place (kind, entity, verb, key, parents); the caller re-infers entities.
    """
    excluded: list[tuple[OpPlan, str]] = []
    uses: dict[str, int] = {}
    for p in plans:
        uses[p.entity] = uses.get(p.entity, 0) + 1
    for p in plans:
        if p.kind != "create" or p.item is None or p.word is None:
            continue
        xname, key = p.item
        x = ents.get(xname)
        if x is None or x.stub and not x.fields:
            continue
        word = p.word
        resp, status = _response_row(p, xname)
        rnames = {snake(k) for k in resp}
        head = word.partition("_")[0]
        collection = singular(word) != word and not (action_rule(head) or head in _VERB_HEADS)
        is_x = len(rnames) >= 3 and _overlap(rnames, x) >= 0.7
        own_id = any(n == "id" or n == f"{singular(word)}_id" for n in rnames) and not is_x
        join = _join_row(xname, p.entity, rnames, ents) if head == "add" and not is_x else None
        if join is not None:
            # Asana POST /teams/{team_gid}/addUser "Returns the complete team membership record":
            # a create of the team's membership row (removeUser, naming no membership, stays dropped)
            p.entity = join
            continue
        if collection and not is_x or own_id:
            # a collection under the item (/orders/{id}/returns) or another resource: a create,
            # of the entity its response describes when one matches better than the path word
            best = max(
                (e for e in ents.values() if e.name not in (xname, p.entity) and not e.stub),
                key=lambda e: (_overlap(rnames, e), e.name),
                default=None,
            )
            if (
                own_id
                and uses.get(p.entity) == 1
                and best is not None
                and _overlap(rnames, best) >= 0.8
                and best.pk in rnames
            ):
                p.entity = best.name
            continue
        if collection:
            continue  # /carts/{id}/items answering with the cart: still adds an item
        if status.startswith("201") and is_x:
            p.reason = (
                f"creates a new {xname.replace('_', ' ')} from an existing one; no copy effect to express it"
            )
            excluded.append((p, p.reason))
            continue
        if word in READ_VERBS:
            p.reason = f"{word!r} computes a result and changes no state"
            excluded.append((p, p.reason))
            continue
        body = _body_names(p)
        writes = body & set(x.fields) - {x.pk}
        rule = action_rule(word)
        status_hit = bool(set(participles(word)) & _status_values(x))
        flag_hit = any(
            x.fields[f].type == FieldType.boolean for f in rule_for(word).flags if f in x.fields
        )  # POST /statuses/{id}/bookmark sets the status's documented ``bookmarked``
        if not (
            writes
            or word in x.fields
            or f"{word}_id" in x.fields
            or rule
            or status_hit
            or flag_hit
            or body
            or word in UNLINK_VERBS  # detach: clears the reference it names, if any (action_tools)
        ):
            p.reason = f"POST {word!r} on a {xname.replace('_', ' ')}: no field, status or verb to express it"
            excluded.append((p, p.reason))
            continue
        p.kind, p.entity, p.key_param = "action", xname, key
        p.verb = rule.verb if rule is not None else rule_for(word).verb
        p.parents = p.parents[:-1]
        p.item = None
    return excluded
