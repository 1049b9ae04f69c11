"""Grounding a plan's inputs: ids resolved backwards through look-ups, values a user states.

An id argument is worth a row's primary key. ``Grounder.resolve_id`` finds a tool path that
reveals it (a list filtered by the row's own facts, a child row's look-up, ...), trying the
options least used so far first and undoing a failed try; when nothing reveals it, the user
has to know it and it becomes a user fact. ``user_value`` picks the values a person states
(taken from a real row, made fresh for unique fields, or made up within the spec's bounds).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from typing import Any

from ..errors import SampleError
from ..spec import FieldType, ParamSpec, ToolSpec, names_row
from .config import SamplerConfig
from .context import EnvContext
from .draft import PlanDraft
from .plan import ref

__all__ = ["Grounder", "clip", "filter_value"]


def clip(p: ParamSpec, v: Any) -> Any:
    """``v`` within the parameter's bounds (and an int for an integer parameter)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    if p.minimum is not None and v < p.minimum:
        v = p.minimum
    if p.maximum is not None and v > p.maximum:
        v = p.maximum
    if p.type == FieldType.integer:
        v = int(v)
    return v


def filter_value(p: ParamSpec, v: Any) -> Any:
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


class Grounder:
    """Grounds inputs into ``draft`` for one environment; ``pairs`` counts (env, producer,
    consumer) uses so far, so rarely used look-ups are tried first."""

    def __init__(
        self, ctx: EnvContext, draft: PlanDraft, rng: random.Random, config: SamplerConfig, pairs: Counter
    ):
        self.ctx = ctx
        self.draft = draft
        self.rng = rng
        self.config = config
        self.pairs = pairs

    def pair_weight(self, producer: str, consumer: str) -> float:
        return 1.0 / (1.0 + self.pairs[(self.ctx.name, producer, consumer)])

    # ---- ids, resolved backwards ---------------------------------------------------------------

    def resolve_id(
        self, entity: str, row: dict[str, Any], depth: int, consumer: str, avoid: frozenset[str] = frozenset()
    ) -> Any:
        """An argument expression worth ``row``'s primary key, found through tools if possible."""
        ctx = self.ctx
        pk = ctx.ents[entity].primary_key
        options = self._id_routes(entity, row, depth, consumer, avoid)
        # weighted order without replacement (deterministic for the rng state)
        keyed = sorted(options, key=lambda o: -math.log(self.rng.random() or 1e-12) / o[0])
        for _, how, what in keyed:
            mark = self.draft.checkpoint()
            try:
                if how == "list":
                    s, k = self.locate(what, entity, row, depth, avoid)
                    return ref(s, "items", k, pk)
                lt_or_gt, child, fk, kids = what
                kid = self.rng.choice(kids)
                if how == "child_list":
                    s, k = self.locate(lt_or_gt, child, kid, depth + 1, avoid | {fk})
                    return ref(s, "items", k, fk)
                key = self.resolve_id(child, kid, depth + 1, lt_or_gt.name, avoid | {fk})
                s = self.draft.add(lt_or_gt.name, {lt_or_gt.key_param.name: key}, "discover")
                return ref(s, fk)
            except SampleError:
                self.draft.restore(mark)
                continue
        if entity in ctx.account_roots:  # the account's own one: the deployment states its key
            return row[pk]
        if self.config.intent_first:  # a person does not know internal ids
            raise SampleError(f"nothing reveals the {entity} {row[pk]} to the agent")
        self.draft.fact(f"{entity}.{pk}", row[pk])  # nothing reveals it: the user has to know it
        return row[pk]

    def _id_routes(
        self, entity: str, row: dict[str, Any], depth: int, consumer: str, avoid: frozenset[str]
    ) -> list[tuple[float, str, Any]]:
        """(weight, how, what) for each way to reveal ``row``'s key: the entity's own lists, or a
        child row's list or get (which returns the foreign key)."""
        ctx = self.ctx
        pk = ctx.ents[entity].primary_key
        options: list[tuple[float, str, Any]] = []
        for lt in ctx.lists.get(entity, []):
            if pk in ctx.outputs[lt.name] and lt.name != consumer:
                options.append((self.pair_weight(lt.name, consumer), "list", lt))
        if depth + 1 < self.config.max_depth:
            consumer_entity = ctx.tools[consumer].entity
            for child, fk in ctx.fk_children.get(entity, []):
                if fk in avoid or child == consumer_entity:
                    continue
                kids = ctx.state.children.get((child, fk), {}).get(row[pk])
                if not kids:
                    continue
                for lt in ctx.lists.get(child, []):
                    if fk in ctx.outputs[lt.name] and lt.name != consumer:
                        options.append(
                            (0.5 * self.pair_weight(lt.name, consumer), "child_list", (lt, child, fk, kids))
                        )
                gt = ctx.gets.get(child)
                if gt is not None and fk in ctx.outputs[gt.name] and gt.name != consumer:
                    options.append(
                        (0.5 * self.pair_weight(gt.name, consumer), "child_get", (gt, child, fk, kids))
                    )
        return options

    def locate(
        self, lt: ToolSpec, entity: str, row: dict[str, Any], depth: int, avoid: frozenset[str] = frozenset()
    ) -> tuple[int, int]:
        """Add a list step whose results include ``row``; return (step, index in items)."""
        ctx = self.ctx
        pk = ctx.ents[entity].primary_key
        chosen, rest, ids = self._pick_filters(lt, entity, row, depth, avoid)
        args: dict[str, Any] = {}
        if self._estimate(chosen, ids, entity, row) > lt.page_size and lt.max_page_size > lt.page_size:
            args["limit"] = lt.max_page_size
        for _ in range(self.config.locate_tries):
            for p in chosen:
                if p.name in args:
                    continue
                pf = p.field
                assert pf is not None  # _pick_filters keeps only params with a field
                if p in ids:
                    tgt = ctx.target(lt.name, p.name)
                    assert tgt is not None  # id filters point at an entity (_pick_filters)
                    parent = ctx.state.by_pk[tgt].get(row[pf])
                    if parent is None:
                        raise SampleError("dangling reference")
                    v = self.resolve_id(tgt, parent, depth + 1, lt.name, avoid)
                    args[p.name] = [v] if p.op == "in" else v
                else:
                    v = clip(p, filter_value(p, row[pf]))
                    args[p.name] = v
                    self.draft.fact(f"{entity}.{pf}", row[pf])
            mark = self.draft.checkpoint()
            s = self.draft.add(lt.name, dict(args), "discover")
            items = self.draft.sim[s]["items"] if self.draft.sim[s] is not None else []
            for k, it in enumerate(items):
                if pk in it and it[pk] == row[pk]:
                    return s, k
            # not on the first page: narrow with another filter, or ask for a bigger page
            self.draft.restore(mark)
            if rest:
                chosen.append(rest.pop(0))
            elif "limit" not in args and lt.max_page_size > lt.page_size:
                args["limit"] = lt.max_page_size
            else:
                break
        raise SampleError(f"{lt.name} cannot single out the {entity}")

    def _pick_filters(
        self, lt: ToolSpec, entity: str, row: dict[str, Any], depth: int, avoid: frozenset[str]
    ) -> tuple[list[ParamSpec], list[ParamSpec], list[ParamSpec]]:
        """(filters to use, spare filters in order of use, filters that take a parent's id)."""
        ctx = self.ctx
        user, ids = [], []
        for p in lt.params:
            if not p.field or row.get(p.field) is None or p.field in avoid:
                continue
            if ctx.source(lt.name, p.name) == "user":
                if self.config.intent_first and (
                    self._internal(entity, p.field) or not names_row(ctx.spec, entity, p.field)
                ):
                    continue  # a person names a row by what they know: not an internal id, not filler
                if filter_value(p, row[p.field]) is not None:
                    user.append(p)
            elif (
                depth + 1 < self.config.max_depth
                and ctx.target(lt.name, p.name) in ctx.ents
                and p.op in ("eq", "in")
            ):
                ids.append(p)
        self.rng.shuffle(user)
        self.rng.shuffle(ids)
        if self.config.intent_first:
            chosen, rest = self._fewest_words(lt, entity, row, user, ids)
        else:
            chosen = user[: self.rng.randint(1, self.config.max_user_filters)] if user else []
            rest = user[len(chosen) :] + ids
        if ids and (not chosen or self.rng.random() < self.config.p_id_filter) and ids[0] in rest:
            chosen.append(ids[0])
            rest.remove(ids[0])
        for p in [p for p in rest if p.required]:  # a list scoped by its parent takes that parent
            chosen.append(p)
            rest.remove(p)
        # add filters until the row should be on the first page (saves dry runs)
        while rest and self._estimate(chosen, ids, entity, row) > lt.page_size:
            chosen.append(rest.pop(0))
        return chosen, rest, ids

    def _fewest_words(
        self, lt: ToolSpec, entity: str, row: dict[str, Any], user: list[ParamSpec], ids: list[ParamSpec]
    ) -> tuple[list[ParamSpec], list[ParamSpec]]:
        """(filters, spares) as a person names a row: by one detail that tells it apart (a name, an
        email, a date) when there is one, else the most telling details first. Not by every detail
        they know ('the confirmed booking for 1 passenger under the silver-tier traveler with ...')."""
        if not user:
            return [], list(ids)
        by_share = sorted(user, key=lambda p: self._estimate([p], ids, entity, row))
        enough = [p for p in by_share if self._estimate([p], ids, entity, row) <= lt.page_size]
        pick = self.rng.choice(enough[:3]) if enough else by_share[0]
        # then the most telling of the rest, a parent among them ('the twin room in my hotel in Oslo',
        # not 'the twin room for 2 at $799.45 that is not available')
        rest = sorted(
            [p for p in by_share if p is not pick] + ids,
            key=lambda p: self._estimate([pick, p], ids, entity, row),
        )
        return [pick], rest

    def _internal(self, entity: str, fname: str) -> bool:
        ent = self.ctx.ents[entity]
        f = ent.field(fname) if ent.has_field(fname) else None
        return (
            fname == ent.primary_key
            or fname == "id"
            or fname.endswith(("_id", "_uuid"))
            or (f is not None and f.ref is not None)
        )

    def _estimate(self, ps: list[ParamSpec], ids: list[ParamSpec], entity: str, row: dict[str, Any]) -> float:
        """Rows a look-up with filters ``ps`` is expected to return."""
        ctx = self.ctx
        n_rows = len(ctx.state.rows[entity])
        share = 1.0
        for p in ps:
            pf = p.field
            assert pf is not None  # filters from _pick_filters, which keeps only params with a field
            if p in ids:
                kids = ctx.state.children.get((entity, pf), {}).get(row[pf], ())
                share *= max(len(kids), 1) / max(n_rows, 1)
            else:
                share *= ctx.selectivity(entity, pf, p.op, filter_value(p, row[pf]))
        return share * n_rows

    # ---- values the user states ----------------------------------------------------------------

    def user_value(
        self, tool: ToolSpec, p: ParamSpec, template: dict[str, Any] | None, fresh: bool = False
    ) -> Any:
        """A value for ``p`` that the user states (recorded as a fact): ``template``'s field value,
        a fresh one for key and unique fields, or one made up within the parameter's bounds."""
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        if self.config.intent_first and (
            p.name.endswith(("_id", "_uuid"))
            or (p.field and ent.has_field(p.field) and ent.field(p.field).ref)
        ):
            if not p.required:
                return None
            raise SampleError(f"{tool.name}.{p.name} is an internal id no person would state")
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
            v = self._made_up(p)
        if p.enum and v not in p.enum:
            v = self.rng.choice(p.enum)
        if p.type == FieldType.number and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        v = clip(p, v)
        self.draft.fact(f"{tool.name}.{p.name}", v)
        return v

    def _fresh(self, entity: str, fname: str, v: Any) -> Any:
        """A value like ``v`` that no row and no earlier step of this plan has."""
        existing = self.ctx.values(entity, fname)
        for _ in range(self.config.fresh_tries):
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
            if cand not in existing and cand not in self.draft.new_values:
                self.draft.new_values.add(cand)
                return cand
        raise SampleError(f"no fresh value for {entity}.{fname}")

    def _made_up(self, p: ParamSpec) -> Any:
        """A plausible value of the parameter's type (no row to take it from)."""
        clock = dt.datetime.fromisoformat(self.ctx.spec.clock)
        days = self.config.horizon_days
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
            flo = p.minimum if p.minimum is not None else 10.0
            fhi = p.maximum if p.maximum is not None else flo + 490.0
            return round(self.rng.uniform(flo, fhi), 2)
        if t == FieldType.date:
            return (clock.date() + dt.timedelta(days=self.rng.randint(1, days))).isoformat()
        if t == FieldType.datetime:
            return (clock + dt.timedelta(hours=self.rng.randint(1, 24 * days))).isoformat(timespec="seconds")
        if t == FieldType.object:
            return {}
        if t == FieldType.array:
            return []
        return f"{p.name.replace('_', ' ')} {self.rng.randint(1, 999)}"
