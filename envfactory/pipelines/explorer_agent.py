"""The explorer agent over many environments: plan which documentation sections each one
reads, run the loop (``agent_loop``) per environment, and account for the cost.

- It reads the documentation section by section (``agent_prompts.build_sections``): each
  prompt carries the spec so far plus one section's operations and schemas.
- Structured output: the model is asked, with ``response_format={"type": "json_object"}``,
  for one JSON object matching ``EnvSpec.model_json_schema()`` (the schema is in the system
  prompt). We chose JSON mode over a ``submit_spec`` tool call because it is what every
  OpenAI-compatible server (``vllm serve`` included) supports, and a spec is one object, not
  an action. Replies are validated with pydantic; an invalid reply goes back to the model with
  the validation errors, at most ``max_validation_rounds`` times per step.
- Given the deterministic explorer's draft, the agent starts from it and the prompts ask for
  improvements. If the agent's result is worse (no valid spec, does not materialize, or fewer
  tools that pass the checks than the draft), the draft is returned and the fallback recorded.
- Every call is recorded in a ``UsageLedger``; the result reports calls, tokens and seconds.

Nothing the model writes is executed: a spec is data, interpreted by the trusted runtime.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..errors import ConfigError, ExploreError
from ..explore import explore
from ..explore.agent_prompts import DocSection, build_sections, system_prompt
from ..ingest import ApiDoc
from ..llm import CallRecord, ChatModel, ModelConfig, UsageLedger, UsageSummary, build_chat_model
from ..spec import EnvSpec
from .agent_loop import _WHOLE_DRAFT, EnvAgentOutcome, ExplorerAgentConfig, TranscriptEntry, _EnvRun

__all__ = [
    "AgentExploreResult",
    "EnvAgentOutcome",
    "ExplorerAgentConfig",
    "TranscriptEntry",
    "explore_with_agent",
    "run_explorer_agent",
]


class AgentExploreResult(BaseModel):
    """What the explorer agent produced and what it cost."""

    envs: list[EnvSpec]
    outcomes: list[EnvAgentOutcome]
    usage: UsageSummary
    calls: list[CallRecord] = Field(default_factory=list)
    seconds: float = 0.0  # wall time of the whole run, checks included
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def rounds(self) -> dict[str, int]:
        """Model calls per environment."""
        return {o.name: o.model_calls for o in self.outcomes}

    @property
    def fell_back(self) -> dict[str, bool]:
        return {o.name: o.fell_back for o in self.outcomes}

    @property
    def cost(self) -> dict[str, float | int]:
        """The build cost: model calls, tokens and seconds."""
        return {
            "calls": self.usage.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "total_tokens": self.usage.total_tokens,
            "model_seconds": round(self.usage.latency_total_s, 3),
            "seconds": round(self.seconds, 3),
        }


# --- planning: which sections each environment reads -------------------------------------------


def _env_name(title: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
    name = re.sub(r"_?(api|openapi|swagger|spec|specification)$", "", name).strip("_") or "api"
    return name if name[0].isalpha() else "api_" + name


def _plan(
    docs: Sequence[ApiDoc], draft: Sequence[EnvSpec] | None, config: ExplorerAgentConfig, warnings: list[str]
) -> list[tuple[str, EnvSpec | None, list[DocSection]]]:
    per_doc = [
        (doc, build_sections(doc, max_chars=config.section_chars, max_op_chars=config.operation_chars))
        for doc in docs
    ]
    if not draft:
        plan: list[tuple[str, EnvSpec | None, list[DocSection]]] = []
        seen: set[str] = set()
        for doc, sections in per_doc:
            if not sections:
                warnings.append(f"{doc.source}: documents no operations; no environment written")
                continue
            name, n = _env_name(doc.title), 2
            while name in seen:
                name, n = f"{_env_name(doc.title)}_{n}", n + 1
            seen.add(name)
            plan.append((name, None, sections))
        return plan
    assigned: list[list[DocSection]] = [[] for _ in draft]
    for doc, sections in per_doc:
        for sec in sections:
            keys = set(sec.operation_keys)
            scores = []
            for env in draft:
                covered = sum(1 for t in env.tools if t.source in keys)  # the explorer's source is op.key
                mentioned = sum(1 for x in env.excluded if x.split(": ", 1)[0] in keys)
                scores.append(2 * covered + mentioned)
            best = max(range(len(draft)), key=lambda i: (scores[i], -i))
            if scores[best] == 0:
                same_doc = [i for i, env in enumerate(draft) if doc.source in env.sources]
                best = same_doc[0] if same_doc else 0
            assigned[best].append(sec)
    # A draft environment no section maps to still gets one round of improvement.
    return [(env.name, env, secs or [_WHOLE_DRAFT]) for env, secs in zip(draft, assigned)]


# --- public API --------------------------------------------------------------------------------


def run_explorer_agent(
    docs: Sequence[ApiDoc] | ApiDoc,
    *,
    domain: str,
    model: ChatModel,
    config: ExplorerAgentConfig | None = None,
    draft: Sequence[EnvSpec] | None = None,
) -> AgentExploreResult:
    """Explore API documentation with a model: draft, validate, check and repair EnvSpecs.

    Without ``draft`` the agent writes one environment per document, reading it section by
    section. With ``draft`` (the deterministic explorer's ``ExploreResult.envs``) it improves
    each draft environment with the sections whose operations it covers, and falls back to
    the draft when its own result is worse. A failed environment is recorded in the result's
    outcomes and transcript, not raised; only ``ConfigError`` (bad arguments) is.
    """
    config = config or ExplorerAgentConfig()
    docs = [docs] if isinstance(docs, ApiDoc) else list(docs)
    if not docs and not draft:
        raise ConfigError("run_explorer_agent needs documentation (docs) or a draft to improve")
    started = time.perf_counter()
    ledger = UsageLedger()
    warnings: list[str] = []
    system = system_prompt(json.dumps(EnvSpec.model_json_schema(), separators=(",", ":")))
    budget = [config.max_model_calls if config.max_model_calls is not None else 1 << 62]
    envs: list[EnvSpec] = []
    outcomes: list[EnvAgentOutcome] = []
    transcript: list[TranscriptEntry] = []
    for name, env_draft, sections in _plan(docs, draft, config, warnings):
        skipped = max(0, len(sections) - config.max_sections)
        if skipped:
            warnings.append(
                f"{name}: read the first {config.max_sections} of {len(sections)} documentation sections"
            )
        run = _EnvRun(
            name=name,
            domain=domain,
            sections=sections[: config.max_sections],
            draft=env_draft,
            model=model,
            config=config,
            ledger=ledger,
            system=system,
            budget=budget,
        )
        spec, outcome, entries = run.run()
        outcome.sections_skipped = skipped
        outcomes.append(outcome)
        transcript.extend(entries)
        if spec is not None:
            envs.append(spec)
    return AgentExploreResult(
        envs=envs,
        outcomes=outcomes,
        usage=ledger.summary(),
        calls=ledger.records,
        seconds=time.perf_counter() - started,
        transcript=transcript,
        warnings=warnings,
    )


def explore_with_agent(
    docs: Sequence[ApiDoc] | ApiDoc,
    *,
    domain: str,
    model_config: ModelConfig | Mapping[str, Any],
    config: ExplorerAgentConfig | None = None,
    on_result: Callable[[AgentExploreResult], None] | None = None,
) -> list[EnvSpec]:
    """``envfactory build --explorer agent``: the deterministic explorer drafts, the agent
    improves. ``model_config`` is a ``ModelConfig`` (or its fields: ``model``, ``base_url`` ...);
    ``on_result`` receives the full result (cost, fallbacks, transcript) for reporting."""
    try:
        mc = (
            model_config
            if isinstance(model_config, ModelConfig)
            else ModelConfig.model_validate(dict(model_config))
        )
    except ValidationError as e:
        raise ConfigError(f"invalid model settings for the agent explorer: {e.errors()[0]['msg']}") from e
    if mc.backend == "none":
        raise ConfigError(
            "the agent explorer needs a model: pass --model NAME --base-url URL (an OpenAI-compatible endpoint)"
        )
    config = config or ExplorerAgentConfig()
    docs = [docs] if isinstance(docs, ApiDoc) else list(docs)
    try:
        draft = explore(docs, domain=domain, seed=config.seed).envs
    except ExploreError:
        draft = []  # the agent can still write environments from the documentation alone
    model = build_chat_model(mc)
    try:
        result = run_explorer_agent(docs, domain=domain, model=model, config=config, draft=draft or None)
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
    if on_result is not None:
        on_result(result)
    return result.envs
