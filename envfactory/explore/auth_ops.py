"""Authentication by what an operation does, not by a word in its path.

``GET /oauth/grants`` and ``DELETE /oauth/grants/{id}`` list and revoke stored grants (a
resource); Stripe's ``POST /v1/tokens`` stores a card token and ``GET /v1/tokens/{token}``
reads it back (a resource). ``POST /oauth/token`` (a grant type in, an access token out),
``POST /link/token/create`` (a ``link_token`` out) and ``GET /oauth2/keys`` exchange or
publish credentials: those stay excluded as authentication.
"""

from __future__ import annotations

from ..ingest import Operation
from .naming import snake

__all__ = ["is_auth_resource"]

_SOFT = {"oauth", "oauth2", "token", "tokens"}
_CREDENTIAL_WORDS = {
    "token",
    "tokens",
    "keys",
    "jwks",
    "authorize",
    "revoke",
    "introspect",
    "userinfo",
    "access",
    "status",
    "me",
    "@me",
    "refresh",
    "exchange",
    "select_accounts",
}
_CREDENTIALS = {"password", "username", "grant_type", "client_secret", "refresh_token", "code", "assertion"}


def _keys(schema: object) -> set[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {snake(k) for k in props} if isinstance(props, dict) else set()


def _trades_credentials(op: Operation) -> bool:
    """Credentials or a token go in or come out (``grant_type``, ``link_token``, ``access_token``)."""
    sent = _keys(op.request_body) | {snake(p.name) for p in op.parameters if p.location in ("body", "query")}
    resp = op.success_response()
    got = _keys(resp.schema_ if resp is not None else None)
    both = sent | got
    return bool(both & _CREDENTIALS) or any(k == "token" or k.endswith("_token") for k in both)


def is_auth_resource(op: Operation, words: list[str], i: int) -> bool:
    """Whether the auth-sounding word ``words[i]`` of ``op``'s path names a stored resource."""
    if snake(words[i]) not in _SOFT or _trades_credentials(op):
        return False
    rest = [snake(w) for w in words[i + 1 :]]
    if any(w in _CREDENTIAL_WORDS for w in rest):
        return False
    resp = op.success_response()
    documented = bool(_keys(op.request_body) or (resp is not None and resp.schema_))
    if snake(words[i]) in ("oauth", "oauth2"):
        return bool(rest) and rest[0].endswith("s") and documented  # /oauth/grants
    return not rest and (documented or op.method == "delete")  # /v1/tokens, /v1/tokens/{token}
