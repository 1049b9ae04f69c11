"""One entity per schema identity, on a Google Classroom-shaped document (issue 14, defect 5).

Classroom lists a course's work with ``courseWorkStates``: a filter of the course work's own
``state``, not a column of its own. And when one document is split into several environments,
the environment that creates course work under a course must also be able to find a course.
"""

from __future__ import annotations

from envfactory.explore import explore

from .conftest import body, ok, openapi, path_param, query, ref

STATES = ["COURSE_WORK_STATE_UNSPECIFIED", "PUBLISHED", "DRAFT", "DELETED"]


def _classroom(children: tuple[str, ...] = ("courseWork",)):
    """Courses (list, create, get, patch, delete) and, under each course, child resources with
    list (filtered by ``<child>States``), create, get, patch and delete, as Classroom documents them."""
    course = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "room": {"type": "string"}},
    }
    schemas = {"Course": course}
    paths = {
        "/v1/courses": {
            "get": {
                "tags": ["courses"],
                "responses": ok(
                    {"type": "object", "properties": {"courses": {"type": "array", "items": ref("Course")}}}
                ),
            },
            "post": {"tags": ["courses"], "requestBody": body(ref("Course")), "responses": ok(ref("Course"))},
        },
        "/v1/courses/{id}": {
            m: {"tags": ["courses"], "parameters": [path_param("id")], "responses": ok(ref("Course"))}
            for m in ("get", "patch", "delete")
        },
    }
    for child in children:
        cap = child[0].upper() + child[1:]
        schemas[cap] = {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "courseId": {"type": "string", "description": "Identifier of the course."},
                "title": {"type": "string"},
                "state": {
                    "type": "string",
                    "enum": STATES,
                    "description": "Status of this course work. If unspecified, the default state is `DRAFT`.",
                },
            },
        }
        states = {"type": "array", "items": {"type": "string", "enum": STATES}}
        listed = {"type": "object", "properties": {child: {"type": "array", "items": ref(cap)}}}
        paths[f"/v1/courses/{{courseId}}/{child}"] = {
            "get": {
                "tags": [child],
                "parameters": [path_param("courseId"), query(f"{child}States", states)],
                "responses": ok(listed),
            },
            "post": {
                "tags": [child],
                "parameters": [path_param("courseId")],
                "requestBody": body(ref(cap)),
                "responses": ok(ref(cap)),
            },
        }
        paths[f"/v1/courses/{{courseId}}/{child}/{{id}}"] = {
            m: {
                "tags": [child],
                "parameters": [path_param("courseId"), path_param("id")],
                "responses": ok(ref(cap)),
            }
            for m in ("get", "patch", "delete")
        }
    return openapi(paths, schemas, title="Google Classroom API")


def test_a_states_filter_named_after_the_entity_filters_its_own_state():
    spec = explore(_classroom(), domain="test").envs[0]
    work = spec.entity("course_work")
    names = [f.name for f in work.fields]
    assert "state" in names and "course_work_state" not in names
    lister = next(t for t in spec.tools if t.kind.value == "list" and t.entity == "course_work")
    states = next(p for p in lister.params if p.name == "course_work_states")
    assert (states.field, states.op) == ("state", "in")


def test_every_environment_of_a_split_document_can_find_the_parent_its_creates_take():
    children = ("courseWork", "announcements", "courseWorkMaterials", "topics")
    res = explore(_classroom(children), domain="test", max_tools=10)
    assert len(res.envs) > 1
    for spec in res.envs:
        for t in spec.tools:
            if t.kind.value != "create" or t.entity == "course":
                continue
            assert any(p.name == "course_id" and p.required for p in t.params), t.name
            finders = [x.name for x in spec.tools if x.entity == "course" and x.kind.value == "list"]
            assert finders, f"{spec.name}: {t.name} takes a course id, no tool lists courses"


def _apps(resources: tuple[str, ...]):
    """Sinao-shaped: every resource lives under ``/apps/{appId}/`` (list, create, get, update, delete)."""
    app = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    schemas = {"App": app}
    paths = {
        "/apps": {"get": {"tags": ["apps"], "responses": ok({"type": "array", "items": ref("App")})}},
        "/apps/{appId}": {
            "get": {"tags": ["apps"], "parameters": [path_param("appId")], "responses": ok(ref("App"))}
        },
    }
    for r in resources:
        cap = r.capitalize()
        schemas[cap] = {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "note": {"type": "string"}},
        }
        paths[f"/apps/{{appId}}/{r}s"] = {
            "get": {
                "tags": [r],
                "parameters": [path_param("appId"), query("search", {"type": "string"})],
                "responses": ok({"type": "array", "items": ref(cap)}),
            },
            "post": {
                "tags": [r],
                "parameters": [path_param("appId")],
                "requestBody": body(ref(cap)),
                "responses": ok(ref(cap)),
            },
        }
        paths[f"/apps/{{appId}}/{r}s/{{id}}"] = {
            m: {"tags": [r], "parameters": [path_param("appId"), path_param("id")], "responses": ok(ref(cap))}
            for m in ("get", "put", "delete")
        }
    return openapi(paths, schemas, title="Sinao API")


def test_siblings_under_one_parent_share_environments_instead_of_one_each():
    resources = ("invoice", "quote", "purchase", "product", "contact", "account", "bankdetail", "rule")
    res = explore(_apps(resources), domain="test", max_tools=12)
    tools = sum(len(s.tools) for s in res.envs)
    assert tools >= 40
    assert len(res.envs) <= -(-tools // 12) + 1, [s.name for s in res.envs]  # near the fewest that fit
    for spec in res.envs:
        assert len(spec.tools) <= 12


def test_a_course_and_its_children_are_not_split_needlessly():
    children = ("courseWork", "announcements", "courseWorkMaterials", "topics")
    res = explore(_classroom(children), domain="test", max_tools=16)
    tools = sum(len(s.tools) for s in res.envs)
    assert len(res.envs) <= -(-tools // 16) + 1, [(s.name, len(s.tools)) for s in res.envs]
