"""Operations whose path alone misleads: read the summary, method, request and response together.

- ``POST /invoices/search`` (or a POST whose summary says "Search/List/Find ...") answering a
  list is a list, not a create; ``POST /item/get`` (a verb as the last path word) reads one row
  named by an id in the body;
- ``GET /me`` or ``GET /settings`` answering one object that no id selects, and a PUT, PATCH
  or DELETE of such a path, read or change a singleton (see ``explore.singletons``), not a list
  of an invented entity;
- ``POST /consumers/{tenant}`` documented as "Create consumer" (the path parameter names a
  scope, not a consumer) is a create;
- ``PUT /api/Task`` / ``DELETE /api/Task?TaskID=``: an update or delete with the row's id in
  the body or the query;
- ``POST /start-timer`` / ``/generate-next-invoice-number``: a verb, not a resource.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..ingest import Operation
from .naming import entity_name, singular, snake

if TYPE_CHECKING:
    from .resources import OpPlan

__all__ = [
    "summary_verb",
    "says_creates",
    "upserts",
    "answers_list",
    "answers_object",
    "id_param",
    "VERB_PATH_HEADS",
    "RPC_VERBS",
    "is_singleton_read",
    "SINGLETON_WORDS",
    "bulk_items",
    "batch_of_rows",
    "imports_one_row",
    "bulk_item_key",
    "bulk_owner_key",
    "creates_rows",
    "bulk_ids_param",
    "signs_in",
    "overwrites",
    "singleton_plan",
    "names_attribute",
    "refuse",
]

_SEARCH_HEADS = ("search", "list", "find", "query", "filter", "lookup", "look_up", "browse")
_GET_HEADS = ("get", "retrieve", "fetch", "read", "show", "view", "return", "returns", "obtain")
_CREATE_HEADS = ("create", "add", "new", "insert", "register", "make", "post")
# words a path may end in that say what the operation does to the resource before it
RPC_VERBS = {
    "get": "get",
    "retrieve": "get",
    "fetch": "get",
    "read": "get",
    "info": "get",
    "details": "get",
    "list": "list",
    "search": "list",
    "find": "list",
    "query": "list",
    "all": "list",
    "create": "create",
    "add": "create",
    "new": "create",
    "update": "update",
    "edit": "update",
    "modify": "update",
    "patch": "update",
    "set": "update",
    "delete": "delete",
    "remove": "delete",
    "destroy": "delete",
}
VERB_PATH_HEADS = {
    "start",
    "stop",
    "generate",
    "send",
    "calculate",
    "compute",
    "validate",
    "verify",
    "check",
    "test",
    "preview",
    "estimate",
    "convert",
    "refresh",
    "sync",
    "trigger",
    "run",
    "execute",
    "process",
    "resend",
    "reset",
    "request",
    "simulate",
    "evaluate",
    "import",
    "export",
    "fire",
    "pause",
    "resume",
    "retry",
    "submit",
    "enable",
    "disable",
    "invalidate",
    "migrate",
    "recalculate",
}
SINGLETON_WORDS = {
    "me",
    "self",
    "current",
    "current_user",
    "user",
    "settings",
    "setting",
    "config",
    "configuration",
    "profile",
    "account",
    "preferences",
    "status",
    "info",
    "whoami",
    "balance",
    "organization",
    "company",
    "workspace",
    "tenant",
    "subscription",
    "plan",
    "usage",
    "quota",
    "limits",
}
_LIST_SUMMARY = re.compile(
    r"^(get|retrieve|fetch|return|returns|obtain|list)s?\s+(a\s+|the\s+)?(list|all|paginated|"
    r"collection|page|set)\b",
    re.I,
)


def summary_verb(op: Operation) -> str | None:
    """What the summary (else the operationId) says first: search / get / create, or None."""
    text = (op.summary or "").strip() or (op.operation_id or "")
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ")  # SearchEvents, getClub
    if _LIST_SUMMARY.match(text):
        return "search"
    head = re.split(r"[\s_\-]+", text.lower(), maxsplit=1)[0] if text else ""
    head = re.sub(r"(es|s)$", "", head) if head not in ("list", "lists", "process") else head.rstrip("s")
    if head in _SEARCH_HEADS:
        return "search"
    if head in _GET_HEADS:
        return "get"
    if head in _CREATE_HEADS:
        return "create"
    return None


_CREATES = re.compile(r"^(<p>|\s)*(creates?|adds?)\s+(a|an|one|the|new)\b", re.I)


def says_creates(op: Operation) -> bool:
    """The document says the operation creates one thing: its summary (else its description)
    opens with "Creates a ..." (Stripe ``POST /v1/test_helpers/test_clocks`` "Creates a new test
    clock"), or its dotted operationId ends in ``.create`` (Gmail ``...settings.sendAs.create``)."""
    text = (op.summary or "").strip() or (op.description or "").strip()
    if _CREATES.match(text):
        return True
    return (op.operation_id or "").rsplit(".", 1)[-1].lower() in ("create", "insert")


_BULK_CREATES = re.compile(r"^(<p>|\s)*(bulk|batch)\s+(creates?|adds?)\b", re.I)


def batch_of_rows(op: Operation) -> bool:
    """A ``/bulk`` or ``/batch`` word that still names rows one at a time: a GET answering a list
    of the collection before it (Jira ``GET /group/bulk`` "Bulk get groups", ``/user/bulk`` by
    account ids), or a POST of an array of rows that says it creates them (Jira ``POST
    /issue/bulk`` "Bulk create issue" {issueUpdates: [...]}, or Resend ``POST /emails/batch`` [{...}]
    answering the new rows' ids: a bulk create, one row per call)."""
    if op.method == "get":
        return answers_list(op)
    if op.method != "post" or bulk_items(op.request_body) is None:
        return False
    return says_creates(op) or bool(_BULK_CREATES.match((op.summary or "").strip())) or _answers_new_ids(op)


def _answers_new_ids(op: Operation) -> bool:
    """Resend ``POST /emails/batch`` answers ``{"data": [{"id": "The ID of the sent email."}]}``: the
    ids of the rows it made, one per item (Discord's ``members/bulk`` answers whole members: an
    upsert of many, no such answer)."""
    s = _schema(op)
    for _ in range(2):
        if _is_array(s):
            items = s.get("items") if isinstance(s, dict) else None
            return isinstance(items, dict) and set(_top_props(items)) == {"id"}
        props = _top_props(s)
        if len(props) != 1:
            return False
        s = next(iter(props.values()))
    return False


def imports_one_row(op: Operation) -> bool:
    """``POST .../events/import`` "Imports an event", Gmail ``messages/import``: the body is one row
    and the answer is that row (most of the body's properties come back), so the operation adds
    one row of the collection, as a create does. Plaid ``/item/import`` (credentials in, an access
    token out) and a file upload are no such row."""
    if op.method != "post":
        return False
    sent, got = set(_top_props(op.request_body)), set(_top_props(_schema(op)))
    return len(sent) >= 3 and len(sent & got) >= 0.6 * len(sent)


_UPSERT = re.compile(
    r"\bupserts?\b|\bcreates? or updates?\b|\bif there is none,? it creates\b|\binsert or update\b", re.I
)


def upserts(op: Operation, key: str) -> bool:
    """Whether a write keyed by the body's ``key`` creates the row when the key names none: the
    document makes the key optional and says so (BigCommerce ``PUT /customers/attribute-values``
    "Upserts Customer Attribute Values ... If there is none, it creates the record"), or its items
    can be made without the key (Discord ``PUT /applications/{id}/commands``, "bulk set", items
    ``{id?, name (required), ...}``). A key the document requires is a plain update's."""
    items = bulk_items(op.request_body)
    schema = items if items is not None else op.request_body
    props = _top_props(schema)
    req = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    if key not in props or key in req or any(p.name == key and p.required for p in op.parameters):
        return False
    text = f"{op.summary}\n{op.description}\n{op.operation_id or ''}".replace("_", " ")
    if _UPSERT.search(text):
        return True
    return items is not None and bool(req - {key}) and "set" in snake(op.operation_id or "").split("_")


def _schema(op: Operation) -> Any:
    r = op.success_response()
    return r.schema_ if r is not None and isinstance(r.schema_, dict) else None


def _is_array(s: Any) -> bool:
    return isinstance(s, dict) and (s.get("type") == "array" or ("items" in s and not s.get("properties")))


def _top_props(s: Any, depth: int = 0) -> dict[str, Any]:
    if not isinstance(s, dict) or depth > 3:
        return {}
    props: dict[str, Any] = {}
    for sub in s.get("allOf") or []:
        props.update(_top_props(sub, depth + 1))
    for comb in ("oneOf", "anyOf"):
        for b in s.get(comb) or []:
            p = _top_props(b, depth + 1)
            if p:
                props.update(p)
                break
    if isinstance(s.get("properties"), dict):
        props.update(s["properties"])
    return props


def answers_list(op: Operation) -> bool:
    """The success response is an array, or an object holding one array (an envelope)."""
    s = _schema(op)
    if s is None:
        return False
    if _is_array(s):
        return True
    for _ in range(2):
        props = _top_props(s)
        arrays = [v for v in props.values() if _is_array(v)]
        if arrays:
            return True
        objs = [v for v in props.values() if isinstance(v, dict) and _top_props(v)]
        if len(props) != 1 or not objs:  # one wrapper ({"data": {...}}) is looked into
            return False
        s = objs[0]
    return False


def answers_object(op: Operation) -> bool:
    """The success response is one documented object with no list in it."""
    s = _schema(op)
    return s is not None and not _is_array(s) and bool(_top_props(s)) and not answers_list(op)


def id_param(op: Operation, entity: str, *, where: tuple[str, ...] = ("body", "query")) -> str | None:
    """The documented parameter (body or query) that names the row of ``entity``: ``id``,
    ``TaskID``, ``task_id``, ``taskGid``; None when there is none."""
    want = {
        "id",
        "uuid",
        "gid",
        "key",
        f"{entity}_id",
        f"{entity}_uuid",
        f"{entity}_gid",
        f"{entity}_key",
        f"{entity}id",
    }
    for p in op.parameters:
        if p.location in where and snake(p.name) in want:
            return p.name
    return None


def is_singleton_read(op: Operation, word: str) -> bool:
    """``GET /me``: one object, no paging, no list in the answer, and a singular (or singleton) word."""
    from .resources import PAGING_PARAMS  # resources imports this module

    if op.method != "get" or not answers_object(op):
        return False
    if any(p.location == "query" and snake(p.name) in PAGING_PARAMS for p in op.parameters):
        return False
    return word in SINGLETON_WORDS or not word.endswith("s")


def bulk_items(body: Any) -> dict[str, Any] | None:
    """The item schema of a bulk write body: an array of objects, or one wrapper holding one
    (``{"data": [...]}``) or holding a map of them (Square ``bulk-create {"customers": {<key>:
    {...}}}``); None for any other body."""
    for depth in range(2):
        if not isinstance(body, dict):
            return None
        if _is_array(body):
            items = body.get("items")
            return items if isinstance(items, dict) and _top_props(items) else None
        values = body.get("additionalProperties")
        if depth and isinstance(values, dict) and _top_props(values) and not body.get("properties"):
            return values
        props = _top_props(body)
        if len(props) != 1:
            return None
        body = next(iter(props.values()))
    return None


def bulk_item_key(op: Operation, entity: str) -> str | None:
    """``PUT /customers [{"id": 1, ...}]``: the id property of a bulk update's items, None if none."""
    items = bulk_items(op.request_body)
    if items is None:
        return None
    want = {"id", "uuid", "gid", f"{entity}_id", f"{entity}id"}
    return next((k for k in _top_props(items) if snake(k) in want), None)


def creates_rows(op: Operation) -> bool:
    """A PUT of an array of rows documented as creating them (BigCommerce "Create Products Channel
    Assignments" [{product_id, channel_id}]): a bulk create, one row per call. Not a list of patch
    operations ({op, fieldKey, data}: Box's "Add classification")."""
    items = bulk_items(op.request_body)
    if items is None or "op" in (items.get("properties") or {}):
        return False
    return says_creates(op) or summary_verb(op) == "create"


def bulk_owner_key(op: Operation, segs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """Jira ``PUT /field/{id}/context/configuration {configurations: [{contextId, configuration,
    schema}]}``: each item names a row of the word before the last (a context) by that row's own id
    and sets its attribute: a bulk update of that row, one per call. (entity, key) or None; a
    plain ``id`` of the items is their own, not the owner's, and items of several documented kinds
    (``defaultValue``'s single/multiple/cascading options) are no one set of fields."""
    if len(segs) < 2 or segs[-2][0] != "s" or overwrites(op, segs):
        return None
    owner, items = entity_name(segs[-2][1]), bulk_items(op.request_body) or {}
    if items.get("oneOf") or items.get("anyOf"):
        return None  # Jira .../context/defaultValue: items of several kinds (single, cascading ...)
    key = bulk_item_key(op, owner)
    return (owner, key) if key is not None and snake(key) == f"{owner}_id" else None


def bulk_ids_param(op: Operation, entity: str, where: tuple[str, ...] = ("query",)) -> str | None:
    """``DELETE /customers?id:in=4,5,6`` / ``?ids=``: the query parameter listing the rows' ids
    (``where``: also the body's, ``POST /user/items/remove {item_ids}``)."""
    want = {"id_in", "ids", f"{entity}_ids", f"{entity}_id_in", "id"}
    for p in op.parameters:
        if (
            p.location in where
            and re.sub(r"_+", "_", snake(re.sub(r"[:\[\]]", "_", p.name))).strip("_") in want
        ):
            return p.name
    return None


_CREDENTIALS = {"password", "username", "user_name", "login", "grant_type", "client_secret", "refresh_token"}
_TOKENS = {"token", "access_token", "refresh_token", "session_token", "jwt", "id_token", "auth_token"}


def signs_in(op: Operation) -> bool:
    """A session endpoint that signs in or out: credentials in, a token out, or no documented body at all."""
    body = op.request_body if isinstance(op.request_body, dict) else {}
    sent = {snake(k) for k in (body.get("properties") or {})} | {
        snake(p.name) for p in op.parameters if p.location in ("body", "query")
    }
    resp = op.success_response()
    schema = resp.schema_ if resp is not None and isinstance(resp.schema_, dict) else {}
    got = {snake(k) for k in (schema.get("properties") or {})}
    if sent & _CREDENTIALS or got & _TOKENS:
        return True
    return not sent and not got


def overwrites(op: Operation, segs: list[tuple[str, str]]) -> bool:
    """Not a bulk write of rows: a library of the caller (``DELETE /me/tracks?ids=`` unsaves tracks,
    it deletes none) or a replace-all (``PUT /commands`` "Bulk overwrite ...")."""
    text = f"{op.summary} {op.operation_id or ''}".lower()
    return any(k == "s" and snake(w) in SINGLETON_WORDS for k, w in segs[:-1]) or any(
        w in text for w in ("overwrite", "replace all", "replaces all")
    )


_SELF = {"me", "self", "current", "whoami", "my"}
_VERSION_WORD = re.compile(r"^(v\d+([._]\d+)*[a-z]*|api|apis|rest|\d+([._]\d+)*|latest)$", re.I)
_VERB_HEADS = (
    "delete",
    "remove",
    "bulk",
    "batch",
    "add",
    "create",
    "get",
    "set",
    "update",
    "upsert",
    "flush",
    "purge",
)
_KINDS = {"get": "get", "put": "update", "patch": "update", "delete": "delete"}


def _names_many(op: Operation) -> bool:
    """Ids of several rows in the query or the body, or an array body: a write of many rows."""
    from .resources import PAGING_PARAMS  # resources imports this module

    for p in op.parameters:
        n = snake(p.name)
        if p.location in ("query", "body") and (
            n in ("ids", "uris", "id", "id_in") or n.endswith(("_ids", "_id_in"))
        ):
            return True
    selectors = [
        n
        for p in op.parameters
        if p.location == "query" and p.required and (n := snake(p.name)) not in PAGING_PARAMS
    ]
    if len(selectors) > 1 or any(n.endswith(("id", "key", "name")) for n in selectors):
        return True  # the query selects what is read or changed: not one stored object
    body = op.request_body
    if isinstance(body, dict) and (body.get("type") == "array" or bulk_items(body) is not None):
        return True
    props = body.get("properties") if isinstance(body, dict) else None
    return isinstance(props, dict) and any(snake(k).endswith("_ids") or snake(k) == "ids" for k in props)


def _names_row(param: str) -> bool:
    p = snake(param)
    return p == "id" or p.endswith(("_id", "_gid", "_uuid", "_sid"))


def _verb_word(word: str) -> bool:
    """``bulk-update``, ``deleteimage``, ``deleteallimages`` name what is done, not an object."""
    first = snake(word).split("_")[0]
    glued = ("delete", "remove", "bulk", "batch", "upsert")
    return first in _VERB_HEADS or any(first.startswith(h) and len(first) > len(h) + 2 for h in glued)


def _words_name(words: list[str]) -> str:
    ws = [snake(w.lstrip("@$")) for w in words if w.strip("@$") and not _VERSION_WORD.match(w)]
    if not ws:
        return ""
    if ws[-1] in _SELF:
        return f"current_{singular(ws[-2]) if len(ws) >= 2 else 'user'}"  # /users/@me, /me: the current user
    if len(ws) == 1:
        return ws[0]
    return f"{entity_name(ws[-2])}_{ws[-1]}"


def singleton_plan(plan: OpPlan, segs: list[tuple[str, str]], why: list[str] | None = None) -> OpPlan | None:
    """Read ``GET/PUT/PATCH/DELETE`` on a path with no id of one row as a singleton; None when
    the path names many rows or its object has no name (the reason, when there is a specific one,
    is appended to ``why``; else the caller gives its own)."""
    op = plan.op
    kind = _KINDS.get(op.method)
    if kind is None or _names_many(op):
        return None
    statics = [w for k, w in segs if k == "s"]
    if any(w.isdigit() or not re.search(r"[A-Za-z]", w) for w in statics):
        return None  # PUT /users/{user_id}/folders/0 (the root folder); a '¶' an HTML page left in a path
    if statics and _verb_word(statics[-1]):
        if why is not None:  # DELETE /locations/{id}/deleteimage, PUT /vendors/bulk-update
            why.append(f"{statics[-1]!r} is a verb on a collection, not one object a path names")
        return None
    params = [i for i, (k, _) in enumerate(segs) if k == "p"]
    if params:
        last, first = params[-1], params[-1]
        while first > 0 and segs[first - 1][0] == "p":
            first -= 1  # /restaurants/{tenant}/{restaurantId}/fees: a scope, then the row's id
        if first == 0 or segs[first - 1][0] != "s" or last == len(segs) - 1:
            return None
        if _VERSION_WORD.match(segs[first - 1][1]):
            if why is not None:  # Zoho /crm/v8/{module_api_name}/{id}/photo
                why.append(
                    f"no resource names the row {{{segs[last][1]}}} ({segs[first - 1][1]!r} is a version)"
                )
            return None
        if first != last and not _names_row(segs[last][1]):
            return None  # /webhooks/{webhook_id}/{webhook_token}/...: which parameter is the row's?
        parent, param = entity_name(segs[first - 1][1]), segs[last][1]
        rest = [w for _, w in segs[last + 1 :]]
        tail = _words_name(rest if len(rest) <= 2 else [rest[0], rest[-1]])
        name, single, key = f"{parent}_{tail}", "parent", param
        parents = [x for x in plan.parents if x[0] == param] or plan.parents[-1:]
    else:
        words = [w for _, w in segs if not _VERSION_WORD.match(w)]
        one = snake(words[0]) if len(words) == 1 else ""
        if one and one not in SINGLETON_WORDS and one.endswith("s") and not one.endswith(("ss", "us")):
            return None  # PUT /lobbies: a collection's name, not one object
        names = [k for k in _top_props(op.request_body) if snake(k) == "id" or snake(k).endswith("_id")]
        if names and not any(snake(w.lstrip("@")) in SINGLETON_WORDS | _SELF for w in words):
            if why is not None:  # Just Eat PUT /delivery-failed {"OrderId": ...}: an event about an order
                why.append(f"reports on the row its body names ({names[0]}), not one stored object")
            return None
        name, single, key, parents = _words_name(words), "global", None, []
    name = name[:60].rstrip("_")
    if not name or not name[0].isalpha():
        return None
    plan.entity, plan.kind, plan.qualifier, plan.singleton = name, kind, None, single
    plan.key_param, plan.parents = key, parents
    return plan


def names_attribute(op: Operation, word: str) -> bool:
    """``PUT /todos/{id}/position {"position": 3}``: the body writes the one attribute the path
    names (or there is no body); ``{"description": ..., "enabled": ...}`` is an object of its own."""
    props = _top_props(op.request_body)
    return not props or snake(word) in {snake(k) for k in props} or len(props) == 1


def refuse(plan: OpPlan, *reasons: str) -> OpPlan:
    """Exclude ``plan`` with the first (most specific) of ``reasons``."""
    if plan.reason is None:
        plan.reason = reasons[0]
    return plan
