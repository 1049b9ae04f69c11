"""Mutation score: faulty copies of an environment, and the share the verifier catches.

Each mutant is the original environment with one defect, made by editing a copy of the spec
(drop an effect, skip a precondition, wrong filter operator or field, drop a foreign key,
an optional required argument, no enum, no bounds, another sort or page size, a missing
returned field, a parameter written to the wrong field) or by wrapping the runtime (a
corrupted returned value, a page off by one). Mutants keep the original template database
and are checked against the ORIGINAL spec (its oracles, its cassette), otherwise a mutated
spec would only agree with itself. Mutants that are equivalent by construction (a required
argument whose absence the runtime rejects anyway) are not generated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import RuntimeToolError
from ..runtime import Environment, Session
from ..spec import EntitySpec, EnvSpec, FieldType, ParamSpec, ToolKind, ToolSpec
from .cassette import Cassette, record_cassette, replay_cassette
from .levels import check_tool_l1, check_tool_l2
from .smoke import ToolCheck

__all__ = ["Mutant", "MutantResult", "MutationReport", "build_mutants", "run_mutants", "MutantEnvironment"]

LEVELS = ("L1", "L2", "L3")


@dataclass
class Mutant:
    name: str
    kind: str
    tools: list[str]
    spec: EnvSpec
    wrap: Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    wrap_args: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None


@dataclass
class MutantResult:
    name: str
    kind: str
    tools: list[str]
    caught: dict[str, bool]
    detail: str = ""

    @property
    def killed(self) -> bool:
        return any(self.caught.values())


@dataclass
class MutationReport:
    env: str
    results: list[MutantResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return len(self.results)

    def score(self, level: str | None = None) -> float:
        """Share of mutants caught (by ``level``, or by any level)."""
        if not self.results:
            return 1.0
        if level is None:
            return sum(r.killed for r in self.results) / self.total
        return sum(r.caught.get(level, False) for r in self.results) / self.total

    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if not r.killed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "total": self.total,
            "score": round(self.score(), 4),
            "per_level": {lv: round(self.score(lv), 4) for lv in LEVELS},
            "seconds": round(self.seconds, 2),
            "survivors": [asdict(r) for r in self.survivors()],
        }


class _MutantSession(Session):
    def __init__(self, env: MutantEnvironment, snapshot: Any = None):
        super().__init__(env, snapshot)
        self._menv = env

    def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        m = self._menv.mutant
        a = dict(args or {})
        if m.wrap_args is not None and tool in m.tools:
            a = m.wrap_args(tool, a)
        out = super().call(tool, a)
        if m.wrap is not None and tool in m.tools:
            out = m.wrap(tool, a, out)
        return out


class MutantEnvironment(Environment):
    """The original template, a mutated spec, and optionally a wrapped ``Session.call``."""

    def __init__(self, base: Environment, mutant: Mutant):
        self.mutant = mutant
        # the template is the original's: reuse its hash sums rather than rescanning it
        super().__init__(mutant.spec, base.template, path=None, template_state=base.template_snapshot)

    def new_session(self, snapshot: Any = None) -> Session:
        return _MutantSession(self, snapshot)


def _copy(spec: EnvSpec) -> EnvSpec:
    return spec.model_copy(deep=True)


def _corrupt_value(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "x"
    if v is None:
        return "x"
    return None


def _corrupt(pk: str) -> Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]:
    def wrap(tool: str, args: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        target = out
        if "items" in out and isinstance(out["items"], list):
            if not out["items"]:
                return out
            out = {**out, "items": [dict(r) for r in out["items"]]}
            target = out["items"][-1]
        else:
            out = dict(out)
            target = out
        names = [k for k in target if k != pk] or list(target)
        k = names[-1]
        target[k] = _corrupt_value(target[k])
        return out

    return wrap


def _page_off_by_one(page_size: int, max_size: int) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    def wrap_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        limit = args.get("limit", page_size)
        if isinstance(limit, int) and not isinstance(limit, bool) and 1 <= limit < max_size:
            return {**args, "limit": limit + 1}
        return args

    return wrap_args


_OP_SWAP = {"eq": "ne", "ne": "eq", "gt": "gte", "gte": "gt", "lt": "lte", "lte": "lt", "contains": "eq"}


def _paths(t: ToolSpec) -> set[str]:
    out = set()
    for c in t.preconditions:
        out.add(c.field.split(".")[0])
    for e in t.effects:
        for p in (e.field, e.copy_from, e.increment_from):
            if p:
                out.add(p.split(".")[0])
    return out


_Edit = Callable[..., None]


def build_mutants(spec: EnvSpec) -> list[Mutant]:
    """Every single-defect mutant of ``spec`` (deterministic order)."""
    out: list[Mutant] = []
    for ti, t in enumerate(spec.tools):
        ent = spec.entity(t.entity)

        def edit(
            kind: str,
            what: str,
            fn: Callable[[ToolSpec, EnvSpec], None],
            tools: list[str] | None = None,
            *,
            ti: int = ti,
            t: ToolSpec = t,
        ) -> None:
            m = _copy(spec)
            fn(m.tools[ti], m)
            try:
                m = EnvSpec.model_validate(m.model_dump(exclude_unset=True))
            except Exception:
                return  # not a valid spec: not a mutant the runtime could ever serve
            out.append(Mutant(f"{kind}:{t.name}:{what}", kind, tools or [t.name], m))

        for i, eff in enumerate(t.effects):
            edit("drop_effect", eff.field, lambda mt, m, i=i: mt.effects.pop(i))  # type: ignore[misc]  # mypy cannot infer lambdas with default args
        for i, c in enumerate(t.preconditions):
            edit("skip_precondition", f"{c.field} {c.op}", lambda mt, m, i=i: mt.preconditions.pop(i))  # type: ignore[misc]  # mypy cannot infer lambdas with default args
        for i, p in enumerate(t.params):
            _param_mutants(spec, t, ent, i, p, edit)
        if t.kind == ToolKind.list:
            _list_mutants(spec, t, edit, out)
        if t.upsert:  # an upsert that only updates: a call naming no stored row fails (not_found)
            edit("no_upsert", "update only", lambda mt, m: _update_only(mt))
        if t.kind == ToolKind.get:
            names = t.returns or [f.name for f in ent.fields]
            if len(names) > 1:
                edit(
                    "returns",
                    f"drop {names[-1]}",
                    lambda mt, m, names=names: setattr(mt, "returns", names[:-1]),  # type: ignore[misc]  # mypy cannot infer lambdas with default args
                )
        out.append(
            Mutant(
                f"corrupt_result:{t.name}", "corrupt_result", [t.name], spec, wrap=_corrupt(ent.primary_key)
            )
        )
    out += _ref_mutants(spec)
    return out


def _param_mutants(spec: EnvSpec, t: ToolSpec, ent: EntitySpec, i: int, p: ParamSpec, edit: _Edit) -> None:
    """Mutants of one parameter: its filter's op or field, the field it writes, its required flag, enum, bounds."""
    if t.kind == ToolKind.list and p.field:
        if p.op in _OP_SWAP:
            new = _OP_SWAP[p.op]
            if new == "contains" or not (p.op == "contains" and p.type not in (FieldType.string,)):
                edit(
                    "filter_op",
                    f"{p.name} {p.op}->{new}",
                    lambda mt, m, i=i, new=new: setattr(mt.params[i], "op", new),  # type: ignore[misc]  # mypy cannot infer lambdas with default args
                )
        others = [f.name for f in ent.fields if f.type == ent.field(p.field).type and f.name != p.field]
        if others:
            edit(
                "filter_field",
                f"{p.name}->{others[0]}",
                lambda mt, m, i=i, o=others[0]: setattr(mt.params[i], "field", o),  # type: ignore[misc]  # mypy cannot infer lambdas with default args
            )
    if t.kind in (ToolKind.create, ToolKind.update) and p.field and not p.key:
        f = ent.field(p.field)
        others = [
            g.name
            for g in ent.fields
            if g.type == f.type and g.name != f.name and g.name != ent.primary_key and not g.ref and not f.ref
        ]
        if others:
            edit(
                "param_field",
                f"{p.name}->{others[0]}",
                lambda mt, m, i=i, o=others[0]: setattr(mt.params[i], "field", o),  # type: ignore[misc]  # mypy cannot infer lambdas with default args
            )
    if p.required and not p.key and not _rejected_anyway(spec, t, p.name):
        edit("drop_required", p.name, lambda mt, m, i=i: setattr(mt.params[i], "required", False))  # type: ignore[misc]  # mypy cannot infer lambdas with default args
    if p.enum and p.type in (FieldType.enum, FieldType.string):

        def drop_enum(mt: ToolSpec, m: EnvSpec, i: int = i) -> None:
            mt.params[i].type = FieldType.string
            mt.params[i].enum = None

        edit("drop_enum", p.name, drop_enum)
    if p.minimum is not None or p.maximum is not None:

        def drop_bounds(mt: ToolSpec, m: EnvSpec, i: int = i) -> None:
            mt.params[i].minimum = None
            mt.params[i].maximum = None

        edit("drop_bounds", p.name, drop_bounds)


