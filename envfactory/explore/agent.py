"""The explorer agent: a langgraph loop in which a model drafts, repairs and improves EnvSpecs.

For each environment the graph runs

    start → ask → validate ─┬─ invalid, rounds left ──────────────→ ask (errors sent back)
                            ├─ section step done ─→ advance ─┬────→ ask (next section)
                            │                                └────→ check
                            └─ repair step done ────────────────→ check
    ask ── model error or call budget spent ──────────────────→ check (no more calls)
    check ─┬─ failures, repair rounds left ─→ ask (failures sent back)
           └─ otherwise ───────────────────→ finish (the agent's spec or the draft)

- It reads the documentation section by section (``agent_prompts.build_sections``): each
  prompt carries the spec so far plus one section's operations and schemas.
- Structured output: the model is asked, with ``response_format={"type": "json_object"}``,
  for one JSON object matching ``EnvSpec.model_json_schema()`` (the schema is in the system
  prompt). We chose JSON mode over a ``submit_spec`` tool call because it is what every
  OpenAI-compatible server (``vllm serve`` included) supports, and a spec is one object, not
  an action. Replies are validated with pydantic; an invalid reply goes back to the model with
  the validation errors, at most ``max_validation_rounds`` times per step.
- ``check`` materializes the spec, runs ``envfactory.verify.smoke_check`` on it and, when
  ``verify`` is on and importable, ``verify_and_repair``; failures go back for at most
  ``max_repair_rounds`` repair rounds.
- Given the deterministic explorer's draft, the agent starts from it and the prompts ask for
  improvements. If the agent's result is worse (no valid spec, does not materialize, or fewer
  tools that pass the checks than the draft), the draft is returned and the fallback recorded.
- Every call is recorded in a ``UsageLedger``; the result reports calls, tokens and seconds.

Nothing the model writes is executed: a spec is data, interpreted by the trusted runtime.
``langgraph`` is imported lazily, here only.
"""

from __future__ import annotations

import json
import operator
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envfactory.errors import ConfigError, ExploreError, ModelError
from envfactory.explore.agent_prompts import (
    DocSection,
    build_sections,
    invalid_reply_prompt,
    parse_reply,
    repair_prompt,
    section_prompt,
    spec_json,
    system_prompt,
)
from envfactory.ingest.model import ApiDoc
from envfactory.llm import CallRecord, ChatModel, ModelConfig, UsageLedger, UsageSummary, build_chat_model
from envfactory.spec import EnvSpec

__all__ = [
    "AgentExploreResult",
    "EnvAgentOutcome",
    "ExplorerAgentConfig",
    "TranscriptEntry",
    "explore_with_agent",
    "run_explorer_agent",
]

_MAX_FAILURE_CHARS = 600


class ExplorerAgentConfig(BaseModel):
    """Settings of the explorer agent (bounds on rounds, prompt sizes, sampling)."""

    model_config = ConfigDict(extra="forbid")

    max_validation_rounds: int = Field(default=2, ge=0, le=10, description="Invalid replies sent back per step.")
    max_repair_rounds: int = Field(default=2, ge=0, le=10, description="Rounds of check failures sent back per env.")
    max_sections: int = Field(default=24, ge=1, description="Sections read per environment; the rest are skipped.")
    section_chars: int = Field(default=12000, ge=200, description="Character budget of one section's operations.")
    operation_chars: int = Field(default=3000, ge=200, description="Character budget of one operation.")
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    json_mode: bool = Field(default=True, description='Send response_format={"type": "json_object"}.')
    verify: bool = Field(default=True, description="Also run verify_and_repair when envfactory.verify has it.")
    max_model_calls: int | None = Field(default=None, ge=1, description="Budget of model calls for the whole run.")
    seed: int = 0


class TranscriptEntry(BaseModel):
    """One validation or repair exchange, or a decision, in the agent's run."""

    env: str
    step: str
    kind: Literal["invalid_reply", "repair_request", "accepted", "gave_up", "model_error", "budget_exhausted", "unresolved", "fallback"]
    message: str


