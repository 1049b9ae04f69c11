"""The tool-dependency graph of an environment (networkx), built from its EnvSpec alone.

Nodes are tools (id: the tool name) and their parameters (id: ``tool.param``).

Edges (attribute ``edge`` says which):
- ``input``     param -> tool: the parameter is an input of the tool (``required``).
- ``supplies``  tool -> param: the tool's output can supply the parameter.
  ``strength="strong"`` comes from the spec's relations: a list/create of entity E returns
  E's primary key (``via="pk"``), or a tool's rows carry a foreign key to E (``via="fk"``).
  ``strength="weak"`` is a guess from name/type/description similarity (``via="similar"``,
  with a ``score``) for specs whose relations are incomplete.
- ``state``     tool -> tool: the second tool needs an entity the first creates
  (``creates``) or a field value the first sets that one of its preconditions asks for
  (``sets``, e.g. ``booking.status=confirmed``); ``satisfies`` is True when a row fresh
  from the first tool meets all the second's preconditions on that entity.

Parameter nodes carry ``source``: ``user`` (facts a person knows: names, dates, cities,
emails, amounts, party size, enum choices) or ``discover`` (internal ids, keys, foreign
keys, tokens) with a ``reason``; tool nodes carry ``depth`` (the fewest discovery hops
before the tool can be called) and ``satisfiable``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx

from ..errors import SpecError
from ..spec import Condition, EntitySpec, EnvSpec, FieldType, ParamSpec, ToolKind, ToolSpec, compare

__all__ = [
    "GRAPH_FILE",
    "build_tool_graph",
    "build_domain_graph",
    "classify_param",
    "tool_outputs",
    "save_tool_graph",
    "load_tool_graph",
    "graph_to_json",
]

GRAPH_FILE = "tool_graph.json"
WEAK_THRESHOLD = 0.6

_ID_NAME = re.compile(r"(^|_)(id|ids|uuid|guid|key|token|cursor|ref|handle)$")
_STOP = {"the", "a", "an", "of", "to", "in", "by", "for", "and", "or", "e", "g", "is", "id"}


def tool_outputs(spec: EnvSpec, tool: ToolSpec) -> list[str]:
    """Entity fields present in each row a tool returns (a delete returns none worth using)."""
    if tool.kind == ToolKind.delete:
        return []
    ent = spec.entity(tool.entity)
    return list(tool.returns) if tool.returns else [f.name for f in ent.fields]


def classify_param(spec: EnvSpec, tool: ToolSpec, p: ParamSpec) -> tuple[str, str, str | None]:
    """(source, reason, entity it identifies): source is ``user`` or ``discover``."""
    ent = spec.entity(tool.entity)
    f = ent.field(p.field) if p.field and ent.has_field(p.field) else None
    if p.key or (f is not None and f.name == ent.primary_key):
        if tool.kind == ToolKind.create:
            return "user", f"new key of a {ent.name}", None
        return "discover", f"key of {ent.name}", ent.name
    if f is not None and f.ref:
        return "discover", f"foreign key to {f.ref}", f.ref
    if _ID_NAME.search(p.name):
        guess = re.sub(_ID_NAME, "", p.name) or None
        known = {e.name for e in spec.entities}
        return "discover", "internal identifier", guess if guess in known else None
    kind = {
        FieldType.enum: "choice",
        FieldType.boolean: "yes/no choice",
        FieldType.date: "date",
        FieldType.datetime: "date and time",
        FieldType.integer: "number",
        FieldType.number: "amount",
    }.get(p.type, "text")
    return "user", f"{kind} a person can state", None


def _tokens(s: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", s.lower()) if w and w not in _STOP}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


_NUMERIC = {FieldType.integer, FieldType.number}
_TEXTUAL = {FieldType.string, FieldType.enum}
_TIME = {FieldType.date, FieldType.datetime}


def _compatible(a: FieldType, b: FieldType) -> bool:
    return a == b or any(a in g and b in g for g in (_NUMERIC, _TEXTUAL, _TIME))


def _similarity(
    p: ParamSpec, pdesc: str, fname: str, ftype: FieldType, fenum: list[str] | None, fdesc: str
) -> float:
    if not _compatible(p.type, ftype):
        return 0.0
    if p.enum and fenum and not set(p.enum) & set(fenum):
        return 0.0
    names = {p.name} | ({p.field} if p.field else set())
    if fname in names:
        name = 1.0
    else:
        name = max(_jaccard(_tokens(n), _tokens(fname)) for n in names)
    if name < 0.5:
        return 0.0
    return round(0.8 * name + 0.2 * _jaccard(_tokens(pdesc), _tokens(fdesc)), 3)


def _path_target(spec: EnvSpec, ent: EntitySpec, path: str) -> tuple[str, str]:
    """(entity, field) a condition/effect path lands on."""
    if "." in path:
        fk, fname = path.split(".", 1)
        return ent.field(fk).ref or ent.name, fname
    return ent.name, path


_compare = compare  # precondition semantics shared with the runtime (envfactory.spec.compare)


def _effect_satisfies(
    spec: EnvSpec, producer: ToolSpec, ef_field_entity: str, ef_field: str, cond: Condition
) -> tuple[bool, str] | None:
    """Whether one of ``producer``'s writes can make ``cond`` (on entity.field) true."""
    pent = spec.entity(producer.entity)
    for ef in producer.effects:
        e_ent, e_field = _path_target(spec, pent, ef.field)
        if (e_ent, e_field) != (ef_field_entity, ef_field):
            continue
        if ef.uses_set:
            if cond.value_param is None and _compare(ef.set, cond.op, cond.value):
                return True, f"sets {e_ent}.{e_field}={json.dumps(ef.set)}"
            continue
        if ef.param is not None:
            p = producer.param(ef.param)
            if (
                p.enum
                and cond.value_param is None
                and not any(_compare(v, cond.op, cond.value) for v in p.enum)
            ):
                continue
            return True, f"may set {e_ent}.{e_field} from {ef.param}"
        if ef.increment is not None or ef.increment_param or ef.increment_from:
            up = (ef.increment or 1) > 0 and not ef.negate_param
            if (up and cond.op in ("gt", "gte", "ne")) or (not up and cond.op in ("lt", "lte", "ne")):
                return True, f"{'raises' if up else 'lowers'} {e_ent}.{e_field}"
    if producer.kind in (ToolKind.create, ToolKind.update) and ef_field_entity == producer.entity:
        for p in producer.params:
            if p.field == ef_field and not p.key:
                if (
                    p.enum
                    and cond.value_param is None
                    and not any(_compare(v, cond.op, cond.value) for v in p.enum)
                ):
                    continue
                return True, f"may set {ef_field_entity}.{ef_field} from {p.name}"
    return None


