"""The control channel: HTTP JSON for harnesses (RL, eval), never listed among agents' tools.

    POST   /control/{env}/sessions                 {"state_b64": ...} | {"state_path": ...} | {}
                                                   -> 201 {"session_id", "hash", "mcp_path", "header"}
    GET    /control/{env}/sessions                 -> {"open", "max_sessions", "sessions": [...]}
    GET    /control/{env}/sessions/{id}/state      -> {"session_id", "hash", "diff", "calls", "attached"}
    GET    /control/{env}/sessions/{id}/snapshot   -> {"session_id", "hash", "state_b64"}
    DELETE /control/{env}/sessions/{id}            -> {"session_id", "closed": true, "hash", "diff"}
    POST   /control/{env}/sessions/{id}/reward     {"reward_spec": {...}, "final_answer": "...", "calls": [...]}
                                                   -> {"session_id", "hash", "reward": {reward, partial, state, ...}}

Every request needs ``Authorization: Bearer <control token>`` (401 otherwise) and passes the
same Host/Origin checks as /mcp. An MCP client joins a session by sending its id in the
``X-Envfactory-Session`` header when it connects to /mcp/{env}.
"""

from __future__ import annotations

import base64
import hmac
import json
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import ServeError
from ..reward import CallRecord, score_trajectory
from ..spec import RewardSpec
from .config import SESSION_HEADER, ServeConfig
from .pool import SessionGoneError, SessionLimitError, SessionPool
from .state import decode_state_b64, load_state_file, resolve_state_path

__all__ = ["build_control_routes"]


def _err(status: int, error: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": error, "message": message}, status_code=status, headers=headers or None)


class _Control:
    def __init__(
        self, pools: dict[str, SessionPool], config: ServeConfig, security: TransportSecuritySettings
    ):
        assert config.control_token
        self.pools = pools
        self.config = config
        self._token = config.control_token.encode()
        self._security = TransportSecurityMiddleware(security)

    async def _guard(self, request: Request) -> tuple[SessionPool | None, Response | None]:
        bad = await self._security.validate_request(request, is_post=False)
        if bad is not None:
            return None, bad
        auth = request.headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self._token):
            return None, _err(
                401,
                "unauthorized",
                "the control channel needs 'Authorization: Bearer <control token>'",
                **{"WWW-Authenticate": 'Bearer realm="envfactory-control"'},
            )
        env = request.path_params.get("env", "")
        pool = self.pools.get(env)
        if pool is None:
            return None, _err(
                404, "unknown_env", f"no environment '{env}' here; served: {', '.join(sorted(self.pools))}"
            )
        pool.sweep()
        return pool, None

    async def create(self, request: Request) -> Response:
        pool, bad = await self._guard(request)
        if bad is not None:
            return bad
        assert pool is not None
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.config.max_state_bytes:
                return _err(
                    413, "too_large", f"request body is over the limit of {self.config.max_state_bytes} bytes"
                )
        try:
            payload = json.loads(body) if body.strip() else {}
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            return _err(400, "bad_json", f"request body is not JSON: {e}")
        if not isinstance(payload, dict):
            return _err(400, "bad_request", "request body must be a JSON object")
        unknown = set(payload) - {"state_b64", "state_path"}
        if unknown:
            return _err(400, "bad_request", f"unknown fields {sorted(unknown)}; use state_b64 or state_path")
        if "state_b64" in payload and "state_path" in payload:
            return _err(400, "bad_request", "give state_b64 or state_path, not both")
        try:
            snapshot = None
            if isinstance(payload.get("state_b64"), str):
                snapshot = decode_state_b64(pool.env, payload["state_b64"])
            elif isinstance(payload.get("state_path"), str):
                roots = self.config.state_roots
                snapshot = load_state_file(
                    pool.env, resolve_state_path(pool.env, payload["state_path"], roots)
                )
            elif payload:
                return _err(400, "bad_request", "state_b64 and state_path must be strings")
            ps = pool.open(snapshot, origin="control")
        except SessionLimitError as e:
            return _err(503, "session_limit", str(e))
        except ServeError as e:
            return _err(400, "bad_state", str(e))
        return JSONResponse(
            {
                "session_id": ps.id,
                "env": pool.env.name,
                "hash": ps.session.state_hash(),
                "mcp_path": f"/mcp/{pool.env.name}",
                "header": SESSION_HEADER,
            },
            status_code=201,
        )

    async def list(self, request: Request) -> Response:
        pool, bad = await self._guard(request)
        if bad is not None:
            return bad
        assert pool is not None
        now = pool.clock()
        return JSONResponse(
            {
                "env": pool.env.name,
                "open": pool.open_count,
                "max_sessions": pool.max_sessions,
                "sessions": [
                    {
                        "session_id": ps.id,
                        "origin": ps.origin,
                        "calls": ps.calls,
                        "attached": ps.attached,
                        "idle_s": round(now - ps.last_used, 3),
                    }
                    for ps in pool.sessions()
                    if ps.origin == "control"
                ],
                "mcp_sessions": sum(1 for ps in pool.sessions() if ps.origin == "mcp"),
            }
        )

    def _lookup(self, pool: SessionPool, request: Request) -> Any:
        try:
            return pool.get(request.path_params["sid"])
        except SessionGoneError as e:
            return _err(404, "session_gone", str(e))

    async def state(self, request: Request) -> Response:
        pool, bad = await self._guard(request)
        if bad is not None:
            return bad
        ps = self._lookup(pool, request)  # type: ignore[arg-type]
        if isinstance(ps, Response):
            return ps
        s = ps.session
        return JSONResponse(
            {
                "session_id": ps.id,
                "hash": s.state_hash(),
                "diff": s.diff().to_dict(),
                "calls": s.calls,
                "attached": ps.attached,
            }
        )

    async def snapshot(self, request: Request) -> Response:
        pool, bad = await self._guard(request)
        if bad is not None:
            return bad
        ps = self._lookup(pool, request)  # type: ignore[arg-type]
        if isinstance(ps, Response):
            return ps
        snap = ps.session.snapshot()
        return JSONResponse(
            {
                "session_id": ps.id,
                "hash": ps.session.state_hash(),
                "state_b64": base64.b64encode(snap.data).decode(),
            }
        )

    async def delete(self, request: Request) -> Response:
        pool, bad = await self._guard(request)
        if bad is not None:
            return bad
        assert pool is not None
        ps = self._lookup(pool, request)
        if isinstance(ps, Response):
            return ps
        final = {"hash": ps.session.state_hash(), "diff": ps.session.diff().to_dict()}
        pool.close(ps.id)
        return JSONResponse({"session_id": ps.id, "closed": True, **final})


