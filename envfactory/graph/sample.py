"""The topology-aware plan sampler: goal first, inputs resolved backwards.

``TopologySampler`` picks a goal tool, weighted toward tools and tool pairs covered least
so far, grounds it in a row of the initial state that its preconditions accept (a confirmed
booking to cancel, a flight with enough seats to book), and resolves each input backwards
through the tool graph: from the user (a fact about that row: an email, a city, a date) or
from a producing tool, recursively up to ``max_depth``. Read steps are dry-run on a pristine
session while planning, so a reference like ``[step, "items", 2, "booking_id"]`` points at
the row the plan means. Optionally it adds a parallel look-up branch and a second goal
(chained through a state edge, e.g. ``create_booking`` then ``pay_booking``, or
independent). How goals and inputs are grounded: ``goals.py`` and ``ground.py``; the
settings: ``SamplerConfig``. The random-walk baseline is in ``walk.py``.

Samplers are deterministic for a seed and take ``Environment``-like objects (``spec``,
``name``, ``new_session()``); nothing here writes to an environment.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..errors import SampleError
from ..spec import ToolSpec
from .config import SamplerConfig
from .context import EnvContext
from .draft import PlanDraft
from .goals import GoalBuilder
from .plan import Plan, order_plan

__all__ = ["Coverage", "TopologySampler", "SampleError", "api_of"]


def api_of(spec: Any) -> str:
    """The API an environment comes from: its first source document (environments split from one
    document share it), or its own name when it names none."""
    return spec.sources[0] if spec.sources else spec.name


@dataclass
class Coverage:
    """How often each (env, tool), goal and (env, producer, consumer) pair has been sampled."""

    tools: Counter = field(default_factory=Counter)
    goals: Counter = field(default_factory=Counter)
    pairs: Counter = field(default_factory=Counter)
    attempts: Counter = field(default_factory=Counter)

    def add(self, plan: Plan) -> None:
        for t in set(plan.tools):
            self.tools[(plan.env, t)] += 1
        for t in plan.goal_tools:
            self.goals[(plan.env, t)] += 1
        for a, b in plan.pairs():
            self.pairs[(plan.env, a, b)] += 1


def build_contexts(
    envs: Sequence[Any], graphs: dict[str, nx.DiGraph] | None, config: SamplerConfig
) -> list[EnvContext]:
    """One ``EnvContext`` per environment; ``SampleError`` when none has a tool to plan on."""
    ctxs = [EnvContext(e, (graphs or {}).get(e.spec.name), dry_run_cache=config.dry_run_cache) for e in envs]
    if not any(c.spec.tools for c in ctxs):
        for c in ctxs:
            c.close()
        names = ", ".join(c.name for c in ctxs) or "none given"
        raise SampleError(f"no tools to sample plans from (environments: {names})")
    return ctxs


class TopologySampler:
    """Goal-first plan sampler over the tool graphs of one or more environments.

    ``coverage`` accumulates as plans are sampled; goal tools are drawn with weight
    ``(1 + times the tool appeared + failed attempts) ** -alpha``, and producers of an input
    are tried in order of how rarely their (producer, consumer) pair was used.
    """

    name = "topology"

    def __init__(
        self,
        envs: Sequence[Any],
        *,
        seed: int = 0,
        config: SamplerConfig | None = None,
        graphs: dict[str, nx.DiGraph] | None = None,
        coverage: Coverage | None = None,
    ):
        self.seed = seed
        self.config = config or SamplerConfig()
        self.rng = random.Random(seed)
        self.coverage = coverage if coverage is not None else Coverage()
        self.ctxs = build_contexts(envs, graphs, self.config)
        # goals are drawn document by document: an API documented as 40 tools is one API, not 40
        self._group = {c.name: api_of(c.spec) for c in self.ctxs}
        self._count = 0
        self._window_seen: set[tuple[str, str]] = set()

    def close(self) -> None:
        for c in self.ctxs:
            c.close()

    def _window_due(self, exclude: AbstractSet[tuple[str, str]], group: str) -> list[tuple[str, str]]:
        """Tools of one document not yet seen in this window of ``window`` plans, once the
        document's share of the window is running out.

        Weighting alone leaves the odd tool out of a window by chance; near the end of each
        window the sampler aims at the tools still missing (those known to be satisfiable, or
        not yet found impossible), so every tool is covered once per window.
        """
        window = self.config.window
        if not window:
            return []
        groups = len(set(self._group.values()))
        left = (window - (self._count % window)) / groups  # this document's plans left, expected
        due = [
            (c.name, t.name)
            for c in self.ctxs
            if self._group[c.name] == group
            for t in c.spec.tools
            if (c.name, t.name) not in self._window_seen
            and (c.name, t.name) not in exclude
            and (
                self.coverage.tools[(c.name, t.name)] > 0
                or self.coverage.attempts[(c.name, t.name)] < self.config.max_failed_attempts
            )
        ]
        # aim only in the window's last stretch: two plans per missing tool, plus slack
        return due if due and left <= 2 * len(due) + 10 else []

    def goal_weights(self, group: str | None = None) -> list[tuple[EnvContext, ToolSpec, float]]:
        """(context, tool, weight) of every goal tool, or of one document's (``group``)."""
        out = []
        for c in self.ctxs:
            if group is not None and self._group[c.name] != group:
                continue
            for t in c.spec.tools:
                k = (c.name, t.name)
                n = self.coverage.tools[k] + self.coverage.attempts[k]
                out.append((c, t, (1.0 + n) ** -self.config.alpha))
        return out

    def _pick_goal(
        self, exclude: AbstractSet[tuple[str, str]] = frozenset(), *, use_window: bool = False
    ) -> tuple[EnvContext, ToolSpec]:
        """A goal tool: first a document (each equally likely), then one of its tools, weighted
        toward the tools used least."""
        groups = sorted(
            {
                self._group[c.name]
                for c in self.ctxs
                if any((c.name, t.name) not in exclude for t in c.spec.tools)
            }
        )
        if not groups:
            raise SampleError("every tool failed to ground; is the environment empty?")
        group = groups[0] if len(groups) == 1 else self.rng.choice(groups)  # one document: no draw
        cands = [(c, t, w) for c, t, w in self.goal_weights(group) if (c.name, t.name) not in exclude]
        due = set(self._window_due(exclude, group)) if use_window else set()
        if due:
            cands = [x for x in cands if (x[0].name, x[1].name) in due]
        c, t, _ = self.rng.choices(cands, weights=[w for *_, w in cands])[0]
        return c, t

    def sample(self) -> Plan:
        """One plan; coverage is updated. ``SampleError`` when no goal can be grounded."""
        failed: set[tuple[str, str]] = set()
        cfg = self.config
        # a tool that fails to ground is not drawn again in this plan, so trying at least once per tool
        # means a plan is missed only when no tool of any environment can be grounded
        tries = max(cfg.goal_tries, sum(len(c.spec.tools) for c in self.ctxs))
        for _ in range(tries):
            ctx, tool = self._pick_goal(failed, use_window=True)
            draft = PlanDraft(ctx.dry_run, ctx.writes)
            b = GoalBuilder(ctx, draft, self.rng, cfg, self.coverage.pairs)
            try:
                s, after = b.goal(tool)
            except SampleError:
                self.coverage.attempts[(ctx.name, tool.name)] += 1
                failed.add((ctx.name, tool.name))
                continue
            draft.goal_steps.append(s)
            if self.rng.random() < cfg.p_second_goal:
                chained = after is not None and self.rng.random() < cfg.p_chain and b.chain(s, tool, after)
                if not chained and not cfg.intent_first:
                    self._second_goal(b, ctx)
            if not cfg.intent_first and self.rng.random() < cfg.p_branch:
                b.branch()
            return self._finish(ctx, draft)
        raise SampleError(f"no goal could be grounded in {tries} tries; is the environment empty?")

    def _second_goal(self, b: GoalBuilder, ctx: EnvContext) -> None:
        """An independent second goal in the same environment (left out when it cannot be grounded)."""
        t2 = self._pick_goal({(c.name, t.name) for c in self.ctxs for t in c.spec.tools if c is not ctx})[1]
        mark = b.draft.checkpoint()
        try:
            s2, _ = b.goal(t2)
            b.draft.goal_steps.append(s2)
        except SampleError:
            b.draft.restore(mark)

    def _finish(self, ctx: EnvContext, draft: PlanDraft) -> Plan:
        steps, goals = order_plan(draft.steps, draft.goal_steps, ctx.writes)
        plan = Plan(
            env=ctx.name,
            domain=ctx.spec.domain,
            steps=steps,
            goal_tools=[steps[i].tool for i in goals],
            goal_steps=goals,
            user_facts=draft.facts,
            sampler=self.name,
            seed=self.seed,
            index=self._count,
        )
        self._count += 1
        window = self.config.window
        if window and self._count % window == 0:
            self._window_seen = set()
        else:
            self._window_seen.update((ctx.name, t) for t in plan.tools)
        self.coverage.add(plan)
        return plan

    def sample_many(self, n: int) -> list[Plan]:
        return [self.sample() for _ in range(n)]