class EnvAgentOutcome(BaseModel):
    """How one environment went: rounds, checks and whether the draft was kept."""

    name: str
    model_calls: int = 0
    sections_read: int = 0
    sections_skipped: int = 0
    validation_rounds: int = 0  # invalid replies sent back with their errors
    repair_rounds: int = 0  # check failures sent back
    fell_back: bool = False
    fallback_reason: str | None = None
    failing_tools: list[str] = Field(default_factory=list)  # still failing checks after the repair rounds
    passing_tools: int = 0  # tools of the agent's spec passing the checks (0 when the draft was kept)
    ok: bool = False  # an environment came out (agent's or draft)


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


# --- checks -----------------------------------------------------------------------------------


def _load_verifiers() -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
    """``(smoke_check, verify_and_repair)`` from envfactory.verify, None for what is missing.
    An indirection so tests can substitute fakes."""
    try:
        from envfactory.verify import smoke_check
    except ImportError:
        smoke_check = None
    try:
        from envfactory.verify import verify_and_repair
    except ImportError:
        verify_and_repair = None
    return smoke_check, verify_and_repair


def _summarize_report(report: Any) -> str:
    """A verification report as a short text for the model (any report shape)."""
    for attr in ("summary_text", "summary"):
        v = getattr(report, attr, None)
        if callable(v):
            try:
                v = v()
            except TypeError:
                v = None
        if isinstance(v, str) and v:
            return _clip(v, 1500)
    if isinstance(report, BaseModel):
        return _clip(report.model_dump_json(), 1500)
    return _clip(str(report), 1500)


def _verification_failures(spec: EnvSpec, verified: EnvSpec | None, report: Any) -> list[str]:
    """What verify_and_repair found, for the model: per dropped tool its reason, or why the
    whole environment was rejected. Reads ``VerificationReport.excluded`` ({tool, reason}) and
    ``env_messages`` when present, else a summary of the report."""
    reasons: dict[str, str] = {}
    for x in getattr(report, "excluded", None) or []:
        if isinstance(x, Mapping) and x.get("tool"):
            reasons[str(x["tool"])] = _clip(str(x.get("reason") or ""), _MAX_FAILURE_CHARS)
    env_messages = [_clip(str(m), _MAX_FAILURE_CHARS) for m in getattr(report, "env_messages", None) or []]
    if verified is None:
        detail = "; ".join(env_messages + [f"{t}: {r}" for t, r in reasons.items()]) or _summarize_report(report)
        return [f"verification rejected the environment: {detail}"]
    dropped = sorted({t.name for t in spec.tools} - {t.name for t in verified.tools})
    out = [f"{name}: failed verification and was dropped: {reasons.get(name) or 'no reason given'}" for name in dropped]
    return out + [f"environment: {m}" for m in env_messages] if out else []


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _CheckOutcome(BaseModel):
    failures: list[str] = Field(default_factory=list)  # messages for the model
    failing_tools: list[str] = Field(default_factory=list)  # tools whose smoke check failed
    materialized: bool = False
    passing: int = 0
    final: EnvSpec | None = None  # the spec to ship (verify's output when it ran)


def _run_checks(spec: EnvSpec, *, seed: int, verify: bool, warnings: list[str]) -> _CheckOutcome:
    from envfactory.runtime import Environment

    smoke_check, verify_and_repair = _load_verifiers()
    try:
        env = Environment.from_spec(spec)
    except Exception as e:  # noqa: BLE001 - a model-written spec may fail anywhere in materialization; it is data
        return _CheckOutcome(failures=[f"the environment does not materialize: {type(e).__name__}: {e}"])
    out = _CheckOutcome(materialized=True, final=spec)
    if smoke_check is None:
        if not any(w.startswith("smoke checks unavailable") for w in warnings):
            warnings.append("smoke checks unavailable (envfactory.verify.smoke_check not importable); only materialization was checked")
        out.passing = len(spec.tools)
    else:
        checks = smoke_check(env, seed=seed)
        bad = [c for c in checks if not c.ok]
        out.failing_tools = sorted({c.tool for c in bad})
        out.failures = [f"{c.tool}: {_clip(str(c.message), _MAX_FAILURE_CHARS)}" for c in bad]
        out.passing = len(spec.tools) - len(out.failing_tools)
    if out.failures or not verify or verify_and_repair is None:
        return out
    verified, report = verify_and_repair(spec, seed=seed)
    out.failures = _verification_failures(spec, verified, report)
    out.final = verified  # None when verification rejected the environment
    return out


