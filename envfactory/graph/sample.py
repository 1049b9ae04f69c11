"""Plan samplers: topology-aware (goal first, inputs resolved backwards) and a random walk.

``TopologySampler`` picks a goal tool, weighted toward tools and tool pairs covered least
so far, grounds it in a row of the initial state that its preconditions accept (a confirmed
booking to cancel, a flight with enough seats to book), and resolves each input backwards
through the tool graph: from the user (a fact about that row: an email, a city, a date) or
from a producing tool, recursively up to ``max_depth``. Read steps are dry-run on a pristine
session while planning, so a reference like ``[step, "items", 2, "booking_id"]`` points at
the row the plan means. Optionally it adds a parallel look-up branch and a second goal
(chained through a state edge, e.g. ``create_booking`` then ``pay_booking``, or
independent).

``RandomWalkSampler`` is the baseline: start at a tool a user can call, then follow random
``supplies`` edges, filling other inputs with values drawn at random from the state.

Both are deterministic for a seed and take ``Environment``-like objects (``spec``, ``name``,
``new_session()``); nothing here writes to an environment.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import networkx as nx

from ..spec import EnvSpec, FieldType, ParamSpec, ToolKind, ToolSpec
from .plan import Plan, Step, is_ref, iter_refs, order_plan, ref, resolve_args, RefError
from .state import StateIndex
from .tool_graph import _compare, build_tool_graph, created_row_preview, tool_outputs

__all__ = ["Coverage", "TopologySampler", "RandomWalkSampler", "SampleError"]

_READS = (ToolKind.get, ToolKind.list)


class SampleError(Exception):
    """No plan could be built for this goal (internal; the sampler tries another)."""


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


class _EnvCtx:
    """What the samplers need to know about one environment, computed once."""

    def __init__(self, env: Any, graph: nx.DiGraph | None = None):
        self.env = env
        self.spec: EnvSpec = env.spec
        self.name = self.spec.name
        self.graph = graph if graph is not None else build_tool_graph(self.spec)
        self.dry = env.new_session()
        self.state = StateIndex(self.spec, self.dry)
        self.tools = {t.name: t for t in self.spec.tools}
        self.ents = {e.name: e for e in self.spec.entities}
        self.writes = {t.name for t in self.spec.tools if t.writes}
        self.outputs = {t.name: set(tool_outputs(self.spec, t)) for t in self.spec.tools}
        self.lists: dict[str, list[ToolSpec]] = {}
        self.gets: dict[str, ToolSpec] = {}
        self.creators: dict[str, list[ToolSpec]] = {}
        for t in self.spec.tools:
            if t.kind == ToolKind.list:
                self.lists.setdefault(t.entity, []).append(t)
            elif t.kind == ToolKind.get:
                self.gets.setdefault(t.entity, t)
            elif t.kind == ToolKind.create:
                self.creators.setdefault(t.entity, []).append(t)
        self.fk_children: dict[str, list[tuple[str, str]]] = {}
        for e in self.spec.entities:
            for f in e.fields:
                if f.ref:
                    self.fk_children.setdefault(f.ref, []).append((e.name, f.name))
        self._values: dict[tuple[str, str], set[Any]] = {}
        self._nonnull: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._freq: dict[tuple[str, str], Counter] = {}
        self._dry_cache: dict[tuple[str, str], tuple[bool, Any]] = {}
        self._sorted: dict[tuple[str, str], list[Any]] = {}

    def dry_run(self, tool: str, args: dict[str, Any]) -> Any:
        """A read on the pristine session (cached: plans repeat look-ups like a city's airports)."""
        key = (tool, json.dumps(args, sort_keys=True, default=str))
        hit = self._dry_cache.get(key)
        if hit is None:
            if len(self._dry_cache) > 50_000:
                self._dry_cache.clear()
            r = self.dry.try_call(tool, args)
            hit = self._dry_cache[key] = (r["ok"], r["result"] if r["ok"] else r["message"])
        if not hit[0]:
            raise SampleError(hit[1])
        return hit[1]

    def source(self, tool: str, param: str) -> str:
        return self.graph.nodes[f"{tool}.{param}"]["source"]

    def target(self, tool: str, param: str) -> str | None:
        return self.graph.nodes[f"{tool}.{param}"]["entity"]

    def values(self, entity: str, fname: str) -> set[Any]:
        k = (entity, fname)
        if k not in self._values:
            self._values[k] = {r[fname] for r in self.state.rows[entity]}
        return self._values[k]

    def rows_with(self, entity: str, fname: str) -> list[dict[str, Any]]:
        k = (entity, fname)
        if k not in self._nonnull:
            self._nonnull[k] = [r for r in self.state.rows[entity] if r.get(fname) is not None]
        return self._nonnull[k]

    def selectivity(self, entity: str, fname: str, op: str, value: Any) -> float:
        """Rough share of ``entity`` rows a filter on ``fname`` keeps (for picking filters)."""
        rows = self.state.rows[entity]
        if not rows:
            return 1.0
        k = (entity, fname)
        if op in ("eq", "in", "contains"):
            freq = self._freq.get(k)
            if freq is None:
                freq = self._freq[k] = Counter(r[fname] for r in rows)
            vals = value if isinstance(value, list) else [value]
            hits = sum(freq.get(v, 0) for v in vals)
            return max(hits, 1) / len(rows) * (3.0 if op == "contains" else 1.0)
        if op in ("gte", "gt", "lte", "lt"):
            srt = self._sorted.get(k)
            if srt is None:
                srt = self._sorted[k] = sorted(r[fname] for r in rows if r[fname] is not None)
            try:
                i = bisect.bisect_left(srt, value) if op in ("gte", "gt") else bisect.bisect_right(srt, value)
            except TypeError:
                return 0.5
            n = len(srt) - i if op in ("gte", "gt") else i
            return max(n, 1) / len(rows)
        return 1.0

    def close(self) -> None:
        self.dry.close()


def _clip(p: ParamSpec, v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    if p.minimum is not None and v < p.minimum:
        v = p.minimum
    if p.maximum is not None and v > p.maximum:
        v = p.maximum
    if p.type == FieldType.integer:
        v = int(v)
    return v


def _filter_value(p: ParamSpec, v: Any) -> Any:
    """A filter argument that keeps a row whose field value is ``v`` (rounded as a person would)."""
    if v is None:
        return None
    op = p.op
    if op == "in":
        return [v]
    if op in ("eq", "contains"):
        return v if op == "eq" or isinstance(v, str) else None
    if op in ("gte", "gt", "lte", "lt"):
        up = op in ("lte", "lt")
        if p.type == FieldType.datetime and isinstance(v, str) and len(v) >= 10:
            if op in ("gt", "lt"):
                return None
            return v[:10] + ("T23:59:59" if up else "T00:00:00")
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v + 1 if op == "lt" else v - 1 if op == "gt" else v
        if isinstance(v, float):
            step = 10 ** max(0, int(math.log10(abs(v))) - 1) if v else 1
            r = (math.ceil(v / step) * step) if up else (math.floor(v / step) * step)
            if (op == "lt" and r <= v) or (op == "gt" and r >= v):
                r = r + step if up else r - step
            return float(r) if p.type == FieldType.number else r
        if op in ("gte", "lte"):
            return v
    return None


class _Build:
    """One plan under construction: steps, dry-run outputs, user facts."""

    def __init__(self, s: "TopologySampler", ctx: _EnvCtx):
        self.s = s
        self.ctx = ctx
        self.rng = s.rng
        self.steps: list[Step] = []
        self.sim: list[Any] = []
        self.facts: dict[str, Any] = {}
        self.used: set[tuple[str, Any]] = set()
        self.new_values: set[Any] = set()
        self.goal_steps: list[int] = []

    # ---- steps ---------------------------------------------------------------------------

    def add(self, tool: str, args: dict[str, Any], role: str, deps: Sequence[int] = ()) -> int:
        refs = {r[0] for r in iter_refs(args)}
        deps_all = sorted(set(deps) | refs)
        out = None
        if tool not in self.ctx.writes and all(self.sim[d] is not None for d in refs):
            try:
                concrete = resolve_args(args, self.sim)
            except RefError as e:
                raise SampleError(str(e)) from None
            out = self.ctx.dry_run(tool, concrete)
        self.steps.append(Step(tool, args, deps_all, role))
        self.sim.append(out)
        return len(self.steps) - 1

    def fact(self, key: str, value: Any) -> None:
        k, n = key, 2
        while k in self.facts and self.facts[k] != value:
            k = f"{key}#{n}"
            n += 1
        self.facts[k] = value

    def pair_weight(self, producer: str, consumer: str) -> float:
        return 1.0 / (1.0 + self.s.coverage.pairs[(self.ctx.name, producer, consumer)])

    # ---- resolving ids backwards -----------------------------------------------------------

    def resolve_id(self, entity: str, row: dict[str, Any], depth: int, consumer: str,
                   avoid: frozenset[str] = frozenset()) -> Any:
        """An argument expression worth ``row``'s primary key, found through tools if possible."""
        ctx = self.ctx
        pk = ctx.ents[entity].primary_key
        options: list[tuple[float, str, Any]] = []
        for lt in ctx.lists.get(entity, []):
            if pk in ctx.outputs[lt.name] and lt.name != consumer:
                options.append((self.pair_weight(lt.name, consumer), "list", lt))
        if depth + 1 < self.s.max_depth:
            consumer_entity = ctx.tools[consumer].entity
            for child, fk in ctx.fk_children.get(entity, []):
                if fk in avoid or child == consumer_entity:
                    continue
                kids = ctx.state.children.get((child, fk), {}).get(row[pk])
                if not kids:
                    continue
                for lt in ctx.lists.get(child, []):
                    if fk in ctx.outputs[lt.name] and lt.name != consumer:
                        options.append((0.5 * self.pair_weight(lt.name, consumer), "child_list", (lt, child, fk, kids)))
                gt = ctx.gets.get(child)
                if gt is not None and fk in ctx.outputs[gt.name] and gt.name != consumer:
                    options.append((0.5 * self.pair_weight(gt.name, consumer), "child_get", (gt, child, fk, kids)))
        # weighted order without replacement (deterministic for the rng state)
        keyed = sorted(options, key=lambda o: -math.log(self.rng.random() or 1e-12) / o[0])
        for _, how, what in keyed:
            mark = (len(self.steps), dict(self.facts))
            try:
                if how == "list":
                    s, k = self.locate(what, entity, row, depth, avoid)
                    return ref(s, "items", k, pk)
                lt_or_gt, child, fk, kids = what
                kid = self.rng.choice(kids)
                if how == "child_list":
                    s, k = self.locate(lt_or_gt, child, kid, depth + 1, avoid | {fk})
                    return ref(s, "items", k, fk)
                cpk = ctx.ents[child].primary_key
                key = self.resolve_id(child, kid, depth + 1, lt_or_gt.name, avoid | {fk})
                s = self.add(lt_or_gt.name, {lt_or_gt.key_param.name: key}, "discover")
                return ref(s, fk)
            except SampleError:
                del self.steps[mark[0]:]
                del self.sim[mark[0]:]
                self.facts = mark[1]
                continue
        self.fact(f"{entity}.{pk}", row[pk])  # nothing reveals it: the user has to know it
        return row[pk]

    def locate(self, lt: ToolSpec, entity: str, row: dict[str, Any], depth: int,
               avoid: frozenset[str] = frozenset()) -> tuple[int, int]:
        """Add a list step whose results include ``row``; return (step, index in items)."""
        ctx = self.ctx
        pk = ctx.ents[entity].primary_key
        user, ids = [], []
        for p in lt.params:
            if not p.field or row.get(p.field) is None or p.field in avoid:
                continue
            if ctx.source(lt.name, p.name) == "user":
                if _filter_value(p, row[p.field]) is not None:
                    user.append(p)
            elif depth + 1 < self.s.max_depth and ctx.target(lt.name, p.name) in ctx.ents and p.op in ("eq", "in"):
                ids.append(p)
        self.rng.shuffle(user)
        self.rng.shuffle(ids)
        chosen = user[: self.rng.randint(1, 2)] if user else []
        rest = user[len(chosen):] + ids
        if ids and (not chosen or self.rng.random() < 0.35):
            chosen.append(ids[0])
            rest.remove(ids[0])
        # add filters until the row should be on the first page (saves dry runs)
        n_rows = len(ctx.state.rows[entity])

        def est(ps: list[ParamSpec]) -> float:
            share = 1.0
            for p in ps:
                if p in ids:
                    kids = ctx.state.children.get((entity, p.field), {}).get(row[p.field], ())
                    share *= max(len(kids), 1) / max(n_rows, 1)
                else:
                    share *= ctx.selectivity(entity, p.field, p.op, _filter_value(p, row[p.field]))
            return share * n_rows

        while rest and est(chosen) > lt.page_size:
            chosen.append(rest.pop(0))
        args: dict[str, Any] = {}
        if est(chosen) > lt.page_size and lt.max_page_size > lt.page_size:
            args["limit"] = lt.max_page_size
        for attempt in range(4):
            for p in chosen:
                if p.name in args:
                    continue
                if p in ids:
                    tgt = ctx.target(lt.name, p.name)
                    parent = ctx.state.by_pk[tgt].get(row[p.field])
                    if parent is None:
                        raise SampleError("dangling reference")
                    v = self.resolve_id(tgt, parent, depth + 1, lt.name, avoid)
                    args[p.name] = [v] if p.op == "in" else v
                else:
                    v = _clip(p, _filter_value(p, row[p.field]))
                    args[p.name] = v
                    self.fact(f"{entity}.{p.field}", row[p.field])
            s = self.add(lt.name, dict(args), "discover")
            items = self.sim[s]["items"] if self.sim[s] is not None else []
            for k, it in enumerate(items):
                if pk in it and it[pk] == row[pk]:
                    return s, k
            # not on the first page: narrow with another filter, or ask for a bigger page
            self.steps.pop()
            self.sim.pop()
            if rest:
                chosen.append(rest.pop(0))
            elif "limit" not in args and lt.max_page_size > lt.page_size:
                args["limit"] = lt.max_page_size
            else:
                break
        raise SampleError(f"{lt.name} cannot single out the {entity}")

    # ---- values the user states ------------------------------------------------------------

    def user_value(self, tool: ToolSpec, p: ParamSpec, template: dict[str, Any] | None, fresh: bool = False) -> Any:
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        v = None
        if p.field and template is not None:
            v = template.get(p.field)
            if v is None and not p.required:
                return None
            if v is None:
                rows = ctx.rows_with(ent.name, p.field)
                v = self.rng.choice(rows)[p.field] if rows else None
        if p.field and (fresh or p.key or ent.field(p.field).unique):
            v = self._fresh(ent.name, p.field, v)
        if v is None:
            v = self._synth(p)
        if p.enum and v not in p.enum:
            v = self.rng.choice(p.enum)
        if p.type == FieldType.number and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        v = _clip(p, v)
        self.fact(f"{tool.name}.{p.name}", v)
        return v

    def _fresh(self, entity: str, fname: str, v: Any) -> Any:
        existing = self.ctx.values(entity, fname)
        for _ in range(50):
            n = self.rng.randint(2, 99_999)
            if isinstance(v, str):
                if "@" in v:
                    local, dom = v.split("@", 1)
                    cand: Any = f"{local}.{n}@{dom}"
                else:
                    cand = f"{v}-{n}"
            elif isinstance(v, int) and not isinstance(v, bool):
                cand = max((x for x in existing if isinstance(x, int)), default=0) + n
            else:
                cand = f"new-{n}"
            if cand not in existing and cand not in self.new_values:
                self.new_values.add(cand)
                return cand
        raise SampleError(f"no fresh value for {entity}.{fname}")

    def _synth(self, p: ParamSpec) -> Any:
        clock = dt.datetime.fromisoformat(self.ctx.spec.clock)
        t = p.type
        if p.enum:
            return self.rng.choice(p.enum)
        if p.default is not None:
            return p.default
        if t == FieldType.boolean:
            return self.rng.random() < 0.5
        if t == FieldType.integer:
            lo = int(p.minimum) if p.minimum is not None else 1
            hi = int(p.maximum) if p.maximum is not None else max(lo, 5)
            return self.rng.randint(lo, min(hi, lo + 4))
        if t == FieldType.number:
            lo = p.minimum if p.minimum is not None else 10.0
            hi = p.maximum if p.maximum is not None else lo + 490.0
            return round(self.rng.uniform(lo, hi), 2)
        if t == FieldType.date:
            return (clock.date() + dt.timedelta(days=self.rng.randint(1, 60))).isoformat()
        if t == FieldType.datetime:
            return (clock + dt.timedelta(hours=self.rng.randint(1, 1440))).isoformat(timespec="seconds")
        if t == FieldType.object:
            return {}
        if t == FieldType.array:
            return []
        return f"{p.name.replace('_', ' ')} {self.rng.randint(1, 999)}"

    # ---- goals -----------------------------------------------------------------------------

    def goal(self, tool: ToolSpec, fixed: dict[str, Any] | None = None, row: dict[str, Any] | None = None,
             role: str = "goal") -> tuple[int, dict[str, Any] | None]:
        """Add ``tool`` with inputs resolved; return (step, predicted row it leaves behind).

        ``fixed`` presets arguments; ``row`` is the row they select (the key's row, or for a
        create the row its fixed foreign key points at).
        """
        if tool.kind == ToolKind.list:
            return self._list_goal(tool, role)
        if tool.kind == ToolKind.create:
            return self._create_goal(tool, fixed or {}, role, row)
        return self._keyed_goal(tool, fixed or {}, row, role)

    def _list_goal(self, tool: ToolSpec, role: str) -> tuple[int, dict[str, Any] | None]:
        rows = self.ctx.state.rows[tool.entity]
        if not rows:
            raise SampleError(f"no {tool.entity} rows to list")
        row = self.rng.choice(rows)
        s = None
        if self.rng.random() >= 0.1 and tool.params:
            mark = (len(self.steps), dict(self.facts))
            try:
                s, _ = self.locate(tool, tool.entity, row, 0)
                self.steps[s].role = role
            except SampleError:
                del self.steps[mark[0]:]
                del self.sim[mark[0]:]
                self.facts = mark[1]
        if s is None:
            s = self.add(tool.name, {}, role)
        if not self.sim[s]["items"]:
            raise SampleError("empty result")
        pk = self.ctx.ents[tool.entity].primary_key
        k = next((i for i, it in enumerate(self.sim[s]["items"]) if it.get(pk) == row[pk]), None)
        return s, (dict(row, __path=[s, "items", k]) if k is not None else None)

    def _keyed_goal(self, tool: ToolSpec, fixed: dict[str, Any], row: dict[str, Any] | None,
                    role: str) -> tuple[int, dict[str, Any] | None]:
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        pk = ent.primary_key
        key = tool.key_param
        args: dict[str, Any] = dict(fixed)
        if key.name not in args:
            pool = ctx.state.candidates(tool, deletable=tool.kind == ToolKind.delete)
            cands = [r for r in (self.rng.choice(pool) for _ in range(8) if pool) if (ent.name, r[pk]) not in self.used]
            creators = [c for c in ctx.creators.get(ent.name, [])
                        if ctx.graph.has_edge(c.name, tool.name)
                        and ctx.graph.edges[c.name, tool.name].get("satisfies") is True
                        and pk in ctx.outputs[c.name]]
            if creators and (not cands or self.rng.random() < self.s.p_create):
                c = min(creators, key=lambda t: (self.s.coverage.pairs[(ctx.name, t.name, tool.name)], t.name))
                cs, row = self._create_goal(c, {}, "setup")
                args[key.name] = ref(cs, pk)
            elif cands:
                row = self.rng.choice(cands)
                args[key.name] = self.resolve_id(ent.name, row, 0, tool.name)
            else:
                raise SampleError(f"no {ent.name} that {tool.name} accepts")
        if row is not None and row.get(pk) is not None:
            self.used.add((ent.name, row[pk]))
        values = [p for p in tool.params if not p.key and p.name not in args]
        template = self.rng.choice(ctx.state.rows[ent.name]) if ctx.state.rows[ent.name] else None
        optional = [p for p in values if not p.required and p.field]
        want = {p.name for p in values if p.required}
        if tool.kind == ToolKind.update and not want and optional:
            want |= {p.name for p in self.rng.sample(optional, self.rng.randint(1, min(2, len(optional))))}
        elif tool.kind == ToolKind.action:
            want |= {p.name for p in optional if self.rng.random() < 0.2}
        for p in values:
            if p.name not in want:
                continue
            tgt = ctx.target(tool.name, p.name)
            if ctx.source(tool.name, p.name) == "discover" and tgt in ctx.ents and ctx.state.rows[tgt]:
                other = self.rng.choice(ctx.state.rows[tgt])
                args[p.name] = self.resolve_id(tgt, other, 1, tool.name)
            else:
                tmpl = template
                if p.field and (tmpl is None or tmpl.get(p.field) is None):
                    rows = ctx.rows_with(ent.name, p.field)
                    tmpl = self.rng.choice(rows) if rows else None
                args[p.name] = self.user_value(tool, p, tmpl, fresh=tool.kind == ToolKind.update and
                                               p.field is not None and ent.field(p.field).unique)
        if row is not None and "__path" not in row:
            concrete = {k: v for k, v in args.items() if not is_ref(v)}
            if not ctx.state.check(ent.name, row, tool.preconditions, concrete):
                raise SampleError(f"{tool.name} preconditions fail")
        s = self.add(tool.name, args, role)
        after = None
        if row is not None and tool.kind != ToolKind.delete:
            after = dict(row)
            for p in tool.params:
                if p.field and not p.key and p.name in args and not is_ref(args[p.name]):
                    after[p.field] = args[p.name]
            for ef in tool.effects:
                if "." not in ef.field:
                    after[ef.field] = ef.set if ef.uses_set else None
            after["__path"] = [s]
        return s, after

    def _create_goal(self, tool: ToolSpec, fixed: dict[str, Any], role: str,
                     fixed_row: dict[str, Any] | None = None) -> tuple[int, dict[str, Any] | None]:
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        own = [c for c in tool.preconditions if "." not in c.field]
        for _ in range(6):
            mark = (len(self.steps), dict(self.facts), set(self.used))
            try:
                return self._create_once(tool, ent, fixed, own, role, fixed_row)
            except SampleError:
                del self.steps[mark[0]:]
                del self.sim[mark[0]:]
                self.facts, self.used = mark[1], mark[2]
        raise SampleError(f"cannot ground {tool.name}")

    def _create_once(self, tool: ToolSpec, ent: Any, fixed: dict[str, Any], own: list,
                     role: str, fixed_row: dict[str, Any] | None) -> tuple[int, dict[str, Any] | None]:
        ctx = self.ctx
        rows = ctx.state.rows[ent.name]
        template = self.rng.choice(rows) if rows else None
        args: dict[str, Any] = dict(fixed)
        predicted: dict[str, Any] = dict(created_row_preview(ctx.spec, tool))
        fks: list[ParamSpec] = []
        for p in tool.params:
            if p.name in args:
                continue
            is_fk = p.field and ent.has_field(p.field) and ent.field(p.field).ref and not p.key
            if is_fk:
                if p.required or self.rng.random() < 0.3:
                    fks.append(p)
                continue
            if ctx.source(tool.name, p.name) == "discover" and not p.required:
                continue
            if p.required or (template is not None and p.field and self.rng.random() < 0.4):
                v = self.user_value(tool, p, template)
                if v is not None:
                    args[p.name] = v
        for p in tool.params:
            if p.field and p.name in args and not is_ref(args[p.name]):
                predicted[p.field] = args[p.name]
        if fixed_row is not None:
            # the row a chained create's fixed foreign key points at must pass every condition
            for p in tool.params:
                if p.name in fixed and p.field:
                    for c in tool.preconditions:
                        if c.field.startswith(p.field + "."):
                            want = args.get(c.value_param) if c.value_param else c.value
                            if c.value_param and want is None:
                                continue
                            if not _compare(fixed_row.get(c.field.split(".", 1)[1]), c.op, want):
                                raise SampleError(f"{tool.name}: the chained row fails a precondition")
        for p in fks:
            tgt = ent.field(p.field).ref
            conds = [c for c in tool.preconditions if c.field.startswith(p.field + ".")]
            creators = [c for c in ctx.creators.get(tgt, []) if c.name != tool.name
                        and ctx.outputs[c.name] >= {ctx.ents[tgt].primary_key}]
            if creators and not conds and self.rng.random() < self.s.p_create_parent:
                c = self.rng.choice(creators)
                cs, _ = self._create_goal(c, {}, "setup")
                args[p.name] = ref(cs, ctx.ents[tgt].primary_key)
                continue
            cands = ctx.state.candidates(tool, fk=p.field)
            if not cands:
                raise SampleError(f"no {tgt} that {tool.name} accepts")
            vconds = [c for c in conds if c.value_param]
            pick = None
            for _ in range(20):
                r = self.rng.choice(cands)
                if (tgt, r[ctx.ents[tgt].primary_key]) in self.used:
                    continue
                probe = {p.field: r[ctx.ents[tgt].primary_key]}
                if ctx.state.check(ent.name, probe, vconds, args):
                    pick = r
                    break
            if pick is None:
                raise SampleError(f"no {tgt} fits {tool.name}")
            tpk = pick[ctx.ents[tgt].primary_key]
            self.used.add((tgt, tpk))
            predicted[p.field] = tpk
            args[p.name] = self.resolve_id(tgt, pick, 0, tool.name)
        if not ctx.state.check(ent.name, predicted, own, {k: v for k, v in args.items() if not is_ref(v)}):
            raise SampleError(f"{tool.name} own preconditions fail")
        s = self.add(tool.name, args, role)
        predicted["__path"] = [s]
        predicted["__new"] = True
        return s, predicted

    # ---- extras ------------------------------------------------------------------------------

    def chain(self, g_step: int, g_tool: ToolSpec, after: dict[str, Any]) -> bool:
        """Add a second goal that acts on the row the first goal produced or found, or on a
        row that row references (the booking's traveller), fed from the first goal's output."""
        ctx = self.ctx
        ent = ctx.ents[g_tool.entity]
        pk = ent.primary_key
        path = after["__path"]
        if path[-1] is None:
            return False
        new = after.get("__new", False)
        # (tool, fixed arguments, row they select or point at)
        options: list[tuple[ToolSpec, dict[str, Any], dict[str, Any] | None]] = []
        if pk in ctx.outputs[g_tool.name]:
            for t in ctx.spec.tools:
                if t.name == g_tool.name or t.kind == ToolKind.list:
                    continue
                if t.entity == ent.name and t.key_param is not None and t.kind != ToolKind.create:
                    if t.kind == ToolKind.delete and not new and after.get(pk) in ctx.state.referenced[ent.name]:
                        continue
                    if ctx.state.check(ent.name, after, t.preconditions):
                        options.append((t, {t.key_param.name: ref(*path, pk)}, after))
                elif t.kind == ToolKind.create:
                    tent = ctx.ents[t.entity]
                    for p in t.params:
                        if p.required and p.field and tent.has_field(p.field) and tent.field(p.field).ref == ent.name:
                            conds = [c.model_copy(update={"field": c.field.split(".", 1)[1]}) for c in t.preconditions
                                     if c.field.startswith(p.field + ".") and c.value_param is None]
                            if ctx.state.check(ent.name, after, conds):
                                options.append((t, {p.name: ref(*path, pk)}, after))
                            break
        for f in ent.fields:
            if not f.ref or f.ref == ent.name or f.name not in ctx.outputs[g_tool.name] or after.get(f.name) is None:
                continue
            parent = ctx.state.by_pk[f.ref].get(after[f.name])
            if parent is None:
                continue
            val = ref(*path, f.name)
            for t in ctx.spec.tools:
                if t.name == g_tool.name:
                    continue
                tent = ctx.ents[t.entity]
                if t.kind == ToolKind.list:
                    for p in t.params:
                        if p.op not in ("eq", "in") or not p.field or not tent.has_field(p.field):
                            continue
                        tf = tent.field(p.field)
                        if tf.ref == f.ref and t.entity != f.ref and (
                                t.entity == ent.name or ctx.state.children.get((t.entity, p.field), {}).get(after[f.name])):
                            options.append((t, {p.name: [val] if p.op == "in" else val}, None))
                            break
                elif t.kind == ToolKind.create:
                    for p in t.params:
                        if p.required and p.field and tent.has_field(p.field) and tent.field(p.field).ref == f.ref:
                            conds = [c.model_copy(update={"field": c.field.split(".", 1)[1]}) for c in t.preconditions
                                     if c.field.startswith(p.field + ".") and c.value_param is None]
                            if ctx.state.check(f.ref, parent, conds):
                                options.append((t, {p.name: val}, parent))
                            break
                elif t.entity == f.ref and t.kind in (ToolKind.update, ToolKind.action):
                    if ctx.state.check(f.ref, parent, [c for c in t.preconditions if c.value_param is None]):
                        options.append((t, {t.key_param.name: val}, parent))
        if not options:
            return False
        w = [1.0 / (1 + self.s.coverage.pairs[(ctx.name, g_tool.name, t.name)]) for t, _, _ in options]
        t, fixed, row = self.rng.choices(options, weights=w)[0]
        mark = (len(self.steps), dict(self.facts), set(self.used))
        try:
            if t.kind == ToolKind.list:
                s = self.add(t.name, fixed, "goal")
            else:
                s, _ = self.goal(t, fixed, row=row)
        except SampleError:
            del self.steps[mark[0]:]
            del self.sim[mark[0]:]
            self.facts, self.used = mark[1], mark[2]
            return False
        self.steps[s].deps = sorted(set(self.steps[s].deps) | {g_step})
        self.goal_steps.append(s)
        return True

    def branch(self) -> bool:
        """A side look-up: get a row that a row seen or written by an earlier step references.

        Candidates are weighted toward (step tool, get tool) pairs used least so far.
        """
        ctx = self.ctx
        spots: list[tuple[int, list[Any], str, Any]] = []
        for i, (st, out) in enumerate(zip(self.steps, self.sim)):
            t = ctx.tools[st.tool]
            if t.kind == ToolKind.delete:
                continue
            if out is None:
                if not t.writes:
                    continue
                row, path = None, []  # a write's output row: only non-nullable references are safe
            elif t.kind == ToolKind.list:
                if not out.get("items"):
                    continue
                row, path = out["items"][0], ["items", 0]
            else:
                row, path = out, []
            for f in ctx.ents[t.entity].fields:
                if not f.ref or f.ref == t.entity or f.ref not in ctx.gets or f.name not in ctx.outputs[t.name]:
                    continue
                if (row is None and f.nullable) or (row is not None and row.get(f.name) is None):
                    continue
                spots.append((i, path, f.name, ctx.gets[f.ref]))
        if not spots:
            return False
        w = [self.pair_weight(self.steps[i].tool, gt.name) for i, _, _, gt in spots]
        i, path, fname, gt = self.rng.choices(spots, weights=w)[0]
        try:
            self.add(gt.name, {gt.key_param.name: ref(i, *path, fname)}, "branch")
        except SampleError:
            return False
        return True


class TopologySampler:
    """Goal-first plan sampler over the tool graphs of one or more environments.

    ``coverage`` accumulates as plans are sampled; goal tools are drawn with weight
    ``(1 + times the tool appeared + failed attempts) ** -alpha``, and producers of an input
    are tried in order of how rarely their (producer, consumer) pair was used.
    """

    name = "topology"

    def __init__(self, envs: Sequence[Any], *, seed: int = 0, max_depth: int = 5, alpha: float = 1.0,
                 p_branch: float = 0.35, p_second_goal: float = 0.35, p_chain: float = 0.7,
                 p_create: float = 0.2, p_create_parent: float = 0.1, graphs: dict[str, nx.DiGraph] | None = None,
                 coverage: Coverage | None = None, window: int = 1000):
        self.seed = seed
        self.rng = random.Random(seed)
        self.max_depth = max_depth
        self.alpha = alpha
        self.p_branch = p_branch
        self.p_second_goal = p_second_goal
        self.p_chain = p_chain
        self.p_create = p_create
        self.p_create_parent = p_create_parent
        self.coverage = coverage if coverage is not None else Coverage()
        self.ctxs = [_EnvCtx(e, (graphs or {}).get(e.spec.name)) for e in envs]
        self._count = 0
        self.window = window
        self._window_seen: set[tuple[str, str]] = set()

    def close(self) -> None:
        for c in self.ctxs:
            c.close()

    def _window_due(self, exclude: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """Tools not yet seen in this window of ``window`` plans, once the window is running out.

        Weighting alone leaves the odd tool out of a window by chance; near the end of each
        window the sampler aims at the tools still missing (those known to be satisfiable, or
        not yet found impossible), so every tool is covered once per window.
        """
        if not self.window:
            return []
        left = self.window - (self._count % self.window)
        due = [(c.name, t.name) for c in self.ctxs for t in c.spec.tools
               if (c.name, t.name) not in self._window_seen and (c.name, t.name) not in exclude
               and (self.coverage.tools[(c.name, t.name)] > 0 or self.coverage.attempts[(c.name, t.name)] < 3)]
        return due if due and left <= 2 * len(due) + 10 else []

    def goal_weights(self) -> list[tuple[_EnvCtx, ToolSpec, float]]:
        out = []
        for c in self.ctxs:
            for t in c.spec.tools:
                k = (c.name, t.name)
                n = self.coverage.tools[k] + self.coverage.attempts[k]
                out.append((c, t, (1.0 + n) ** -self.alpha))
        return out

    def _pick_goal(self, exclude: set[tuple[str, str]] = frozenset(), *, use_window: bool = False
                   ) -> tuple[_EnvCtx, ToolSpec]:
        due = set(self._window_due(exclude)) if use_window else set()
        cands = [(c, t, w) for c, t, w in self.goal_weights() if (c.name, t.name) not in exclude
                 and (not due or (c.name, t.name) in due)]
        c, t, _ = self.rng.choices(cands, weights=[w for *_, w in cands])[0]
        return c, t

    def sample(self) -> Plan:
        """One plan; coverage is updated."""
        failed: set[tuple[str, str]] = set()
        for _ in range(30):
            ctx, tool = self._pick_goal(failed, use_window=True)
            b = _Build(self, ctx)
            try:
                s, after = b.goal(tool)
            except SampleError:
                self.coverage.attempts[(ctx.name, tool.name)] += 1
                failed.add((ctx.name, tool.name))
                continue
            b.goal_steps.append(s)
            if self.rng.random() < self.p_second_goal:
                chained = after is not None and self.rng.random() < self.p_chain and b.chain(s, tool, after)
                if not chained:
                    t2 = self._pick_goal({(c.name, t.name) for c in self.ctxs for t in c.spec.tools if c is not ctx})[1]
                    mark = len(b.steps)
                    try:
                        s2, _ = b.goal(t2)
                        b.goal_steps.append(s2)
                    except SampleError:
                        del b.steps[mark:]
                        del b.sim[mark:]
            if self.rng.random() < self.p_branch:
                b.branch()
            steps, goals = order_plan(b.steps, b.goal_steps, ctx.writes)
            plan = Plan(env=ctx.name, domain=ctx.spec.domain, steps=steps,
                        goal_tools=[steps[i].tool for i in goals], goal_steps=goals,
                        user_facts=b.facts, sampler=self.name, seed=self.seed, index=self._count)
            self._count += 1
            if self.window and self._count % self.window == 0:
                self._window_seen = set()
            else:
                self._window_seen.update((ctx.name, t) for t in plan.tools)
            self.coverage.add(plan)
            return plan
        raise SampleError("no goal could be grounded in 30 tries; is the environment empty?")

    def sample_many(self, n: int) -> list[Plan]:
        return [self.sample() for _ in range(n)]


class RandomWalkSampler:
    """Baseline: a walk along random ``supplies`` edges from a tool a user can call."""

    name = "random_walk"

    def __init__(self, envs: Sequence[Any], *, seed: int = 0, max_len: int = 5,
                 graphs: dict[str, nx.DiGraph] | None = None, coverage: Coverage | None = None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.max_len = max_len
        self.coverage = coverage if coverage is not None else Coverage()
        self.ctxs = [_EnvCtx(e, (graphs or {}).get(e.spec.name)) for e in envs]
        self._count = 0

    def close(self) -> None:
        for c in self.ctxs:
            c.close()

    def _value(self, ctx: _EnvCtx, tool: ToolSpec, p: ParamSpec, facts: dict[str, Any]) -> Any:
        ent = ctx.ents[tool.entity]
        v = None
        if p.field and ent.has_field(p.field):
            rows = ctx.rows_with(ent.name, p.field)
            if rows:
                v = self.rng.choice(rows)[p.field]
                if p.op == "in":
                    v = [v]
        if v is None:
            if p.enum:
                v = self.rng.choice(p.enum)
            elif p.type == FieldType.integer:
                v = int(p.minimum) if p.minimum is not None else 1
            elif p.type == FieldType.number:
                v = 100.0
            elif p.type == FieldType.boolean:
                v = True
            elif p.type == FieldType.date:
                v = ctx.spec.clock[:10]
            elif p.type == FieldType.datetime:
                v = ctx.spec.clock
            else:
                v = p.name
        v = _clip(p, v) if not isinstance(v, list) else v
        facts[f"{tool.name}.{p.name}"] = v
        return v

    def sample(self) -> Plan:
        ctx = self.rng.choice(self.ctxs)
        starts = [t for t in ctx.spec.tools
                  if all(ctx.source(t.name, p.name) == "user" for p in t.params if p.required)]
        tool = self.rng.choice(starts)
        facts: dict[str, Any] = {}
        steps: list[Step] = []
        args = {p.name: self._value(ctx, tool, p, facts) for p in tool.params if p.required}
        steps.append(Step(tool.name, args, [], "discover"))
        length = self.rng.randint(1, self.max_len)
        while len(steps) < length:
            cur = steps[-1].tool
            nxt = sorted((v, a) for _, v, a in ctx.graph.out_edges(cur, data=True) if a["edge"] == "supplies")
            if not nxt:
                break
            pid, a = self.rng.choice(nxt)
            t = ctx.tools[ctx.graph.nodes[pid]["tool"]]
            pname = ctx.graph.nodes[pid]["param"]
            i = len(steps) - 1
            path = ["items", 0, a["output_field"]] if ctx.tools[cur].kind == ToolKind.list else [a["output_field"]]
            args = {pname: [ref(i, *path)] if t.param(pname).op == "in" else ref(i, *path)}
            for p in t.params:
                if p.required and p.name not in args:
                    args[p.name] = self._value(ctx, t, p, facts)
            steps.append(Step(t.name, args, [i], "discover"))
        steps[-1].role = "goal"
        plan = Plan(env=ctx.name, domain=ctx.spec.domain, steps=steps, goal_tools=[steps[-1].tool],
                    goal_steps=[len(steps) - 1], user_facts=facts, sampler=self.name, seed=self.seed,
                    index=self._count)
        self._count += 1
        self.coverage.add(plan)
        return plan

    def sample_many(self, n: int) -> list[Plan]:
        return [self.sample() for _ in range(n)]
