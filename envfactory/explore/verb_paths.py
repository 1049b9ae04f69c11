"""Path words that are verbs on rows the request names, read with the request and the answer.

- ``POST /v2/customers/bulk-retrieve {customer_ids}`` reads the customers those ids name: a
  list filtered by id, not a create of a ``bulk_retrieve`` row; ``POST .../bulk-delete
  {customer_ids}`` deletes them (one id per call, as any bulk delete);
- ``POST /apps/{appId}/invoices/fresh?ids=...`` "Regenerate pdf and recalcul amounts of invoice"
  acts on the invoices its ``ids`` name: no ``fresh`` is stored;
- ``POST /sendpassword``, ``POST /changepassword``, ``POST /register {email, password}``: account
  and password endpoints of the caller, authentication rather than rows of the API.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..ingest import Operation, Parameter
from .naming import entity_name, plural, snake
from .noise import VERSION_SEGMENT
from .shapes import (
    RPC_VERBS,
    answers_list,
    batch_of_rows,
    bulk_items,
    id_param,
    imports_one_row,
    says_creates,
    summary_verb,
)

if TYPE_CHECKING:
    from .resources import OpPlan

__all__ = [
    "plan_bulk_verb",
    "plan_read_verb",
    "plan_rows_word",
    "acts_on_named_rows",
    "account_endpoint",
    "computed_post",
    "plan_path_filters",
    "generic_collection",
]

_GLUED = ("bulk", "batch")
_BATCH_VERBS = {*RPC_VERBS, "upsert", "change", "publish", "swap", "ban", "modify", "move", "assign"}


def _ids_param(plan: OpPlan, entity: str | None = None) -> str | None:
    """The body/query parameter listing row ids: a required ``ids``/``*_ids``; with ``entity``, one
    naming that entity's rows (``customer_ids``, ``team_member_ids`` for team-member booking
    profiles, a generic ``ids``/``object_ids``), required or not."""
    for p in plan.op.parameters:
        n = snake(p.name)
        if p.location not in ("body", "query") or not (n == "ids" or n.endswith("_ids")):
            continue
        if entity is None and p.required:
            return p.name
        if entity is not None and (n in ("ids", "object_ids") or entity.startswith(n[: -len("_ids")])):
            return p.name
    if entity is not None:
        return next((p.name for p in plan.op.parameters if _lists_ids_of(p, entity)), None)
    return None


_ID_FORMATS = {"snowflake", "uuid", "int64", "int32"}


def _lists_ids_of(p: Parameter, entity: str) -> bool:
    """Discord ``bulk-delete {messages: [snowflake, ...]}``: a required body list named for the
    entity's rows whose items are ids (integers, or strings of an id format)."""
    raw = p.schema_.get("items")
    items: dict = raw if isinstance(raw, dict) else {}
    if (
        p.location != "body"
        or not p.required
        or p.schema_.get("type") != "array"
        or snake(p.name) != plural(entity)
    ):
        return False
    return items.get("type") == "integer" or (
        items.get("type") == "string" and items.get("format") in _ID_FORMATS
    )


def plan_bulk_verb(plan: OpPlan, word: str, prev: tuple[str, str] | None) -> OpPlan | None:
    """``bulk-retrieve`` / ``batch-delete`` on a collection with a list of the rows' ids: a list
    filtered by those ids, or a bulk delete (one id per call). Any other ``bulk-``/``batch-`` word
    writes many rows at once and is excluded as a ``/batch`` segment is; None for other words."""
    parts = word.split("_")
    if len(parts) < 2 or parts[0] not in _GLUED or parts[1] not in _BATCH_VERBS:
        return None  # (BigCommerce bulk-pricing-rules: a resource)
    rest = "_".join(parts[2:])
    noun = rest or (prev[1] if prev is not None and prev[0] == "s" else "")
    ids = _ids_param(plan, entity_name(noun)) if noun else None
    if ids is None and noun and _writes_rows_one_by_one(plan, RPC_VERBS.get(parts[1])):
        plan.entity = entity_name(noun)
        return plan
    if ids is None or plan.op.method != "post" or RPC_VERBS.get(parts[1]) not in ("get", "list", "delete"):
        # bulk-create, batch-upsert, bulk-swap-plan: many rows at once (as a /batch segment is)
        plan.reason = "batch endpoint (the single-item operations cover it)"
        return plan
    plan.entity = entity_name(noun)
    if RPC_VERBS[parts[1]] == "delete":
        plan.kind, plan.key_param, plan.bulk = "delete", ids, True
    else:
        plan.kind, plan.qualifier = "list", "by_ids"
    return plan


