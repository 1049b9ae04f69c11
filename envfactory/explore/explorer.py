"""The deterministic explorer: ApiDoc(s) -> EnvSpecs, with no model.

Steps: classify operations (resources.py), infer entities and keys (entities.py), draft
tools (tools.py), split large APIs (split.py), then assemble each group into an EnvSpec
with its foreign-key closure and a seed recipe (seeding.py). Every spec returned has
passed EnvSpec validation; a tool that cannot be expressed is excluded with a reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..errors import ExploreError, SpecError
from ..ingest import ApiDoc
from ..runtime import entity_order
from ..spec import EntitySpec, EnvSpec, FieldSpec, FieldType, ParamSpec, SortSpec, ToolKind, ToolSpec
from .entities import EntityDraft, cap_fields, infer_entities, link_entities
from .naming import env_name, is_ident, plural, snake
from .resources import plan_operation
from .seeding import seed_recipe
from .split import split_tools
from .tools import ToolDraft, create_effects, display_field, draft_tool, prepare_actions

__all__ = ["explore", "ExploreResult", "ExcludedOp"]

_CLOCK = "2026-06-01T09:00:00"


@dataclass(frozen=True)
class ExcludedOp:
    """A documented operation left out, and why."""

    source: str
    operation: str
    reason: str

    def __str__(self) -> str:
        return f"{self.operation}: {self.reason}"


@dataclass
class ExploreResult:
    envs: list[EnvSpec] = field(default_factory=list)
    excluded: list[ExcludedOp] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def explore(doc: ApiDoc | list[ApiDoc], *, domain: str, seed: int = 0, max_tools: int = 40,
            max_envs: int | None = None, row_scale: float = 1.0) -> ExploreResult:
    """Derive environments from one document (or several, explored one by one).

    ``max_tools`` bounds an environment's size (larger APIs are split); ``max_envs`` keeps
    only the largest environments of each document; ``row_scale`` scales seed row counts.

    Raises ExploreError only when not one environment comes out of any document.
    """
    docs = doc if isinstance(doc, list) else [doc]
    result = ExploreResult()
    names: set[str] = set()
    for d in docs:
        _explore_one(d, domain=domain, seed=seed, max_tools=max_tools, max_envs=max_envs, result=result, taken=names,
                     row_scale=row_scale)
    if not result.envs:
        why = Counter(x.reason for x in result.excluded).most_common(2)
        detail = "; ".join(f"{n}x {r}" for r, n in why) or "it documents no operations"
        src = docs[0].source if len(docs) == 1 else f"{len(docs)} documents"
        raise ExploreError(f"{src}: no environment could be derived ({detail})")
    return result


def _explore_one(doc: ApiDoc, *, domain: str, seed: int, max_tools: int, max_envs: int | None,
                 result: ExploreResult, taken: set[str], row_scale: float = 1.0) -> None:
    warnings = [f"{doc.source}: {w}" for w in doc.warnings[:20]]
    excluded: list[ExcludedOp] = []
    plans = []
    for op in doc.operations:
        p = plan_operation(op)
        if p.reason is None and not is_ident(p.entity):
            p.reason = f"resource name {p.entity!r} is not usable"
        if p.reason is not None:
            excluded.append(ExcludedOp(doc.source, op.key, p.reason))
        else:
            plans.append(p)
    ents = infer_entities(plans, doc, warnings)
    link_entities(ents, plans, warnings)
    for e in ents.values():
        cap_fields(e, {f.name for f in e.fields.values() if f.ref})
    prepare_actions(plans, ents, warnings)
    drafts: list[ToolDraft] = []
    for p in plans:
        t, why = draft_tool(p, ents)
        if t is None:
            excluded.append(ExcludedOp(doc.source, p.op.key, why or "cannot be expressed"))
        else:
            drafts.append(t)
    link_entities(ents, plans, warnings)
    for t in drafts:
        if t.kind == "create":
            create_effects(t, ents[t.entity])
    groups = split_tools(drafts, ents, seed=seed, max_tools=max_tools)
    if max_envs is not None:
        groups = sorted(groups, key=len, reverse=True)[:max_envs]
    base = env_name(doc.title, fallback=domain)
    for i, group in enumerate(groups):
        name = base if len(groups) == 1 else _group_name(base, group)
        name = _unique(name, taken)
        spec = _assemble(doc, domain, name, group, ents, seed=seed, excluded=excluded, first=i == 0,
                         warnings=warnings, row_scale=row_scale)
        if spec is not None:
            taken.add(name)
            result.envs.append(spec)
    result.excluded += excluded
    result.warnings += warnings


def _group_name(base: str, group: list[ToolDraft]) -> str:
    main = sorted(Counter(t.entity for t in group).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return f"{base}_{plural(main)}"[:60]


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name}_{i}" in taken:
        i += 1
    return f"{name}_{i}"


def _closure(group: list[ToolDraft], ents: dict[str, EntityDraft]) -> list[str]:
    need = {t.entity for t in group}
    stack = list(need)
    while stack:
        e = stack.pop()
        for f in ents[e].fields.values():
            if f.ref and f.ref not in need:
                need.add(f.ref)
                stack.append(f.ref)
    return sorted(need)


def _entity_spec(d: EntityDraft, keep: set[str], title: str) -> EntitySpec:
    fields = []
    for f in d.fields.values():
        ref = f.ref if f.ref in keep else None
        fields.append(FieldSpec(
            name=f.name, type=f.type, description=f.description, enum=f.enum if f.type == FieldType.enum else None,
            nullable=(f.nullable or (f.ref is not None and ref is None)) and f.name != d.pk,
            ref=ref, default=f.default,
        ))
    desc = d.description or f"A {d.name.replace('_', ' ')} of the {title}."
    return EntitySpec(name=d.name, description=desc, primary_key=d.pk, fields=fields, display_field=display_field(d))


def _finders(group: list[ToolDraft]) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in group:
        if t.kind == "list" and (t.entity not in out or not any(p.required for p in t.params)):
            out[t.entity] = t.name
    return out


def _describe(t: ToolDraft, ents: dict[str, EntityDraft], finders: dict[str, str]) -> str:
    h = t.entity.replace("_", " ")
    ent = ents[t.entity]
    where = f" (find it with {finders[t.entity]})" if t.entity in finders and t.kind != "list" else ""
    head = {
        "get": f"Get one {h} by its {ent.pk}{where}.",
        "list": f"List {plural(t.entity).replace('_', ' ')}, filtered by the arguments given; "
                f"returns a page of results (limit/offset).",
        "create": f"Create a new {h}; returns the created record with its new {ent.pk}.",
        "update": f"Change fields of an existing {h}{where}; pass only the fields to change.",
        "delete": f"Delete a {h}{where}. Fails while other records still reference it.",
        "action": f"{t.base_name.split('_')[0].capitalize()} a {h}{where}: {t.action_note}.",
    }[t.kind]
    refs = []
    for p in t.params:
        f = ent.fields.get(p.field)
        if f is not None and f.ref and not p.key and f.ref in finders:
            refs.append(f"{p.name} from {finders[f.ref]}")
    tail = f" Ids: {', '.join(refs)}." if refs and t.kind in ("create", "list", "update") else ""
    summary = f" Documented as: {t.summary}" if t.summary else ""
    return (head + tail + summary).strip()


def _param_spec(p, ent: EntityDraft) -> ParamSpec:
    f = ent.fields[p.field]
    if p.op == "contains":
        ptype, enum = FieldType.string, None
    else:
        ptype, enum = f.type, (f.enum if f.type == FieldType.enum else None)
    return ParamSpec(name=p.name, type=ptype, description=p.description, required=p.required, field=p.field,
                     op=p.op, key=p.key, enum=enum)


def _tool_spec(t: ToolDraft, ents: dict[str, EntityDraft], finders: dict[str, str]) -> ToolSpec:
    ent = ents[t.entity]
    params = [_param_spec(p, ent) for p in t.params if p.field in ent.fields]
    sort = None
    if t.kind == "list" and t.sortable:
        fields = [f.name for f in ent.fields.values()
                  if f.type in (FieldType.date, FieldType.datetime, FieldType.number, FieldType.integer)
                  or f.name == display_field(ent)][:6]
        if fields:
            sort = SortSpec(fields=fields)
    return ToolSpec(name=t.name, kind=ToolKind(t.kind), entity=t.entity, description=_describe(t, ents, finders),
                    params=params, preconditions=t.preconditions, effects=t.effects, sort=sort,
                    source=t.plan.op.key)


def _name_tools(group: list[ToolDraft]) -> None:
    taken: set[str] = set()
    for t in group:
        cands = [t.base_name]
        if t.plan.parents:
            verb, _, rest = t.base_name.partition("_")
            cands.append(f"{verb}_{t.plan.parents[-1][1]}_{rest}")
        if t.plan.op.operation_id:
            oid = snake(t.plan.op.operation_id)
            if is_ident(oid) and len(oid) <= 60:
                cands.append(oid if oid.split("_")[0] in t.base_name.split("_")[0] else f"{t.base_name.split('_')[0]}_{oid}")
        name = next((c for c in cands if c not in taken), None) or _unique(t.base_name, taken)
        t.name = name[:64]
        taken.add(t.name)


def _assemble(doc: ApiDoc, domain: str, name: str, group: list[ToolDraft], ents: dict[str, EntityDraft], *,
              seed: int, excluded: list[ExcludedOp], first: bool, warnings: list[str],
              row_scale: float = 1.0) -> EnvSpec | None:
    _name_tools(group)
    keep = set(_closure(group, ents))
    title = doc.title or name
    entities = [_entity_spec(ents[e], keep, title) for e in sorted(keep)]
    finders = _finders(group)
    tools: list[ToolSpec] = []
    ent_by = {e.name: e for e in entities}
    for t in group:
        try:
            ts = _tool_spec(t, ents, finders)
            EnvSpec(name=name, domain=domain, entities=[ent_by[t.entity], *[e for e in entities if e.name != t.entity]],
                    tools=[ts])
        except (ValidationError, KeyError, ValueError) as e:
            msg = str(e).splitlines()[0] if not isinstance(e, ValidationError) else e.errors()[0]["msg"]
            excluded.append(ExcludedOp(doc.source, t.plan.op.key, f"tool could not be expressed: {msg}"))
            continue
        tools.append(ts)
    if not tools:
        return None
    mine = [x for x in excluded if x.operation]
    ex = [str(x) for x in mine][:200] if first else []
    desc = f"{title}: " + ", ".join(sorted({plural(t.entity).replace('_', ' ') for t in group}))
    try:
        probe = EnvSpec(name=name, domain=domain, entities=entities, tools=tools)
        entity_order(probe)
        recipe = seed_recipe(probe.entities, ents, seed=seed, clock=_CLOCK, scale=row_scale)
        return EnvSpec(name=name, domain=domain, description=desc[:400], clock=_CLOCK, sources=[doc.source],
                       entities=entities, tools=tools, excluded=ex, seed=recipe)
    except (ValidationError, SpecError, ValueError) as e:
        warnings.append(f"{name}: environment dropped: {_one_line(e)}")
        return None


def _one_line(e: Exception) -> str:
    if isinstance(e, ValidationError):
        first = e.errors()[0]
        return f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}"
    return " ".join(str(e).split())[:300]