def created_row_preview(spec: EnvSpec, creator: ToolSpec) -> dict[str, Any]:
    """Fields a create tool's new row certainly has: field defaults and literal effects."""
    ent = spec.entity(creator.entity)
    row: dict[str, Any] = {f.name: f.default for f in ent.fields if f.default is not None}
    for ef in creator.effects:
        if "." not in ef.field and ef.uses_set:
            row[ef.field] = ef.set
    return row


def _fresh_row_satisfies(
    spec: EnvSpec, creator: ToolSpec, consumer: ToolSpec, via_fk: str | None
) -> bool | None:
    """Does a row just created by ``creator`` pass ``consumer``'s preconditions on it?"""
    row = created_row_preview(spec, creator)
    written = {p.field for p in creator.params if p.field}
    verdict: bool | None = True
    for c in consumer.preconditions:
        parts = c.field.split(".")
        if via_fk is None:
            if len(parts) != 1:
                continue
            fname = parts[0]
        else:
            if len(parts) != 2 or parts[0] != via_fk:
                continue
            fname = parts[1]
        if c.value_param is not None:
            verdict = None
            continue
        if fname in row:
            if not _compare(row[fname], c.op, c.value):
                return False
        elif fname in written:
            verdict = None
        else:
            if not _compare(None, c.op, c.value):
                return False
    return verdict


def build_tool_graph(spec: EnvSpec, *, weak_threshold: float = WEAK_THRESHOLD) -> nx.DiGraph:
    """The dependency graph of one environment's tools and parameters."""
    g = nx.DiGraph(env=spec.name, domain=spec.domain, kind="tool_graph", version=1)
    ents = {e.name: e for e in spec.entities}
    outputs = {t.name: tool_outputs(spec, t) for t in spec.tools}
    _add_nodes(g, spec)
    # supplies: strong (relations, id types) first, weak (similarity) where no strong edge.
    for t in spec.tools:
        for p in t.params:
            pid = f"{t.name}.{p.name}"
            target = g.nodes[pid]["entity"]
            if g.nodes[pid]["source"] == "discover" and target in ents:
                _add_strong_supplies(g, spec, ents, outputs, t, p, target)
            if target in ents:
                continue  # the spec's relations say where this id comes from
            _add_weak_supplies(g, spec, ents, outputs, t, p, weak_threshold)
    _add_state_edges(g, spec, ents)
    _annotate_depth(g, spec)
    return g


