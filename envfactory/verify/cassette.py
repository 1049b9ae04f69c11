"""L3: seeded multi-step rollouts recorded as cassettes and replayed.

A cassette holds a few seeded random call sequences (mostly valid calls from ``valid_args``
on the evolving state, some invalid ones), each call's response and the state hash after
each step. Replay runs every sequence on fresh sessions of the environment under test and
requires identical responses and hashes at every step, and identical results from two
independent sessions run side by side (isolation and determinism).

Documentation examples (``doc_examples``: tool, args, response JSON Schema) are replayed on
a fresh session and their responses validated against the schema.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..spec import EnvSpec, ToolKind, spec_digest
from .args import valid_args
from .schemas import schema_validator
from .smoke import ToolCheck, malformed_calls, tool_rng

__all__ = [
    "Cassette",
    "record_cassette",
    "save_cassette",
    "load_cassette",
    "replay_cassette",
    "replay_cassettes",
    "check_doc_examples",
    "CASSETTE_VERSION",
]

CASSETTE_VERSION = 1
_INLINE = 1500  # responses longer than this are stored as a digest


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _store(resp: dict[str, Any]) -> Any:
    text = _canon(resp)
    if len(text) <= _INLINE:
        return resp
    return {"sha256": hashlib.sha256(text.encode()).hexdigest()}


def _same(stored: Any, resp: dict[str, Any]) -> bool:
    if isinstance(stored, dict) and set(stored) == {"sha256"}:
        return hashlib.sha256(_canon(resp).encode()).hexdigest() == stored["sha256"]
    return _canon(stored) == _canon(resp)


@dataclass
class Cassette:
    env: str
    spec_digest: str
    seed: int
    initial_hash: str
    sequences: list[list[dict[str, Any]]] = field(default_factory=list)
    version: int = CASSETTE_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "env": self.env,
            "spec_digest": self.spec_digest,
            "seed": self.seed,
            "initial_hash": self.initial_hash,
            "sequences": self.sequences,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cassette:
        return cls(
            env=d["env"],
            spec_digest=d["spec_digest"],
            seed=d["seed"],
            initial_hash=d["initial_hash"],
            sequences=d["sequences"],
            version=d.get("version", CASSETTE_VERSION),
        )


class _Recording:
    """A session whose successful calls are remembered (tool, args, result, hash after)."""

    def __init__(self, session: Any):
        self._s = session
        self.calls: list[tuple[str, dict[str, Any], Any, str]] = []

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Any:
        out = self._s.call(tool, args)
        self.calls.append((tool, dict(args or {}), out, self._s.state_hash()))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)


def record_cassette(
    env: Any, *, seed: int = 0, sequences: int = 5, steps: int = 20, tools: list[str] | None = None
) -> Cassette:
    """Record ``sequences`` seeded random call sequences of ``steps`` calls on fresh sessions."""
    spec: EnvSpec = env.spec
    pool = [t for t in spec.tools if tools is None or t.name in tools]
    with env.new_session() as s0:
        initial = s0.state_hash()
    cas = Cassette(env=spec.name, spec_digest=spec_digest(spec), seed=seed, initial_hash=initial)
    for i in range(sequences):
        rng = tool_rng(seed, spec.name, "L3", i)
        seq: list[dict[str, Any]] = []
        touched: dict[str, list[Any]] = {}  # entity -> keys written in this sequence
        attempts = 0
        with env.new_session() as s:
            while len(seq) < steps and pool and attempts < steps * 10:
                attempts += 1
                # writes twice as likely: they make the sequences stateful
                weights = [2 if t.writes else 1 for t in pool]
                tool = rng.choices(pool, weights)[0]
                rec = _Recording(s)
                args = valid_args(rec, spec, tool, rng)
                # calls that prepared the state (a row nothing references, for a delete) are steps too
                seq += [
                    {"tool": t, "args": a, "response": _store({"ok": True, "result": out}), "hash": h}
                    for t, a, out, h in rec.calls
                ]
                if args is None:
                    continue
                key = tool.key_param
                if (
                    key is not None
                    and tool.kind != ToolKind.create
                    and touched.get(tool.entity)
                    and rng.random() < 0.5
                ):
                    # revisit a row this sequence wrote: reads after writes, actions twice
                    args = {**args, key.name: rng.choice(touched[tool.entity])}
                if rng.random() < 0.15:
                    bad = malformed_calls(tool, args)
                    if tool.key_param is not None and tool.kind != ToolKind.create:
                        bad.append(("missing key", {**args, tool.key_param.name: "ZZ_MISSING_0000"}, None))
                    args = rng.choice(bad)[1]
                resp = s.try_call(tool.name, args)
                if resp["ok"] and tool.writes:
                    ent = spec.entity(tool.entity)
                    k = resp["result"].get(ent.primary_key) if isinstance(resp["result"], dict) else None
                    if k is not None and tool.kind != ToolKind.delete:
                        touched.setdefault(tool.entity, []).append(k)
                seq.append(
                    {"tool": tool.name, "args": args, "response": _store(resp), "hash": s.state_hash()}
                )
        cas.sequences.append(seq)
    return cas


def cassette_path(cassettes_dir: str | os.PathLike, env_name: str) -> Path:
    return Path(cassettes_dir) / f"{env_name}.json"


def save_cassette(cas: Cassette, cassettes_dir: str | os.PathLike) -> Path:
    p = cassette_path(cassettes_dir, cas.env)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(cas.to_dict(), indent=1, sort_keys=False, default=str) + "\n", encoding="utf-8")
    return p


def load_cassette(path: str | os.PathLike) -> Cassette:
    return Cassette.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def replay_cassette(env: Any, cas: Cassette) -> list[ToolCheck]:
    """Replay ``cas`` on ``env``: one ToolCheck per tool seen (level L3), failing at the first mismatch."""
    fails: dict[str, str] = {}
    seen: list[str] = []
    with env.new_session() as s0:
        if s0.state_hash() != cas.initial_hash:
            return [ToolCheck("*", False, "L3", "the initial state differs from the recorded one")]
    for i, seq in enumerate(cas.sequences):
        a, b = env.new_session(), env.new_session()
        try:
            for j, step in enumerate(seq):
                tool = step["tool"]
                if tool not in seen:
                    seen.append(tool)
                ra = a.try_call(tool, step["args"])
                rb = b.try_call(tool, step["args"])
                ha, hb = a.state_hash(), b.state_hash()
                where = f"sequence {i} step {j} ({tool} {json.dumps(step['args'], default=str)[:120]})"
                if _canon(ra) != _canon(rb) or ha != hb:
                    fails.setdefault(tool, f"{where}: two independent sessions disagree")
                    break
                if not _same(step["response"], ra):
                    got = _canon(ra)[:160]
                    fails.setdefault(tool, f"{where}: response differs from the recording: {got}")
                    break
                if ha != step["hash"]:
                    fails.setdefault(tool, f"{where}: state hash differs from the recording")
                    break
        finally:
            a.close()
            b.close()
    return [ToolCheck(t, t not in fails, "L3", fails.get(t, "ok")) for t in seen]


def replay_cassettes(env: Any, cassettes_dir: str | os.PathLike) -> list[ToolCheck]:
    """Replay the cassette of ``env`` under ``cassettes_dir`` (a failing ToolCheck '*' if none or stale)."""
    p = cassette_path(cassettes_dir, env.spec.name)
    if not p.is_file():
        return [ToolCheck("*", False, "L3", f"no cassette at {p}; record one (envfactory verify --record)")]
    cas = load_cassette(p)
    return replay_cassette(env, cas)


def check_doc_examples(
    env: Any, doc_examples: list[tuple[str, dict[str, Any], dict[str, Any] | None]]
) -> list[ToolCheck]:
    """Replay documentation examples on fresh sessions; validate each response against its schema."""
    out = []
    for tool, args, schema in doc_examples or []:
        with env.new_session() as s:
            r = s.try_call(tool, args)
        if not r["ok"]:
            out.append(
                ToolCheck(
                    tool,
                    False,
                    "L3",
                    f"documentation example {json.dumps(args)[:120]} failed: {r['message']}",
                )
            )
            continue
        if schema:
            err = next(iter(schema_validator(schema).iter_errors(r["result"])), None)
            if err is not None:
                out.append(
                    ToolCheck(
                        tool,
                        False,
                        "L3",
                        f"documentation example response does not match: {err.message[:160]}",
                    )
                )
                continue
        out.append(ToolCheck(tool, True, "L3", "ok"))
    return out
