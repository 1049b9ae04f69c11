"""Realize an executed plan as a request in a person's words (no model needed).

The realizer reads a ``GoldResult`` and the env's ``EnvSpec`` and writes what a person would
say: outcomes, never tools or steps; natural facts (names, emails, dates, cities, amounts,
enum values), never internal ids they could not know. It applies four refinement rules:

- implicit reference / parameter omission: ids are left for the agent to discover; some
  facts are held back as hidden facts the user reveals when asked;
- action compression: discovery and set-up steps are never spelled out; a set-up write and
  the goal it serves are said in one phrase;
- ambiguity resolved by implicit constraints: when a plan picks one row among several list
  results, the realizer states what singles it out (``selections.py``);
- goal expansion: a second goal is joined in the same request.

Phrasing is a small template grammar with seeded choices (phrase tables in
``envfactory/data/english.yaml``); rows and values are said by ``phrasing.py``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..graph import GoldResult
from ..graph.plan import REF, is_ref
from ..spec import EnvSpec, Persona, SubGoal, ToolKind
from ..text import format_answer, humanize, implausible_count, join_phrases, paraphrases, phrases
from .goal_phrases import _goal_phrase, _write_phrase
from .phrasing import (
    describe,
    is_person_entity,
    label,
    misfit_value,
    parse_fact_key,
    person_name,
    usable,
)
from .selections import Selection, find_selections
from .user_sim import fact_name

__all__ = [
    "Realization",
    "Selection",
    "realize_goal",
    "out_of_scope_request",
    "find_selections",
    "parse_fact_key",
    "is_person_entity",
]

Fact = tuple[str, str, Any]  # (fact key, field or parameter, value)


@dataclass
class Realization:
    persona: Persona
    goal: str
    subgoals: list[SubGoal]
    answer_facts: list[str]
    masked_args: list[list[str]]
    selections: list[Selection] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    intent: str = ""

    @property
    def unresolved(self) -> list[Selection]:
        return [s for s in self.selections if s.how == "unresolved"]


def realize_goal(
    spec: EnvSpec,
    gold: GoldResult,
    *,
    seed: int = 0,
    style: str | None = None,
    prefer_constraints: bool = True,
    hide_rate: float = 0.35,
    drop_facts: set[str] | None = None,
    refusal: bool = False,
) -> Realization:
    """Write the request a person would make for ``gold`` (an executed plan). ``refusal``: end with a
    request none of the environment's tools can serve (the assistant declines it)."""
    r = _Realizer(spec, gold, seed, style, prefer_constraints, hide_rate, drop_facts or set())
    r.refusal = out_of_scope_request(spec, r.rng) if refusal else None
    return r.run()


def out_of_scope_request(spec: EnvSpec, rng: random.Random) -> tuple[str, str] | None:
    """(what the user asks, what the assistant says it cannot do) for a request no tool of ``spec``
    serves: none of the request's key words is in a tool's name or description."""
    words: set[str] = set()
    for t in spec.tools:
        words |= set(re.findall(r"[a-z]+", (t.name.replace("_", " ") + " " + (t.description or "")).lower()))
    table = phrases("out_of_scope")
    keys = [k for k in table if not set(k.split()) & words]
    if not keys:
        return None
    ask, decline = table[rng.choice(keys)].split("|", 1)
    return ask, decline


@cache
def _faker() -> Any:
    """One Faker (making one costs ~10 ms); every use seeds it first, so output stays deterministic."""
    from faker import Faker

    return Faker("en_US")


def _ancestors(plan: Any, i: int) -> list[int]:
    seen: list[int] = []
    stack = list(plan.steps[i].deps) + plan.steps[i].ref_steps()
    while stack:
        j = stack.pop()
        if j in seen:
            continue
        seen.append(j)
        stack.extend(plan.steps[j].deps)
        stack.extend(plan.steps[j].ref_steps())
    return sorted(seen, reverse=True)


def _inst_key(entity: str, key: str) -> str:
    return entity + ("#" + key.split("#", 1)[1] if "#" in key else "")


def _ent_of(inst: str) -> str:
    return inst.split("#", 1)[0]


