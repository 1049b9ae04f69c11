"""Grounding goals: a list, keyed (get/update/delete/action) or create goal with its inputs,
a second goal chained on the first one's row, and a side look-up branch.

Each goal returns its step and a ``Landing`` (the row it leaves behind, predicted) so a
second goal can act on that row through a reference to the first goal's output.
"""

from __future__ import annotations

from typing import Any

from ..errors import SampleError
from ..spec import ParamSpec, ToolKind, ToolSpec, compare, is_filler, states_value, tells_row
from .draft import Landing
from .ground import Grounder
from .plan import is_ref, ref
from .tool_graph import created_row_preview

__all__ = ["GoalBuilder"]


def _literal(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if not is_ref(v)}


class GoalBuilder(Grounder):
    """Adds goal steps (with every input grounded) to the draft."""

    def goal(
        self,
        tool: ToolSpec,
        fixed: dict[str, Any] | None = None,
        row: dict[str, Any] | None = None,
        role: str = "goal",
        landing: Landing | None = None,
    ) -> tuple[int, Landing | None]:
        """Add ``tool`` with inputs resolved; return (step, the row it leaves behind).

        ``fixed`` presets arguments; ``row`` is the state row they select (the key's row, or for
        a create the row its fixed foreign key points at); ``landing`` instead names a row an
        earlier goal of this plan produced or changed (its preconditions are predicted, not read).
        """
        if tool.kind == ToolKind.list:
            return self._list_goal(tool, role)
        if tool.kind == ToolKind.create:
            return self._create_goal(tool, fixed or {}, role, landing.row if landing is not None else row)
        return self._keyed_goal(tool, fixed or {}, row, role, landing)

    def _list_goal(self, tool: ToolSpec, role: str) -> tuple[int, Landing | None]:
        rows = self.ctx.state.rows[tool.entity]
        if not rows:
            raise SampleError(f"no {tool.entity} rows to list")
        row = self.rng.choice(rows)
        s = None
        if self.rng.random() >= self.config.p_unfiltered_list and tool.params:
            mark = self.draft.checkpoint()
            try:
                s, _ = self.locate(tool, tool.entity, row, 0)
                self.draft.steps[s].role = role
            except SampleError:
                self.draft.restore(mark)
        if s is None:
            s = self.draft.add(tool.name, {}, role)
        items = self.draft.sim[s]["items"]
        if not items:
            raise SampleError("empty result")
        pk = self.ctx.ents[tool.entity].primary_key
        k = next((i for i, it in enumerate(items) if it.get(pk) == row[pk]), None)
        return s, (Landing(dict(row), [s, "items", k]) if k is not None else None)

    def _keyed_goal(
        self,
        tool: ToolSpec,
        fixed: dict[str, Any],
        row: dict[str, Any] | None,
        role: str,
        landing: Landing | None,
    ) -> tuple[int, Landing | None]:
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        pk = ent.primary_key
        args: dict[str, Any] = dict(fixed)
        key = tool.key_param
        if key is None:  # a singleton's keyless tools act on its one row
            rows = ctx.state.candidates(tool)
            if not rows:
                raise SampleError(f"no {ent.name} that {tool.name} accepts")
            row = rows[0]
        elif key.name not in args:
            row, landing = self._pick_target(tool, args)
        current = landing.row if landing is not None else row
        if current is not None and current.get(pk) is not None:
            self.draft.used.add((ent.name, current[pk]))
        self._keyed_values(tool, args, current)
        if landing is None and row is not None:
            if not ctx.state.check(ent.name, row, tool.preconditions, _literal(args)):
                raise SampleError(f"{tool.name} preconditions fail")
        s = self.draft.add(tool.name, args, role)
        if current is None or tool.kind == ToolKind.delete:
            return s, None
        after = dict(current)
        for p in tool.params:
            if p.field and not p.key and p.name in args and not is_ref(args[p.name]):
                after[p.field] = args[p.name]
        for ef in tool.effects:
            if "." not in ef.field:
                after[ef.field] = ef.set if ef.uses_set else None
        return s, Landing(after, [s], created=landing is not None and landing.created)

    def _pick_target(
        self, tool: ToolSpec, args: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, Landing | None]:
        """The row a keyed goal acts on, its key argument set in ``args``: a row a setup create
        makes (a ``Landing``), or a state row resolved backwards."""
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        pk = ent.primary_key
        key = tool.key_param
        assert key is not None  # _keyed_goal calls this only for a tool with a key parameter
        pool = ctx.state.candidates(tool, deletable=tool.kind == ToolKind.delete)
        cands = [
            r
            for r in (self.rng.choice(pool) for _ in range(self.config.candidate_draws) if pool)
            if (ent.name, r[pk]) not in self.draft.used
        ]
        creators = [
            c
            for c in ctx.creators.get(ent.name, [])
            if ctx.graph.has_edge(c.name, tool.name)
            and ctx.graph.edges[c.name, tool.name].get("satisfies") is True
            and pk in ctx.outputs[c.name]
        ]
        if self.config.intent_first and tool.kind != ToolKind.action:
            creators = []  # 'create a row, then edit or delete it' is not one person's request
        if creators and (not cands or self.rng.random() < self.config.p_create):
            c = min(creators, key=lambda t: (self.pairs[(ctx.name, t.name, tool.name)], t.name))
            cs, made = self._create_goal(c, {}, "setup")
            args[key.name] = ref(cs, pk)
            return None, made
        if cands:
            row = self.rng.choice(cands)
            args[key.name] = self.resolve_id(ent.name, row, 0, tool.name)
            return row, None
        raise SampleError(f"no {ent.name} that {tool.name} accepts")

    def _keyed_values(self, tool: ToolSpec, args: dict[str, Any], current: dict[str, Any] | None) -> None:
        """The non-key values a keyed goal sets: required ones, and for an update one or two
        optional fields (an action: each optional one by chance). An update's values must change
        ``current`` (the row it writes, when known): setting what a row already holds is no change."""
        ctx = self.ctx
        ent = ctx.ents[tool.entity]
        values = [p for p in tool.params if not p.key and p.name not in args]
        template = self.rng.choice(ctx.state.rows[ent.name]) if ctx.state.rows[ent.name] else None
        optional = [p for p in values if not p.required and p.field and self._stated(tool, p)] or [
            p for p in values if not p.required and p.field and self._stated(tool, p, plain=True)
        ]
        want = {p.name for p in values if p.required}
        if self.config.intent_first:
            self._check_stated(tool, [p for p in values if p.required])
        if tool.kind == ToolKind.update and not want and optional:
            k = self.rng.randint(1, min(self.config.max_update_fields, len(optional)))
            want |= {p.name for p in self.rng.sample(optional, k)}
        elif tool.kind == ToolKind.update and not want and self.config.intent_first:
            raise SampleError(f"{tool.name} changes nothing a person would state")
        elif tool.kind == ToolKind.action:
            want |= {p.name for p in optional if self.rng.random() < self.config.p_action_option}
            optional = [p for p in values if not p.required and p.field]  # an effect's argument below
            # an action whose every effect writes an argument changes nothing without one of them
            driven = [p for p in optional if any(e.param == p.name for e in tool.effects)]
            if driven and all(e.param for e in tool.effects) and not want & {p.name for p in driven}:
                want.add(self.rng.choice(driven).name)
        for p in values:
            if p.name not in want:
                continue
            tgt = ctx.target(tool.name, p.name)
            if (
                ctx.source(tool.name, p.name) == "discover"
                and tgt is not None
                and tgt in ctx.ents
                and ctx.state.rows[tgt]
            ):
                other = self.rng.choice(ctx.state.rows[tgt])
                args[p.name] = self.resolve_id(tgt, other, 1, tool.name)
            else:
                tmpl = template
                if p.field and (tmpl is None or tmpl.get(p.field) is None):
                    rows = ctx.rows_with(ent.name, p.field)
                    tmpl = self.rng.choice(rows) if rows else None
                fresh = tool.kind == ToolKind.update and p.field is not None and ent.field(p.field).unique
                args[p.name] = self.user_value(tool, p, tmpl, fresh=fresh)
                held = current.get(p.field) if current is not None and p.field else None
                if tool.kind == ToolKind.update and p.field and held is not None and args[p.name] == held:
                    rows = [r for r in ctx.rows_with(ent.name, p.field) if r.get(p.field) != held]
                    if not rows:
                        raise SampleError(f"{tool.name}: no other value for {p.name}")
                    args[p.name] = self.user_value(tool, p, self.rng.choice(rows), fresh=fresh)
                    if args[p.name] == held:
                        raise SampleError(f"{tool.name}: {p.name} already holds that value")

    def _stated(self, tool: ToolSpec, p: ParamSpec, *, plain: bool = False) -> bool:
        """Whether a person would state a value for optional parameter ``p`` (always, unless plans
        are intent-first: then not filler, a bookkeeping stamp or an object). Unless ``plain``, also
        a field that says what it holds (a role or documented values): a title, a date, an amount,
        not a bare 'sequence 50' or 'private copy yes' when the row has better details to give."""
        if not self.config.intent_first:
            return True
        ent = self.ctx.ents[tool.entity]
        if p.field and ent.has_field(p.field):
            f = ent.field(p.field)
            if not states_value(self.ctx.spec, ent.name, p.field):
                return False
            return plain or ent.role_of(f) is not None or bool(f.enum) or f.type.value == "enum"
        return p.type.value not in ("object", "array")

    def _check_stated(self, tool: ToolSpec, required: list[ParamSpec]) -> None:
        """A required value only filler could fill ('expression: Secured content-based portal') is
        one no person would state: the goal is not one a person makes."""
        ent = self.ctx.ents[tool.entity]
        for p in required:
            if p.field and ent.has_field(p.field) and not ent.field(p.field).ref:
                if is_filler(self.ctx.spec, ent, ent.field(p.field)):
                    raise SampleError(f"{tool.name}.{p.name}: no value a person would state")

    def _create_goal(
        self, tool: ToolSpec, fixed: dict[str, Any], role: str, fixed_row: dict[str, Any] | None = None
    ) -> tuple[int, Landing]:
        ent = self.ctx.ents[tool.entity]
        own = [c for c in tool.preconditions if "." not in c.field]
        for _ in range(self.config.create_tries):
            mark = self.draft.checkpoint()
            try:
                return self._create_once(tool, ent, fixed, own, role, fixed_row)
            except SampleError:
                self.draft.restore(mark)
        raise SampleError(f"cannot ground {tool.name}")

    def _create_once(
        self,
        tool: ToolSpec,
        ent: Any,
        fixed: dict[str, Any],
        own: list,
        role: str,
        fixed_row: dict[str, Any] | None,
    ) -> tuple[int, Landing]:
        ctx = self.ctx
        rows = ctx.state.rows[ent.name]
        template = self.rng.choice(rows) if rows else None
        args: dict[str, Any] = dict(fixed)
        predicted: dict[str, Any] = dict(created_row_preview(ctx.spec, tool))
        fks: list[ParamSpec] = []
        if self.config.intent_first:
            self._check_stated(tool, [p for p in tool.params if p.required and p.name not in args])
        spare: list[ParamSpec] = []  # optional values a person could state, left out by chance
        for p in tool.params:
            if p.name in args:
                continue
            is_fk = p.field and ent.has_field(p.field) and ent.field(p.field).ref and not p.key
            if is_fk:
                if p.required or self.rng.random() < self.config.p_optional_ref:
                    fks.append(p)
                continue
            if ctx.source(tool.name, p.name) == "discover" and not p.required:
                continue
            if not p.required and not self._stated(tool, p, plain=True):
                continue
            if p.required or (
                template is not None
                and p.field
                and self._stated(tool, p)
                and self.rng.random() < self.config.p_optional_value
            ):
                v = self.user_value(tool, p, template)
                if v is not None:
                    args[p.name] = v
            elif template is not None and p.field:
                spare.append(p)
        if self.config.intent_first and template is not None:
            # a person creating a row names it when it has a name: 'a task called ...', not a task
            # with notes and a position and no title
            telling = [p for p in spare if p.field and tells_row(ctx.spec, ent.name, p.field)]
            names = {q.name for q in tool.params}
            said = [tool.param(n).field for n in args if not is_ref(args[n]) and n in names]
            if telling and not any(f and ent.has_field(f) and tells_row(ctx.spec, ent.name, f) for f in said):
                p = self.rng.choice(telling)
                v = self.user_value(tool, p, template)
                if v is not None:
                    args[p.name] = v
        if self.config.intent_first and not self._says_something(tool, args):
            # 'add an order' says nothing, nor 'a notification with always no': a person creating a
            # row states at least one detail of it beyond a flag or a documented value
            for p in sorted(spare, key=lambda q: not self._stated(tool, q)):  # telling fields first
                if p.name in args:
                    continue
                v = self.user_value(tool, p, template)
                if v is not None:
                    args[p.name] = v
                    if self._says_something(tool, args):
                        break
            else:
                raise SampleError(f"{tool.name}: a new row with no detail a person would state")
        for p in tool.params:
            if p.field and p.name in args and not is_ref(args[p.name]):
                predicted[p.field] = args[p.name]
        if fixed_row is not None:
            self._check_chained_row(tool, fixed, args, fixed_row)
        for p in fks:
            self._create_parent(tool, ent, p, args, predicted)
        if not ctx.state.check(ent.name, predicted, own, _literal(args)):
            raise SampleError(f"{tool.name} own preconditions fail")
        s = self.draft.add(tool.name, args, role)
        return s, Landing(predicted, [s], created=True)

    def _says_something(self, tool: ToolSpec, args: dict[str, Any]) -> bool:
        """Whether a create's literal arguments state a detail of the new row (not only its parent)."""
        ent = self.ctx.ents[tool.entity]
        for name, v in args.items():
            if is_ref(v) or v is None:
                continue
            p = tool.param(name)
            if p.field and ent.has_field(p.field) and not ent.field(p.field).ref:
                f = ent.field(p.field)
                if f.type.value in ("boolean", "enum") or f.enum or isinstance(v, bool):
                    continue  # a flag or one of a few documented values tells nothing of the row
                if states_value(self.ctx.spec, ent.name, p.field):
                    return True
        return False

    def _check_chained_row(
        self, tool: ToolSpec, fixed: dict[str, Any], args: dict[str, Any], fixed_row: dict[str, Any]
    ) -> None:
        """The row a chained create's fixed foreign key points at must pass every condition."""
        for p in tool.params:
            if p.name in fixed and p.field:
                for c in tool.preconditions:
                    if c.field.startswith(p.field + "."):
                        want = args.get(c.value_param) if c.value_param else c.value
                        if c.value_param and want is None:
                            continue
                        if not compare(fixed_row.get(c.field.split(".", 1)[1]), c.op, want):
                            raise SampleError(f"{tool.name}: the chained row fails a precondition")

    def _create_parent(
        self, tool: ToolSpec, ent: Any, p: ParamSpec, args: dict[str, Any], predicted: dict[str, Any]
    ) -> None:
        """Ground foreign key ``p`` of a create: a parent a setup step creates, or an existing
        row the tool accepts, resolved backwards."""
        ctx = self.ctx
        pf = p.field
        assert pf is not None  # callers pass foreign-key params, which map to a field
        tgt = ent.field(pf).ref
        tpk_name = ctx.ents[tgt].primary_key
        conds = [c for c in tool.preconditions if c.field.startswith(pf + ".")]
        creators = [
            c for c in ctx.creators.get(tgt, []) if c.name != tool.name and ctx.outputs[c.name] >= {tpk_name}
        ]
        if creators and not conds and self.rng.random() < self.config.p_create_parent:
            c = self.rng.choice(creators)
            cs, _ = self._create_goal(c, {}, "setup")
            args[p.name] = ref(cs, tpk_name)
            return
        cands = ctx.state.candidates(tool, fk=pf)
        if not cands:
            raise SampleError(f"no {tgt} that {tool.name} accepts")
        vconds = [c for c in conds if c.value_param]
        pick = None
        for _ in range(self.config.parent_draws):
            r = self.rng.choice(cands)
            if (tgt, r[tpk_name]) in self.draft.used:
                continue
            if ctx.state.check(ent.name, {pf: r[tpk_name]}, vconds, args):
                pick = r
                break
        if pick is None:
            raise SampleError(f"no {tgt} fits {tool.name}")
        self.draft.used.add((tgt, pick[tpk_name]))
        predicted[pf] = pick[tpk_name]
        args[p.name] = self.resolve_id(tgt, pick, 0, tool.name)

    # ---- extras -----------------------------------------------------------------------------------

    def chain(self, g_step: int, g_tool: ToolSpec, after: Landing) -> bool:
        """Add a second goal that acts on the row the first goal produced or found, or on a
        row that row references (the booking's traveller), fed from the first goal's output."""
        ctx = self.ctx
        options = self._chain_options(g_tool, after)
        if not options:
            return False
        w = [1.0 / (1 + self.pairs[(ctx.name, g_tool.name, t.name)]) for t, _, _, _ in options]
        t, fixed, row, landing = self.rng.choices(options, weights=w)[0]
        mark = self.draft.checkpoint()
        try:
            if t.kind == ToolKind.list:
                s = self.draft.add(t.name, fixed, "goal")
            else:
                s, _ = self.goal(t, fixed, row=row, landing=landing)
        except SampleError:
            self.draft.restore(mark)
            return False
        self.draft.steps[s].deps = sorted(set(self.draft.steps[s].deps) | {g_step})
        self.draft.goal_steps.append(s)
        return True

    def _chain_options(
        self, g_tool: ToolSpec, after: Landing
    ) -> list[tuple[ToolSpec, dict[str, Any], dict[str, Any] | None, Landing | None]]:
        """(tool, fixed arguments, state row they point at, or the first goal's own row)."""
        ctx = self.ctx
        ent = ctx.ents[g_tool.entity]
        pk = ent.primary_key
        row = after.row
        out: list[tuple[ToolSpec, dict[str, Any], dict[str, Any] | None, Landing | None]] = []
        if pk in ctx.outputs[g_tool.name]:
            for t in ctx.spec.tools:
                if t.name == g_tool.name or t.kind == ToolKind.list:
                    continue
                if t.entity == ent.name and t.key_param is not None and t.kind != ToolKind.create:
                    if (
                        t.kind == ToolKind.delete
                        and not after.created
                        and row.get(pk) in ctx.state.referenced[ent.name]
                    ):
                        continue
                    if self.config.intent_first and not self._coherent_follow_up(g_tool, t, after):
                        continue
                    if ctx.state.check(ent.name, row, t.preconditions):
                        out.append((t, {t.key_param.name: ref(*after.path, pk)}, None, after))
                elif t.kind == ToolKind.create:
                    p = self._parent_param(t, ent.name)
                    if p is not None and ctx.state.check(ent.name, row, self._parent_conds(t, p)):
                        out.append((t, {p.name: ref(*after.path, pk)}, None, after))
        for f in ent.fields:
            if (
                not f.ref
                or f.ref == ent.name
                or f.name not in ctx.outputs[g_tool.name]
                or row.get(f.name) is None
            ):
                continue
            parent = ctx.state.by_pk[f.ref].get(row[f.name])
            if parent is None:
                continue
            out.extend(self._parent_options(g_tool, f, row[f.name], parent, ref(*after.path, f.name)))
        return out

    @staticmethod
    def _coherent_follow_up(first: ToolSpec, t: ToolSpec, after: Landing) -> bool:
        """Whether a person would ask for ``t`` on the row ``first`` just produced: not to delete or
        re-edit a row they just created or changed, nor to look it up again (the write returned it)."""
        if t.kind == ToolKind.delete:
            return False
        if after.created or first.writes:
            return t.kind == ToolKind.action and t.name.split("_")[0] != first.name.split("_")[0]
        return True

    def _parent_options(
        self, g_tool: ToolSpec, f: Any, parent_key: Any, parent: dict[str, Any], val: Any
    ) -> list[tuple[ToolSpec, dict[str, Any], dict[str, Any] | None, Landing | None]]:
        """Second goals on the row that field ``f`` of the first goal's row points at."""
        ctx = self.ctx
        own_entity = ctx.tools[g_tool.name].entity
        out: list[tuple[ToolSpec, dict[str, Any], dict[str, Any] | None, Landing | None]] = []
        for t in ctx.spec.tools:
            if t.name == g_tool.name:
                continue
            tent = ctx.ents[t.entity]
            if t.kind == ToolKind.list:
                for p in t.params:
                    if p.op not in ("eq", "in") or not p.field or not tent.has_field(p.field):
                        continue
                    tf = tent.field(p.field)
                    if (
                        tf.ref == f.ref
                        and t.entity != f.ref
                        and (
                            t.entity == own_entity
                            or ctx.state.children.get((t.entity, p.field), {}).get(parent_key)
                        )
                    ):
                        out.append((t, {p.name: [val] if p.op == "in" else val}, None, None))
                        break
            elif t.kind == ToolKind.create:
                pp = self._parent_param(t, f.ref)
                if pp is not None and ctx.state.check(f.ref, parent, self._parent_conds(t, pp)):
                    out.append((t, {pp.name: val}, parent, None))
            elif t.entity == f.ref and t.kind in (ToolKind.update, ToolKind.action):
                if ctx.state.check(f.ref, parent, [c for c in t.preconditions if c.value_param is None]):
                    key = t.key_param
                    if key is not None:  # a singleton's keyless tools are no route to a parent
                        out.append((t, {key.name: val}, parent, None))
        return out

    def _parent_param(self, t: ToolSpec, parent_entity: str) -> ParamSpec | None:
        """The first required parameter of create ``t`` that points at ``parent_entity``."""
        tent = self.ctx.ents[t.entity]
        for p in t.params:
            if (
                p.required
                and p.field
                and tent.has_field(p.field)
                and tent.field(p.field).ref == parent_entity
            ):
                return p
        return None

    @staticmethod
    def _parent_conds(t: ToolSpec, p: ParamSpec) -> list:
        """``t``'s fixed preconditions on the row its parameter ``p`` points at, as that row's own."""
        pf = p.field
        assert pf is not None  # ``p`` comes from _parent_param, which requires a field
        return [
            c.model_copy(update={"field": c.field.split(".", 1)[1]})
            for c in t.preconditions
            if c.field.startswith(pf + ".") and c.value_param is None
        ]

    def branch(self) -> bool:
        """A side look-up: get a row that a row seen or written by an earlier step references.

        Candidates are weighted toward (step tool, get tool) pairs used least so far.
        """
        ctx = self.ctx
        spots: list[tuple[int, list[str | int], str, Any]] = []
        path: list[str | int]
        for i, (st, out) in enumerate(zip(self.draft.steps, self.draft.sim)):
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
                if (
                    not f.ref
                    or f.ref == t.entity
                    or f.ref not in ctx.gets
                    or f.name not in ctx.outputs[t.name]
                ):
                    continue
                if (row is None and f.nullable) or (row is not None and row.get(f.name) is None):
                    continue
                if ctx.gets[f.ref].key_param is not None:  # a singleton's get takes no id to look up
                    spots.append((i, path, f.name, ctx.gets[f.ref]))
        if not spots:
            return False
        w = [self.pair_weight(self.draft.steps[i].tool, gt.name) for i, _, _, gt in spots]
        i, path, fname, gt = self.rng.choices(spots, weights=w)[0]
        key = gt.key_param
        assert key is not None  # spots hold only gets with a key parameter
        try:
            self.draft.add(gt.name, {key.name: ref(i, *path, fname)}, "branch")
        except SampleError:
            return False
        return True
