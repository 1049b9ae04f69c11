"""TRL adapter: envfactory tasks in ``GRPOTrainer``'s environment loop, and a reward for ``reward_funcs``.

TRL (>= 1.x) runs multi-turn tool calling with ``environment_factory``: a callable (or a dict of
them, selected by the dataset's ``environment`` column) that returns an object whose public
methods are the tools (their JSON Schemas come from type hints and Google-style docstrings via
``transformers.utils.get_json_schema``) and whose ``reset(**row)`` starts an episode. The
trainer generates, runs the tool calls the model makes on that object, feeds the results back,
and stops when the model answers without a tool call. Reward functions get ``completions`` and
``environments`` (the instances), so the reward can read the episode's final state::

    from trl import GRPOConfig, GRPOTrainer
    from envfactory.rl.trl import environment_factories, envfactory_reward, trl_dataset

    rows = envfactory.rl.load_rows("trajectories/travel")
    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=trl_dataset(rows),
                          environment_factory=environment_factories(rows, source="trajectories/travel"),
                          reward_funcs=[envfactory_reward])

TRL's loop has no user turn, so ``trl_dataset``'s prompt is the whole request at once: the goal
in the user's words and every fact the user holds (the ones the simulated user would reveal when
asked). ``envfactory_reward`` also scores a completion without an environment instance (plain
``GRPOTrainer(tools=...)`` or offline scoring): it replays the completion's tool calls on a fresh
session from the row's columns. ``trl``, ``transformers`` and ``datasets`` are imported lazily.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from ..errors import ConfigError
from ..runtime import Environment
from ..synth.policy import build_tool_schemas
from ..synth.user_sim import fact_name
from ..text import format_plain
from .env import ToolEnv, parse_assistant_message
from .source import EnvironmentSource, task_from_row

__all__ = [
    "TRLEnvironment",
    "environment_class",
    "environment_factories",
    "envfactory_reward",
    "reward_function",
    "trl_dataset",
    "trl_prompt",
]

_RESERVED = {"reset", "get_reward"}
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def _hint(schema: Mapping[str, Any]) -> Any:
    """A Python type hint that ``get_json_schema`` turns back into (about) this JSON Schema."""
    if (
        isinstance(schema.get("enum"), list)
        and schema["enum"]
        and all(isinstance(v, (str, int, float, bool)) for v in schema["enum"])
    ):
        return Literal[tuple(schema["enum"])]  # type: ignore[valid-type]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t == "array":
        return list[_hint(schema.get("items") or {})]  # type: ignore[misc]
    return _SCALARS.get(str(t), str)


def _one_line(text: str) -> str:
    return " ".join(str(text or "").split()).replace(":", " -") or "a value"


def _tool_method(schema: dict[str, Any]) -> Callable[..., str]:
    """A method named for the tool, with a signature and a docstring TRL and transformers can read."""
    fn = schema["function"]
    name = fn["name"]
    params = fn.get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    required = set(params.get("required") or [])

    def tool(self: TRLEnvironment, **kwargs: Any) -> str:
        return self._call(name, kwargs)

    sig_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [_one_line(fn.get("description") or name.replace("_", " ")), "", "Args:"]
    for pname in sorted(props, key=lambda p: (p not in required, list(props).index(p))):
        hint = _hint(props[pname])
        if pname in required:
            sig_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint))
        else:
            hint = hint | None
            sig_params.append(
                inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint, default=None)
            )
        annotations[pname] = hint
        lines.append(f"    {pname}: {_one_line(props[pname].get('description') or pname.replace('_', ' '))}")
    if not props:
        lines = lines[:1]
    annotations["return"] = str
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = "\n".join(lines)
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(sig_params, return_annotation=str)  # type: ignore[attr-defined]
    return tool


class TRLEnvironment:
    """One rollout's environment for TRL. Subclassed per envfactory environment by ``environment_class``."""

    environment: Environment
    source: EnvironmentSource | None = None

    def __init__(self) -> None:
        self.episode: ToolEnv | None = None

    def reset(self, **row: Any) -> str | None:
        """Start an episode for the dataset row TRL passes (its columns as keyword arguments)."""
        self.episode = ToolEnv(task_from_row(row), self.environment)
        self.episode.reset()
        return None  # the prompt column already holds the request

    def _call(self, name: str, kwargs: dict[str, Any]) -> str:
        if self.episode is None:
            raise ConfigError("reset() was not called before a tool call")
        args = {k: v for k, v in kwargs.items() if v is not None}  # optional parameters the model left out
        return str(self.episode.call_tool(name, args)["content"])

    def _score(self, final_answer: str) -> Any:
        assert self.episode is not None
        self.episode.final_answer = final_answer
        return self.episode.score()


def environment_class(environment: Environment, tools: list[str] | None = None) -> type[TRLEnvironment]:
    """A ``TRLEnvironment`` subclass whose public methods are ``environment``'s tools (or ``tools``)."""
    methods: dict[str, Any] = {"environment": environment}
    for schema in build_tool_schemas(environment, tools):
        name = schema["function"]["name"]
        if name in _RESERVED or name.startswith("_"):
            raise ConfigError(f"{environment.name}: a tool named {name!r} cannot be a TRL environment method")
        methods[name] = _tool_method(schema)
    return type(f"EnvfactoryEnv_{environment.name}", (TRLEnvironment,), methods)


