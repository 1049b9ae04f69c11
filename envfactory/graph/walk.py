"""The baseline sampler: a random walk along ``supplies`` edges from a tool a user can call,
other inputs filled with values drawn at random from the state."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import networkx as nx

from ..errors import SampleError
from ..spec import FieldType, ParamSpec, ToolKind, ToolSpec
from .config import SamplerConfig
from .context import EnvContext
from .ground import clip
from .plan import Plan, Step, ref
from .sample import Coverage, build_contexts

__all__ = ["RandomWalkSampler"]


class RandomWalkSampler:
    """Baseline: a walk along random ``supplies`` edges from a tool a user can call."""

    name = "random_walk"

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
        self._count = 0

    def close(self) -> None:
        for c in self.ctxs:
            c.close()

    def _value(self, ctx: EnvContext, tool: ToolSpec, p: ParamSpec, facts: dict[str, Any]) -> Any:
        ent = ctx.ents[tool.entity]
        v = None
        if p.field and ent.has_field(p.field):
            rows = ctx.rows_with(ent.name, p.field)
            if rows:
                v = self.rng.choice(rows)[p.field]
                if p.op == "in":
                    v = [v]
        if v is None:
            v = self._default(ctx, p)
        v = clip(p, v) if not isinstance(v, list) else v
        facts[f"{tool.name}.{p.name}"] = v
        return v

    def _default(self, ctx: EnvContext, p: ParamSpec) -> Any:
        """A value of the parameter's type when no row has one."""
        if p.enum:
            return self.rng.choice(p.enum)
        if p.type == FieldType.integer:
            return int(p.minimum) if p.minimum is not None else 1
        if p.type == FieldType.number:
            return 100.0
        if p.type == FieldType.boolean:
            return True
        if p.type == FieldType.date:
            return ctx.spec.clock[:10]
        if p.type == FieldType.datetime:
            return ctx.spec.clock
        return p.name

    def sample(self) -> Plan:
        ctx = self.rng.choice([c for c in self.ctxs if c.spec.tools])
        starts = [
            t
            for t in ctx.spec.tools
            if all(ctx.source(t.name, p.name) == "user" for p in t.params if t.needs(p))
        ]
        if not starts:
            raise SampleError(f"{ctx.name}: every tool needs an input that only another tool finds")
        tool = self.rng.choice(starts)
        facts: dict[str, Any] = {}
        steps: list[Step] = []
        args = {p.name: self._value(ctx, tool, p, facts) for p in tool.params if tool.needs(p)}
        steps.append(Step(tool.name, args, [], "discover"))
        length = self.rng.randint(1, self.config.walk_max_len)
        while len(steps) < length:
            cur = steps[-1].tool
            nxt = sorted((v, a) for _, v, a in ctx.graph.out_edges(cur, data=True) if a["edge"] == "supplies")
            if not nxt:
                break
            pid, a = self.rng.choice(nxt)
            t = ctx.tools[ctx.graph.nodes[pid]["tool"]]
            pname = ctx.graph.nodes[pid]["param"]
            i = len(steps) - 1
            path = (
                ["items", 0, a["output_field"]]
                if ctx.tools[cur].kind == ToolKind.list
                else [a["output_field"]]
            )
            args = {pname: [ref(i, *path)] if t.param(pname).op == "in" else ref(i, *path)}
            for p in t.params:
                if t.needs(p) and p.name not in args:
                    args[p.name] = self._value(ctx, t, p, facts)
            steps.append(Step(t.name, args, [i], "discover"))
        steps[-1].role = "goal"
        plan = Plan(
            env=ctx.name,
            domain=ctx.spec.domain,
            steps=steps,
            goal_tools=[steps[-1].tool],
            goal_steps=[len(steps) - 1],
            user_facts=facts,
            sampler=self.name,
            seed=self.seed,
            index=self._count,
        )
        self._count += 1
        self.coverage.add(plan)
        return plan

    def sample_many(self, n: int) -> list[Plan]:
        return [self.sample() for _ in range(n)]