_NAMES_IDS = re.compile(r"\b(ids?)\b|_id\b", re.I)


def _writes_rows_one_by_one(plan: OpPlan, verb: str | None) -> bool:
    """Square ``bulk-create {"customers": {<idempotency key>: {...}}}``: a bulk create, one row per
    call; ``bulk-update {"customers": {<customer id>: {...}}}`` ("represented by `customer ID:
    { customer data }`"): a bulk update of the row each key names. A map whose keys the document
    does not call ids names no row to update."""
    op = plan.op
    if (
        verb not in ("create", "update")
        or op.method not in ("post", "put")
        or bulk_items(op.request_body) is None
    ):
        return False
    if verb == "create":
        plan.kind, plan.bulk = "create", True
        return True
    body = op.request_body if isinstance(op.request_body, dict) else {}
    (name, wrapper), *more = list((body.get("properties") or {"": None}).items())
    if more or not isinstance(wrapper, dict) or not _NAMES_IDS.search(str(wrapper.get("description") or "")):
        return False
    plan.kind, plan.key_param, plan.bulk = "update", name, True
    return True


def plan_read_verb(plan: OpPlan, head: str, rest: str, prev: tuple[str, str] | None = None) -> OpPlan:
    """``POST /get_club {club_id}``: a get of the row its id names; ``get_notifications``: a list;
    ``/institutions/get_by_id``: the collection before it; ``get_users_for_topic``: users filtered
    by the topic; otherwise dropped with the reason."""
    if rest.startswith("by_") and prev is not None and prev[0] == "s":
        rest = prev[1]  # Plaid POST /institutions/get_by_id {institution_id}: an institution
    noun, _, scope = rest.partition("_for_")
    if scope and head == "get" and entity_name(noun) != snake(noun) and id_param(plan.op, entity_name(scope)):
        # Clubhouse GET /get_users_for_topic?topic_id= "looks up users by topic": users, filtered by the topic
        plan.entity, plan.kind = entity_name(noun), "list"
        return plan
    plan.entity = entity_name(rest)
    key = id_param(plan.op, plan.entity)
    if head in ("get", "fetch", "retrieve") and key is not None:
        plan.kind, plan.key_param = "get", key
    elif head in ("list", "search", "find") or answers_list(plan.op) or entity_name(rest) != snake(rest):
        plan.kind = "list"  # get_all_topics, get_notifications: a plural names a list
    else:
        plan.reason = f"{head}_{rest!s} documents no id of the {plan.entity.replace('_', ' ')} it reads"
    return plan


def plan_rows_word(plan: OpPlan, word: str, segs: list[tuple[str, str]]) -> OpPlan | None:
    """A ``bulk``/``batch``/``import``/``watch`` last word that still names rows one at a time: Jira
    ``GET /group/bulk`` lists groups, ``POST /issue/bulk`` "Bulk create issue" is a bulk create
    (``shapes.batch_of_rows``), ``POST /events/import`` adds one event (``shapes.imports_one_row``),
    and Google's ``POST /calendars/{calendarId}/events/watch`` (a Channel in, the Channel out)
    registers a watch of the calendar's events, as a webhook registration is a row of its own.
    None for any other word (a noise word was already refused by ``noise``)."""
    op = plan.op
    prev = segs[-2] if len(segs) >= 2 else None
    watched = prev if prev is not None and prev[0] == "s" else segs[-3] if len(segs) >= 3 else None
    if word == "watch" and op.method == "post" and watched and watched[0] == "s" and imports_one_row(op):
        plan.entity, plan.kind = f"{entity_name(watched[1])}_watch", "create"  # (Gmail's watch: no Channel)
        return plan
    if prev is None or prev[0] != "s":
        return None
    if word in ("bulk", "batch") and batch_of_rows(op):
        plan.entity = entity_name(prev[1])
        if op.method == "get":
            plan.kind, plan.qualifier = "list", "bulk"
        else:
            plan.kind, plan.bulk = "create", True
        return plan
    if word == "import" and op.method == "post" and imports_one_row(op):
        plan.entity, plan.kind = entity_name(prev[1]), "create"
        return plan
    return None