def environment_factories(
    rows: Iterable[Mapping[str, Any]],
    *,
    source: str | os.PathLike | EnvironmentSource | None = None,
    tools: Mapping[str, list[str]] | None = None,
) -> dict[str, Callable[[], Any]]:
    """``environment_factory`` for ``GRPOTrainer``: one factory per ``env_id`` the rows use (the
    dataset's ``environment`` column, as ``trl_dataset`` writes it, selects one).

    ``tools``: env_id -> the tools to offer (default every tool; TRL renders one tool list per
    environment into each prompt, so a large environment makes long prompts)."""
    src = source if isinstance(source, EnvironmentSource) else EnvironmentSource(source)
    out: dict[str, Callable[[], Any]] = {}
    for r in rows:
        env_id = str(r.get("env_id") or f"{r['domain']}/{r['env']}")
        if env_id not in out:
            out[env_id] = environment_class(src.get(env_id), (tools or {}).get(env_id))
    return out


def trl_prompt(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """System prompt + one user message stating the whole goal and every fact the user holds."""
    task = task_from_row(row)
    prompt = row.get("prompt") or []
    system = next((m["content"] for m in prompt if isinstance(m, Mapping) and m.get("role") == "system"), "")
    facts = {**task.persona.known_facts, **task.persona.hidden_facts}
    text = task.goal
    if facts:
        text += "\n" + "; ".join(f"The {fact_name(k)} is {format_plain(v)}" for k, v in facts.items()) + "."
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]


def trl_dataset(rows: Iterable[Mapping[str, Any]]) -> Any:
    """A ``datasets.Dataset`` for ``GRPOTrainer``: ``prompt`` (``trl_prompt``), ``environment``
    (the env_id), and the row's columns ``reset`` and the reward need, JSON ones as strings."""
    import datasets

    recs = []
    for r in rows:
        recs.append(
            {
                "prompt": trl_prompt(r),
                "environment": str(r.get("env_id") or f"{r['domain']}/{r['env']}"),
                **{
                    k: r.get(k)
                    for k in (
                        "id",
                        "domain",
                        "env",
                        "env_id",
                        "initial_state",
                        "initial_state_hash",
                        "turn_limit",
                        "seed",
                    )
                },
                **{k: json.dumps(r.get(k), sort_keys=True) for k in ("reward_spec", "user", "tools")},
            }
        )
    return datasets.Dataset.from_list(recs)


def _final_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    texts = [
        parse_assistant_message(m)[0]
        for m in completion or []
        if isinstance(m, Mapping) and m.get("role") == "assistant"
    ]
    return texts[-1] if texts else ""


def _replay(row: dict[str, Any], completion: Any, src: EnvironmentSource) -> Any:
    task = task_from_row(row)
    env = ToolEnv(task, src.get(f"{task.domain}/{task.env}"))
    env.reset()
    try:
        for m in completion if isinstance(completion, list) else []:
            if isinstance(m, Mapping) and m.get("role") == "assistant":
                _, calls = parse_assistant_message(m)
                for i, c in enumerate(calls):
                    env.call_tool(c.name, c, f"replay_{i}")
        env.final_answer = _final_text(completion)
        return env.score()
    finally:
        env.close()


def reward_function(
    source: str | os.PathLike | EnvironmentSource | None = None, *, shaped: bool = False
) -> Callable[..., list[float]]:
    """A ``reward_funcs`` entry: the envfactory reward of each completion (``shaped``: the partial score).

    With TRL's ``environments`` (``TRLEnvironment`` instances) it scores their sessions; else it
    replays the completion's tool calls from the row's columns (environments from ``source``).
    """
    holder: dict[str, EnvironmentSource] = {}
    if isinstance(source, EnvironmentSource):
        holder["src"] = source

    def envfactory_reward(
        prompts: list[Any], completions: list[Any], environments: list[Any] | None = None, **columns: Any
    ) -> list[float]:
        out: list[float] = []
        parts = {"state": 0.0, "facts": 0.0, "trace": 0.0}
        for i, completion in enumerate(completions):
            envi = environments[i] if environments is not None and i < len(environments) else None
            if isinstance(envi, TRLEnvironment) and envi.episode is not None:
                res = envi._score(_final_text(completion))
            else:
                if "src" not in holder:  # made on first use: a trainer with environments never needs it
                    holder["src"] = EnvironmentSource(source)  # type: ignore[arg-type]
                row = {k: v[i] for k, v in columns.items() if isinstance(v, list) and i < len(v)}
                res = _replay(row, completion, holder["src"])
            out.append(float(res.partial if shaped else res.reward))
            for k in parts:
                parts[k] += getattr(res, k) / max(1, len(completions))
        log = columns.get("log_metric")
        if callable(log):
            for k, v in parts.items():
                log(f"envfactory/{k}", v)
        return out

    return envfactory_reward


envfactory_reward = reward_function()
