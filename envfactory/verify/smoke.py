"""Smoke check: one valid call per tool succeeds, malformed calls fail cleanly.

The fastest gate of a build: per tool, a valid call (``valid_args``) succeeds and moves the
state hash exactly when the tool writes, and malformed calls (missing required argument,
wrong type, unknown argument, out-of-enum value) fail with ``ArgumentError`` and leave the
state hash unchanged.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ArgumentError, RuntimeToolError
from ..spec import FieldType, ParamSpec, ToolSpec
from .args import valid_args

__all__ = ["ToolCheck", "smoke_check", "malformed_calls", "tool_rng"]


@dataclass
class ToolCheck:
    """One verdict about one tool: ``level`` is smoke/L1/L2/L3; ``message`` says what failed."""

    tool: str
    ok: bool
    level: str
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tool_rng(seed: int, *parts: Any) -> random.Random:
    """A generator seeded by ``seed`` and a stable digest of ``parts`` (tool name, level)."""
    return random.Random(seed * 1_000_003 + zlib.crc32("/".join(map(str, parts)).encode()))


def _wrong_value(p: ParamSpec) -> Any:
    if p.op == "in":
        return "not-a-list"
    if p.type in (FieldType.string, FieldType.enum, FieldType.date, FieldType.datetime):
        return 12345
    if p.type in (FieldType.integer, FieldType.number):
        return "not-a-number"
    if p.type == FieldType.boolean:
        return "yes"
    if p.type == FieldType.object:
        return [1, 2]
    return {"not": "an array"}


def malformed_calls(tool: ToolSpec, args: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    """(what, arguments, the argument the error must name) for calls that must be rejected."""
    out: list[tuple[str, dict[str, Any], str | None]] = []
    for p in tool.params:
        if p.required:
            a = {k: v for k, v in args.items() if k != p.name}
            out.append((f"missing required '{p.name}'", a, p.name))
            break
    typed = [p for p in tool.params if p.name in args] or list(tool.params)
    if typed:
        p = typed[0]
        out.append((f"wrong type for '{p.name}'", {**args, p.name: _wrong_value(p)}, p.name))
    out.append(("unknown argument", {**args, "zz_not_an_argument": 1}, "zz_not_an_argument"))
    for p in tool.params:
        if p.enum:
            bad = "zz_not_allowed"
            out.append((f"out-of-enum '{p.name}'", {**args, p.name: [bad] if p.op == "in" else bad}, p.name))
            break
    return out


def _check_tool(env: Any, tool: ToolSpec, seed: int, expected: Any) -> ToolCheck:
    rng = tool_rng(seed, tool.name, "smoke")
    with env.new_session() as s:
        args = valid_args(s, expected, tool, rng)
        if args is None:
            return ToolCheck(tool.name, False, "smoke", "no valid call found in the seeded state")
        h0 = s.state_hash()
        for what, bad, arg in malformed_calls(tool, args):
            try:
                s.call(tool.name, bad)
                return ToolCheck(tool.name, False, "smoke", f"{what}: call was accepted")
            except ArgumentError as e:
                if arg and arg not in str(e):
                    return ToolCheck(tool.name, False, "smoke", f"{what}: error does not name '{arg}': {e}")
            except RuntimeToolError as e:
                return ToolCheck(
                    tool.name, False, "smoke", f"{what}: expected invalid_argument, got {e.code}: {e}"
                )
            if s.state_hash() != h0:
                return ToolCheck(tool.name, False, "smoke", f"{what}: rejected call changed the state")
        try:
            s.call(tool.name, args)
        except RuntimeToolError as e:
            return ToolCheck(tool.name, False, "smoke", f"valid call {args} failed: {e.code}: {e}")
        h1 = s.state_hash()
        if tool.writes and h1 == h0:
            return ToolCheck(tool.name, False, "smoke", f"write call {args} left the state unchanged")
        if not tool.writes and h1 != h0:
            return ToolCheck(tool.name, False, "smoke", f"read call {args} changed the state")
    return ToolCheck(tool.name, True, "smoke", "ok")


def smoke_check(env: Any, *, seed: int = 0, expected: Any = None) -> list[ToolCheck]:
    """One ToolCheck per tool of ``env`` (an Environment), in spec order.

    Arguments come from ``expected`` (an EnvSpec; default ``env.spec``).
    """
    expected = expected or env.spec
    out = []
    for tool in expected.tools:
        try:
            out.append(_check_tool(env, tool, seed, expected))
        except Exception as e:  # a crash on one tool is a finding about that tool
            out.append(ToolCheck(tool.name, False, "smoke", f"crashed: {type(e).__name__}: {e}"))
    return out
