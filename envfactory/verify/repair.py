"""Verify, repair known-fixable defects by rule, exclude what still fails.

Rules (each recorded in the report):
- a create tool leaves a non-nullable field without a value (no argument, default or effect):
  the field becomes nullable;
- a precondition compares an enum field with a value outside its enum: the impossible
  values are dropped (the whole precondition when none is left);
- a list filter on a JSON (object/array) column: the filter is removed;
- a ``contains`` filter on a non-text field: it becomes ``eq``;
- a parameter with ``minimum > maximum``: the bounds are dropped.
Then every tool that still fails any level (including a tool with no valid call in the seeded
state) is excluded, with the reason, and the rest verified again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import EnvFactoryError
from ..runtime import Environment
from ..spec import EnvSpec, FieldType, ToolKind
from .cassette import record_cassette, save_cassette
from .report import VerificationReport, verify_environment

__all__ = ["repair_spec", "verify_and_repair"]


def _revalidate(spec: EnvSpec) -> EnvSpec:
    return EnvSpec.model_validate(spec.model_dump(exclude_unset=True))


def repair_spec(spec: EnvSpec) -> tuple[EnvSpec, list[str]]:
    """Apply the rule-based repairs; returns the repaired copy and what was done."""
    s = spec.model_copy(deep=True)
    done: list[str] = []
    ents = {e.name: e for e in s.entities}
    for t in s.tools:
        ent = ents[t.entity]
        if t.kind == ToolKind.create:
            set_by = {p.field for p in t.params if p.field} | {
                e.field for e in t.effects if "." not in e.field
            }
            for f in ent.fields:
                if f.name == ent.primary_key or f.nullable or f.default is not None or f.name in set_by:
                    continue
                f.nullable = True
                done.append(f"{t.name}: {ent.name}.{f.name} is never set by the tool; made it nullable")
        kept = []
        for c in t.preconditions:
            parts = c.field.split(".")
            f = ent.field(parts[0]) if len(parts) == 1 else ents[ent.field(parts[0]).ref].field(parts[1])  # type: ignore[index]
            if f.enum and not c.value_param and c.op in ("eq", "ne", "in", "not_in"):
                vals = c.value if isinstance(c.value, list) else [c.value]
                bad = [v for v in vals if v not in f.enum]
                if bad:
                    good = [v for v in vals if v in f.enum]
                    if c.op in ("in", "not_in") and good:
                        c.value = good
                        done.append(f"{t.name}: precondition on {c.field} dropped impossible values {bad}")
                        kept.append(c)
                    else:
                        done.append(
                            f"{t.name}: dropped precondition on {c.field} with impossible value {bad}"
                        )
                    continue
            kept.append(c)
        t.preconditions = kept
        params = []
        for p in t.params:
            pf = ent.field(p.field) if p.field and ent.has_field(p.field) else None
            if t.kind == ToolKind.list and pf is not None and pf.type in (FieldType.object, FieldType.array):
                done.append(f"{t.name}: removed filter '{p.name}' on JSON field {ent.name}.{pf.name}")
                continue
            if (
                t.kind == ToolKind.list
                and p.op == "contains"
                and pf is not None
                and pf.type not in (FieldType.string, FieldType.enum)
            ):
                p.op = "eq"
                done.append(f"{t.name}: filter '{p.name}' on non-text field uses eq instead of contains")
            if p.minimum is not None and p.maximum is not None and p.minimum > p.maximum:
                p.minimum = p.maximum = None
                done.append(f"{t.name}: dropped contradictory bounds of '{p.name}'")
            params.append(p)
        t.params = params
    if done:
        s = _revalidate(s)
    return s, done


def _same_data(a: EnvSpec, b: EnvSpec) -> bool:
    dump = lambda s: (s.model_dump(mode="json")["entities"], s.model_dump(mode="json")["seed"], s.clock)  # noqa: E731
    return dump(a) == dump(b)


def verify_and_repair(
    spec: EnvSpec,
    *,
    out_dir: str | os.PathLike | None = None,
    seed: int = 0,
    rounds: int = 2,
    doc_examples: list | None = None,
    mutants: bool = False,
) -> tuple[EnvSpec | None, VerificationReport]:
    """Verify ``spec``, repair by rule, exclude tools that still fail; None when no tool remains.

    Writes ``<out_dir>/verification.json`` and ``<out_dir>/cassettes/<env>.json`` when ``out_dir``
    is given. The returned spec lists every excluded tool, with the reason, in ``excluded``.
    """
    t0 = time.perf_counter()
    current, repairs = repair_spec(spec)
    excluded: list[dict[str, str]] = []
    env: Environment | None = None
    report = VerificationReport(env=spec.name, domain=spec.domain)
    for rnd in range(rounds + 1):
        try:
            if env is not None and _same_data(env.spec, current):
                env = Environment(
                    current, env.template, template_state=env.template_snapshot
                )  # same data: same template
            else:
                env = Environment.from_spec(current)
        except EnvFactoryError as e:
            report.env_messages.append(f"the environment does not build: {e}")
            break
        report = verify_environment(env, seed=seed, doc_examples=doc_examples)
        report.rounds = rnd + 1
        failing = report.failing
        if not failing:  # passed, or an environment-wide failure (L3) no exclusion can fix
            break
        for name in failing:
            excluded.append({"tool": name, "reason": report.tools[name].first_failure()[:400]})
        current = current.model_copy(
            update={
                "tools": [t for t in current.tools if t.name not in failing],
                "excluded": [
                    *current.excluded,
                    *(
                        f"{x['tool']}: failed verification ({x['reason'][:200]})"
                        for x in excluded
                        if x["tool"] in failing
                    ),
                ],
            }
        )
        if not current.tools:
            break
    report.repairs = repairs
    report.excluded = excluded
    built = env is not None and not report.env_messages
    result: EnvSpec | None = current if current.tools and built else None
    final_env = None
    if result is not None and env is not None:
        final_env = (
            env
            if env.spec is result
            else Environment(result, env.template, template_state=env.template_snapshot)
        )
    if final_env is not None and mutants:
        from .mutants import run_mutants

        report.mutation = run_mutants(final_env, seed=seed).to_dict()
    report.seconds = time.perf_counter() - t0
    if out_dir is not None:
        out = Path(out_dir)
        if final_env is not None:
            save_cassette(record_cassette(final_env, seed=seed), out / "cassettes")
        report.save(out / "verification.json")
    return result, report