def acts_on_named_rows(plan: OpPlan) -> str | None:
    """Why a POST on a collection that names rows by a required ``ids`` list, and does not say it
    creates one, is no create (Sinao ``/invoices/fresh?ids=`` "Regenerate pdf ..."); else None."""
    ids = _ids_param(plan)
    if ids is None or plan.op.method != "post" or says_creates(plan.op) or summary_verb(plan.op) == "create":
        return None
    what = (plan.op.summary or "").strip().rstrip(".") or f"POST {plan.op.path}"
    return f"{what!r} acts on the rows its {ids!r} names; it stores no {plan.entity.replace('_', ' ')} of its own"


_ACCOUNT_WORDS = re.compile(r"(password|passwd|signup|sign_up|register)$")


def account_endpoint(plan: OpPlan, words: list[str]) -> str | None:
    """Why a password or sign-up endpoint of the caller is excluded (``/sendpassword``,
    ``/changepassword``, ``/register {email, password}``, ``/invite/{accessToken}/register``);
    None when the path names a stored row (``PUT /users/{id}/password`` sets a user's password)."""
    op = plan.op
    if op.method != "post" or not words:
        return None
    last = snake(words[-1])
    rows = [p for p in op.parameters if p.location == "path" and "token" not in snake(p.name)]
    sent = {snake(p.name) for p in op.parameters if p.location in ("query", "body")}
    if rows or not _ACCOUNT_WORDS.search(last):
        return None
    if "password" in last or "password" in sent:
        return "authentication/session endpoint (the caller's password or sign-up)"
    return None


_READS = re.compile(
    r"^(<p>|\s)*(returns?|gets?|retrieves?|fetch(es)?|reads?|looks? up|quer(y|ies)|computes?|calculates?|checks?)\b",
    re.I,
)
_MADE_FROM = re.compile(r"^(<p>|\s)*(creates?|adds?)\s+(a|an|one|the|new)\s+([\w-]+)\s+based on\b", re.I)


def computed_post(plan: OpPlan, *, listing: bool = False) -> str | None:
    """Why a POST on a collection is no create: its summary (else description) says it returns,
    computes or checks something (Calendar ``POST /freeBusy`` "Returns free/busy information for a
    set of calendars", Adyen ``POST /paymentMethods/balance`` "Get the balance of a gift card"), or
    that it makes a row from an argument by a rule the document does not state (Calendar
    ``POST /events/quickAdd`` "Creates an event based on a simple text string"). None otherwise."""
    op = plan.op
    text = ((op.summary or "").strip() or (op.description or "").strip()).split("\n", 1)[0]
    if _READS.match(text) and not listing:  # (a POST answering a list is a search)
        return f"{text.rstrip('.')!r}: an answer computed from its arguments; it stores nothing"
    m = _MADE_FROM.match(text)
    if m:
        return f"{text.rstrip('.')!r}: the server works out the {m.group(4)}'s fields from its arguments"
    return None


_ROW_ID = re.compile(r"(^|_)(id|uuid|gid|sid|key|slug)$")