# --- the graph --------------------------------------------------------------------------------


class _State(TypedDict, total=False):
    next: str  # the node to run next, set by the node that just ran
    messages: list[dict[str, Any]]  # the conversation of the current step
    step: str  # "section" or "repair"
    step_label: str
    section_index: int
    tries: int  # invalid replies in the current step
    repairs: int
    spec: EnvSpec | None  # the last valid spec (the draft until a reply is accepted)
    accepted: int  # model replies accepted as valid specs
    reply: str
    stop: bool  # the model failed or the budget is spent: no more calls for this environment
    stop_reason: str
    check: _CheckOutcome | None
    transcript: Annotated[list[dict[str, Any]], operator.add]
    calls: int
    validation_rounds: int
    result: dict[str, Any]


class _EnvRun:
    """The graph for one environment, and what its nodes need."""

    def __init__(
        self,
        *,
        name: str,
        domain: str,
        sections: list[DocSection],
        draft: EnvSpec | None,
        model: ChatModel,
        config: ExplorerAgentConfig,
        ledger: UsageLedger,
        system: str,
        warnings: list[str],
        budget: list[int],
    ) -> None:
        self.name, self.domain, self.sections = name, domain, sections
        self.draft, self.model, self.config, self.ledger = draft, model, config, ledger
        self.system, self.warnings = system, warnings
        self.budget = budget  # [model calls left for the whole run]; shared by every environment
        self.sources = list(dict.fromkeys([*(draft.sources if draft else []), *(s.source for s in sections if s is not _WHOLE_DRAFT)]))

    def _entry(self, step: str, kind: str, message: str) -> dict[str, Any]:
        return TranscriptEntry(env=self.name, step=step, kind=kind, message=message).model_dump()

    def _section_step(self, index: int, spec: EnvSpec | None) -> _State:
        user = section_prompt(
            env_name=self.name,
            domain=self.domain,
            current=spec_json(spec) if spec is not None else "",
            section=self.sections[index],
            index=index + 1,
            total=len(self.sections),
            from_draft=self.draft is not None,
        )
        return {
            "next": "ask",
            "step": "section",
            "section_index": index,
            "step_label": f"section {index + 1}/{len(self.sections)}: {self.sections[index].label}",
            "tries": 0,
            "messages": [{"role": "system", "content": self.system}, {"role": "user", "content": user}],
        }

    # nodes ---------------------------------------------------------------------------------

    def start(self, state: _State) -> _State:
        spec = self.draft
        base: _State = {
            "spec": spec,
            "accepted": 0,
            "repairs": 0,
            "calls": 0,
            "validation_rounds": 0,
            "stop": False,
            "check": None,
            "step_label": "start",
        }
        if not self.sections:
            return {**base, "next": "check", "messages": []}
        return {**base, **self._section_step(0, spec)}

    def ask(self, state: _State) -> _State:
        cfg = self.config
        if self.budget[0] <= 0:
            message = f"the run's budget of {cfg.max_model_calls} model calls is spent"
            return {
                "next": "check",
                "stop": True,
                "stop_reason": message,
                "transcript": [self._entry(state["step_label"], "budget_exhausted", message)],
            }
        self.budget[0] -= 1
        try:
            resp = self.model.complete(
                state["messages"],
                temperature=cfg.temperature,
                max_tokens=cfg.max_tokens,
                response_format={"type": "json_object"} if cfg.json_mode else None,
                seed=cfg.seed,
            )
        except ModelError as e:
            self.ledger.record_failure(str(getattr(self.model, "model", "") or ""), str(e))
            return {
                "next": "check",
                "stop": True,
                "stop_reason": f"model error: {_clip(str(e), 300)}",
                "calls": state["calls"] + 1,
                "transcript": [self._entry(state["step_label"], "model_error", str(e))],
            }
        self.ledger.record_ok(resp)
        reply = resp.content
        if not reply.strip() and resp.tool_calls:  # a server that answers with a call: take its arguments
            reply = resp.tool_calls[0].raw_arguments or json.dumps(resp.tool_calls[0].arguments)
        return {"next": "validate", "reply": reply, "calls": state["calls"] + 1}

    def validate(self, state: _State) -> _State:
        spec, errors = parse_reply(state["reply"], name=self.name, domain=self.domain, sources=self.sources)
        label = state["step_label"]
        after = "advance" if state["step"] == "section" else "check"
        if spec is not None:
            return {
                "next": after,
                "spec": spec,
                "accepted": state["accepted"] + 1,
                "transcript": [self._entry(label, "accepted", f"valid EnvSpec with {len(spec.tools)} tools")],
            }
        tries = state["tries"] + 1
        if tries > self.config.max_validation_rounds:
            msg = f"no valid spec after {tries} replies; keeping the previous spec. Last errors: " + "; ".join(errors)
            return {"next": after, "transcript": [self._entry(label, "gave_up", msg)]}
        feedback = invalid_reply_prompt(errors)
        return {
            "next": "ask",
            "tries": tries,
            "validation_rounds": state["validation_rounds"] + 1,
            "messages": [
                *state["messages"],
                {"role": "assistant", "content": _clip(state["reply"] or "", 20000)},
                {"role": "user", "content": feedback},
            ],
            "transcript": [self._entry(label, "invalid_reply", feedback)],
        }

    def advance(self, state: _State) -> _State:
        nxt = state["section_index"] + 1
        if nxt < len(self.sections):
            return self._section_step(nxt, state["spec"])
        return {"next": "check", "section_index": nxt}

    def check(self, state: _State) -> _State:
        if state["spec"] is None or (state["stop"] and state["accepted"] == 0):  # nothing new to check
            return {"next": "finish", "check": None}
        spec = state["spec"]
        outcome = _run_checks(spec, seed=self.config.seed, verify=self.config.verify, warnings=self.warnings)
        update: _State = {"next": "finish", "check": outcome}
        if not outcome.failures or state["stop"] or state["repairs"] >= self.config.max_repair_rounds:
            return update
        repairs = state["repairs"] + 1
        label = f"repair {repairs}/{self.config.max_repair_rounds}"
        user = repair_prompt(env_name=self.name, current=spec_json(spec), failures=outcome.failures)
        return {
            **update,
            "next": "ask",
            "step": "repair",
            "step_label": label,
            "repairs": repairs,
            "tries": 0,
            "messages": [{"role": "system", "content": self.system}, {"role": "user", "content": user}],
            "transcript": [self._entry(label, "repair_request", "\n".join(f"- {f}" for f in outcome.failures))],
        }

    def finish(self, state: _State) -> _State:
        """Decide what comes out: the agent's spec or the draft (or nothing)."""
        chk = state.get("check")
        reason: str | None = None
        final: EnvSpec | None = None
        failing: list[str] = []
        passing = 0
        if state["accepted"] == 0:
            reason = "the model produced no valid spec" + (f" ({state['stop_reason']})" if state["stop"] else "")
        elif chk is None or not chk.materialized:
            reason = chk.failures[0] if chk and chk.failures else "no spec to check"
        elif chk.final is None:
            reason = chk.failures[0] if chk.failures else "verification rejected the environment"
        else:
            # Tools still failing are kept: the verify stage gates what ships, and its rule-based
            # repair may yet fix them. They are reported here and in the outcome.
            final = chk.final
            names = {t.name for t in final.tools}
            failing = [t for t in chk.failing_tools if t in names]
            passing = len(final.tools) - len(failing)
            if passing == 0:
                reason, final = "no tool of the agent's spec passed its checks", None
            elif self.draft is not None and passing < len(self.draft.tools):
                draft_passing = _run_checks(self.draft, seed=self.config.seed, verify=False, warnings=self.warnings).passing
                if passing < draft_passing:
                    reason, final = f"the agent's spec has {passing} tools passing checks, the draft {draft_passing}", None
        entries = []
        if failing and reason is None:
            message = f"still failing after {state['repairs']} repair rounds (kept for the verifier): " + "; ".join(
                f for f in chk.failures if f.split(":", 1)[0] in failing
            )
            entries.append(self._entry("finish", "unresolved", message))
        fell_back = False
        if reason is not None:
            final = self.draft
            fell_back = self.draft is not None
            kind = "fallback" if fell_back else "gave_up"
            entries.append(self._entry("finish", kind, ("kept the deterministic draft: " if fell_back else "no environment: ") + reason))
        result = {
            "spec": final,
            "fell_back": fell_back,
            "reason": reason,
            "failing": failing if reason is None else [],
            "passing": passing if reason is None else 0,
        }
        return {"result": result, "transcript": entries}

    def build(self) -> Any:
        from langgraph.graph import END, START, StateGraph

        route = lambda s: s["next"]  # noqa: E731 - every node names its successor
        g = StateGraph(_State)
        for node in ("start", "ask", "validate", "advance", "check", "finish"):
            g.add_node(node, getattr(self, node))
        g.add_edge(START, "start")
        g.add_conditional_edges("start", route, {"ask": "ask", "check": "check"})
        g.add_conditional_edges("ask", route, {"validate": "validate", "check": "check"})
        g.add_conditional_edges("validate", route, {"ask": "ask", "advance": "advance", "check": "check"})
        g.add_conditional_edges("advance", route, {"ask": "ask", "check": "check"})
        g.add_conditional_edges("check", route, {"ask": "ask", "finish": "finish"})
        g.add_edge("finish", END)
        return g.compile()

    def run(self) -> tuple[EnvSpec | None, EnvAgentOutcome, list[TranscriptEntry]]:
        cfg = self.config
        calls = (len(self.sections) + cfg.max_repair_rounds) * (cfg.max_validation_rounds + 1)
        state = self.build().invoke({"calls": 0}, config={"recursion_limit": 20 + 4 * calls})
        res = state["result"]
        outcome = EnvAgentOutcome(
            name=self.name,
            model_calls=state["calls"],
            sections_read=min(state.get("section_index", 0), len(self.sections)),
            validation_rounds=state["validation_rounds"],
            repair_rounds=state["repairs"],
            fell_back=res["fell_back"],
            fallback_reason=res["reason"],
            failing_tools=res["failing"],
            passing_tools=res["passing"],
            ok=res["spec"] is not None,
        )
        return res["spec"], outcome, [TranscriptEntry.model_validate(t) for t in state.get("transcript", [])]