def _list_mutants(spec: EnvSpec, t: ToolSpec, edit: _Edit, out: list[Mutant]) -> None:
    """Mutants of a list tool: its default order flipped, its page size, pages off by one."""
    if t.sort and t.sort.default:

        def flip_sort(mt: ToolSpec, m: EnvSpec) -> None:
            assert mt.sort is not None  # mt is the copy of t, whose sort is set
            mt.sort.descending = not mt.sort.descending

        edit("sort", "flip default order", flip_sort)
    if t.page_size < t.max_page_size:
        edit(
            "page_size",
            f"{t.page_size}->{t.page_size + 1}",
            lambda mt, m: setattr(mt, "page_size", mt.page_size + 1),
        )
    out.append(
        Mutant(
            f"page_off_by_one:{t.name}",
            "page_off_by_one",
            [t.name],
            spec,
            wrap_args=_page_off_by_one(t.page_size, t.max_page_size),
        )
    )


def _ref_mutants(spec: EnvSpec) -> list[Mutant]:
    """Foreign keys the tools write without crossing them in a path, each dropped."""
    out: list[Mutant] = []
    for ei, e in enumerate(spec.entities):
        for fi, f in enumerate(e.fields):
            if not f.ref:
                continue
            users = [t for t in spec.tools if t.entity == e.name]
            writers = [
                t
                for t in users
                if t.kind in (ToolKind.create, ToolKind.update) and any(p.field == f.name for p in t.params)
            ]
            if not writers or any(f.name in _paths(t) for t in users):
                continue
            m = _copy(spec)
            m.entities[ei].fields[fi].ref = None
            try:
                m = EnvSpec.model_validate(m.model_dump(exclude_unset=True))
            except Exception:
                continue
            out.append(Mutant(f"drop_ref:{e.name}.{f.name}", "drop_ref", [t.name for t in writers], m))
    return out


