"""Operations with no state meaning, recognised by what they are: HEAD/OPTIONS, health probes,
authentication and session endpoints (by what they do, not a word inside a name), webhook
callbacks, binary uploads and downloads."""

from __future__ import annotations

import re

from ..ingest import Operation
from .auth_ops import is_auth_resource
from .naming import snake
from .shapes import answers_list, answers_object, batch_of_rows, imports_one_row, signs_in

__all__ = ["VERSION_SEGMENT", "noise_reason"]

VERSION_SEGMENT = re.compile(
    r"^(v\d+([._]\d+)*[a-z]*|api|apis|rest|\d+([._]\d+)*|latest|public|private|internal)$", re.I
)
# Operations with no state meaning, recognised by a whole path segment (never a word inside
# a name: ``/health-records``, ``pre_authorize`` and ``set_password`` are real operations).
_NOISE_ANYWHERE = {
    "callback": "webhook callback",
    "callbacks": "webhook callback",
    "upload": "binary upload",
    "uploads": "binary upload",
    "download": "binary download",
    "downloads": "binary download",
    "batch": "batch endpoint (the single-item operations cover it)",
    "bulk": "batch endpoint (the single-item operations cover it)",
    "export": "bulk export",
    "exports": "bulk export",
    "import": "bulk import",
    "imports": "bulk import",
    "watch": "push-notification channel",
    "stream": "streaming endpoint",
    "websocket": "streaming endpoint",
    "sse": "streaming endpoint",
    "events_stream": "streaming endpoint",
    "oauth": "authentication/session endpoint",
    "oauth2": "authentication/session endpoint",
    "login": "authentication/session endpoint",
    "logout": "authentication/session endpoint",
    "signin": "authentication/session endpoint",
    "signout": "authentication/session endpoint",
    "sign_in": "authentication/session endpoint",
    "sign_out": "authentication/session endpoint",
    "jwks": "authentication/session endpoint",
    "introspect": "authentication/session endpoint",
    "revoke_token": "authentication/session endpoint",
    "mfa": "authentication/session endpoint",
    "otp": "authentication/session endpoint",
    "token": "authentication/session endpoint",
    "tokens": "authentication/session endpoint",
    "access_token": "authentication/session endpoint",
}
# ... and these only as the first word of the path (``/health``, ``/version``, ``/auth/...``)
_NOISE_FIRST = {
    "health": "health check",
    "healthz": "health check",
    "healthcheck": "health check",
    "ping": "health check",
    "readyz": "health check",
    "livez": "health check",
    "heartbeat": "health check",
    "status": "health check",
    "metadata": "API metadata",
    "$metadata": "API metadata",
    "openapi": "API metadata",
    "swagger": "API metadata",
    "version": "API metadata",
    "versions": "API metadata",
    "well_known": "API metadata",
    ".well-known": "API metadata",
    "auth": "authentication/session endpoint",
    "authorize": "authentication/session endpoint",
    "authentication": "authentication/session endpoint",
    "session": "authentication/session endpoint",
    "sessions": "authentication/session endpoint",
}


def _about_the_api(op: Operation, why: str) -> bool:
    """``GET /health``, ``GET /version``, ``GET /metadata``: an answer about the service itself,
    read with no id. A write (Jira ``POST /version`` creates a project version) or an item path
    (``/version/{id}``) is a resource, and so is a list under a probe's word (Jira ``GET /status``
    lists the workflow statuses)."""
    if op.method != "get" or "{" in op.path:
        return False
    return why != "health check" or not answers_list(op)


def _rows_not_a_transfer(op: Operation, key: str) -> bool:
    """An import/export word that names rows, not a bulk transfer of data: the import jobs a GET of
    ``/contacts/imports`` or ``/contacts/imports/{id}`` reads (Resend: id, status, counts), or a POST
    of ``.../events/import`` or ``.../events/watch`` whose body is the one row it adds (the event, the
    watch channel: ``shapes.imports_one_row``)."""
    if key in ("imports", "exports") and op.method == "get":
        return answers_list(op) or answers_object(op)
    return key in ("import", "watch") and imports_one_row(op)


_CALLED_BY_THE_API = re.compile(r"\b(this|the) webhook (will be|is) (invoked|called|sent|triggered)\b", re.I)


def noise_reason(op: Operation) -> str | None:
    if op.method in ("head", "options", "trace"):
        return f"{op.method.upper()} has no state meaning"
    if _CALLED_BY_THE_API.search(f"{op.summary}\n{op.description}"):
        # Just Eat PUT /order-requires-delivery-acceptance "This webhook will be invoked when ...":
        # the API calls the partner's server; it is no operation on the API's rows
        return "webhook callback (the API calls it on the partner's server)"
    words = [w.lower() for w in re.split(r"[/.:]", op.path.split("?", 1)[0]) if w and not w.startswith("{")]
    words = [w for i, w in enumerate(words) if not (i == 0 and VERSION_SEGMENT.match(w))]
    while words and VERSION_SEGMENT.match(words[0]):
        words = words[1:]
    path = op.path.split("?", 1)[0].rstrip("/").lower()
    for i, w in enumerate(words):
        key = snake(w) if w not in (".well-known", "$metadata") else w
        ends = path.endswith(f"/{w}")
        if key in ("batch", "bulk") and 0 < i == len(words) - 1 and ends and batch_of_rows(op):
            continue  # GET /group/bulk lists groups, POST /issue/bulk creates issues (resources.py)
        item = op.method == "get" and re.sub(r"/\{[^}/]+\}$", "", path).endswith(f"/{w}")
        if (ends or item) and i == len(words) - 1 and _rows_not_a_transfer(op, key):
            continue  # GET /contacts/imports lists import jobs; POST /events/import adds one event
        if key in _NOISE_ANYWHERE and not is_auth_resource(op, words, i):
            return _NOISE_ANYWHERE[key]
        if (
            i == 0
            and key in _NOISE_FIRST
            and (key not in ("status", "session", "sessions") or len(words) == 1)
        ):
            if _NOISE_FIRST[key] in ("health check", "API metadata") and not _about_the_api(
                op, _NOISE_FIRST[key]
            ):
                continue  # /health/records/{id}, Jira POST /version and GET /status (a list of statuses)
            if key in ("session", "sessions") and not signs_in(op):
                continue  # Adyen POST /sessions {amount, merchantAccount}: a payment session, a resource
            return _NOISE_FIRST[key]
    body = op.request_body or {}
    props = body.get("properties") if isinstance(body, dict) else None
    if isinstance(props, dict) and any(
        isinstance(s, dict) and s.get("format") == "binary" for s in props.values()
    ):
        return "binary upload"
    if isinstance(body, dict) and body.get("format") == "binary":
        return "binary upload"
    resp = op.success_response()
    if resp is not None and isinstance(resp.schema_, dict) and resp.schema_.get("format") == "binary":
        return "binary download"
    return None
