"""A read-only index of an environment's initial state, for grounding sampled plans.

The sampler draws user facts and anchor rows from here (a traveller's email, a confirmed
booking), so plans ask for things that exist. Rows are read once with ``Session.query``.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from ..spec import Condition, EnvSpec, FieldType, ToolSpec, compare

__all__ = ["StateIndex", "state_index"]

_INDEXES: weakref.WeakKeyDictionary[Any, StateIndex] = weakref.WeakKeyDictionary()


def state_index(env: Any) -> StateIndex:
    """The ``StateIndex`` of an environment's initial state, read once per environment object (its
    template never changes; sampling rounds and the task builder share it)."""
    try:
        idx = _INDEXES.get(env)
    except TypeError:  # an environment-like object that takes no weak reference: read it each time
        idx = None
    if idx is None:
        with env.new_session() as s:
            idx = StateIndex(env.spec, s)
        try:
            _INDEXES[env] = idx
        except TypeError:
            pass
    return idx


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class StateIndex:
    """Rows per entity, rows by key, and which rows are referenced by others."""

    def __init__(self, spec: EnvSpec, session: Any, *, max_rows: int = 50_000):
        self.spec = spec
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.by_pk: dict[str, dict[Any, dict[str, Any]]] = {}
        for e in spec.entities:
            cols = [f.name for f in e.fields]
            conv = [
                (i, f.type)
                for i, f in enumerate(e.fields)
                if f.type in (FieldType.boolean, FieldType.object, FieldType.array)
            ]
            sql = f"SELECT {', '.join(_q(c) for c in cols)} FROM {_q(e.name)} ORDER BY {_q(e.primary_key)} LIMIT {max_rows}"
            out = []
            for r in session.query(sql):
                r = list(r)
                for i, t in conv:
                    if r[i] is not None:
                        r[i] = bool(r[i]) if t == FieldType.boolean else json.loads(r[i])
                out.append(dict(zip(cols, r)))
            self.rows[e.name] = out
            self.by_pk[e.name] = {r[e.primary_key]: r for r in out}
        # children[(entity, fk_field)][parent key] -> child rows
        self.children: dict[tuple[str, str], dict[Any, list[dict[str, Any]]]] = {}
        self.referenced: dict[str, set[Any]] = {e.name: set() for e in spec.entities}
        for e in spec.entities:
            for f in e.fields:
                if not f.ref:
                    continue
                idx: dict[Any, list[dict[str, Any]]] = {}
                for r in self.rows[e.name]:
                    v = r[f.name]
                    if v is not None:
                        idx.setdefault(v, []).append(r)
                        if not (e.name == f.ref and v == r[e.primary_key]):
                            self.referenced[f.ref].add(v)
                self.children[(e.name, f.name)] = idx
        self._cache: dict[Any, list[dict[str, Any]]] = {}

    def path_value(self, entity: str, row: dict[str, Any], path: str) -> Any:
        if "." not in path:
            return row.get(path)
        fk, fname = path.split(".", 1)
        target = self.spec.entity(entity).field(fk).ref
        parent = self.by_pk.get(target, {}).get(row.get(fk)) if target else None
        return None if parent is None else parent.get(fname)

    def check(
        self, entity: str, row: dict[str, Any], conds: list[Condition], args: dict[str, Any] | None = None
    ) -> bool:
        """Whether ``row`` passes the conditions (value_param ones only when ``args`` has them)."""
        for c in conds:
            if c.value_param is not None:
                if args is None or args.get(c.value_param) is None:
                    continue
                expected = args[c.value_param]
            else:
                expected = c.value
            if not compare(self.path_value(entity, row, c.field), c.op, expected):
                return False
        return True

    def candidates(
        self, tool: ToolSpec, *, fk: str | None = None, deletable: bool = False
    ) -> list[dict[str, Any]]:
        """Rows a tool can act on: its own entity's rows (``fk=None``) or rows referenced by
        its foreign-key field ``fk``, passing the preconditions that need no argument."""
        key = (tool.name, fk, deletable)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        ent = self.spec.entity(tool.entity)
        if fk is None:
            conds = [c for c in tool.preconditions if c.value_param is None]
            rows = [r for r in self.rows[ent.name] if self.check(ent.name, r, conds)]
            if deletable:
                refd = self.referenced[ent.name]
                rows = [r for r in rows if r[ent.primary_key] not in refd]
        else:
            target = ent.field(fk).ref
            assert target is not None  # ``fk`` is a foreign-key field, so it names its entity
            conds = [
                Condition(field=c.field.split(".", 1)[1], op=c.op, value=c.value)
                for c in tool.preconditions
                if c.value_param is None and c.field.startswith(fk + ".")
            ]
            rows = [r for r in self.rows[target] if self.check(target, r, conds)]
        self._cache[key] = rows
        return rows
