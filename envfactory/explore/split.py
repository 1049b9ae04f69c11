"""Split a large API into coherent environments by community detection on its resource graph.

Nodes are entities with tools (weighted by tool count); edges join entities related by a
foreign key (3), sharing a documentation tag (1) or a first path segment (0.5) in one
document, or (when several documents of a domain are merged) coming from one document (1). Louvain
communities (seeded, so deterministic) become environments; a community over ``max_tools``
is split again at a higher resolution (or chunked), small ones join their closest neighbour.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import networkx as nx

from .entities import EntityDraft
from .tools import ToolDraft

__all__ = ["split_tools", "add_finders", "MAX_TOOLS", "MIN_TOOLS"]

MAX_TOOLS, MIN_TOOLS = 40, 5


def _graph(tools: list[ToolDraft], ents: dict[str, EntityDraft]) -> nx.Graph:
    g = nx.Graph()
    per = Counter(t.entity for t in tools)
    for e in sorted(per):
        g.add_node(e, tools=per[e])

    def bump(a: str, b: str, w: float) -> None:
        if a == b or a not in per or b not in per:
            return
        cur = g.get_edge_data(a, b, {}).get("weight", 0.0)
        g.add_edge(a, b, weight=cur + w)

    for e in per:
        for f in ents[e].fields.values():
            if f.ref:
                bump(e, f.ref, 3.0)
    tags: dict[tuple[str, str], set[str]] = defaultdict(set)
    heads: dict[tuple[str, str], set[str]] = defaultdict(set)
    docs: dict[str, set[str]] = defaultdict(set)
    for t in tools:
        for tag in t.plan.op.tags[:2]:
            tags[(t.plan.source, tag)].add(t.entity)
        head = t.plan.op.path.strip("/").split("/")[0].split(".")[0]
        heads[(t.plan.source, head)].add(t.entity)
        docs[t.plan.source].add(t.entity)
    if len(docs) < 2:  # one document: every pair would get the same bump
        docs.clear()
    for group, w in ((tags, 1.0), (heads, 0.5), (docs, 1.0)):
        for members in group.values():
            ms = sorted(members)
            if len(ms) > 30:
                continue
            for i, a in enumerate(ms):
                for b in ms[i + 1 :]:
                    bump(a, b, w)
    return g


def _communities(g: nx.Graph, seed: int, resolution: float) -> list[set[str]]:
    """Louvain communities of ``g``, the same for the same graph in every process.

    Louvain walks sets of nodes; sets of strings iterate in an order that depends on the
    process's hash seed (PYTHONHASHSEED), and so did the communities. It runs on a copy whose
    nodes are the indexes of the sorted names, added in that order, with edges in sorted order.
    """
    if g.number_of_edges() == 0:
        return [{n} for n in sorted(g.nodes)]
    names = sorted(g.nodes)
    index = {n: i for i, n in enumerate(names)}
    h = nx.Graph()
    h.add_nodes_from(range(len(names)))
    edges = sorted(
        (min(index[a], index[b]), max(index[a], index[b]), w) for a, b, w in g.edges(data="weight")
    )
    h.add_weighted_edges_from(edges)
    parts = nx.community.louvain_communities(h, weight="weight", resolution=resolution, seed=seed)
    return [{names[i] for i in c} for c in parts]


def _size(g: nx.Graph, c: set[str]) -> int:
    return sum(g.nodes[n]["tools"] for n in c)


def _split(g: nx.Graph, nodes: set[str], seed: int, resolution: float, max_tools: int) -> list[set[str]]:
    if _size(g, nodes) <= max_tools or len(nodes) == 1:
        return [nodes]
    if resolution > 64:
        out: list[set[str]] = []
        cur: set[str] = set()
        for n in sorted(nodes, key=lambda n: (-g.nodes[n]["tools"], n)):
            if cur and _size(g, cur | {n}) > max_tools:
                out.append(cur)
                cur = set()
            cur.add(n)
        return out + ([cur] if cur else [])
    parts = _communities(g.subgraph(nodes), seed, resolution)
    if len(parts) == 1:
        return _split(g, nodes, seed, resolution * 2, max_tools)
    out = []
    for p in parts:
        out += _split(g, p, seed, resolution * 1.5, max_tools)
    return out


def _affinity(g: nx.Graph, c: set[str], d: set[str]) -> float:
    """How strongly two groups belong together: the edges between them, and half of what links both
    to one entity outside them (the siblings under ``/apps/{appId}/...`` share their app)."""
    direct = sum(g.get_edge_data(a, b, {}).get("weight", 0.0) for a in c for b in d)
    shared = 0.0
    for x in set(g.nodes) - c - d:
        wc = sum(g.get_edge_data(a, x, {}).get("weight", 0.0) for a in c)
        wd = sum(g.get_edge_data(b, x, {}).get("weight", 0.0) for b in d)
        shared += min(wc, wd)
    return direct + 0.5 * shared


def _finder_need(tools: list[ToolDraft], ents: dict[str, EntityDraft]) -> Callable[[set[str]], int]:
    """For a group of entities: how many read tools ``add_finders`` will give it (up to two for each
    entity outside it whose id its writes take)."""
    wants: dict[str, set[str]] = defaultdict(set)
    reads: Counter[str] = Counter()
    for t in tools:
        if t.kind in ("list", "get"):
            reads[t.entity] += 1
        elif t.kind in ("create", "update", "action"):
            ent = ents[t.entity]
            for p in t.params:
                f = ent.fields.get(p.field)
                if f is not None and f.ref:
                    wants[t.entity].add(f.ref)

    def need(group: set[str]) -> int:
        outside = set().union(*(wants[e] for e in group)) - group
        return sum(min(2, reads[x]) for x in outside)

    return need


def _pack(
    g: nx.Graph, groups: list[set[str]], max_tools: int, need: Callable[[set[str]], int]
) -> list[set[str]]:
    """Join the most strongly connected pair of groups while the join, with the finders it will
    need, stays within ``max_tools``, so relations across communities (an order's traveler) and
    siblings under one parent stay inside one environment."""
    groups = list(groups)
    while True:
        best, best_key = None, None
        for i, c in enumerate(groups):
            for j in range(i + 1, len(groups)):
                d = groups[j]
                if _size(g, c) + _size(g, d) + need(c | d) > max_tools:
                    continue
                w = _affinity(g, c, d)
                if w <= 0:
                    continue
                key = (w, -(_size(g, c) + _size(g, d)), sorted(c | d))
                if (
                    best_key is None
                    or key[:2] > best_key[:2]
                    or (key[:2] == best_key[:2] and key[2] < best_key[2])
                ):
                    best, best_key = (i, j), key
        if best is None:
            return groups
        i, j = best
        groups[i] = groups[i] | groups[j]
        del groups[j]


def split_tools(
    tools: list[ToolDraft],
    ents: dict[str, EntityDraft],
    *,
    seed: int = 0,
    max_tools: int = MAX_TOOLS,
    min_tools: int = MIN_TOOLS,
    pack: bool = False,
) -> list[list[ToolDraft]]:
    """Groups of tools, each one environment; one group when the API is small enough.

    With ``pack``, connected communities (and siblings of one parent) are joined while they fit
    in ``max_tools`` with their finders: fewer, larger environments whose tasks can span resources.
    """
    if len(tools) <= max_tools:
        return [tools] if tools else []
    g = _graph(tools, ents)
    groups = _split(g, set(g.nodes), seed, 1.0, max_tools)
    # merge small groups into the neighbour they are most connected to, while it stays small enough
    groups.sort(key=lambda c: (-_size(g, c), sorted(c)))
    changed = True
    while changed:
        changed = False
        for i, c in enumerate(groups):
            if _size(g, c) >= min_tools:
                continue
            best, best_w = None, 0.0
            for j, d in enumerate(groups):
                if j == i or _size(g, c) + _size(g, d) > max_tools:
                    continue
                w = sum(g.get_edge_data(a, b, {}).get("weight", 0.0) for a in c for b in d)
                if w > best_w or (best is None and _size(g, d) < min_tools):
                    best, best_w = j, w if w > best_w else best_w
            if best is not None:
                groups[best] = groups[best] | c
                del groups[i]
                changed = True
                break
    if pack:
        groups = _pack(g, groups, max_tools, _finder_need(tools, ents))
        groups.sort(key=lambda c: (-_size(g, c), sorted(c)))
    by_ent: dict[str, list[ToolDraft]] = defaultdict(list)
    for t in tools:
        by_ent[t.entity].append(t)
    out: list[list[ToolDraft]] = []
    for c in groups:
        ts = [t for e in sorted(c) for t in by_ent[e]]
        for i in range(0, len(ts), max_tools):  # one entity with more tools than fit
            out.append(ts[i : i + max_tools])
    return out


def add_finders(
    groups: list[list[ToolDraft]],
    tools: list[ToolDraft],
    ents: dict[str, EntityDraft],
    *,
    max_tools: int = MAX_TOOLS,
) -> list[list[ToolDraft]]:
    """Give each group the read tools (list, then get) of the entities its write tools take ids
    of, when another group owns them and the group stays within ``max_tools``.

    ``create_order(traveler_id=...)`` is only usable if the environment can find a traveler;
    reads are safe to share, writes stay in one environment.
    """
    reads: dict[str, list[ToolDraft]] = defaultdict(list)
    for t in tools:
        if t.kind in ("list", "get"):
            reads[t.entity].append(t)
    for e in reads:
        reads[e].sort(key=lambda t: (t.kind != "list", any(p.required for p in t.params), t.plan.op.key))
    out = []
    for group in groups:
        group = list(group)
        have = {t.entity for t in group}
        wanted: list[str] = []
        for t in group:
            if t.kind not in ("create", "update", "action"):
                continue
            ent = ents[t.entity]
            for p in t.params:
                f = ent.fields.get(p.field)
                if f is not None and f.ref and f.ref not in have and f.ref not in wanted and f.ref in reads:
                    wanted.append(f.ref)
        for e in sorted(wanted):
            for t in reads[e][:2]:
                if len(group) >= max_tools:
                    break
                if t not in group:
                    group.append(t)
        out.append(group)
    return out
