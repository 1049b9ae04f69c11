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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..errors import SessionGoneError, SessionLimitError
from ..runtime import Environment, Session, Snapshot

__all__ = [
    "SessionPool",
    "PooledSession",
    "SessionBudget",
    "SessionLimitError",
    "SessionGoneError",
    "process_rss",
]

_GONE_MEMORY = 10_000  # how many ended session ids we remember, to say why one is gone
_MIB = 1 << 20


def process_rss() -> int | None:
    """This process's resident memory in bytes (None where it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as fh:  # Linux: a few microseconds
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 - no way to measure: the memory budget is not enforced
        return None


try:
    import os as _os

    _PAGE = _os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


class _MemoryRelease:
    """Hand memory that closed sessions freed back to the OS (glibc keeps it in its arenas otherwise).

    Without it a server that once held many sessions keeps their resident size for good, and the
    memory budget would refuse sessions for memory that is free. ``malloc_trim`` runs at most once
    a second while sessions end, and whenever the last open session of a pool ends.
    """

    def __init__(self) -> None:
        self.pending = False
        self.last = -1e9
        self._trim: Callable[[int], int] | None = None
        try:
            import ctypes

            self._trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):  # not glibc: nothing to trim
            pass

    def freed(self) -> None:
        self.pending = True

    def release(self, *, now: float | None = None, force: bool = False) -> bool:
        """Trim when something was freed since the last trim (and a second has passed, unless forced)."""
        now = time.monotonic() if now is None else now
        if self._trim is None or not self.pending or (not force and now - self.last < 1.0):
            return False
        self.pending, self.last = False, now
        self._trim(0)
        return True


memory_release = _MemoryRelease()


class SessionBudget:
    """Limits shared by every pool of one server: open sessions in all, and the process's memory.

    A new session is refused (``SessionLimitError``, which the client reads as an error) when the
    server already holds ``max_sessions`` sessions over all its environments, or when its resident
    memory has reached ``max_memory_bytes``; open sessions go on being served.
    """

    def __init__(
        self,
        *,
        max_sessions: int | None = None,
        max_memory_bytes: int | None = None,
        rss: Callable[[], int | None] = process_rss,
    ):
        self.max_sessions = max_sessions
        self.max_memory_bytes = max_memory_bytes
        self.rss = rss
        self.pools: list[SessionPool] = []
        self.refused = 0  # sessions refused by this budget (the benchmark reports it)

    def open_count(self) -> int:
        return sum(p.open_count for p in self.pools)

    def check(self) -> None:
        """Raise SessionLimitError when one more session would break the budget."""
        if self.max_sessions is not None and self.open_count() >= self.max_sessions:
            self.refused += 1
            raise SessionLimitError(
                f"server is at its limit of {self.max_sessions} open sessions over all its "
                "environments; close a session or retry later"
            )
        if self.max_memory_bytes is not None:
            rss = self.rss()
            if rss is not None and rss >= self.max_memory_bytes and memory_release.release():
                rss = self.rss()  # what closed sessions freed counts as free
            if rss is not None and rss >= self.max_memory_bytes:
                self.refused += 1
                raise SessionLimitError(
                    f"server memory is {rss // _MIB} MiB, at its budget of {self.max_memory_bytes // _MIB} MiB: "
                    "no new sessions until some close; retry later"
                )


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
        budget: SessionBudget | None = None,
    ):
        self.env = env
        self.budget = budget
        if budget is not None:
            budget.pools.append(self)
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

    def open(
        self, snapshot: Snapshot | None = None, *, origin: Literal["mcp", "control"] = "mcp"
    ) -> PooledSession:
        """A new session at ``snapshot`` (default: the pool's initial state or the template)."""
        if len(self._open) >= self.max_sessions:
            self.sweep()
        if len(self._open) >= self.max_sessions:
            raise SessionLimitError(
                f"server is at its limit of {self.max_sessions} open sessions for environment "
                f"'{self.env.name}'; close a session or retry later"
            )
        if self.budget is not None:
            try:
                self.budget.check()
            except SessionLimitError:
                if not sum(p.sweep() for p in self.budget.pools):  # idle sessions go first
                    raise
                self.budget.check()
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
                raise SessionGoneError(
                    f"no session with id '{session_id[:64]}' on environment '{self.env.name}'"
                )
            raise SessionGoneError(f"session '{session_id[:64]}' {why}")
        self.use(ps)
        return ps

    def use(self, ps: PooledSession) -> None:
        """Check that ``ps`` is alive and not idle past the timeout, then refresh its idle clock."""
        if ps.gone is None:
            now = self.clock()
            if now - ps.last_used > self.idle_timeout:
                self._end(
                    ps, f"expired after {self.idle_timeout:g} s without requests and its state was discarded"
                )
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
            raise SessionGoneError(
                f"session '{session_id[:64]}' is already attached to another MCP connection"
            )
        ps.attached += 1
        return ps

    def use_by_header(self, session_id: str) -> PooledSession:
        """A control session used by a request that names it in the session header (no handshake).

        Refused while an MCP connection holds it: one agent per control session at a time.
        """
        ps = self.get(session_id)
        if ps.origin != "control":
            raise SessionGoneError(f"session '{session_id[:64]}' was not created on the control channel")
        if ps.attached:
            raise SessionGoneError(f"session '{session_id[:64]}' is held by another MCP connection")
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
            self._end(
                ps, f"expired after {self.idle_timeout:g} s without requests and its state was discarded"
            )
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
            memory_release.freed()
            memory_release.release(force=not self._open)
