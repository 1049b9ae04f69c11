"""Deterministic, realistic, referentially intact seed data for an EnvSpec.

Values come from Faker (seeded per entity and field) and the spec's generators; fields
without a generator get one inferred from their role (stated, or from their name and type),
so a spec written by the explorer seeds realistically without hand-tuning. Then each row is
made to keep its entity's cross-field constraints (``envfactory.spec.roles``): an end after
its start, past stamps before the clock, adults' birth dates, completed rows in the past,
totals that add up (``constraints.apply_constraints``). Same spec + seed -> same rows.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import random
import re
import zlib
from decimal import Decimal
from typing import Any
from uuid import UUID

from faker import Faker

from ..errors import SpecError
from ..spec import (
    TIME_ROLES,
    EntitySpec,
    EnvSpec,
    FieldRole,
    FieldSpec,
    FieldType,
    GeneratorSpec,
    default_generator,
    entity_order,
)
from .constraints import apply_constraints

__all__ = ["build_seed_rows"]


def _stable_seed(*parts: Any) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode())


_FAKERS: dict[str, Faker] = {}
# Generator methods that are not data providers: a spec may not name them.
_NOT_PROVIDERS = {
    "seed",
    "seed_instance",
    "seed_locale",
    "add_provider",
    "get_providers",
    "provider",
    "parse",
    "format",
    "get_formatter",
    "set_formatter",
    "set_arguments",
    "get_arguments",
    "del_arguments",
    "random",
    "unique",
    "optional",
    "items",
    "weights",
    "factories",
    "locales",
    "binary",
    "zip",
    "tar",
    "image",
    "json",
    "xml",
    "csv",
    "tsv",
    "psv",
    "dsv",
    "fixed_width",
    "pystruct",
    "pyobject",
    # not one value: generators and containers
    "time_series",
    "pyiterable",
    "pylist",
    "pyset",
    "pytuple",
    "pydict",
    "profile",
    "simple_profile",
}


def _provider(fake: Faker, name: str, where: str):
    """A Faker data provider by name, refusing anything that is not one (specs are untrusted)."""
    if name.startswith("_") or name in _NOT_PROVIDERS:
        raise SpecError(f"{where}: {name!r} is not an allowed Faker provider")
    try:
        fn = getattr(fake, name)
    except AttributeError:
        fn = None
    if fn is None or not callable(fn):
        raise SpecError(f"{where}: unknown Faker provider {name!r}")
    try:
        needs = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    except (TypeError, ValueError):
        needs = []
    if needs:  # a spec cannot pass arguments: the call would be a TypeError per row
        raise SpecError(
            f"{where}: Faker provider {name!r} needs arguments ({', '.join(needs)}); use one that takes none"
        )
    if name == "name":  # 'Dr. Amber Snow MD' is no name a customer or a patient goes by
        return lambda: plain_name(fn())
    return fn


_TITLES = re.compile(r"^(Dr|Mr|Mrs|Ms|Miss|Mx|Prof)\.?\s+|\s+(MD|DDS|DVM|PhD|Jr\.?|Sr\.?|II|III|IV|V)$")


def plain_name(name: str) -> str:
    """A person's name without Faker's honorifics and post-nominals ('Dr. Amber Snow MD' -> 'Amber Snow')."""
    while True:
        out = _TITLES.sub("", name).strip()
        if out == name or not out:
            return out or name
        name = out


def _faker(locale: str) -> Faker:
    # Making a Faker costs ~20 ms; one per locale, reseeded per column, keeps seeding fast
    # and still deterministic (columns are generated one at a time, in a fixed order).
    f = _FAKERS.get(locale)
    if f is None:
        try:
            f = _FAKERS[locale] = Faker(locale)
        except AttributeError as e:
            raise SpecError(f"seed: unknown Faker locale {locale!r}") from e
    return f


class _FieldGen:
    def __init__(
        self,
        spec: EnvSpec,
        ent: EntitySpec,
        f: FieldSpec,
        gen: GeneratorSpec,
        keys: dict[str, list[Any]],
        clock: dt.datetime,
        locale: str,
        seed: int,
    ):
        self.f = f
        self.gen = gen
        self.keys = keys
        self.rng = random.Random(_stable_seed(seed, ent.name, f.name))
        self.fake = _faker(locale)
        self._fake_seed = _stable_seed(seed, ent.name, f.name, "faker")
        self.clock = clock
        self.seen: set[Any] = set()
        self._suffix: dict[Any, int] = {}  # next suffix per repeated value: dedup stays linear
        self.ent = ent
        self._where = f"{spec.name}: seed {ent.name}.{f.name}"
        self._providers: dict[str, Any] = {}
        self._check(gen)
        if gen.kind == "ref":
            target = f.ref
            if target is None:
                raise SpecError(
                    f"{spec.name}: seed {ent.name}.{f.name}: 'ref' generator on a field without ref"
                )
            self._target = target
            target_seed = spec.seed.entities.get(target)
            self._spare = target_seed.spare if target_seed is not None else 0

    def _check(self, g: GeneratorSpec, depth: int = 0) -> None:
        """Refuse unknown or disallowed Faker providers anywhere in the generator, before any row."""
        if depth > 6:
            raise SpecError(f"{self._where}: generators nest too deep")
        if g.kind == "faker":
            self._providers[g.provider or "word"] = _provider(self.fake, g.provider or "word", self._where)
        if g.kind == "pattern":
            for token in re.findall(r"{{\s*(\w+)\s*}}", g.pattern or ""):
                _provider(self.fake, token, f"{self._where} pattern")
        for sub in [g.inner, *(g.properties or {}).values()]:
            if sub is not None:
                self._check(sub, depth + 1)

    def start(self) -> None:
        """Reseed the shared Faker for this column."""
        self.fake.seed_instance(self._fake_seed)

    def __call__(self, i: int, row: dict[str, Any]) -> Any:
        v = self._make(self.gen, i, row)
        if self.f.type == FieldType.string and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = (
                f"{v:.{self.gen.decimals}f}" if isinstance(v, float) else str(v)
            )  # a number the API writes as text
        if (self.gen.unique or self.f.unique) and v is not None:  # NULLs never clash in SQLite
            base, n = v, self._suffix.get(v, 1)
            while v in self.seen:
                n += 1
                v = _suffixed(base, n) if isinstance(base, str) else base + n
            self._suffix[base] = n
            self.seen.add(v)
        return v

    def _make(self, g: GeneratorSpec, i: int, row: dict[str, Any]) -> Any:
        k = g.kind
        rng = self.rng
        if k == "sequence":
            if g.prefix is None and self.f.type == FieldType.integer:
                return i + 1
            return f"{g.prefix or ''}{i + 1:0{g.width}d}"
        if k == "choice":
            vals = g.values or [None]
            return rng.choices(vals, weights=g.weights)[0] if g.weights else vals[rng.randrange(len(vals))]
        if k == "int":
            return rng.randint(
                int(g.min if g.min is not None else 0), int(g.max if g.max is not None else 100)
            )
        if k == "float":
            lo = g.min if g.min is not None else 0.0
            hi = g.max if g.max is not None else 100.0
            return round(rng.uniform(lo, hi), g.decimals)
        if k == "date":
            start = dt.date.fromisoformat(g.start) if g.start else (self.clock - dt.timedelta(days=90)).date()
            end = dt.date.fromisoformat(g.end) if g.end else (self.clock + dt.timedelta(days=180)).date()
            return (start + dt.timedelta(days=rng.randint(0, max(0, (end - start).days)))).isoformat()
        if k == "datetime":
            start = dt.datetime.fromisoformat(g.start) if g.start else self.clock - dt.timedelta(days=90)
            end = dt.datetime.fromisoformat(g.end) if g.end else self.clock + dt.timedelta(days=180)
            span = max(0, int((end - start).total_seconds() // 900))
            return (start + dt.timedelta(minutes=15 * rng.randint(0, span))).isoformat(timespec="seconds")
        if k == "ref":
            pool = self.keys.get(self._target) or []
            if not pool:
                return None
            n = len(pool) - min(self._spare, len(pool) - 1)  # the last ``spare`` rows stay unreferenced
            return pool[rng.randrange(n)]
        if k == "faker":
            v = self._providers[g.provider or "word"]()
            if isinstance(v, (str, int, float, bool)) or v is None:
                return v
            if isinstance(v, (dt.date, dt.time, dt.timedelta, Decimal, UUID)):
                return str(v)
            raise SpecError(
                f"seed {self.ent.name}.{self.f.name}: Faker provider {g.provider!r} gives a "
                f"{type(v).__name__}, not one value a field can hold"
            )
        if k == "pattern":
            pat = g.pattern or "????"
            # '{{provider}}' tokens name Faker providers (parse checks them against Faker's own
            # providers, so a spec still cannot call anything else); '#'/'?' are filled after.
            v = self.fake.bothify(self.fake.parse(pat) if "{{" in pat else pat)
            return v.upper() if g.value == "upper" else v
        if k == "const":
            return g.value
        if k == "null_or":
            if rng.random() < g.p_null:
                return None
            return self._make(g.inner or GeneratorSpec(kind="const"), i, row)
        if k == "list":
            lo = int(g.min) if g.min is not None else 1
            hi = int(g.max) if g.max is not None else max(lo, 3)
            inner = g.inner or GeneratorSpec(kind="const")
            n = rng.randint(max(0, lo), max(lo, min(hi, 20)))
            items = [self._make(inner, i, row) for _ in range(n)]
            return (
                list(dict.fromkeys(items)) if all(isinstance(x, (str, int, float)) for x in items) else items
            )
        if k == "object":
            return {name: self._make(sub, i, row) for name, sub in sorted((g.properties or {}).items())}
        if k == "offset":
            base = row.get(g.field or "")
            lo, hi = g.min or 0, g.max if g.max is not None else 1
            if base is None:
                return None
            if isinstance(base, str) and "T" in base:
                return (
                    (dt.datetime.fromisoformat(base) + dt.timedelta(hours=rng.uniform(lo, hi)))
                    .replace(second=0, microsecond=0)
                    .isoformat(timespec="seconds")
                )
            if isinstance(base, str):
                return (
                    dt.date.fromisoformat(base) + dt.timedelta(days=rng.randint(int(lo), int(hi)))
                ).isoformat()
            return round(base + rng.uniform(lo, hi), g.decimals)
        raise SpecError(f"unknown generator kind {k!r}")


def _suffixed(base: str, n: int) -> str:
    """A unique variant of ``base`` that keeps its shape (an email stays an email)."""
    if "@" in base:
        user, _, host = base.partition("@")
        return f"{user}{n}@{host}"
    return f"{base}-{n}"


def _coerce(f: FieldSpec, v: Any) -> Any:
    if v is None:
        return None
    t = f.type
    if t in (FieldType.object, FieldType.array):
        return json.dumps(v, sort_keys=True)
    if t == FieldType.boolean:
        return 1 if v else 0
    if t == FieldType.integer and not isinstance(v, bool):
        return int(v)
    if t == FieldType.number:
        return float(v)
    return v


def _pattern_breaks_role(ent: EntitySpec, f: FieldSpec, g: GeneratorSpec) -> bool:
    """A code pattern on a field whose role is no code: a date drawn as '####-##-##' ('5430-18-92'),
    a status as '??' ('IB'), a non-key id as mixed-case letters only ('pYd'). Its role's own generator is used instead."""
    inner = g.inner if g.kind == "null_or" and g.inner is not None else g
    if inner.kind != "pattern" or f.type != FieldType.string or f.enum:
        return False
    role = ent.role_of(f)
    pat = inner.pattern or ""
    letters_only = "#" not in pat and "{{" not in pat and inner.value != "upper"  # 'GHB': a documented code
    own_id = role == FieldRole.internal_id and f.name != ent.primary_key and f.ref is None
    return role in TIME_ROLES or role == FieldRole.status or (own_id and letters_only)


