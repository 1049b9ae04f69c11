"""The body parameter that names the row of an RPC-style read or write, when it is not ``id``.

``POST /beacon/report/get {"beacon_report_id"}``, ``POST /transfer/recurring/get
{"recurring_transfer_id"}``, ``POST /payment_profile/remove {"payment_profile_token"}`` and
``POST /item/get {"access_token": "The access token associated with the Item"}`` each read or
change one row, named by a required parameter whose name (or description) says which row it
names. A parameter that names something else (``client_id``, ``secret``, ``loans: [...]``,
``projectIds``) is never the key: such an operation stays dropped.
"""

from __future__ import annotations

import re

from ..ingest import Operation, Parameter
from .naming import singular, snake

__all__ = ["row_key_param", "lists_rows_named", "sole_required_id", "links_rows"]

_SUFFIXES = ("_id", "_token", "_gid", "_uuid", "_key")
_NOT_ROWS = {"client_id", "secret", "api_key", "client_secret", "user_token", "public_token"}


def _words(name: str) -> list[str]:
    return [singular(w) for w in snake(name).split("_") if w]


def _contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _stem(name: str) -> str | None:
    s = snake(name)
    if s in ("id", "key"):
        return ""
    for suf in _SUFFIXES:
        if s.endswith(suf) and len(s) > len(suf):
            return s[: -len(suf)]
    return None


def row_key_param(op: Operation, entity: str) -> str | None:
    """The required body/query parameter naming the ``entity`` row, or None.

    A candidate is a required scalar ``*_id``/``*_token`` parameter. It names the row when
    its stem contains the entity's words (``beacon_report_id`` for ``report``,
    ``originator_client_id`` for ``originator``), when it ends the entity's words
    (``key_id`` for ``webhook_verification_key``), when the parameter *is* the entity
    (``audit_copy_token``), when its description says it is the entity's ("the access token
    associated with the Item"), or, as the only candidate, when every word of its stem is a
    word of the path (``watchlist_screening_id`` on ``/watchlist_screening/individual/get``).
    """
    ent = _words(entity)
    path_words = [w for w in re.split(r"[/.:]", op.path) if w and not w.startswith("{")]
    path = {w for pw in path_words for w in _words(pw)}
    cands: list[tuple[Parameter, list[str]]] = []
    for p in op.parameters:
        if p.location not in ("body", "query") or not p.required or snake(p.name) in _NOT_ROWS:
            continue
        if p.schema_.get("type") not in ("string", "integer", None):
            continue
        stem = _stem(p.name)
        if stem is None and snake(p.name) != entity:
            continue
        cands.append((p, _words(stem or "")))
    for p, words in cands:
        if snake(p.name) == entity or _contains(words, ent) or (words and ent[-len(words) :] == words):
            return p.name
    for p, _ in cands:
        first = re.split(r"(?<=[.!?])\s", p.description.strip(), maxsplit=1)[0].lower()
        if re.search(rf"\b(associated with|of|identifies|for) the {re.escape(' '.join(ent))}\b", first):
            return p.name
    if len(cands) == 1 and cands[0][1] and set(cands[0][1]) <= path:
        return cands[0][0].name
    return None


def lists_rows_named(op: Operation, word: str) -> bool:
    """``GET /team.accessLogs`` answering ``{"logins": [{...}]}``: the method's word is a plural
    noun (not a verb) and the answer holds a list of objects, so it lists those rows. A list of
    plain values (``conversations.members`` answers user ids) lists no rows."""
    parts = snake(word).split("_")
    if not parts[-1].endswith("s") or parts[-1].endswith("ss") or len(parts[-1]) < 4:
        return False
    resp = op.success_response()
    schema = resp.schema_ if resp is not None and isinstance(resp.schema_, dict) else {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return False
    return any(
        isinstance(v, dict)
        and v.get("type", "array") == "array"
        and isinstance(v.get("items"), dict)
        and isinstance(v["items"].get("properties"), dict)
        for v in props.values()
    )


def sole_required_id(op: Operation) -> str | None:
    """The one required scalar ``*_id`` body/query parameter of an RPC method, None when there
    is none or several: Slack ``admin.conversations.archive {channel_id}`` archives the
    conversation that id names (the tool keeps the documented name)."""
    ids = [
        p.name
        for p in op.parameters
        if p.location in ("body", "query")
        and p.required
        and snake(p.name).endswith("_id")
        and snake(p.name) not in _NOT_ROWS
        and p.schema_.get("type") in ("string", "integer", None)
    ]
    return ids[0] if len(ids) == 1 else None


def links_rows(op: Operation, obj: str, base: str) -> bool:
    """Slack ``admin.usergroups.addChannels`` / ``removeChannels`` (several channels to or from
    a group), ``restrictAccess.removeGroup`` "Remove a linked IDP group": the method adds or
    removes links between rows; it neither creates nor deletes an ``obj``."""
    text = f"{op.summary} {op.description}".lower()
    other = singular(snake(obj)) != singular(snake(base))
    return other and (
        singular(snake(obj)) != snake(obj) or bool(re.search(r"\b(link(ed|s)?|allowlist|associate)\b", text))
    )
