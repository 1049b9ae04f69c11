"""ServeConfig: the user settings of an MCP server (limits, tokens, timeouts, hosts)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["ServeConfig", "SESSION_HEADER", "LOOPBACK_HOSTS"]

SESSION_HEADER = "X-Envfactory-Session"
"""HTTP header an MCP client sends to attach to a session created on the control channel."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class ServeConfig(BaseModel):
    """How an environment is served. Every limit answers with a clear error when reached."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field("127.0.0.1", description="Interface to bind (HTTP). Loopback by default.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (HTTP); 0 picks a free one.")
    token: str | None = Field(
        None, description="Bearer token every MCP HTTP request must carry (none: open)."
    )
    control_token: str | None = Field(
        None, description="Bearer token of the /control endpoints; the control channel is off without it."
    )
    idle_timeout: float = Field(
        1800.0, gt=0, description="Seconds without a request after which a session is freed."
    )
    max_sessions: int = Field(
        1000, ge=1, description="Open sessions (MCP and control) at most, per environment."
    )
    max_total_sessions: int | None = Field(
        10_000,
        ge=1,
        description="Open sessions at most over all the environments one server serves (None: no cap).",
    )
    max_memory_mb: int | None = Field(
        4096,
        ge=16,
        description="Resident memory of the server process (MiB) from which new sessions are refused; "
        "open ones are still served (None: no budget).",
    )
    max_calls_per_session: int = Field(10_000, ge=1, description="Tool calls one session may make.")
    max_body_bytes: int = Field(
        1 << 20, ge=1024, description="Largest HTTP request body on /mcp (413 above)."
    )
    max_argument_bytes: int = Field(
        64 * 1024, ge=64, description="Largest JSON encoding of one call's arguments."
    )
    max_state_bytes: int = Field(
        256 << 20, ge=1024, description="Largest initial state a control request may send."
    )
    json_response: bool = Field(
        True,
        description="Answer POSTs with plain JSON instead of an SSE stream (faster; tools send no progress).",
    )
    fast_path: bool = Field(
        True,
        description="Answer tools/call POSTs on established HTTP sessions without the SDK's stream stack "
        "(same bytes, about half the server CPU per call; JSON responses only).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Extra Host header values to accept (e.g. 'myhost:8000' or 'myhost:*').",
    )
    allowed_origins: list[str] = Field(
        default_factory=list, description="Extra Origin header values to accept."
    )
    state_roots: list[Path] = Field(
        default_factory=list,
        description="Folders a control request may read initial states from by path (default: the domain folder).",
    )
    initial_state: Path | None = Field(
        None,
        description="SQLite file every new MCP session starts from (default: the environment's template).",
    )

    @model_validator(mode="after")
    def _check(self) -> ServeConfig:
        if self.token is not None and not self.token.strip():
            raise ValueError("token must not be empty")
        if self.control_token is not None and not self.control_token.strip():
            raise ValueError("control_token must not be empty")
        if self.token and self.control_token and self.token == self.control_token:
            raise ValueError(
                "control_token must differ from the MCP token: agents must not reach the control channel"
            )
        return self

    def host_patterns(self) -> tuple[list[str], list[str]]:
        """Host and Origin header values accepted against DNS rebinding."""
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        if self.host not in LOOPBACK_HOSTS and self.host not in ("0.0.0.0", "::"):
            h = f"[{self.host}]" if ":" in self.host else self.host
            hosts += [f"{h}:*", h]
            origins += [f"http://{h}:*", f"https://{h}:*"]
        hosts += self.allowed_hosts
        origins += self.allowed_origins
        return hosts, origins