_MAX_ANSWER = 100_000  # characters of a final answer the reward reads
_MAX_CALLS = 10_000


def _reward_request(payload: Any) -> tuple[RewardSpec, str, list[CallRecord]] | str:
    """(spec, final answer, calls) from a reward request body, or what is wrong with it."""
    from pydantic import ValidationError

    if not isinstance(payload, dict) or not isinstance(payload.get("reward_spec"), dict):
        return "the body must be a JSON object with a 'reward_spec' object (a dataset row's reward_spec)"
    unknown = set(payload) - {"reward_spec", "final_answer", "calls"}
    if unknown:
        return f"unknown fields {sorted(unknown)}; use reward_spec, final_answer, calls"
    answer = payload.get("final_answer", "")
    calls = payload.get("calls", [])
    if not isinstance(answer, str) or len(answer) > _MAX_ANSWER:
        return f"final_answer must be a string of at most {_MAX_ANSWER} characters"
    if not isinstance(calls, list) or len(calls) > _MAX_CALLS:
        return f"calls must be a list of at most {_MAX_CALLS} {{tool, args, ok, error, writes}} records"
    try:
        return (
            RewardSpec.model_validate(payload["reward_spec"]),
            answer,
            [CallRecord.model_validate(c) for c in calls],
        )
    except ValidationError as e:
        first = e.errors()[0]
        return f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}"


class _Reward:
    """``POST .../reward``: score a session's state (and the caller's answer and call log) against a reward spec."""

    def __init__(self, control: _Control):
        self.c = control

    async def handle(self, request: Request) -> Response:
        pool, bad = await self.c._guard(request)
        if bad is not None:
            return bad
        assert pool is not None
        ps = self.c._lookup(pool, request)
        if isinstance(ps, Response):
            return ps
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.c.config.max_state_bytes:
                return _err(
                    413,
                    "too_large",
                    f"request body is over the limit of {self.c.config.max_state_bytes} bytes",
                )
        try:
            got = _reward_request(json.loads(body) if body.strip() else None)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            return _err(400, "bad_json", f"request body is not JSON: {e}")
        if isinstance(got, str):
            return _err(400, "bad_request", got)
        spec, answer, calls = got
        s = ps.session
        res = score_trajectory(
            spec,
            final_state_hash=s.state_hash(),
            final_diff=s.diff().to_dict(),
            calls=list[Any](calls),
            final_answer=answer,
        )
        return JSONResponse({"session_id": ps.id, "hash": s.state_hash(), "reward": res.model_dump()})


def build_control_routes(
    pools: dict[str, SessionPool], config: ServeConfig, security: TransportSecuritySettings
) -> list[Route]:
    """Starlette routes of the control channel (empty when no control token is configured)."""
    if not config.control_token:
        return []
    c = _Control(pools, config, security)
    return [
        Route("/control/{env}/sessions", c.create, methods=["POST"]),
        Route("/control/{env}/sessions", c.list, methods=["GET"]),
        Route("/control/{env}/sessions/{sid}/state", c.state, methods=["GET"]),
        Route("/control/{env}/sessions/{sid}/snapshot", c.snapshot, methods=["GET"]),
        Route("/control/{env}/sessions/{sid}", c.delete, methods=["DELETE"]),
        Route("/control/{env}/sessions/{sid}/reward", _Reward(c).handle, methods=["POST"]),
    ]