def _update_only(t: ToolSpec) -> None:
    t.upsert = False
    for p in t.params:
        if p.key:
            p.required = True


def _rejected_anyway(spec: EnvSpec, t: ToolSpec, pname: str) -> bool:
    """Whether the runtime rejects a call without ``pname`` even when it is optional (equivalent mutant)."""
    p = t.param(pname)
    ent = spec.entity(t.entity)
    if t.kind == ToolKind.create and p.field:
        f = ent.field(p.field)
        written = {e.field for e in t.effects}
        return not f.nullable and f.default is None and f.name not in written
    if t.kind == ToolKind.update:
        return sum(1 for q in t.params if q.field and not q.key) == 1
    return False


def _check_mutant(base: Environment, mutant: Mutant, cas: Cassette, seed: int) -> MutantResult:
    try:
        menv = MutantEnvironment(base, mutant)
    except Exception as e:
        return MutantResult(
            mutant.name, mutant.kind, mutant.tools, {lv: True for lv in LEVELS}, f"mutant does not load: {e}"
        )
    caught = {}
    detail = ""
    expected = base.spec
    for level, fn in (("L1", check_tool_l1), ("L2", check_tool_l2)):
        fails: list[str] = []
        for tname in mutant.tools:
            try:
                fails += fn(expected, menv, expected.tool(tname), seed=seed)
            except Exception as e:  # a crash under a mutant is a detection
                fails.append(f"crashed: {type(e).__name__}: {e}")
        caught[level] = bool(fails)
        if fails and not detail:
            detail = f"{level}: {fails[0][:200]}"
    relevant = Cassette(
        cas.env,
        cas.spec_digest,
        cas.seed,
        cas.initial_hash,
        [s for s in cas.sequences if any(st["tool"] in mutant.tools for st in s)],
    )
    try:
        l3 = replay_cassette(menv, relevant)
        bad = [c for c in l3 if not c.ok]
    except (RuntimeToolError, Exception) as e:
        bad = [ToolCheck("*", False, "L3", f"crashed: {e}")]
    caught["L3"] = bool(bad)
    if bad and not detail:
        detail = f"L3: {bad[0].message[:200]}"
    return MutantResult(mutant.name, mutant.kind, mutant.tools, caught, detail)


def run_mutants(
    spec: EnvSpec | Environment,
    *,
    env: Environment | None = None,
    seed: int = 0,
    cassette: Cassette | None = None,
    kinds: list[str] | None = None,
    sample: int | None = None,
) -> MutationReport:
    """Build the mutants of an environment, run L1/L2/L3 against each, report the share caught.

    ``spec`` is an EnvSpec (its template is built) or an Environment. ``sample`` checks an evenly
    spaced subset of that many mutants (for quick runs); ``kinds`` keeps only those kinds.
    """
    t0 = time.perf_counter()
    if isinstance(spec, Environment):
        env, spec = spec, spec.spec
    if env is None:
        env = Environment.from_spec(spec)
    cas = cassette or record_cassette(env, seed=seed)
    mutants = build_mutants(spec)
    if kinds:
        mutants = [m for m in mutants if m.kind in kinds]
    if sample is not None and 0 < sample < len(mutants):
        step = len(mutants) / sample
        mutants = [mutants[int(i * step)] for i in range(sample)]
    report = MutationReport(env=spec.name)
    for m in mutants:
        report.results.append(_check_mutant(env, m, cas, seed))
    report.seconds = time.perf_counter() - t0
    return report
