"""Trajectory records: SFT rows (OpenAI chat format), ShareGPT rows (LlamaFactory), RL fields, splits, replay.

One row per kept trajectory, the same columns in every split:

- ``messages``: the conversation in OpenAI chat format (``system``, ``user``, ``assistant`` with
  ``tool_calls`` ``{"id", "type": "function", "function": {"name", "arguments": JSON string}}``,
  ``tool`` with ``tool_call_id``), what HF chat templates and TRL's SFTTrainer accept;
- ``tools``: the environment's tools as OpenAI function declarations (JSON Schemas);
- RL fields (config ``rl`` adds ``prompt``, system + first user message, and ``completion``, the
  rest; config ``default`` has no ``prompt``, so TRL's SFTTrainer reads its rows as conversations): ``env_id`` (``domain/env``, what
  ``envfactory serve --domain D --env E`` serves), ``initial_state`` (``template`` or a state
  file relative to the env folder) and its hash, ``reward_spec`` (``envfactory.reward.RewardSpec``),
  ``turn_limit``, and ``user`` (persona, goal and sub-goals for ``UserSimulator``);
- provenance: domain, env, source docs, task id, seed, difficulty, checks passed, the policy
  (``oracle`` or ``teacher:<model>``), attempts, transport.

Splits (``assign_split``): ``eval`` holds out whole APIs, chosen by a hash (``eval_envs``): the
environments built from one document (or sharing one: a merged pair shares its tables) are held out
together, so no table in eval appears in sft or rl; the other tasks go to ``rl`` or ``sft`` by a hash
of the task id (``rl_fraction``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..runtime import Environment
from ..spec import Task
from .rollout import Trajectory, replay_calls

__all__ = [
    "SPLITS",
    "EVAL_SALT",
    "env_id_of",
    "eval_envs",
    "api_groups",
    "assign_split",
    "build_row",
    "build_rl_row",
    "build_sharegpt_row",
    "replay_row",
    "task_meta",
]

SPLITS = ("sft", "rl", "eval")
EVAL_SALT = "envfactory-eval-v1:"
_RL_SALT = "envfactory-rl-v1:"


def env_id_of(domain: str, env: str) -> str:
    return f"{domain}/{env}"


def _unit(salt: str, key: str) -> float:
    """A stable number in [0, 1) for a key (the first 8 bytes of sha256(salt + key))."""
    return int.from_bytes(hashlib.sha256((salt + key).encode()).digest()[:8], "big") / 2**64


def api_groups(sources: dict[str, list[str]]) -> dict[str, str]:
    """Each environment's API: environments that share a source document are one API (one document
    split into several environments, or two documents merged into one), named by the API's first
    document in sorted order. An environment with no sources is its own API."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for env, docs in sources.items():
        nodes = [f"doc:{d}" for d in docs if d != "hand-written"] or [f"env:{env}"]
        for d in nodes[1:]:
            parent[find(d)] = find(nodes[0])
        parent[find(f"env:{env}")] = find(nodes[0])
    members: dict[str, list[str]] = {}
    for x in list(parent):
        members.setdefault(find(x), []).append(x)
    # named by its first document ('doc:' sorts before 'env:'), or the environment itself
    name = {root: min(ms).split(":", 1)[1] for root, ms in members.items()}
    return {env: name[find(f"env:{env}")] for env in sources}


def eval_envs(
    env_ids: list[str], *, fraction: float = 0.2, sources: dict[str, list[str]] | None = None
) -> set[str]:
    """Environments held out for eval, whole APIs at a time: an API (``api_groups`` of ``sources``,
    env id -> its source documents; without it each environment is its own API) is held out when
    ``_unit(EVAL_SALT, api)`` is below ``fraction``. An API's side never depends on which others
    exist, so adding a domain does not move anyone. With two or more APIs at least one is held out
    (the lowest hash) and at least one stays in training (the highest); with one, nothing is."""
    ids = sorted(set(env_ids))
    api = api_groups({e: (sources or {}).get(e, []) for e in ids})
    apis = sorted(set(api.values()))
    if len(apis) < 2 or fraction <= 0:
        return set()
    ranked = sorted(apis, key=lambda a: _unit(EVAL_SALT, a))
    held = {a for a in apis if _unit(EVAL_SALT, a) < fraction}
    if not held:
        held = {ranked[0]}
    if len(held) == len(apis):
        held.discard(ranked[-1])
    return {e for e in ids if api[e] in held}