def plan_path_filters(plan: OpPlan, segs: list[tuple[str, str]]) -> OpPlan | None:
    """``GET /operations/flightstatus/{flightNumber}/{date}``, ``GET /operations/schedules/{origin}/
    {destination}/{fromDateTime}`` (Lufthansa): path values after the collection's word that name
    no row but the rows to read (a flight number, airports, a date): a list filtered by them,
    each a required argument. None for any other path (an id among them: a row of its own)."""
    if plan.op.method != "get" or len(segs) < 3:
        return None
    i = max(j for j, (k, _) in enumerate(segs) if k == "s")
    values = [w for _, w in segs[i + 1 :]]
    if len(values) < 2 or VERSION_SEGMENT.match(segs[i][1]) or any(_ROW_ID.search(snake(v)) for v in values):
        return None
    if {snake(v) for v in values} & {"latitude", "longitude", "lat", "lng", "lon"}:
        return None  # /airports/nearest/{latitude},{longitude}: nearest to a position, computed
    word = snake(segs[i][1])
    if word.split("_", 1)[0] in RPC_VERBS:
        return None  # /cargo/getRoute/...: a verb, not the collection's name
    plan.kind, plan.entity, plan.parents = "list", entity_name(word), []
    plan.path_filters = values
    return plan


_COLLECTION_PARAM = re.compile(r"(^|_)(module|collection|object_type|resource_type|entity_type|table)(_|$)")


def generic_collection(segs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Zoho CRM ``/crm/v8/{module_api_name}/{id}``: a parameter in the collection's place names which
    collection (Leads, Contacts ...): the rows are that module's records, and the module a scope (as a
    tenant is). The path is read as ``/crm/records/{id}``; any other path is returned as it is (and
    so is a module followed by a value that is no row's id, ``{external_field_value}``)."""
    for i in range(1, len(segs) - 1):
        kind, word = segs[i]
        nxt_kind, nxt = segs[i + 1]
        if kind != "s" or not VERSION_SEGMENT.match(word) or nxt_kind != "p":
            continue
        if any(k != "s" for k, _ in segs[:i]) or not _COLLECTION_PARAM.search(snake(nxt)):
            return segs
        rest = segs[i + 2 :]
        if rest and rest[0][0] == "p" and not _ROW_ID.search(snake(rest[0][1])):
            return segs
        if any(k == "s" and snake(w) == "actions" for k, w in rest):
            return segs  # /{module_api_name}/actions/count, .../actions/mass_update: not a record's own words
        return [*segs[:i], ("s", "records"), *rest]
    return segs


_CALLER_RELATIONS = {"likes", "reposts", "favorites", "favourites", "bookmarks", "stars", "pins", "upvotes"}
_RELATION_VERBS = {"leave", "join", "follow", "unfollow", "like", "unlike", "subscribe", "unsubscribe"}


def caller_relation(op: Operation, segs: list[tuple[str, str]]) -> str | None:
    """Why a write of an item path is a relation of the caller's, not a write of the row it names;
    None otherwise. SoundCloud ``POST``/``DELETE /likes/tracks/{track_id}`` ("Likes a track") had
    become an update and a delete of the track, and no field of a track says it is liked; under the
    caller's own path, ``DELETE /users/@me/guilds/{guild_id}`` ("leave_guild") leaves the guild and
    ``PUT /me/followings/{user_id}`` ("Follows a user.") follows one."""
    if op.method == "get":
        return None
    rel = snake(segs[0][1]) if segs and segs[0][0] == "s" else ""
    if rel in _CALLER_RELATIONS and [k for k, _ in segs] == ["s", "s", "p"]:
        what = entity_name(segs[1][1]).replace("_", " ")
        return f"{op.method.upper()} of a {rel[:-1]} on a {what}: a relation of the caller's that no documented field holds"
    if not any(k == "s" and snake(w.lstrip("@")) in ("me", "self") for k, w in segs):
        return None
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", (op.summary or "").strip() or (op.operation_id or ""))
    head = re.split(r"[\s_\-]+", text.lower(), maxsplit=1)[0] if text else ""
    head = head[:-1] if head.endswith("s") and head[:-1] in _RELATION_VERBS else head
    if head not in _RELATION_VERBS:
        return None
    return f"{text!r}: the caller {head}s it (a relation of the caller's), no write of the row it names"