class _ParentKeys:
    """The key column of a per-parent singleton: row i belongs to the i-th parent row."""

    def __init__(self, keys: list[Any]):
        self.keys = keys

    def start(self) -> None:
        pass

    def __call__(self, i: int, row: dict[str, Any]) -> Any:
        return self.keys[i]


def _singleton_keys(ent: EntitySpec, keys: dict[str, list[Any]]) -> list[Any] | None:
    """The parent keys a per-parent singleton's rows take (None for any other entity)."""
    parent = ent.parent
    if parent is None:
        return None
    return list(keys.get(parent) or [])


def _clear_some(ent: EntitySpec, table: list[dict[str, Any]]) -> None:
    """Every third parent has its singleton cleared (a file with no watermark set): its fields
    hold their defaults, the state a ``clear_*`` action leaves."""
    for row in table[2::3]:
        for f in ent.fields:
            if f.nullable and f.name != ent.primary_key and not f.ref:
                row[f.name] = f.default


def _close_diamonds(
    spec: EnvSpec, ent: EntitySpec, table: list[dict[str, Any]], made: dict[str, list[dict[str, Any]]]
) -> None:
    """A row that points at a parent X and at a row Y that itself points at X points at the same X
    twice: a course work's topic is a topic of the course work's own course. Y is re-drawn among
    X's own (or cleared when X has none and it may be empty)."""
    # a unique key is drawn once per row on purpose: re-drawing it could repeat one
    fks = [
        f for f in ent.fields if f.ref and f.ref != ent.name and not f.unique and f.name != ent.primary_key
    ]
    for fy in fks:
        y_ent = spec.entity(fy.ref or "")
        for fx in fks:
            up = next((h for h in y_ent.fields if h.ref == fx.ref and fx is not fy), None)
            if up is None or fy.ref not in made:
                continue
            ypk = y_ent.primary_key
            by_x: dict[Any, list[Any]] = {}
            y_up: dict[Any, Any] = {}
            y_rows = made[fy.ref]
            y_seed = spec.seed.entities.get(fy.ref)
            free = len(y_rows) - min(y_seed.spare if y_seed else 0, max(0, len(y_rows) - 1))
            for n, r in enumerate(y_rows):
                if n < free:  # a spare row stays unreferenced (EntitySeed.spare)
                    by_x.setdefault(r.get(up.name), []).append(r[ypk])
                y_up[r[ypk]] = r.get(up.name)
            rng = random.Random(_stable_seed(spec.seed.seed, ent.name, fy.name, "diamond"))
            for row in table:
                y, x = row.get(fy.name), row.get(fx.name)
                if y is None or x is None or y_up.get(y) == x:
                    continue
                pool = by_x.get(x)
                if pool:
                    row[fy.name] = pool[rng.randrange(len(pool))]
                elif fy.nullable:
                    row[fy.name] = None
                elif y_up.get(y) is not None:
                    row[fx.name] = y_up[y]


