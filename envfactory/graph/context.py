"""What the samplers know about one environment, computed once: its graph, state, tool roles
and a cache of dry-run reads on a pristine session."""

from __future__ import annotations

import bisect
import json
from collections import Counter
from typing import Any

import networkx as nx

from ..errors import SampleError
from ..spec import EnvSpec, ToolKind, ToolSpec, account_roots
from .state import state_index
from .tool_graph import build_tool_graph, tool_outputs

__all__ = ["EnvContext"]


class EnvContext:
    """One environment as the samplers see it. ``env`` is ``Environment``-like (``spec``,
    ``new_session()``); the dry-run session is read-only in practice (reads only) and closed
    by ``close()``."""

    def __init__(self, env: Any, graph: nx.DiGraph | None = None, *, dry_run_cache: int = 50_000):
        self.env = env
        self.spec: EnvSpec = env.spec
        self.name = self.spec.name
        self.graph = graph if graph is not None else build_tool_graph(self.spec)
        self.dry = env.new_session()
        self.state = state_index(env)
        self.tools = {t.name: t for t in self.spec.tools}
        self.ents = {e.name: e for e in self.spec.entities}
        self.account_roots = account_roots(self.spec)
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
        self._dry_cache_max = dry_run_cache
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
            if len(self._dry_cache) > self._dry_cache_max:
                self._dry_cache.clear()
            r = self.dry.try_call(tool, args)
            hit = self._dry_cache[key] = (r["ok"], r["result"] if r["ok"] else r["message"])
        if not hit[0]:
            raise SampleError(hit[1])
        return hit[1]

    def source(self, tool: str, param: str) -> str:
        """``user`` (a person states it) or ``discover`` (a tool finds it), from the graph."""
        return self.graph.nodes[f"{tool}.{param}"]["source"]

    def target(self, tool: str, param: str) -> str | None:
        """The entity whose key a parameter carries, if any."""
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
