"""Operations -> resources and tool kinds, from method and path shape.

``/hotels`` + ``/hotels/{hotelId}`` are one resource (``hotel``); ``/hotels/{hotelId}/offers``
nests ``offer`` under ``hotel``; ``POST /bookings/{id}/cancel`` is an action on ``booking``.
RPC-style paths (``/conversations.list``) are read as ``<resource>.<verb>``. Operations with
no state meaning (health, auth, callbacks, binaries, metadata) are excluded with a reason.
A deprecated operation is still an operation of the API (it is planned like any other), and a
webhook registration is CRUD on a webhook entity (``/webhooks/subscriptions`` ->
``webhook_subscription``, never the API's own ``subscription``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ingest import Operation
from .actions import ActionRule, action_rule
from .fidelity import documented_body
from .naming import entity_name, snake
from .noise import VERSION_SEGMENT, noise_reason
from .row_keys import links_rows, lists_rows_named, row_key_param, sole_required_id
from .shapes import (
    RPC_VERBS,
    VERB_PATH_HEADS,
    answers_list,
    bulk_ids_param,
    bulk_item_key,
    bulk_owner_key,
    creates_rows,
    id_param,
    is_singleton_read,
    names_attribute,
    overwrites,
    refuse,
    says_creates,
    singleton_plan,
    summary_verb,
    upserts,
)
from .verb_paths import (
    account_endpoint,
    acts_on_named_rows,
    caller_relation,
    computed_post,
    generic_collection,
    plan_bulk_verb,
    plan_path_filters,
    plan_read_verb,
    plan_rows_word,
)

__all__ = ["OpPlan", "plan_operation", "PAGING_PARAMS", "SEARCH_WORDS"]

PAGING_PARAMS = {
    "limit",
    "offset",
    "page",
    "page_size",
    "per_page",
    "pagesize",
    "page_number",
    "page_token",
    "next_page_token",
    "cursor",
    "starting_after",
    "ending_before",
    "after_cursor",
    "before_cursor",
    "max_results",
    "sort",
    "sort_by",
    "sort_order",
    "order",
    "order_by",
    "sort_dir",
    "direction",
    "fields",
    "include",
    "expand",
    "embed",
    "select",
    "lang",
    "locale",
    "language",
    "api_key",
    "apikey",
    "key",
    "token",
    "access_token",
    "callback",
    "pretty_print",
    "alt",
    "quota_user",
    "user_ip",
    "oauth_token",
    "upload_protocol",
    "upload_type",
    "xgafv",
    "format",
    "count",
    "with_count",
    "total",
    "include_total",
    "page_limit",
    "first",
    "last",
    "skip",
    "top",
    "take",
    "size",
    "continuation_token",
    "x_http_method_override",
    "prettyprint",
    "debug",
    "dry_run",
    "idempotency_key",
    "orderby",
    "sortby",
    "sort_field",
    "sort_key",
    "sort_direction",
    "order_direction",
    "order_dir",
    "page_index",
    "pageindex",
    "pagenumber",
    "start_index",
    "maxresults",
    "max_page_size",
    "page_offset",
    "fields_to_return",
    "response_fields",
    "expand_fields",
    "include_fields",
    "exclude_fields",
    "field_mask",
    "filter_expression",
    "search_after",
}
SEARCH_WORDS = {"search", "find", "query", "lookup", "filter", "list", "all", "autocomplete", "suggest"}
_GET_WORDS = {"info", "get", "show", "retrieve", "read", "details", "detail", "fetch", "view", "lookup_by_id"}
_CREATE_WORDS = {
    "create",
    "add",
    "new",
    "insert",
    "post",
    "make",
    "register",
    "invite",
    "schedule",
    "book",
    "open_new",
}
_UPDATE_WORDS = {
    "update",
    "edit",
    "modify",
    "set",
    "rename",
    "change",
    "patch",
    "replace",
    "move",
    "assign",
    "reposition",
}
_DELETE_WORDS = {"delete", "remove", "destroy", "del", "purge", "erase"}


@dataclass
class OpPlan:
    """What one operation becomes: a tool of ``kind`` on ``entity``, or an exclusion ``reason``."""

    op: Operation
    kind: str | None = None  # get / list / create / update / delete / action
    entity: str = ""
    verb: str | None = None  # action verb (``cancel``) or RPC verb
    key_param: str | None = None  # documented parameter that selects the row
    parents: list[tuple[str, str]] = field(
        default_factory=list
    )  # (path param, parent entity), outermost first
    qualifier: str | None = None  # ``by_city`` in ``/hotels/by-city``
    reason: str | None = None
    rpc: bool = False
    source: str = ""  # the document the operation comes from (set by the explorer)
    word: str | None = None  # the path's last word on an item (``declare_lost`` in /loans/{id}/declare-lost)
    item: tuple[str, str] | None = (
        None  # (entity, key param) of ``POST /x/{x_id}/word`` read as a create of ``word``
    )
    bulk: bool = (
        False  # a bulk write (``PUT /customers [...]``, ``DELETE /customers?id:in=``), one row per call
    )
    singleton: str | None = None  # "global" (``/settings``) or "parent" (``/files/{file_id}/watermark``)
    upsert: bool = False  # an update that creates the row its optional key does not name (``shapes.upserts``)
    path_filters: list[str] = field(default_factory=list)  # path values a list filters by (Lufthansa)

    @property
    def excluded(self) -> bool:
        return self.reason is not None


def _segments(path: str) -> list[tuple[str, str]]:
    """``/v1/hotels/{hotelId}/offers.json`` -> [("s","hotels"), ("p","hotelId"), ("s","offers")]."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    out: list[tuple[str, str]] = []
    for raw in path.strip("/").split("/"):
        if not raw:
            continue
        raw = re.sub(r"\.(json|xml|yaml|html)$", "", raw)
        m = re.fullmatch(r"\{([^}]+)\}|:([A-Za-z_]\w*)|<([^>]+)>", raw)
        if m:
            out.append(("p", next(g for g in m.groups() if g)))
            continue
        if "{" in raw:  # /files/{id}:copy or /a{b}: treat the braces as a parameter, the rest as a word
            inner = re.findall(r"\{([^}]+)\}", raw)
            rest = re.sub(r"\{[^}]+\}", "", raw).strip(":-_.,;")
            out.extend(("p", i) for i in inner)
            if rest:
                out.append(("s", rest))
            continue
        if ":" in raw:  # Google custom methods: /events:batchDelete
            base, verb = raw.split(":", 1)
            if base:
                out.append(("s", base))
            out.append(("s", verb))
            continue
        if VERSION_SEGMENT.match(raw) and not out:
            continue
        if out and out[-1][0] == "s" and snake(out[-1][1]) in ("webhook", "webhooks") and raw.endswith("s"):
            out[-1] = ("s", f"webhook_{raw}")  # /webhooks/subscriptions: webhook subscriptions
            continue
        out.append(("s", raw))
    return out


