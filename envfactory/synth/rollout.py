"""Rollouts: a simulated user and an assistant policy talk, with tool calls run on a live session.

A task is split into turns by sub-goal: the user states one sub-goal, the assistant works on
it (tool calls, questions back to the user) and reports; the user raises the next one. Tool
calls run against a live environment session, in process by default (``InProcessBackend``)
or through the MCP server with the SDK client (``McpConnector``: an in-process server over
the SDK's in-memory transport, or ``envfactory serve`` over stdio). Over MCP a shadow
in-process session runs the same calls: it gives the final state hash and diff the reward
needs, and any result that differs from the server's is counted as a mismatch.

Scoring is ``score_trajectory`` on the final state and the last assistant message (the final
answer). ``run_task`` retries a task up to ``policy.attempts`` times and keeps the first
rollout with reward 1 (rejection sampling; the attempt count is recorded).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError, ModelError
from ..llm import ChatMessage, ChatModel, ToolCall
from ..reward import CallRecord, RewardResult, score_trajectory
from ..runtime import Environment, Snapshot
from ..spec import RewardSpec, Task
from .policy import OraclePolicy, Policy, build_system_prompt, build_tool_schemas, call_id
from .user_sim import UserSimulator

__all__ = [
    "ToolBackend",
    "InProcessBackend",
    "McpBackend",
    "McpConnector",
    "Trajectory",
    "load_initial_state",
    "result_text",
    "run_rollout",
    "run_task",
    "replay_calls",
    "message_dict",
]


def result_text(ok: bool, result: Any) -> str:
    """The tool message content for a call: the JSON result, or ``{"error", "message"}``."""
    return json.dumps(result, ensure_ascii=False)


_SNAPSHOTS: dict[tuple[str, str], Snapshot] = {}


def load_initial_state(env: Environment, ref: str) -> Snapshot | None:
    """``'template'`` -> None (the seeded state); else a saved SQLite state, a path relative to the env folder."""
    if not ref or ref == "template":
        return None
    key = (str(env.path), ref)
    snap = _SNAPSHOTS.get(key)
    if snap is None:
        p = Path(ref)
        if not p.is_absolute() and env.path is not None:
            p = Path(env.path) / p
        snap = _SNAPSHOTS[key] = env.snapshot_from_bytes(p.read_bytes())
    return snap


class ToolBackend(Protocol):
    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, Any]: ...
    def state_hash(self) -> str: ...
    def diff(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


class InProcessBackend:
    """A runtime session in this process."""

    via = "in-process"

    def __init__(self, env: Environment, initial_state: str = "template"):
        self.session = env.new_session(load_initial_state(env, initial_state))

    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
        r = self.session.try_call(tool, args)
        if r["ok"]:
            return True, r["result"]
        return False, {"error": r["error"], "message": r["message"]}

    def state_hash(self) -> str:
        return self.session.state_hash()

    def diff(self) -> dict[str, Any]:
        return self.session.diff().to_dict()

    def close(self) -> None:
        self.session.close()


class McpBackend:
    """A session on an MCP server through the SDK client, with an in-process shadow for the reward."""

    def __init__(
        self, connector: McpConnector, client: Any, exit_cm: Any, shadow: InProcessBackend, via: str
    ):
        self._connector = connector
        self._client = client
        self._exit = exit_cm
        self.shadow = shadow
        self.via = via
        self.mismatches = 0

    def call(self, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
        r = self._connector.portal.call(self._client.call_tool, tool, args)
        if r.is_error:
            meta = r.meta or {}
            text = r.content[0].text if r.content else ""
            got = (False, {"error": meta.get("envfactory/error", "error"), "message": text})
        else:
            got = (True, r.structured_content)
        if self.shadow.call(tool, args) != got:
            self.mismatches += 1
        return got

    def state_hash(self) -> str:
        return self.shadow.state_hash()

    def diff(self) -> dict[str, Any]:
        return self.shadow.diff()

    def close(self) -> None:
        try:
            self._exit.__exit__(None, None, None)
        finally:
            self.shadow.close()


class McpConnector:
    """Opens MCP client sessions from synchronous code (an anyio blocking portal on a thread).

    ``transport="inproc"``: one in-process ``build_mcp_server`` per (env, initial state); each
    rollout connects a new client, so it gets a fresh runtime session. ``transport="stdio"``:
    each rollout starts ``python -m envfactory serve --transport stdio`` (one process, one state).
    """

    def __init__(self, transport: str = "inproc"):
        if transport not in ("inproc", "stdio"):
            raise ConfigError(f"unknown MCP transport {transport!r}; use 'inproc' or 'stdio'")
        import anyio.from_thread

        self.transport = transport
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._servers: dict[tuple[str, str], Any] = {}

    def open(self, env: Environment, initial_state: str = "template") -> McpBackend:
        from mcp import Client

        if self.transport == "inproc":
            from ..serve import ServeConfig, build_mcp_server

            key = (str(env.path or env.name), initial_state)
            server = self._servers.get(key)
            if server is None:
                cfg = ServeConfig()
                if initial_state and initial_state != "template":
                    p = Path(initial_state)
                    if not p.is_absolute():
                        if env.path is None:
                            raise ConfigError(
                                f"{env.name}: a relative initial state needs the environment's folder"
                            )
                        p = Path(env.path) / p
                    cfg = ServeConfig(initial_state=p)
                server = self._servers[key] = build_mcp_server(env, config=cfg)
            target: Any = server
        else:
            import os

            from mcp import StdioServerParameters

            if env.path is None:
                raise ConfigError(f"{env.name}: the stdio transport needs the environment's folder")
            folder = Path(env.path)
            args = [
                "-m",
                "envfactory",
                "serve",
                "--domain",
                env.spec.domain,
                "--env",
                env.name,
                "--transport",
                "stdio",
            ]
            if initial_state and initial_state != "template":
                p = Path(initial_state)
                args += ["--initial-state", str(p if p.is_absolute() else folder / p)]
            root = folder.parents[1]  # <root>/domains/<domain>/<env>
            target = StdioServerParameters(
                command=sys.executable,
                args=args,
                env={**os.environ, "ENVFACTORY_ROOT": str(root.parent)},
                cwd=str(root.parent),
            )
        cm = self.portal.wrap_async_context_manager(Client(target, mode="legacy", cache=None))
        client = cm.__enter__()
        return McpBackend(self, client, cm, InProcessBackend(env, initial_state), via=f"mcp-{self.transport}")

    def close(self) -> None:
        self._portal_cm.__exit__(None, None, None)

    def __enter__(self) -> McpConnector:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Trajectory:
    """One rollout: the conversation in OpenAI chat format, what the tools did, and its reward."""

    task: Task
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    calls: list[CallRecord]
    final_answer: str
    reward: RewardResult | None
    policy: str
    via: str
    attempts: int = 1
    user_turns: int = 0
    failure: str | None = None
    mcp_mismatches: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None and self.reward is not None and self.reward.reward == 1.0


def message_dict(m: ChatMessage) -> dict[str, Any]:
    """A message as an OpenAI chat message dict, with no empty optional keys."""
    out: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.role == "assistant" and m.tool_calls:
        out["tool_calls"] = [c.to_openai() for c in m.tool_calls]
    if m.role == "tool":
        out["tool_call_id"] = m.tool_call_id
    if m.role == "assistant" and m.weight is not None:
        out["weight"] = m.weight
    return out


def _writes(env: Environment, tool: str) -> bool:
    try:
        return env.spec.tool(tool).writes
    except KeyError:  # a tool the model made up
        return False


def _run_calls(
    task: Task,
    env: Environment,
    backend: ToolBackend,
    m: Any,
    n_call: int,
    attempt: int,
    history: list[ChatMessage],
    calls: list[CallRecord],
) -> int:
    """Give the assistant's tool calls their ids, run them on ``backend`` and record message,
    calls and results; returns the next call number."""
    ided = []
    for c in m.tool_calls:
        ided.append(
            ToolCall(
                id=call_id(task.task_id, n_call, attempt),
                name=c.name,
                arguments=c.arguments,
                raw_arguments=c.raw_arguments or json.dumps(c.arguments),
                parse_error=c.parse_error,
            )
        )
        n_call += 1
    said = ChatMessage.assistant(m.text or None, ided)
    said.weight = m.weight
    history.append(said)
    for c in ided:
        if c.parse_error:
            ok, res = (
                False,
                {"error": "invalid_argument", "message": f"{c.name}: {c.parse_error}"},
            )
        else:
            ok, res = backend.call(c.name, c.arguments)
        calls.append(
            CallRecord(
                tool=c.name,
                args=c.arguments,
                ok=ok,
                error=None if ok else res.get("error"),
                writes=ok and _writes(env, c.name),
            )
        )
        history.append(ChatMessage.tool(result_text(ok, res), c.id))
    return n_call


def run_rollout(
    task: Task,
    env: Environment,
    *,
    policy: Policy | None = None,
    backend: ToolBackend | None = None,
    user_model: ChatModel | None = None,
    seed: int = 0,
    attempt: int = 0,
) -> Trajectory:
    """One conversation for ``task`` on ``backend`` (default: a fresh in-process session). Never raises for
    a bad rollout: a model error, an exhausted turn limit or a wrong answer is recorded on the result."""
    policy = policy or OraclePolicy(seed=seed)
    own = backend is None
    backend = backend or InProcessBackend(env, task.initial_state)
    tools = build_tool_schemas(env, task.tools or None)
    system = build_system_prompt(task, env)
    user = UserSimulator(task, model=user_model, seed=seed + attempt)
    history: list[ChatMessage] = [ChatMessage.system(system)]
    calls: list[CallRecord] = []
    failure = None
    final = ""
    user_turns = 1
    episode = policy.begin(task, env, tools, attempt=attempt)
    try:
        history.append(ChatMessage.user(user.opening()))
        n_call = 0
        acts = 0
        while True:
            if acts >= task.turn_limit:
                failure = f"turn limit of {task.turn_limit} assistant messages reached"
                break
            try:
                m = episode.act(history)
            except ModelError as e:
                failure = f"model error: {e}"
                break
            if m is None:
                break
            acts += 1
            if m.tool_calls:
                n_call = _run_calls(task, env, backend, m, n_call, attempt, history, calls)
                continue
            text = m.text
            history.append(ChatMessage.assistant(text))
            final = text
            reply = user.reply(text)
            if reply is None:
                break
            history.append(ChatMessage.user(reply))
            user_turns += 1
        while len(history) > 2 and history[-1].role != "assistant":
            history.pop()  # the policy stopped on the user's turn: the record ends with the assistant
        reward = score_trajectory(
            task.reward,
            final_state_hash=backend.state_hash(),
            final_diff=backend.diff(),
            calls=list(calls),  # a copy typed as score_trajectory's (invariant) list
            final_answer=final,
        )
    finally:
        if own:
            backend.close()
    return Trajectory(
        task=task,
        system=system,
        messages=[message_dict(m) for m in history],
        tools=tools,
        calls=calls,
        final_answer=final,
        reward=reward,
        policy=policy.name,
        via=getattr(backend, "via", "in-process"),
        attempts=attempt + 1,
        user_turns=user_turns,
        failure=failure,
        mcp_mismatches=getattr(backend, "mismatches", 0),
        usage=dict(getattr(episode, "usage", {}) or {}),
    )


def run_task(
    task: Task,
    env: Environment,
    *,
    policy: Policy | None = None,
    connector: McpConnector | None = None,
    user_model: ChatModel | None = None,
    seed: int = 0,
) -> Trajectory:
    """Roll out ``task`` up to ``policy.attempts`` times; return the first full-reward rollout, else the last.

    ``connector``: run tool calls through MCP (``McpConnector``) instead of in process.
    """
    policy = policy or OraclePolicy(seed=seed)
    last: Trajectory | None = None
    for attempt in range(max(1, policy.attempts)):
        backend = connector.open(env, task.initial_state) if connector is not None else None
        try:
            tr = run_rollout(
                task, env, policy=policy, backend=backend, user_model=user_model, seed=seed, attempt=attempt
            )
        finally:
            if backend is not None:
                backend.close()
        if tr.mcp_mismatches and tr.failure is None:
            tr.failure = f"{tr.mcp_mismatches} MCP results differ from the in-process runtime"
        last = tr
        if tr.ok:
            return tr
    assert last is not None
    if last.failure is None:
        missing = last.reward.missing_facts if last.reward else []
        last.failure = (
            f"reward {last.reward.reward if last.reward else 0} after {last.attempts} attempt(s)"
            + (f"; missing facts: {missing}" if missing else "")
            + ("" if not last.reward or last.reward.state_match else "; final state differs from gold")
        )
    return last


def replay_calls(
    messages: list[dict[str, Any]],
    env: Environment,
    *,
    initial_state: str,
    reward_spec: Any,
    writes: Any = None,
) -> tuple[bool, float, list[str]]:
    """Run a record's tool calls on a fresh session; (every result equal to the record, reward, problems)."""

    spec = reward_spec if isinstance(reward_spec, RewardSpec) else RewardSpec.model_validate(reward_spec)
    problems: list[str] = []
    recorded = {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}
    final = ""
    calls: list[CallRecord] = []
    be = InProcessBackend(env, initial_state)
    try:
        for m in messages:
            if m.get("role") != "assistant":
                continue
            tcs = m.get("tool_calls") or []
            if not tcs:
                final = m.get("content") or ""
                continue
            for c in tcs:
                fn = c["function"]
                tc = ToolCall.from_raw(c["id"], fn["name"], fn.get("arguments"))
                if tc.parse_error:
                    ok, res = False, {"error": "invalid_argument", "message": f"{tc.name}: {tc.parse_error}"}
                else:
                    ok, res = be.call(tc.name, tc.arguments)
                calls.append(
                    CallRecord(
                        tool=tc.name,
                        args=tc.arguments,
                        ok=ok,
                        error=None if ok else res.get("error"),
                        writes=ok and _writes(env, tc.name),
                    )
                )
                text = result_text(ok, res)
                if recorded.get(c["id"]) != text:
                    problems.append(f"call {c['id']} ({tc.name}): replayed result differs from the record")
        r = score_trajectory(
            spec,
            final_state_hash=be.state_hash(),
            final_diff=be.diff(),
            calls=list(calls),  # a copy typed as score_trajectory's (invariant) list
            final_answer=final,
        )
    finally:
        be.close()
    if r.reward != 1.0:
        problems.append(f"replay reward {r.reward}")
    return (not problems), r.reward, problems