def _add_nodes(g: nx.DiGraph, spec: EnvSpec) -> None:
    """A node per tool and per parameter, each parameter classified (where its value comes from)."""
    for t in spec.tools:
        g.add_node(
            t.name,
            node="tool",
            env=spec.name,
            tool=t.name,
            tool_kind=t.kind.value,
            entity=t.entity,
            writes=t.writes,
            description=t.description,
        )
        for p in t.params:
            source, reason, target = classify_param(spec, t, p)
            pid = f"{t.name}.{p.name}"
            g.add_node(
                pid,
                node="param",
                env=spec.name,
                tool=t.name,
                param=p.name,
                type=p.type.value,
                required=t.needs(
                    p
                ),  # what a call must pass (a row's key even where the document leaves it optional)
                key=p.key,
                field=p.field,
                op=p.op,
                source=source,
                reason=reason,
                entity=target,
                description=p.description,
            )
            g.add_edge(pid, t.name, edge="input", required=t.needs(p))


def _add_strong_supplies(
    g: nx.DiGraph,
    spec: EnvSpec,
    ents: dict[str, EntitySpec],
    outputs: dict[str, list[str]],
    t: ToolSpec,
    p: ParamSpec,
    target: str,
) -> None:
    """Edges from the tools whose output holds the id ``p`` needs: the row's key or a foreign key."""
    pid = f"{t.name}.{p.name}"
    pk = ents[target].primary_key
    for u in spec.tools:
        if u.name == t.name or not outputs[u.name]:
            continue
        uent = ents[u.entity]
        if u.entity == target and pk in outputs[u.name] and u.kind in (ToolKind.list, ToolKind.create):
            g.add_edge(
                u.name,
                pid,
                edge="supplies",
                strength="strong",
                via="pk",
                output_field=pk,
                output_fields=[pk],
                score=1.0,
            )
            continue
        fks = [f for f in outputs[u.name] if uent.field(f).ref == target]
        if fks and u.entity != target:
            # a field named like the parameter is the likelier one (origin vs destination)
            fks = sorted(fks, key=lambda f: f not in (p.name, p.field))
            g.add_edge(
                u.name,
                pid,
                edge="supplies",
                strength="strong",
                via="fk",
                output_field=fks[0],
                output_fields=fks,
                score=1.0,
            )


def _add_weak_supplies(
    g: nx.DiGraph,
    spec: EnvSpec,
    ents: dict[str, EntitySpec],
    outputs: dict[str, list[str]],
    t: ToolSpec,
    p: ParamSpec,
    weak_threshold: float,
) -> None:
    """Edges from reads whose output field looks like ``p`` (no relation says where it comes from)."""
    pid = f"{t.name}.{p.name}"
    for u in spec.tools:
        # weak guesses come from reads, the tools a person would look facts up with
        if u.name == t.name or u.kind not in (ToolKind.get, ToolKind.list) or g.has_edge(u.name, pid):
            continue
        uent = ents[u.entity]
        best, best_f = 0.0, None
        for fname in outputs[u.name]:
            if u.kind == ToolKind.get and fname == uent.primary_key:
                continue  # a get echoes the key it was given
            f = uent.field(fname)
            s = _similarity(p, p.description, fname, f.type, f.enum, f.description)
            if s > best:
                best, best_f = s, fname
        if best_f is not None and best >= weak_threshold:
            g.add_edge(
                u.name,
                pid,
                edge="supplies",
                strength="weak",
                via="similar",
                output_field=best_f,
                output_fields=[best_f],
                score=best,
            )


def _add_state_edges(g: nx.DiGraph, spec: EnvSpec, ents: dict[str, EntitySpec]) -> None:
    """State edges: entities created, field values set that preconditions ask for."""
    for t in spec.tools:
        tent = ents[t.entity]
        needs: list[tuple[str, str | None]] = []  # (entity, fk param field or None for own row)
        for p in t.params:
            if not t.needs(p):
                continue
            if p.key and t.kind != ToolKind.create:
                needs.append((t.entity, None))
            elif p.field and tent.has_field(p.field) and (ref := tent.field(p.field).ref) and not p.key:
                needs.append((ref, p.field))
        for u in spec.tools:
            if u.name == t.name:
                continue
            reasons: list[str] = []
            creates = False
            satisfies: bool | None = None
            if u.kind == ToolKind.create:
                for ent_name, via in needs:
                    if u.entity == ent_name:
                        creates = True
                        reasons.append(f"creates {ent_name}")
                        satisfies = _fresh_row_satisfies(spec, u, t, via)
                        break
            for c in t.preconditions:
                c_ent, c_field = _path_target(spec, tent, c.field)
                hit = _effect_satisfies(spec, u, c_ent, c_field, c)
                if hit and hit[1] not in reasons:
                    reasons.append(hit[1])
            if reasons:
                g.add_edge(
                    u.name, t.name, edge="state", reasons=reasons, creates=creates, satisfies=satisfies
                )