def _parents(segs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    for i in range(1, len(segs)):
        if segs[i][0] == "p" and segs[i - 1][0] == "s":
            out.append((segs[i][1], entity_name(segs[i - 1][1])))
    return out


def _verb_word(word: str) -> tuple[str, str]:
    """``postMessage`` -> ("post", "message"); ``list`` -> ("list", "")."""
    parts = snake(word).split("_")
    return parts[0], "_".join(parts[1:])


def _rpc(op: Operation, dotted: str) -> OpPlan:
    words = [w for w in dotted.split(".") if w]
    plan = OpPlan(op=op, rpc=True)
    if len(words) < 2:
        plan.reason = "RPC method without a resource"
        return plan
    verb, obj = _verb_word(words[-1])
    base = entity_name(words[-2])
    ent = entity_name(obj) if obj and obj not in ("info", "list") else base
    full = snake(words[-1])
    rule = action_rule(full) or (action_rule(verb) if not obj else None)
    if verb in SEARCH_WORDS or verb == "history":
        plan.kind, plan.entity = "list", base if verb != "list" or not obj else ent
        if obj and verb == "list":
            plan.entity = ent
    elif verb in _GET_WORDS:
        plan.kind, plan.entity = "get", ent
    elif verb in ("add", "remove") and obj and links_rows(op, obj, words[-2]):
        plan.reason = f"RPC {words[-1]!r} links or unlinks rows (a membership), which no effect expresses"
    elif verb in _CREATE_WORDS:
        plan.kind, plan.entity = "create", ent
    elif verb in _DELETE_WORDS:
        plan.kind, plan.entity = "delete", ent
    elif rule is not None:
        plan.kind, plan.entity, plan.verb = "action", base, rule.verb
    elif verb in _UPDATE_WORDS:
        plan.kind, plan.entity = "update", base
    elif obj.startswith("to_") and op.method == "post":  # convertToPrivate: sets is_private (actions.py)
        plan.kind, plan.entity, plan.verb = "action", base, full
    elif op.method == "get" and (snake(words[-2]) in SEARCH_WORDS or lists_rows_named(op, words[-1])):
        plan.kind, plan.entity = "list", entity_name(words[-1])  # search.messages, team.accessLogs
        plan.qualifier = "search" if snake(words[-2]) in SEARCH_WORDS else None
    else:
        plan.reason = f"RPC verb {words[-1]!r} is not a state operation we can express"
    if plan.kind in ("get", "update", "delete", "action"):
        plan.key_param = id_param(op, plan.entity) or sole_required_id(op)
    return plan


def plan_operation(op: Operation) -> OpPlan:
    """Classify one operation (see the module docstring)."""
    reason = noise_reason(op)
    if reason:
        return OpPlan(op=op, reason=reason)
    segs = generic_collection(_segments(op.path))
    if len(segs) == 1 and segs[0][0] == "s" and "." in segs[0][1]:
        return _rpc(op, segs[0][1])
    statics = [s for k, s in segs if k == "s"]
    if not statics:
        return OpPlan(op=op, reason="path names no resource")
    plan = OpPlan(op=op, parents=_parents(segs))
    why = account_endpoint(plan, statics)
    if why is not None:
        return refuse(plan, why)
    m = op.method
    last_kind, last = segs[-1]
    if last_kind == "p":
        return _plan_item(plan, segs)
    word = snake(last)
    prev = segs[-2] if len(segs) >= 2 else None
    if plan_rows_word(plan, word, segs) is not None:
        return plan  # GET /group/bulk, POST /issue/bulk "Bulk create issue", POST /events/import
    rule = action_rule(word)
    if rule is not None and prev is not None and prev[0] == "p" and len(segs) >= 3 and segs[-3][0] == "s":
        return _plan_item_action(plan, segs, word, rule)
    if prev is not None and prev[0] == "s" and (word in SEARCH_WORDS or word.startswith("by_")):
        plan.entity = entity_name(prev[1])
        plan.qualifier = word if word.startswith("by_") else ("search" if word != "list" else None)
        if m in ("get", "post"):
            plan.kind = "list"
        else:
            plan.reason = f"{m.upper()} on a search endpoint"
        return plan
    if (
        prev is not None
        and prev[0] == "p"
        and m in ("put", "patch")
        and entity_name(last) == word
        and not word.endswith("s")
        and len(segs) >= 3
        and segs[-3][0] == "s"
    ):
        # PUT /todos/{id}/position: a singular attribute of the parent item -> update of the parent;
        # PATCH /guilds/{guild_id}/welcome-screen {description, ...}: an object of its own (a singleton)
        if not names_attribute(op, word) and singleton_plan(plan, segs) is not None:
            return plan
        plan.entity = entity_name(segs[-3][1])
        plan.key_param = prev[1]
        plan.parents = plan.parents[:-1]
        plan.kind = "update"
        plan.qualifier = word
        return plan
    if rule is not None and m in ("post", "put", "patch") and summary_verb(op) != "create":
        return _plan_body_action(plan, segs, word, rule)  # (POST /issue "Create issue" creates one)
    if (
        word in RPC_VERBS
        and prev is not None
        and prev[0] == "s"
        and m in ("post", "put", "patch", "get", "delete")
    ):
        versioned = VERSION_SEGMENT.match(prev[1]) and len(segs) >= 3 and segs[-3][0] == "s"
        owner = segs[-3][1] if len(segs) >= 3 and segs[-3][0] == "s" and not versioned else None
        return _slash_verb(
            plan, word, segs[-3][1] if versioned else prev[1], owner
        )  # /rules/v1/remove: rules
    plan.entity = entity_name(last)
    return _collection(plan, word, prev, segs)


def _plan_item(plan: OpPlan, segs: list[tuple[str, str]]) -> OpPlan:
    """``/xs/{id}``: get, update or delete of one x (a POST documented as a create is a create)."""
    op, m, last = plan.op, plan.op.method, segs[-1][1]
    if (relation := caller_relation(op, segs)) is not None:
        return refuse(plan, relation)  # /likes/tracks/{track_id}, /users/@me/guilds/{guild_id}
    if (
        len(segs) >= 3
        and [k for k, _ in segs[-3:]] == ["s", "p", "p"]
        and not VERSION_SEGMENT.match(segs[-3][1])
    ):
        # /checkout/{tenant}/{checkoutId}: a scope, then the id of the row the collection holds
        scope, entity = segs[-2][1], entity_name(segs[-3][1])
        own = snake(last) in ("id", "uuid") or snake(last).startswith(f"{entity}_")
        if own and not _names_row(scope, entity):  # (not /reactions/{emoji_name}/{user_id})
            segs = [*segs[:-2], segs[-1]]
            plan.parents = [x for x in plan.parents if x[0] != scope]
            plan.parents.append((last, entity))  # dropped below, as the item's own pair
        elif (
            own and snake(last).endswith("_token") and snake(scope) in ("id", f"{entity}_id") and m != "post"
        ):
            # Discord /webhooks/{webhook_id}/{webhook_token}: the row's id, then its own token (what
            # authorises the call, no row of its own): the webhook the id names. A POST there runs
            # the webhook (it posts a message), no write of the webhook: it stays dropped
            segs, last = segs[:-1], scope
    if len(segs) < 2 or segs[-2][0] != "s":
        if plan_path_filters(plan, segs) is not None:
            return plan  # GET /operations/flightstatus/{flightNumber}/{date}: a list filtered by the path
        values = [w for k, w in segs if k == "p"][-2:]
        if len(segs) >= 2 and all(k == "p" for k, _ in segs[-2:]):
            return OpPlan(
                op=op,
                reason=f"path values in a row ({', '.join(values)}) with no resource word naming what they select",
            )
        return OpPlan(op=op, reason="item path without a collection")
    plan.entity = entity_name(segs[-2][1])
    plan.key_param = last
    plan.parents = plan.parents[:-1]
    plan.kind = {
        "get": "get",
        "put": "update",
        "patch": "update",
        "post": "update",
        "delete": "delete",
    }.get(m)
    if plan.kind is None:
        plan.reason = f"{m.upper()} on an item"
    elif m == "post" and summary_verb(op) == "create" and not _names_row(last, plan.entity):
        # POST /consumers/{tenant} "Create consumer": the parameter is a scope, not a consumer
        plan.kind, plan.key_param = "create", None
    return plan


def _plan_item_action(plan: OpPlan, segs: list[tuple[str, str]], word: str, rule: ActionRule) -> OpPlan:
    """``/xs/{id}/cancel``: an action on one x (a DELETE of it is the inverse action)."""
    m = plan.op.method
    plan.entity = entity_name(segs[-3][1])
    plan.key_param = segs[-2][1]
    plan.parents = plan.parents[:-1]
    plan.word = word
    if m in ("post", "put", "patch"):
        plan.kind, plan.verb = "action", rule.verb
    elif m == "delete":
        undo = action_rule("un" + rule.verb) or action_rule(
            {"complete": "reopen", "confirm": "cancel"}.get(rule.verb, "")
        )
        if undo is None:
            plan.reason = f"DELETE of {word!r} has no inverse action in the action table"
        else:
            plan.kind, plan.verb = "action", undo.verb
    else:
        plan.reason = f"{m.upper()} of action {word!r} reads no resource"
    return plan


def _plan_body_action(plan: OpPlan, segs: list[tuple[str, str]], word: str, rule: ActionRule) -> OpPlan:
    """``POST /transfer/cancel {"transfer_id": ...}``: an action on the row the body names;
    ``POST /orders/{order_id}/payment_actions/capture``: on the item above the action group."""
    prev = segs[-2] if len(segs) >= 2 else None
    if prev is not None and VERSION_SEGMENT.match(prev[1]) and len(segs) >= 3:
        prev = segs[-3]  # /beta/partner/customer/v1/enable acts on a customer
    target = entity_name(prev[1]) if prev is not None and prev[0] == "s" else None
    key = (id_param(plan.op, target) or row_key_param(plan.op, target)) if target else None
    if key and not any(p.name == key and p.required for p in plan.op.parameters):  # Gmail messages/send {id?}
        plan.reason = f"action {word!r}: the document makes the id {key!r} optional, so it names no row"
        return plan
    if not key and len(segs) >= 4 and [k for k, _ in segs[-4:-1]] == ["s", "p", "s"]:
        plan.entity, plan.key_param, plan.kind, plan.verb, plan.word = (
            entity_name(segs[-4][1]),
            segs[-3][1],
            "action",
            rule.verb,
            word,
        )
        plan.parents = [x for x in plan.parents if x[0] != segs[-3][1]]
        return plan
    if target and key:
        plan.entity, plan.key_param, plan.kind, plan.verb, plan.word = (
            target,
            key,
            "action",
            rule.verb,
            word,
        )
    else:
        plan.reason = f"action {word!r} names no row: no item id in the path or the body"
    return plan


def _names_row(param: str, entity: str) -> bool:
    """``{consumer_id}``/``{id}``/``{consumerId}`` name a consumer; ``{tenant}`` does not."""
    p = snake(param)
    return (
        p in ("id", "uuid", "gid", "key", "slug", "name", "code")
        or p.endswith(("_id", "_gid", "_uuid", "_key"))
        or p.startswith(entity)
        or p.endswith(("id", "sid"))
    )


def _slash_verb(plan: OpPlan, word: str, noun: str, owner: str | None = None) -> OpPlan:
    """``POST /item/get``, ``/sandbox/public_token/create``: the last word is the verb. With no id of
    a ``noun`` row: ``/user/items/remove {item_ids}`` deletes the items it lists (one per call), and
    ``/item/webhook/update {access_token, webhook}`` updates the ``webhook`` of the item its
    ``owner`` word names."""
    op = plan.op
    kind = RPC_VERBS[word]
    plan.entity = entity_name(noun)
    plan.rpc = True
    if kind in ("get", "update", "delete"):
        key = id_param(op, plan.entity) or row_key_param(op, plan.entity)
        scoped = any(
            p.location == "path" for p in op.parameters
        )  # (Jira .../context/{id}/project/remove unlinks)
        many = (
            bulk_ids_param(op, plan.entity, where=("query", "body")) if key is None and not scoped else None
        )
        if many is not None and kind == "delete":
            plan.kind, plan.key_param, plan.bulk = "delete", many, True
            return plan
        if key is None and kind == "update" and owner is not None:
            mine = row_key_param(op, entity_name(owner))
            sent = {snake(k) for k in documented_body(op)[0]}
            if mine is not None and snake(noun) in sent and sent <= {snake(noun), snake(mine)}:
                plan.entity, plan.key_param, plan.kind = entity_name(owner), mine, "update"
                plan.qualifier = snake(noun)
                return plan
        if key is None:
            if kind == "get" and answers_list(op):
                plan.kind = "list"
                return plan
            plan.reason = (
                f"{word!r} on {noun!r} names no id of the row it {'reads' if kind == 'get' else 'changes'}"
            )
            return plan
        plan.key_param = key
    plan.kind = kind
    return plan


def _collection(plan: OpPlan, word: str, prev: tuple[str, str] | None, segs: list[tuple[str, str]]) -> OpPlan:
    """A method on a collection path (``/tasks``): list, create, or an update/delete with the
    id in the body or query; a POST that searches or reads is a list or a get."""
    op, m = plan.op, plan.op.method
    said = summary_verb(op)
    why: list[str] = []  # a singleton's specific reason for not being one
    head = word.split("_", 1)[0]
    rest = word.split("_", 1)[1] if "_" in word else ""
    if head in ("get", "list", "search", "find", "fetch", "retrieve") and rest and m in ("get", "post"):
        return plan_read_verb(plan, head, rest, prev)  # POST /get_club {"club_id": ...}
    if plan_bulk_verb(plan, word, prev) is not None:
        return plan  # POST /customers/bulk-retrieve {customer_ids}: a list by id, not a create
    if (
        m in ("post", "put")
        and head in VERB_PATH_HEADS
        and "_" in word
        and action_rule(word) is None
        and not (m == "post" and says_creates(op))  # POST /test_clocks "Creates a new test clock"
    ):
        plan.reason = (
            f"{word!r} is an operation (a verb), not a resource: it names no stored row "
            f"and its result is computed"
        )
        return plan
    if m == "get":
        if is_singleton_read(op, word):
            return singleton_plan(plan, segs, why) or refuse(
                plan,
                *why,
                "reads one object that no id selects, computed from its query arguments "
                "(not a stored singleton such as the settings)",
            )
        plan.kind = "list"
    elif m == "post":
        plan.kind = "create"
        computed = computed_post(plan, listing=said == "search" or answers_list(op))
        if computed is not None and not (prev is not None and prev[0] == "p"):
            return refuse(plan, computed)  # POST /freeBusy "Returns free/busy information ..."
        if said == "search" and answers_list(op):
            plan.kind, plan.qualifier = "list", "search"  # POST /invoices/query "Search invoices"
        elif said == "get" and answers_list(op):
            plan.kind = "list"
        elif said == "get" and id_param(op, plan.entity):
            plan.kind, plan.key_param = "get", id_param(op, plan.entity)
        elif prev is not None and prev[0] == "p" and len(segs) >= 3 and segs[-3][0] == "s":
            # POST /x/{x_id}/word: a sub-resource, or a verb the table lacks; item_verbs.py decides
            plan.word, plan.item = word, (entity_name(segs[-3][1]), prev[1])
        elif (named := acts_on_named_rows(plan)) is not None:
            return refuse(plan, named)  # POST /invoices/fresh?ids=... "Regenerate pdf ..."
    elif m in ("put", "patch"):
        key = id_param(op, plan.entity)
        bulk = bulk_item_key(op, plan.entity) if key is None and not overwrites(op, segs) else None
        if key is not None:  # PUT /api/Task {"TaskID": ...}
            plan.kind, plan.key_param, plan.upsert = "update", key, upserts(op, key)
        elif bulk is not None:  # PUT /customers [{"id": 1, ...}]: a bulk update, one row per call
            plan.kind, plan.key_param, plan.bulk, plan.upsert = "update", bulk, True, upserts(op, bulk)
        elif creates_rows(op):
            plan.kind, plan.bulk = "create", True  # BigCommerce "Create Products Channel Assignments" [{...}]
        elif (owned := bulk_owner_key(op, segs)) is not None:  # Jira .../context/configuration [{contextId}]
            plan.entity, plan.key_param, plan.kind, plan.bulk = (*owned, "update", True)
        else:
            return singleton_plan(plan, segs, why) or refuse(
                plan, *why, f"{m.upper()} on a collection with no id of one row (a bulk update of many rows)"
            )
    else:
        many = None if overwrites(op, segs) else bulk_ids_param(op, plan.entity, where=("query", "body"))
        key = id_param(op, plan.entity) or many
        if key is not None:  # DELETE /api/Task?TaskID=, ?id:in=4,5,6, Jira {webhookIds} (one id per call)
            plan.kind, plan.key_param, plan.bulk = "delete", key, key != id_param(op, plan.entity)
        else:
            return singleton_plan(plan, segs, why) or refuse(
                plan, *why, "DELETE on a collection with no id of one row (a bulk delete of many rows)"
            )
    return plan
