"""The deterministic explorer: ApiDoc(s) -> EnvSpecs, with no model.

Steps: classify operations (resources.py), infer entities and keys (entities.py), draft
tools (tools.py), split large APIs (split.py), then assemble each group into an EnvSpec
with its foreign-key closure and a seed recipe (seeding.py). Several documents of one domain
are first merged into one resource graph, so an environment can cross document boundaries. Every spec returned has
passed EnvSpec validation; a tool that cannot be expressed is excluded with a reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..errors import ExploreError, SpecError
from ..ingest import ApiDoc
from ..spec import (
    DEFAULT_CLOCK,
    EntitySpec,
    EnvSpec,
    FieldSpec,
    FieldType,
    ParamSpec,
    SortSpec,
    ToolKind,
    ToolSpec,
    entity_order,
)
from .entities import EntityDraft, cap_fields, infer_entities, link_entities
from .item_verbs import resolve_item_verbs
from .naming import env_name, is_ident, plural, snake
from .no_state import documents_nothing
from .one_update import one_update
from .resources import plan_operation
from .seeding import annotate_entities, seed_recipe
from .singletons import finish_singleton_tools, shape_singletons, singleton_head, unify_singleton_paths
from .split import add_finders, split_tools
from .tools import ToolDraft, create_effects, display_field, draft_tool, prepare_actions, status_field

__all__ = ["explore", "ExploreResult", "ExcludedOp"]


@dataclass(frozen=True)
class ExcludedOp:
    """A documented operation left out, and why. ``served_by``: the operation whose tool does
    what this one does (a PUT served by the PATCH of the same row), when there is one."""

    source: str
    operation: str
    reason: str
    served_by: str | None = None

    def __str__(self) -> str:
        return f"{self.operation}: {self.reason}"


@dataclass
class ExploreResult:
    envs: list[EnvSpec] = field(default_factory=list)
    excluded: list[ExcludedOp] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # (environment, tool) -> the document the tool's operation comes from (for the fidelity report)
    origins: dict[tuple[str, str], str] = field(default_factory=dict)


def explore(
    doc: ApiDoc | list[ApiDoc],
    *,
    domain: str,
    seed: int = 0,
    max_tools: int = 40,
    max_envs: int | None = None,
    row_scale: float = 1.0,
    merge: bool = True,
) -> ExploreResult:
    """Derive environments from one document, or from several documents of one domain.

    Several documents (with ``merge``, the default) are one resource graph: same-named
    resources and schemas unify into one entity, foreign keys resolve across documents
    (``traveler_id`` in one names the ``Traveler`` of another), and the graph is split by
    community detection, so an environment can span documents. Merged environments are
    named ``<domain>_<main resources>``; a single document's after its title.

    ``max_tools`` bounds an environment's size (larger graphs are split); ``max_envs`` keeps
    only the largest environments (of each graph); ``row_scale`` scales seed row counts.

    Raises ExploreError only when not one environment comes out of any document.
    """
    docs = doc if isinstance(doc, list) else [doc]
    result = ExploreResult()
    names: set[str] = set()
    groups = [docs] if merge and len(docs) > 1 else [[d] for d in docs]
    for g in groups:
        _explore_graph(
            g,
            domain=domain,
            seed=seed,
            max_tools=max_tools,
            max_envs=max_envs,
            result=result,
            taken=names,
            row_scale=row_scale,
        )
    if not result.envs:
        why = Counter(x.reason for x in result.excluded).most_common(2)
        detail = "; ".join(f"{n}x {r}" for r, n in why) or "it documents no operations"
        src = docs[0].source if len(docs) == 1 else f"{len(docs)} documents"
        raise ExploreError(f"{src}: no environment could be derived ({detail})")
    return result


def _explore_graph(
    docs: list[ApiDoc],
    *,
    domain: str,
    seed: int,
    max_tools: int,
    max_envs: int | None,
    result: ExploreResult,
    taken: set[str],
    row_scale: float = 1.0,
) -> None:
    merged = len(docs) > 1
    warnings = [f"{d.source}: {w}" for d in docs for w in d.warnings[:20]]
    excluded: list[ExcludedOp] = []
    plans = []
    for d in docs:
        for op in d.operations:
            p = plan_operation(op)
            p.source = d.source
            if p.reason is None and not is_ident(p.entity):
                p.reason = f"resource name {p.entity!r} is not usable"
            if p.reason is not None:
                excluded.append(ExcludedOp(d.source, op.key, p.reason))
            else:
                plans.append(p)
    unify_singleton_paths(plans)
    excluded += [ExcludedOp(p.source, p.op.key, p.reason) for p in plans if p.reason is not None]
    plans = [p for p in plans if p.reason is None]
    ents = infer_entities(plans, docs, warnings)
    silent = documents_nothing(plans, ents)
    if silent:  # nextnumber, ping, pay_all: nothing documented to store or read back
        excluded += [ExcludedOp(p.source, p.op.key, why) for p, why in silent]
        plans = [p for p in plans if p.reason is None]
        ents = infer_entities(plans, docs, warnings)
    singles = shape_singletons(ents, plans)
    before = [(p.kind, p.entity) for p in plans]
    dropped = resolve_item_verbs(plans, ents)
    if dropped or before != [(p.kind, p.entity) for p in plans]:
        excluded += [ExcludedOp(p.source, p.op.key, why) for p, why in dropped]
        plans = [p for p in plans if p.reason is None]
        ents = infer_entities(plans, docs, warnings)  # without the made-up resources
        singles = shape_singletons(ents, plans)
    link_entities(ents, plans, warnings)
    for e in ents.values():
        # a wide row (Stripe's invoice: 80 properties) keeps its documented status among the
        # fields it is cut to: the actions move it (else they invented one: draft, finalized, sent ...)
        sf = status_field(e)
        cap_fields(e, {f.name for f in e.fields.values() if f.ref} | ({sf.name} if sf is not None else set()))
    prepare_actions(plans, ents, warnings)
    drafts: list[ToolDraft] = []
    for p in plans:
        t, why = draft_tool(p, ents)
        if t is None:
            excluded.append(ExcludedOp(p.source, p.op.key, why or "cannot be expressed"))
        else:
            drafts.append(t)
    drafts = _one_update(drafts, excluded)
    drafts, cleared = finish_singleton_tools(drafts, ents)
    excluded += [ExcludedOp(t.plan.source, t.plan.op.key, why) for t, why in cleared]
    link_entities(ents, plans, warnings)
    for t in drafts:
        if t.kind == "create":
            create_effects(t, ents[t.entity])
    groups = split_tools(drafts, ents, seed=seed, max_tools=max_tools, pack=True)
    groups = add_finders(groups, drafts, ents, max_tools=max_tools)
    if max_envs is not None:
        groups = sorted(groups, key=len, reverse=True)[:max_envs]
    titles = {d.source: d.title for d in docs}
    origin = _entity_origin(plans, docs)
    base = env_name(docs[0].title, fallback=domain) if not merged else snake(domain)
    for i, group in enumerate(groups):
        if merged:
            name = _merged_name(base, group, ents)
        else:
            name = base if len(groups) == 1 else _group_name(base, group)
        name = _unique(name, taken)
        spec = _assemble(
            docs,
            domain,
            name,
            group,
            ents,
            seed=seed,
            excluded=excluded,
            first=i == 0,
            warnings=warnings,
            row_scale=row_scale,
            titles=titles,
            origin=origin,
            singles=singles,
        )
        if spec is not None:
            taken.add(name)
            result.envs.append(spec)
            shipped = {t.name for t in spec.tools}
            result.origins.update({(name, t.name): t.plan.source for t in group if t.name in shipped})
    result.excluded += excluded
    result.warnings += [w for w in dict.fromkeys(warnings) if w not in result.warnings]


def _one_update(drafts: list[ToolDraft], excluded: list[ExcludedOp]) -> list[ToolDraft]:
    """The drafts without the PUTs whose PATCH makes the one update tool (recorded as served by it)."""
    drafts, served = one_update(drafts)
    for put, patch in served:
        excluded.append(
            ExcludedOp(
                put.plan.source,
                put.plan.op.key,
                f"served by the update tool of {patch.plan.op.key}: one update of the same row",
                served_by=patch.plan.op.key,
            )
        )
    return drafts


def _entity_origin(plans: list, docs: list[ApiDoc]) -> dict[str, str]:
    """Entity -> the first document with an operation on it (for descriptions and sources)."""
    out: dict[str, str] = {}
    for p in plans:
        out.setdefault(p.entity, p.source)
        for _, parent in p.parents:
            out.setdefault(parent, p.source)
    return out


def _group_name(base: str, group: list[ToolDraft]) -> str:
    main = sorted(Counter(t.entity for t in group).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return f"{base}_{plural(main)}"[:60]


def _merged_name(base: str, group: list[ToolDraft], ents: dict[str, EntityDraft]) -> str:
    """``<domain>_<main resource>[_and_<second>]``: the resources with the most tools (ties: the
    most referenced within the group, then the name), so the name is stable across runs."""
    per = Counter(t.entity for t in group)
    refd = Counter(f.ref for e in per for f in ents[e].fields.values() if f.ref in per and f.ref != e)
    ranked = sorted(per, key=lambda e: (-per[e], -refd[e], e))
    words = [plural(ranked[0])]
    if len(ranked) > 1 and per[ranked[1]] * 2 >= per[ranked[0]]:
        words.append(plural(ranked[1]))
    name = f"{base}_{'_and_'.join(words)}"
    if len(name) > 60:
        name = f"{base}_{words[0]}"[:60].rstrip("_")
    return name


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


def _entity_spec(d: EntityDraft, keep: set[str], title: str, singleton: bool = False) -> EntitySpec:
    fields = []
    for f in d.fields.values():
        ref = f.ref if f.ref in keep else None
        fields.append(
            FieldSpec(
                name=f.name,
                type=f.type,
                description=f.description,
                enum=f.enum if f.type == FieldType.enum else None,
                nullable=(f.nullable or (f.ref is not None and ref is None)) and f.name != d.pk,
                ref=ref,
                default=f.default,
            )
        )
    desc = d.description or f"A {d.name.replace('_', ' ')} of the {title}."
    return EntitySpec(
        name=d.name,
        description=desc,
        primary_key=d.pk,
        fields=fields,
        display_field=display_field(d),
        singleton=singleton,
    )


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
        "action": _action_head(t, ent, finders),
    }[t.kind]
    head = singleton_head(t, ent) or head
    if t.upsert:
        key = next((p.name for p in t.params if p.key), ent.pk)
        head = (
            f"Create {'an' if h[:1] in 'aeiou' else 'a'} {h}, or change an existing one when {key} "
            f"names a stored {h}{where}; without {key} (or with a new one) the call creates the {h}."
        )
    key_p = next((p for p in t.params if p.key), None)
    if key_p is not None and not key_p.required and not t.upsert and t.kind not in ("create", "action"):
        head += f" Give {key_p.name} to select the {h}; without it the call selects none."
    refs = []
    for p in t.params:
        f = ent.fields.get(p.field)
        if f is not None and f.ref and not p.key and f.ref in finders:
            refs.append(f"{p.name} from {finders[f.ref]}")
    tail = f" Ids: {', '.join(refs)}." if refs and t.kind in ("create", "list", "update") else ""
    summary = f" Documented as: {t.summary}" if t.summary else ""
    return (head + tail + summary).strip()


def _action_head(t: ToolDraft, ent: EntityDraft, finders: dict[str, str]) -> str:
    """``Declare a loan lost. Needs loan_id (from search_loans); note optional. Sets status to 'lost'...``"""
    h = t.entity.replace("_", " ")
    article = "an" if h[:1] in "aeio" else "a"
    verb, _, rest = t.base_name.partition(f"_{t.entity}")
    lead = f"{verb.replace('_', ' ').capitalize()} {article} {h}{rest.replace('_', ' ')}"
    key = next((p for p in t.params if p.key), None)
    need = []
    if key is not None:
        need.append(f"{key.name} (from {finders[t.entity]})" if t.entity in finders else key.name)
    for p in t.params:
        if p.key:
            continue
        f = ent.fields.get(p.field)
        src = f" (from {finders[f.ref]})" if f is not None and f.ref in finders else ""
        need.append(f"{p.name}{src}" + ("" if p.required else " optional"))
    needs = f" Needs {', '.join(need)}." if need else ""
    note = t.action_note[:1].upper() + t.action_note[1:] if t.action_note else ""
    return f"{lead}.{needs}" + (f" {note}." if note else "")


def _param_spec(p, ent: EntityDraft) -> ParamSpec:
    if not p.field and p.ftype is not None:  # an argument an effect reads (an amount), not a column
        return ParamSpec(
            name=p.name, type=p.ftype, description=p.description, required=p.required, minimum=p.minimum
        )
    f = ent.fields[p.field]
    if p.op == "contains":
        ptype, enum = FieldType.string, None
    else:
        ptype, enum = f.type, (f.enum if f.type == FieldType.enum else None)
    return ParamSpec(
        name=p.name,
        type=ptype,
        description=p.description,
        required=p.required,
        field=p.field,
        op=p.op,
        key=p.key,
        enum=enum,
    )


def _tool_spec(t: ToolDraft, ents: dict[str, EntityDraft], finders: dict[str, str]) -> ToolSpec:
    ent = ents[t.entity]
    params = [
        _param_spec(p, ent)
        for p in t.params
        if p.field in ent.fields or (not p.field and p.ftype is not None)
    ]
    sort = None
    if t.kind == "list" and t.sortable:
        fields = [
            f.name
            for f in ent.fields.values()
            if f.type in (FieldType.date, FieldType.datetime, FieldType.number, FieldType.integer)
            or f.name == display_field(ent)
        ][:6]
        if fields:
            sort = SortSpec(fields=fields)
    return ToolSpec(
        name=t.name,
        kind=ToolKind(t.kind),
        entity=t.entity,
        description=_describe(t, ents, finders),
        params=params,
        preconditions=t.preconditions,
        effects=t.effects,
        sort=sort,
        source=t.plan.op.key,
        upsert=t.upsert,
    )


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
                cands.append(
                    oid
                    if oid.split("_")[0] in t.base_name.split("_")[0]
                    else f"{t.base_name.split('_')[0]}_{oid}"
                )
        name = next((c for c in cands if c not in taken), None) or _unique(t.base_name, taken)
        t.name = name[:64]
        taken.add(t.name)


def _assemble(
    docs: list[ApiDoc],
    domain: str,
    name: str,
    group: list[ToolDraft],
    ents: dict[str, EntityDraft],
    *,
    seed: int,
    excluded: list[ExcludedOp],
    first: bool,
    warnings: list[str],
    row_scale: float = 1.0,
    titles: dict[str, str] | None = None,
    origin: dict[str, str] | None = None,
    singles: set[str] | frozenset[str] = frozenset(),
) -> EnvSpec | None:
    _name_tools(group)
    keep = set(_closure(group, ents))
    titles = titles or {d.source: d.title for d in docs}
    origin = origin or {}
    merged = len(docs) > 1
    default_title = docs[0].title or name
    entities = [
        _entity_spec(ents[e], keep, titles.get(origin.get(e, ""), "") or default_title, e in singles)
        for e in sorted(keep)
    ]
    finders = _finders(group)
    tools: list[ToolSpec] = []
    ent_by = {e.name: e for e in entities}
    for t in group:
        try:
            ts = _tool_spec(t, ents, finders)
            EnvSpec(
                name=name,
                domain=domain,
                entities=[ent_by[t.entity], *[e for e in entities if e.name != t.entity]],
                tools=[ts],
            )
        except (ValidationError, KeyError, ValueError) as e:
            msg = str(e).splitlines()[0] if not isinstance(e, ValidationError) else e.errors()[0]["msg"]
            excluded.append(ExcludedOp(t.plan.source, t.plan.op.key, f"tool could not be expressed: {msg}"))
            continue
        tools.append(ts)
    if not tools:
        return None
    # the documents this environment draws on: its tools' and the ones defining its other entities
    used = {t.plan.source for t in group} | {origin[e] for e in keep if e in origin}
    sources = [d.source for d in docs if d.source in used] or [docs[0].source]
    if merged:
        ex = [f"{Path(x.source).name}: {x}" for x in excluded if x.operation and x.source in used][:200]
        title = " / ".join(titles[s] for s in sources if titles.get(s)) or name
        desc = f"{title}: "
    else:
        ex = [str(x) for x in excluded if x.operation][:200] if first else []
        desc = f"{default_title}: "
    desc += ", ".join(sorted({plural(t.entity).replace("_", " ") for t in group}))
    try:
        entities = annotate_entities(entities, ents)  # field roles and constraints (explore.seeding)
        probe = EnvSpec(name=name, domain=domain, entities=entities, tools=tools)
        entity_order(probe)
        recipe = seed_recipe(
            probe.entities,
            ents,
            seed=seed,
            clock=DEFAULT_CLOCK,
            scale=row_scale,
            written={t.entity for t in tools if t.writes},
            deleted={t.entity for t in tools if t.kind == ToolKind.delete},
        )
        for one in probe.entities:  # a singleton is one row, or one per parent row (as the runtime seeds it)
            if one.singleton and one.name in recipe.entities:
                parent = recipe.entities.get(one.parent or "")
                recipe.entities[one.name].rows = parent.rows if parent is not None else 1
        return EnvSpec(
            name=name,
            domain=domain,
            description=desc[:400],
            clock=DEFAULT_CLOCK,
            sources=sources,
            entities=entities,
            tools=tools,
            excluded=ex,
            seed=recipe,
        )
    except (ValidationError, SpecError, ValueError) as e:
        warnings.append(f"{name}: environment dropped: {_one_line(e)}")
        return None


def _one_line(e: Exception) -> str:
    if isinstance(e, ValidationError):
        first = e.errors()[0]
        return f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}"
    return " ".join(str(e).split())[:300]