def _annotate_depth(g: nx.DiGraph, spec: EnvSpec) -> None:
    """Tool depth: 0 when a person can supply every required input; else 1 + its producers'."""
    inf = 10**6
    depth = {t.name: inf for t in spec.tools}
    for _ in range(len(spec.tools) + 1):
        changed = False
        for t in spec.tools:
            d = 0
            for p in t.params:
                pid = f"{t.name}.{p.name}"
                if not t.needs(p) or g.nodes[pid]["source"] == "user":
                    continue
                producers = [u for u, _, a in g.in_edges(pid, data=True) if a["edge"] == "supplies"]
                strong = [u for u in producers if g.edges[u, pid]["strength"] == "strong"]
                best = min((depth[u] for u in (strong or producers)), default=inf)
                d = max(d, best + 1 if best < inf else inf)
            if d < depth[t.name]:
                depth[t.name] = d
                changed = True
        if not changed:
            break
    for name, d in depth.items():
        g.nodes[name]["satisfiable"] = d < inf
        g.nodes[name]["depth"] = d if d < inf else -1


def build_domain_graph(specs: Iterable[EnvSpec], *, weak_threshold: float = WEAK_THRESHOLD) -> nx.DiGraph:
    """The graphs of a domain's environments side by side (node ids ``env/node``).

    Environments do not share state, so no value flows between them at run time; edges
    labelled ``edge="shared_fact"`` join parameters of different environments that ask for
    the same user fact (same name and compatible type), e.g. a traveller's email.
    """
    specs = list(specs)
    domains = sorted({s.domain for s in specs})
    g = nx.DiGraph(
        domain=domains[0] if len(domains) == 1 else ",".join(domains),
        kind="domain_graph",
        version=1,
        envs=[s.name for s in specs],
    )
    seen: set[str] = set()
    for s in specs:
        if s.name in seen:
            raise SpecError(f"two environments named {s.name!r} in one domain graph")
        seen.add(s.name)
        sub = build_tool_graph(s, weak_threshold=weak_threshold)
        g.add_nodes_from((f"{s.name}/{n}", a) for n, a in sub.nodes(data=True))
        g.add_edges_from((f"{s.name}/{u}", f"{s.name}/{v}", a) for u, v, a in sub.edges(data=True))
    params = [(n, a) for n, a in g.nodes(data=True) if a["node"] == "param" and a["source"] == "user"]
    for n1, a1 in params:
        for n2, a2 in params:
            if (
                a1["env"] < a2["env"]
                and a1["param"] == a2["param"]
                and _compatible(FieldType(a1["type"]), FieldType(a2["type"]))
            ):
                g.add_edge(n1, n2, edge="shared_fact", strength="weak")
    return g


def graph_to_json(g: nx.DiGraph) -> dict[str, Any]:
    """Node-link data (``nodes``/``edges``), sorted for byte-stable files."""
    try:
        data = nx.node_link_data(g, edges="edges")
    except TypeError:  # networkx < 3.4
        data = nx.node_link_data(g, link="edges")
    data["nodes"] = sorted(data["nodes"], key=lambda n: n["id"])
    data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"]))
    return data


def save_tool_graph(g: nx.DiGraph, path: str | Path) -> Path:
    """Write the graph as node-link JSON; a folder gets ``tool_graph.json`` inside it."""
    p = Path(path)
    if p.is_dir():
        p = p / GRAPH_FILE
    text = json.dumps(graph_to_json(g), indent=1, sort_keys=True) + "\n"
    tmp = p.with_name(p.name + ".tmp")
    try:  # written whole or not at all: the file sits beside a spec others read
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def load_tool_graph(path: str | Path) -> nx.DiGraph:
    p = Path(path)
    if p.is_dir():
        p = p / GRAPH_FILE
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SpecError(f"{p}: cannot read tool graph: {e}") from e
    try:
        return nx.node_link_graph(data, directed=True, edges="edges")
    except TypeError:  # networkx < 3.4
        return nx.node_link_graph(data, directed=True, link="edges")