# --- planning: which sections each environment reads -------------------------------------------


def _env_name(title: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
    name = re.sub(r"_?(api|openapi|swagger|spec|specification)$", "", name).strip("_") or "api"
    return name if name[0].isalpha() else "api_" + name


_WHOLE_DRAFT = DocSection(
    title="the draft as a whole",
    source="(draft)",
    operation_keys=(),
    text="(no documentation section maps to this environment: improve the draft from its own content)",
)


def _plan(
    docs: Sequence[ApiDoc], draft: Sequence[EnvSpec] | None, config: ExplorerAgentConfig, warnings: list[str]
) -> list[tuple[str, EnvSpec | None, list[DocSection]]]:
    per_doc = [(doc, build_sections(doc, max_chars=config.section_chars, max_op_chars=config.operation_chars)) for doc in docs]
    if not draft:
        plan, seen = [], set()
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
            warnings.append(f"{name}: read the first {config.max_sections} of {len(sections)} documentation sections")
        run = _EnvRun(
            name=name,
            domain=domain,
            sections=sections[: config.max_sections],
            draft=env_draft,
            model=model,
            config=config,
            ledger=ledger,
            system=system,
            warnings=warnings,
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
        mc = model_config if isinstance(model_config, ModelConfig) else ModelConfig.model_validate(dict(model_config))
    except ValidationError as e:
        raise ConfigError(f"invalid model settings for the agent explorer: {e.errors()[0]['msg']}") from e
    if mc.backend == "none":
        raise ConfigError("the agent explorer needs a model: pass --model NAME --base-url URL (an OpenAI-compatible endpoint)")
    from envfactory.explore import explore  # the package imports this module: import at call time

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
