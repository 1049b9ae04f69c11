"""The explorer agent's loop for one environment: a langgraph graph in which a model drafts,
repairs and improves an EnvSpec, checked by the runtime and the verifier.

    start → ask → validate ─┬─ invalid, rounds left ──────────────→ ask (errors sent back)
                            ├─ section step done ─→ advance ─┬────→ ask (next section)
                            │                                └────→ check
                            └─ repair step done ────────────────→ check
    ask ── model error or call budget spent ──────────────────→ check (no more calls)
    check ─┬─ failures, repair rounds left ─→ ask (failures sent back)
           └─ otherwise ───────────────────→ finish (the agent's spec or the draft)

``check`` materializes the spec, runs ``envfactory.verify.smoke_check`` on it and, when
``verify`` is on, ``verify_and_repair``; failures go back for at most ``max_repair_rounds``
repair rounds. Prompts and reply parsing are ``envfactory.explore.agent_prompts``'; the run
over many environments is ``envfactory.pipelines.explorer_agent``. ``langgraph`` is imported
lazily, here only.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EnvFactoryError, ModelError
from ..explore.agent_prompts import (
    DocSection,
    invalid_reply_prompt,
    parse_reply,
    repair_prompt,
    section_prompt,
    spec_json,
)
from ..llm import ChatModel, UsageLedger
from ..runtime import Environment
from ..spec import EnvSpec
from ..verify import VerificationReport, smoke_check, verify_and_repair

__all__ = ["EnvAgentOutcome", "ExplorerAgentConfig", "TranscriptEntry"]

_MAX_FAILURE_CHARS = 600


class ExplorerAgentConfig(BaseModel):
    """Settings of the explorer agent (bounds on rounds, prompt sizes, sampling)."""

    model_config = ConfigDict(extra="forbid")

    max_validation_rounds: int = Field(
        default=2, ge=0, le=10, description="Invalid replies sent back per step."
    )
    max_repair_rounds: int = Field(
        default=2, ge=0, le=10, description="Rounds of check failures sent back per env."
    )
    max_sections: int = Field(
        default=24, ge=1, description="Sections read per environment; the rest are skipped."
    )
    section_chars: int = Field(
        default=12000, ge=200, description="Character budget of one section's operations."
    )
    operation_chars: int = Field(default=3000, ge=200, description="Character budget of one operation.")
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    json_mode: bool = Field(default=True, description='Send response_format={"type": "json_object"}.')
    verify: bool = Field(default=True, description="Also run verify_and_repair in each check.")
    max_model_calls: int | None = Field(
        default=None, ge=1, description="Budget of model calls for the whole run."
    )
    seed: int = 0


class TranscriptEntry(BaseModel):
    """One validation or repair exchange, or a decision, in the agent's run."""

    env: str
    step: str
    kind: Literal[
        "invalid_reply",
        "repair_request",
        "accepted",
        "gave_up",
        "model_error",
        "budget_exhausted",
        "unresolved",
        "fallback",
    ]
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


# --- checks -----------------------------------------------------------------------------------


def _verification_failures(spec: EnvSpec, verified: EnvSpec | None, report: VerificationReport) -> list[str]:
    """What verify_and_repair found, for the model: per dropped tool its reason, or why the
    whole environment was rejected."""
    reasons = {
        x["tool"]: _clip(x.get("reason") or "", _MAX_FAILURE_CHARS) for x in report.excluded if x.get("tool")
    }
    env_messages = [_clip(m, _MAX_FAILURE_CHARS) for m in report.env_messages]
    if verified is None:
        detail = "; ".join(env_messages + [f"{t}: {r}" for t, r in reasons.items()])
        return [f"verification rejected the environment: {detail or 'no tool passed'}"]
    dropped = sorted({t.name for t in spec.tools} - {t.name for t in verified.tools})
    out = [
        f"{name}: failed verification and was dropped: {reasons.get(name) or 'no reason given'}"
        for name in dropped
    ]
    return out + [f"environment: {m}" for m in env_messages] if out else []


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _CheckOutcome(BaseModel):
    failures: list[str] = Field(default_factory=list)  # messages for the model
    failing_tools: list[str] = Field(default_factory=list)  # tools whose smoke check failed
    materialized: bool = False
    passing: int = 0
    final: EnvSpec | None = None  # the spec to ship (verify's output when it ran)