def assign_split(task: Task, held_out: set[str], *, rl_fraction: float = 0.25) -> str:
    if env_id_of(task.domain, task.env) in held_out:
        return "eval"
    return "rl" if _unit(_RL_SALT, task.task_id) < rl_fraction else "sft"


def task_meta(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "domain": task.domain,
        "env": task.env,
        "env_id": env_id_of(task.domain, task.env),
        "source_docs": list(task.source_docs),
        "seed": task.seed,
        "difficulty": task.difficulty.level,
        "predicted_pass_rate": float(task.difficulty.predicted_pass_rate),
        "checks_passed": list(task.checks_passed),
    }


def build_row(tr: Trajectory) -> dict[str, Any]:
    """The dataset row for a kept trajectory (the same columns in every split)."""
    t = tr.task
    return {
        "id": t.task_id,
        "messages": tr.messages,
        "tools": tr.tools,
        **task_meta(t),
        "initial_state": t.initial_state,
        "initial_state_hash": t.reward.initial_state_hash,
        "reward_spec": t.reward.model_dump(mode="json"),
        "turn_limit": t.turn_limit,
        "user": {
            "persona": t.persona.model_dump(mode="json"),
            "goal": t.goal,
            "intent": t.intent,
            "subgoals": [sg.model_dump(mode="json") for sg in t.subgoals],
        },
        "policy": tr.policy,
        "attempts": tr.attempts,
        "via": tr.via,
        "num_turns": tr.user_turns,
        "num_tool_calls": len(tr.calls),
        "reward": float(tr.reward.reward if tr.reward else 0.0),
    }


def build_rl_row(row: dict[str, Any]) -> dict[str, Any]:
    """The RL config's form of a row: ``prompt`` (system + first user message) and ``completion``
    (the rest, the verified reference), TRL's prompt-completion format, in place of ``messages``.
    SFT rows (config ``default``) have no ``prompt``, so TRL reads them as conversations."""
    msgs = row["messages"]
    first_user = next(i for i, m in enumerate(msgs) if m["role"] == "user")
    rest = {k: v for k, v in row.items() if k != "messages"}  # TRL refuses messages beside prompt/completion
    return {**rest, "prompt": msgs[: first_user + 1], "completion": msgs[first_user + 1 :]}


def build_sharegpt_row(row: dict[str, Any]) -> dict[str, Any]:
    """The LlamaFactory ShareGPT form of a row: ``conversations`` (human / gpt / function_call /
    observation, alternating as LlamaFactory requires), ``system``, ``tools`` as a JSON string."""
    conv: list[dict[str, str]] = []
    system = ""
    pending_obs: list[str] = []

    def flush() -> None:
        if pending_obs:
            conv.append(
                {
                    "from": "observation",
                    "value": pending_obs[0] if len(pending_obs) == 1 else json.dumps(pending_obs),
                }
            )
            pending_obs.clear()

    for m in row["messages"]:
        role = m["role"]
        if role == "tool":
            pending_obs.append(m["content"])
            continue
        flush()
        if role == "system":
            system = m["content"]
        elif role == "user":
            conv.append({"from": "human", "value": m["content"]})
        elif m.get("tool_calls"):
            calls = [
                {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")}
                for c in m["tool_calls"]
            ]
            conv.append(
                {
                    "from": "function_call",
                    "value": json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False),
                }
            )
        else:
            conv.append({"from": "gpt", "value": m["content"]})
    flush()
    tools = [t["function"] for t in row["tools"]]
    keep = (
        "id",
        "task_id",
        "domain",
        "env",
        "env_id",
        "source_docs",
        "seed",
        "difficulty",
        "predicted_pass_rate",
        "checks_passed",
        "policy",
        "attempts",
        "num_turns",
        "num_tool_calls",
    )
    return {
        "conversations": conv,
        "system": system,
        "tools": json.dumps(tools, ensure_ascii=False),
        **{k: row[k] for k in keep},
    }


def replay_row(row: dict[str, Any], env: Environment) -> tuple[bool, float]:
    """Execute a row's tool calls on a fresh session from its initial state.

    ``ok`` is True when every call returns exactly the recorded tool result and the run earns
    reward 1 (final state equals the gold state, the final answer states every required fact).
    """
    ok, reward, _ = replay_calls(
        row["messages"],
        env,
        initial_state=row.get("initial_state") or "template",
        reward_spec=row["reward_spec"],
    )
    return ok, reward