def _askable(key: str) -> bool:
    """Whether the assistant can ask for this fact without asking for an identifier (a fact named
    'patient identifier' is said up front, never held back: the question would name an id)."""
    return not _ID_WORDS.search(fact_name(key))


_ID_WORDS = re.compile(r"\b(id|ids|uuid|identifier|identifiers)\b", re.I)


def _tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = s.replace(" ,", ",").replace("..", ".").replace("?.", "?").replace(" .", ".")
    s = re.sub(r"\b(for me|for us|please)(,? \1\b)+", r"\1", s)  # 'jot it down for me for me.'
    return s[:1].upper() + s[1:]


class _Realizer:
    """One realization: the facts the user holds, what is hidden, and one phrase per goal."""

    def __init__(
        self,
        spec: EnvSpec,
        gold: GoldResult,
        seed: int,
        style: str | None,
        prefer_constraints: bool,
        hide_rate: float,
        drop_facts: set[str],
    ):
        self.spec, self.gold, self.plan = spec, gold, gold.plan
        self.rng = random.Random(f"{seed}:{gold.plan.env}:{gold.plan.index}:{len(gold.plan.steps)}")
        self.style = style or self.rng.choice(phrases("styles"))
        self.prefer_constraints, self.hide_rate, self.drop_facts = prefer_constraints, hide_rate, drop_facts
        self.rules: list[str] = ["implicit_reference"]
        self.entity_facts: dict[str, list[Fact]] = {}  # by entity instance ('flight', 'flight#2')
        self.param_facts: dict[str, list[Fact]] = {}  # by tool
        self.known: dict[str, Any] = {}
        self.hidden: dict[str, Any] = {}
        self.extra_phrase: dict[str, str] = {}  # entity -> implicit constraint ("the cheapest one")
        self.selections: list[Selection] = []
        self.inst_of: dict[int, str] = {}
        self.refusal: tuple[str, str] | None = None
        self.persona_name = ""

    def run(self) -> Realization:
        self._collect_facts()
        self._select()
        persona_name = self.persona_name = self._persona_name()
        self._hide()
        self._instances()
        phrased, answers, answers_of = self._goal_phrases()
        goal, subgoals = self._assemble(persona_name, phrased, answers_of)
        masked = []
        for st in self.plan.steps:
            if self.spec.tool(st.tool).kind == ToolKind.list:
                masked.append(sorted(st.args))
            else:
                masked.append(sorted(a for a in st.args if a in ("limit", "offset", "sort_by", "order")))
        persona = Persona(
            name=persona_name, style=self.style, known_facts=self.known, hidden_facts=self.hidden
        )
        return Realization(
            persona,
            goal,
            subgoals,
            answers,
            masked,
            self.selections,
            sorted(set(self.rules)),
            intent=self._intent(),
        )

    def _intent(self) -> str:
        """The pattern of what the person wants, read off the plan's goals."""
        kinds = [self.spec.tool(self.plan.steps[g].tool) for g in self.plan.goal_steps]
        if len(kinds) > 1:
            return "errand on related rows"
        t = kinds[0]
        if (
            t.kind == ToolKind.action
            and t.preconditions
            and t.name.split("_")[0] in phrases("precondition_verbs")
        ):
            return "cancel or refund under a precondition"
        if t.kind == ToolKind.create:
            looked_up = any(st.role == "discover" for st in self.plan.steps)
            return "create with references looked up" if looked_up else "create"
        if t.kind in (ToolKind.update, ToolKind.action, ToolKind.delete):
            return "change my own thing"
        if any(s.how == "constraint" for s in self.selections):
            return "compare and choose"
        return "find and report"

    # ---- what the user knows ----------------------------------------------------------------------

    def _collect_facts(self) -> None:
        """Facts by entity instance, values to be written by tool, and everything known."""
        for k, v in self.plan.user_facts.items():
            if k in self.drop_facts:
                continue
            pk = parse_fact_key(self.spec, k)
            if pk is None or not usable(v) or misfit_value(self.spec, pk[1], pk[2], v):
                continue
            if pk[0] == "entity":
                self.entity_facts.setdefault(_inst_key(pk[1], k), []).append((k, pk[2], v))
            else:
                tool, param = k.split("#", 1)[0].split(".", 1)
                self.param_facts.setdefault(tool, []).append((k, param, v))
            self.known[k] = v

    def _select(self) -> None:
        """Rows picked among list results: a constraint becomes a phrase, a fact a known fact."""
        self.selections = find_selections(self.spec, self.gold, self.known, self.prefer_constraints)
        for s in self.selections:
            if s.how in ("constraint", "fact") and s.fact_key and s.fact_key not in self.drop_facts:
                self.known[s.fact_key] = s.fact_value
                if s.how == "constraint":
                    self.extra_phrase[s.entity] = s.phrase
                    self.rules.append("implicit_constraint")
                else:
                    self.entity_facts.setdefault(_inst_key(s.entity, s.fact_key), []).append(
                        (s.fact_key, s.fact_key.split(".", 1)[1], s.fact_value)
                    )

    def _persona_name(self) -> str:
        """The person row the plan is about, else a seeded Faker name. Not a person whose own details
        the goal asks for or whose record it deletes: no one asks for their own phone number."""
        spec, gold = self.spec, self.gold
        about = {
            spec.tool(self.plan.steps[g].tool).entity
            for g in self.plan.goal_steps
            if spec.tool(self.plan.steps[g].tool).kind in (ToolKind.get, ToolKind.list, ToolKind.delete)
        }
        for i, st in enumerate(self.plan.steps):
            t = spec.tool(st.tool)
            if not is_person_entity(spec.entity(t.entity)) or i >= len(gold.calls) or t.entity in about:
                continue
            out = gold.calls[i].output or {}
            row = None
            if t.kind == ToolKind.create:
                row = out
            else:
                for s in self.selections:
                    if s.source == i:
                        row = s.row
                if row is None and isinstance(out, dict) and "items" not in out and t.kind != ToolKind.delete:
                    row = out
            name = person_name(row) if row else None
            if name:
                return name
        fk = _faker()
        fk.seed_instance(self.rng.randrange(1 << 30))
        from ..runtime.seed import plain_name

        return plain_name(fk.name())

    def _hide(self) -> None:
        """Parameter omission: hold back some facts; the user reveals them when asked."""
        rng, hidden, known = self.rng, self.hidden, self.known
        own = set(self.persona_name.split())  # no one holds back their own name
        for tool, facts in self.param_facts.items():
            if self.spec.tool(tool).kind != ToolKind.create:
                continue  # an update or action must say what it sets; only a new row's details may wait
            for k, _, v in facts:
                if len(known) - len(hidden) > 2 and rng.random() < self.hide_rate and len(hidden) < 2:
                    if _askable(k) and str(v) not in own:
                        hidden[k] = v
        sel_keys = {s.fact_key for s in self.selections}
        for facts in self.entity_facts.values():
            if len(facts) >= 3 and rng.random() < self.hide_rate and len(hidden) < 2:
                k = facts[-1][0]
                if k not in sel_keys and _askable(k) and str(known[k]) not in own:
                    hidden[k] = known[k]
        if hidden:
            self.rules.append("parameter_omission")
        # A count no one would use to describe a row ('330 stops') is not said up front; the user
        # still knows it and gives it when asked.
        for facts in self.entity_facts.values():
            for k, f, v in facts:
                if implausible_count(f, v) and k not in sel_keys:
                    hidden[k] = v
        for k in hidden:
            known.pop(k, None)

    def _instances(self) -> None:
        """Which instance of an entity (facts 'flight.x' vs 'flight.x#2') each step is about."""
        counter: dict[str, int] = {}
        for i, st in enumerate(self.plan.steps):
            t = self.spec.tool(st.tool)
            e = t.entity
            if any(not is_ref(v) for v in st.args.values()) and t.kind == ToolKind.list:
                counter[e] = counter.get(e, 0) + 1
            n = max(1, counter.get(e, 1))
            self.inst_of[i] = e if n == 1 else f"{e}#{n}"

    def _efacts(self, inst: str) -> list[tuple[str, Any]]:
        return [(f, v) for k, f, v in self.entity_facts.get(inst, []) if k not in self.hidden]

    # ---- one phrase per goal ----------------------------------------------------------------------

    def _goal_phrases(self) -> tuple[list[tuple[str, list[int], list[str]]], list[str], list[list[str]]]:
        """(phrase, steps it covers, hidden facts it may reveal) per goal, set-up writes folded
        into the goal they serve; and the answer facts."""
        out: list[tuple[str, list[int], list[str]]] = []
        answers: list[str] = []
        answers_of: list[list[str]] = []
        # what the user says or gives when asked is never an answer they ask for
        said = list(self.known.values()) + list(self.hidden.values()) + [self.persona_name]
        said += self.persona_name.split()  # the user's own name is not an answer they ask for
        stated = {format_answer(v) for v in said} | {str(v) for v in said}
        used_setup: set[int] = set()
        described: set[str] = set()
        for g in self.plan.goal_steps:
            phrase, steps, reveals, ans = self._one_goal(g, stated, used_setup, described)
            new = [a for a in ans if a not in answers]
            answers.extend(new)
            same = next((k for k, ph in enumerate(out) if ph[0] == phrase), None)
            if same is not None:
                # The same request twice (a merged plan that repeats a step): say it once.
                out[same][1][:] = sorted(set(out[same][1]) | set(steps))
                out[same][2].extend(r for r in reveals if r not in out[same][2])
                answers_of[same].extend(new)
                continue
            out.append((phrase, steps, reveals))
            answers_of.append(new)
        if len(self.plan.goal_steps) > 1:
            self.rules.append("goal_expansion")
        return out, answers, answers_of

    def _one_goal(
        self, g: int, stated: set[str], used_setup: set[int], described: set[str]
    ) -> tuple[str, list[int], list[str], list[str]]:
        spec, plan, inst_of = self.spec, self.plan, self.inst_of
        st = plan.steps[g]
        t = spec.tool(st.tool)
        anc = _ancestors(plan, g)
        steps = sorted(set(anc) | {g})
        value_refs: dict[str, int] = {}
        if t.kind == ToolKind.update:
            kp = t.key_param.name if t.key_param else None
            value_refs = {p: st.args[p][REF][0] for p in st.args if p != kp and is_ref(st.args[p])}
        ctx_ents: list[str] = []
        for a in anc:
            e = inst_of[a]
            if a in value_refs.values():
                continue
            if (
                _ent_of(e) != t.entity
                and e not in ctx_ents
                and (self._efacts(e) or _ent_of(e) in self.extra_phrase)
            ):
                ctx_ents.append(e)
        setup_bits = self._setup_bits(anc, used_setup, ctx_ents)
        hops: dict[str, str] = {}
        for a in steps:  # an ancestor reached through a row's foreign key too: 'the quote on the test
            # clock of my customer', not 'the quote belonging to my customer' (which is another's)
            hops.update(self._hops(plan.steps[a], spec.tool(plan.steps[a].tool)))
        ctx = ""
        if ctx_ents:
            pieces = []
            for e in ctx_ents[:3]:
                if e in hops:  # 'bookings of the traveller on that reservation', not 'of that reservation'
                    pieces.append(f"the {humanize(hops[e])}")
                if e in described:
                    # said before: 'that booking' pins it, and with it the rows it hangs from
                    pieces.append(f"that {humanize(_ent_of(e))}")
                    break
                pieces.append(
                    describe(
                        spec,
                        _ent_of(e),
                        self._efacts(e),
                        "the",
                        self.extra_phrase.get(_ent_of(e), ""),
                        self.rng,
                        doc_words=True,
                    )
                )
            ctx = self.rng.choice(paraphrases("links")) + self.rng.choice(paraphrases("links")).join(pieces)
            described.update(ctx_ents[:3])
        own = self._efacts(inst_of[g]) if inst_of[g] not in described else []
        described.add(inst_of[g])
        step_ents = {spec.tool(plan.steps[a].tool).entity for a in steps}
        reveals = [
            k
            for k in self.hidden
            if (parsed_key := parse_fact_key(spec, k))
            and (k.split(".", 1)[0] == st.tool or parsed_key[1] in step_ents)
        ]
        out = self.gold.calls[g].output if g < len(self.gold.calls) else None
        new_refs = {p: self._new_value_ref(st, p, src) for p, src in value_refs.items()}
        phrase, ans = _goal_phrase(
            self, t, st, own, self.extra_phrase.get(t.entity, ""), ctx, out, stated, new_refs
        )
        if setup_bits:
            self.rules.append("action_compression")
            phrase = join_phrases(setup_bits) + self.rng.choice(paraphrases("setup_joins")) + phrase
        return phrase, steps, reveals, ans

    def _hops(self, st: Any, t: Any) -> dict[str, str]:
        """Rows this step reaches through another row's foreign key to a third entity: instance of the
        row read -> the entity its key points at (a booking's traveller, a position's device)."""
        out: dict[str, str] = {}
        for v in st.args.values():
            if not is_ref(v):
                continue
            src, *path = v[REF]
            names = [x for x in path if isinstance(x, str) and x != "items"]
            src_ent = self.spec.entity(self.spec.tool(self.plan.steps[src].tool).entity)
            if not names or names[-1] == src_ent.primary_key or not src_ent.has_field(names[-1]):
                continue
            ref = src_ent.field(names[-1]).ref
            if ref and ref not in (t.entity, src_ent.name):
                out[self.inst_of[src]] = ref
        return out

    def _setup_bits(self, anc: list[int], used_setup: set[int], ctx_ents: list[str]) -> list[str]:
        """Set-up writes among a goal's ancestors, each said once ("create a trip and ...")."""
        bits: list[str] = []
        for a in anc:
            at = self.spec.tool(self.plan.steps[a].tool)
            if self.plan.steps[a].role == "setup" and at.writes and a not in used_setup:
                used_setup.add(a)
                bit = _write_phrase(self, at, self.plan.steps[a])
                if bit not in bits:
                    bits.append(bit)
                if self.inst_of[a] in ctx_ents:
                    ctx_ents.remove(self.inst_of[a])
        return bits

    def _new_value_ref(self, st: Any, p: str, src: int) -> str:
        """An update's new value taken from another step's row, described."""
        spec, inst = self.spec, self.inst_of[src]
        desc = describe(
            spec, _ent_of(inst), self._efacts(inst), "the", self.extra_phrase.get(_ent_of(inst), "")
        )
        path = [x for x in st.args[p][REF][1:] if isinstance(x, str) and x != "items"]
        if path and path[-1] != spec.entity(_ent_of(inst)).primary_key:
            # The new value is a field of the row found ('the home airport of the airline'),
            # not the row itself.
            desc = f"the {label(spec, _ent_of(inst), path[-1])} of {desc}"
        return desc

    def _assemble(
        self, persona_name: str, phrased: list[tuple[str, list[int], list[str]]], answers_of: list[list[str]]
    ) -> tuple[str, list[SubGoal]]:
        """The goal (the request alone: the greeting is the user's, once, in the first message) and
        one sub-goal per request, each with the answer facts it asks for."""
        rng, asks = self.rng, paraphrases("asks")[self.style]
        req = phrased[0][0]
        for p, _, _ in phrased[1:]:
            req += rng.choice(paraphrases("joins")) + p
        subgoals = []
        for k, ((p, steps, reveals), ans) in enumerate(zip(phrased, answers_of)):
            table = asks if k == 0 else paraphrases("follow_asks")
            subgoals.append(
                SubGoal(
                    text=_tidy(rng.choice(table).format(req=p)), steps=steps, reveals=reveals, answers=ans
                )
            )
        if self.refusal is not None:
            ask, decline = self.refusal
            subgoals.append(
                SubGoal(
                    text=_tidy(rng.choice(phrases("refusal_asks")).format(req=ask)),
                    kind="refusal",
                    decline=decline,
                )
            )
            req += rng.choice(paraphrases("joins")) + ask
        goal = _tidy(rng.choice(asks).format(req=req))
        return goal, subgoals