def _run_checks(spec: EnvSpec, *, seed: int, verify: bool) -> _CheckOutcome:
    """Materialize a model-written spec, smoke-check it and (``verify``) verify and repair it.
    A spec that does not materialize (a SpecError, any EnvFactoryError) is data: a failure
    sent back to the model."""
    try:
        env = Environment.from_spec(spec)
    except EnvFactoryError as e:
        return _CheckOutcome(failures=[f"the environment does not materialize: {type(e).__name__}: {e}"])
    out = _CheckOutcome(materialized=True, final=spec)
    bad = [c for c in smoke_check(env, seed=seed) if not c.ok]
    out.failing_tools = sorted({c.tool for c in bad})
    out.failures = [f"{c.tool}: {_clip(str(c.message), _MAX_FAILURE_CHARS)}" for c in bad]
    out.passing = len(spec.tools) - len(out.failing_tools)
    if out.failures or not verify:
        return out
    verified, report = verify_and_repair(spec, seed=seed)
    out.failures = _verification_failures(spec, verified, report)
    out.final = verified  # None when verification rejected the environment
    return out


_WHOLE_DRAFT = DocSection(
    title="the draft as a whole",
    source="(draft)",
    operation_keys=(),
    text="(no documentation section maps to this environment: improve the draft from its own content)",
)


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
        budget: list[int],
    ) -> None:
        self.name, self.domain, self.sections = name, domain, sections
        self.draft, self.model, self.config, self.ledger = draft, model, config, ledger
        self.system = system
        self.budget = budget  # [model calls left for the whole run]; shared by every environment
        self.sources = list(
            dict.fromkeys(
                [*(draft.sources if draft else []), *(s.source for s in sections if s is not _WHOLE_DRAFT)]
            )
        )

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
            msg = (
                f"no valid spec after {tries} replies; keeping the previous spec. Last errors: "
                + "; ".join(errors)
            )
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
        outcome = _run_checks(spec, seed=self.config.seed, verify=self.config.verify)
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
            "transcript": [
                self._entry(label, "repair_request", "\n".join(f"- {f}" for f in outcome.failures))
            ],
        }

    def finish(self, state: _State) -> _State:
        """Decide what comes out: the agent's spec or the draft (or nothing)."""
        chk = state.get("check")
        reason: str | None = None
        final: EnvSpec | None = None
        failing: list[str] = []
        passing = 0
        if state["accepted"] == 0:
            reason = "the model produced no valid spec" + (
                f" ({state['stop_reason']})" if state["stop"] else ""
            )
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
                draft_passing = _run_checks(self.draft, seed=self.config.seed, verify=False).passing
                if passing < draft_passing:
                    reason, final = (
                        f"the agent's spec has {passing} tools passing checks, the draft {draft_passing}",
                        None,
                    )
        entries = []
        if failing and reason is None:
            assert chk is not None  # failing tools come only from a check
            message = (
                f"still failing after {state['repairs']} repair rounds (kept for the verifier): "
                + "; ".join(f for f in chk.failures if f.split(":", 1)[0] in failing)
            )
            entries.append(self._entry("finish", "unresolved", message))
        fell_back = False
        if reason is not None:
            final = self.draft
            fell_back = self.draft is not None
            kind = "fallback" if fell_back else "gave_up"
            entries.append(
                self._entry(
                    "finish",
                    kind,
                    ("kept the deterministic draft: " if fell_back else "no environment: ") + reason,
                )
            )
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
