"""The one error hierarchy of envfactory.

    EnvFactoryError
    ├── ConfigError            bad user settings (config file, CLI option)
    ├── IngestError            a document could not be read or crawled
    ├── ExploreError           no environment could be derived from a document
    ├── SpecError              an EnvSpec is invalid or inconsistent
    ├── RuntimeToolError       a tool call failed; the message is for the agent
    │   ├── UnknownToolError
    │   ├── ArgumentError      missing / extra / ill-typed / out-of-enum argument
    │   ├── NotFoundError
    │   ├── PreconditionError
    │   └── ConstraintError    uniqueness or foreign-key violation
    ├── VerificationError
    ├── PlanError              a tool-call plan could not be sampled or resolved
    │   ├── SampleError        no plan could be grounded (e.g. an environment without tools or rows)
    │   └── RefError           a step argument points at output an earlier step does not have
    ├── ModelError             a ChatModel backend failed (HTTP, timeout, bad reply)
    ├── ServeError
    │   ├── SessionLimitError  the session pool is full
    │   ├── SessionGoneError   a session id is unknown, expired or closed
    │   └── StateError         an initial state is unreadable or does not fit the environment
    ├── SuiteError             an evaluation suite could not be built or read
    ├── BfclFormatError        a BFCL file or call string is malformed (also a ValueError)
    └── BfclUnavailableError   BFCL's own checker (bfcl-eval) is not installed (also an ImportError)

Wrap third-party failures once, where they happen:
``raise IngestError(f"{path}: {e}") from e``.
"""

from __future__ import annotations

__all__ = [
    "EnvFactoryError",
    "ConfigError",
    "IngestError",
    "ExploreError",
    "SpecError",
    "RuntimeToolError",
    "UnknownToolError",
    "ArgumentError",
    "NotFoundError",
    "PreconditionError",
    "ConstraintError",
    "VerificationError",
    "PlanError",
    "SampleError",
    "RefError",
    "ModelError",
    "ServeError",
    "SessionLimitError",
    "SessionGoneError",
    "StateError",
    "SuiteError",
    "BfclFormatError",
    "BfclUnavailableError",
]


class EnvFactoryError(Exception):
    """Base class of every error envfactory raises on purpose."""


class ConfigError(EnvFactoryError):
    """A user setting (config file, CLI option) is invalid."""


class IngestError(EnvFactoryError):
    """A documentation source could not be read, parsed or crawled."""


class ExploreError(EnvFactoryError):
    """No environment could be derived from an ApiDoc."""


class SpecError(EnvFactoryError):
    """An EnvSpec is invalid or internally inconsistent."""


class RuntimeToolError(EnvFactoryError):
    """A tool call failed. The message is written for the agent that made the call.

    ``code`` is a stable machine-readable class name (``not_found``, ``argument`` ...).
    """

    code = "tool_error"

    def __init__(self, message: str, *, tool: str | None = None, argument: str | None = None):
        super().__init__(message)
        self.tool = tool
        self.argument = argument

    def to_dict(self) -> dict:
        return {"error": self.code, "message": str(self)}


class UnknownToolError(RuntimeToolError):
    code = "unknown_tool"


class ArgumentError(RuntimeToolError):
    code = "invalid_argument"


class NotFoundError(RuntimeToolError):
    code = "not_found"


class PreconditionError(RuntimeToolError):
    code = "precondition_failed"


class ConstraintError(RuntimeToolError):
    code = "constraint_violated"


class VerificationError(EnvFactoryError):
    """An environment failed verification."""


class PlanError(EnvFactoryError):
    """A tool-call plan could not be sampled, resolved or executed as planned."""


class SampleError(PlanError):
    """No plan could be built. Inside a sampler it means "try another goal"; raised to the caller
    it means the environments offer nothing to plan on (no tools, or no rows to ground them in)."""


class RefError(PlanError, LookupError):
    """A reference points at something the earlier output does not have.

    Also a ``LookupError``: resolving a reference is a look-up, and callers that treat it as one
    keep working."""


class ModelError(EnvFactoryError):
    """A ChatModel backend failed: HTTP error, timeout, or an unusable reply."""


class ServeError(EnvFactoryError):
    """The MCP server could not start or was misconfigured."""


class SessionLimitError(ServeError):
    """The pool is full: a new session was refused."""


class SessionGoneError(ServeError):
    """A session id is unknown, or its session expired or was closed."""


class StateError(ServeError):
    """An initial state could not be read or does not fit the environment."""


class SuiteError(EnvFactoryError):
    """An evaluation suite could not be built or read."""


class BfclFormatError(EnvFactoryError, ValueError):
    """A BFCL file or call string could not be read."""


class BfclUnavailableError(EnvFactoryError, ImportError):
    """``bfcl_eval`` (or a module its checker imports) is not installed."""
