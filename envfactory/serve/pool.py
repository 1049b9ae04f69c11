"""SessionPool: the runtime sessions one served environment holds, with a cap and idle expiry.

An MCP connection gets a pool session when it initializes and frees it when it closes. The
control channel creates sessions too (from a chosen state); those outlive the MCP
connections that attach to them, so a harness can read the final state after the agent
has gone, and end when the harness deletes them or they sit idle too long.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Literal

from ..errors import SessionGoneError, SessionLimitError
from ..runtime import Environment, Session, Snapshot

__all__ = ["SessionPool", "PooledSession", "SessionLimitError", "SessionGoneError"]

_GONE_MEMORY = 10_000  # how many ended session ids we remember, to say why one is gone


@dataclass(eq=False)
class PooledSession:
    id: str
    session: Session
    origin: Literal["mcp", "control"]
    created: float
    last_used: float
    attached: int = 0
    gone: str | None = field(default=None)

    @property
    def calls(self) -> int:
        return self.session.calls


class SessionPool:
    """Runtime sessions of one environment, keyed by an unguessable id."""

    def __init__(
        self,
        env: Environment,
        *,
        max_sessions: int = 1000,
        idle_timeout: float = 1800.0,
        initial: Snapshot | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.env = env
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.initial = initial
        self.clock = clock
        self._open: dict[str, PooledSession] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self.opened_total = 0

    def __len__(self) -> int:
        return len(self._open)

    @property
    def open_count(self) -> int:
        return len(self._open)

    def sessions(self) -> list[PooledSession]:
        return list(self._open.values())

    def open(self, snapshot: Snapshot | None = None, *, origin: Literal["mcp", "control"] = "mcp") -> PooledSession:
        """A new session at ``snapshot`` (default: the pool's initial state or the template)."""
        if len(self._open) >= self.max_sessions:
            self.sweep()
        if len(self._open) >= self.max_sessions:
            raise SessionLimitError(
                f"server is at its limit of {self.max_sessions} open sessions for environment "
                f"'{self.env.name}'; close a session or retry later"
            )
        now = self.clock()
        ps = PooledSession(
            id=secrets.token_urlsafe(18),
            session=self.env.new_session(snapshot or self.initial),
            origin=origin,
            created=now,
            last_used=now,
        )
        self._open[ps.id] = ps
        self.opened_total += 1
        return ps

    def get(self, session_id: str) -> PooledSession:
        """The open session with this id (refreshing its idle clock), or a SessionGoneError saying why not."""
        ps = self._open.get(session_id)
        if ps is None:
            why = self._gone.get(session_id)
            if why is None:
                raise SessionGoneError(f"no session with id '{session_id[:64]}' on environment '{self.env.name}'")
            raise SessionGoneError(f"session '{session_id[:64]}' {why}")
        self.use(ps)
        return ps

    def use(self, ps: PooledSession) -> None:
        """Check that ``ps`` is alive and not idle past the timeout, then refresh its idle clock."""
        if ps.gone is None:
            now = self.clock()
            if now - ps.last_used > self.idle_timeout:
                self._end(ps, f"expired after {self.idle_timeout:g} s without requests and its state was discarded")
            else:
                ps.last_used = now
                return
        raise SessionGoneError(f"this session {ps.gone}; reconnect to start a new session")

    def attach(self, session_id: str) -> PooledSession:
        """Attach an MCP connection to a control-created session."""
        ps = self.get(session_id)
        if ps.origin != "control":
            raise SessionGoneError(f"session '{session_id[:64]}' was not created on the control channel")
        if ps.attached:
            raise SessionGoneError(f"session '{session_id[:64]}' is already attached to another MCP connection")
        ps.attached += 1
        return ps

    def release(self, ps: PooledSession) -> None:
        """An MCP connection ended: free its own session; leave a control session for the harness."""
        if ps.origin == "control":
            ps.attached = max(0, ps.attached - 1)
            if ps.gone is None:
                ps.last_used = self.clock()
        else:
            self._end(ps, "was closed")

    def close(self, session_id: str) -> PooledSession:
        ps = self._open.get(session_id)
        if ps is None:
            self.get(session_id)  # raises with the reason
            raise AssertionError("unreachable")
        self._end(ps, "was closed on the control channel")
        return ps

    def sweep(self) -> int:
        """Free every session idle past the timeout; a connection still holding one is told on its next call."""
        now = self.clock()
        stale = [ps for ps in self._open.values() if now - ps.last_used > self.idle_timeout]
        for ps in stale:
            self._end(ps, f"expired after {self.idle_timeout:g} s without requests and its state was discarded")
        return len(stale)

    def close_all(self) -> None:
        for ps in list(self._open.values()):
            self._end(ps, "was closed when the server stopped")

    def _end(self, ps: PooledSession, why: str) -> None:
        if ps.gone is None:
            ps.gone = why
        if self._open.pop(ps.id, None) is not None:
            ps.session.close()
            self._gone[ps.id] = why
            if len(self._gone) > _GONE_MEMORY:
                self._gone.popitem(last=False)