def build_seed_rows(spec: EnvSpec) -> dict[str, tuple[list[str], list[tuple]]]:
    """Rows for every entity, as ``{entity: (columns, rows)}`` in dependency order, DB-ready."""
    clock = dt.datetime.fromisoformat(spec.clock)
    keys: dict[str, list[Any]] = {}
    made: dict[str, list[dict[str, Any]]] = {}
    out: dict[str, tuple[list[str], list[tuple]]] = {}
    for ent in entity_order(spec):
        es = spec.seed.entities.get(ent.name)
        n = es.rows if es else 0
        parents = _singleton_keys(ent, keys)
        if ent.singleton:  # the object itself: one row, or one per parent row (keyed by its id)
            n = 1 if parents is None else len(parents)
        explicit = es.fields if es else {}
        # Fields generated from other fields of the row (offset) come last.
        fields = sorted(
            ent.fields, key=lambda f: 1 if (explicit.get(f.name) and explicit[f.name].kind == "offset") else 0
        )
        gens = []
        for f in fields:
            g = explicit.get(f.name)
            if (
                g is not None
                and g.kind == "const"
                and g.value in ({}, [])
                and f.type in (FieldType.object, FieldType.array)
            ):
                g = None  # an empty example says nothing about the shape: seed believable parts instead
            if g is not None and _pattern_breaks_role(ent, f, g):
                g = None
            g = g or default_generator(ent, f, clock)
            if f.ref == ent.name and g.kind == "ref":
                g = GeneratorSpec(kind="const", value=None)  # self-reference: no parents at seed time
            gen: _FieldGen | _ParentKeys = _FieldGen(
                spec, ent, f, g, keys, clock, spec.seed.locale, spec.seed.seed
            )
            if parents is not None and f.name == ent.primary_key:
                gen = _ParentKeys(parents)
            gens.append((f, gen))
        cols = [f.name for f in ent.fields]
        # Column by column (offset columns last), so one shared Faker can be reseeded per column.
        table: list[dict[str, Any]] = [{} for _ in range(n)]
        for f, gen in gens:
            gen.start()
            for i, row in enumerate(table):
                v = gen(i, row)
                if v is None and not f.nullable and f.name != ent.primary_key and f.ref:
                    raise SpecError(
                        f"{spec.name}: seed {ent.name}.{f.name} references {f.ref}, which has no seed rows"
                    )
                row[f.name] = v
        _close_diamonds(spec, ent, table, made)
        apply_constraints(ent, table, clock, spec.seed.seed)
        if parents is not None:
            _clear_some(ent, table)
        made[ent.name] = table
        rows: list[tuple] = [tuple(_coerce(f, row[f.name]) for f in ent.fields) for row in table]
        keys[ent.name] = [r[cols.index(ent.primary_key)] for r in rows]
        out[ent.name] = (cols, rows)
    return out
