"""Inference rules of the deterministic explorer, one small document at a time."""

from __future__ import annotations

import pytest

from envfactory.errors import ExploreError, RuntimeToolError
from envfactory.explore import explore, plan_operation
from envfactory.ingest import Operation
from envfactory.runtime import Environment

from .conftest import body, ok, openapi, path_param, query, ref


def _env(doc):
    res = explore(doc, domain="test")
    assert len(res.envs) == 1
    return res, res.envs[0]


@pytest.mark.parametrize(
    "method,path,kind,entity,verb",
    [
        ("get", "/hotels", "list", "hotel", None),
        ("get", "/v2/hotels/{hotelId}", "get", "hotel", None),
        ("post", "/hotels", "create", "hotel", None),
        ("put", "/hotels/{id}", "update", "hotel", None),
        ("patch", "/hotels/{id}", "update", "hotel", None),
        ("delete", "/hotels/{id}", "delete", "hotel", None),
        ("post", "/bookings/{id}/cancel", "action", "booking", "cancel"),
        ("post", "/bookings/{id}/check-in", "action", "booking", "check_in"),
        ("post", "/orders/{orderId}/transfers/{tid}/cancellation", "action", "transfer", "cancel"),
        ("post", "/todos/{todo_id}/completion.json", "action", "todo", "complete"),
        ("delete", "/todos/{todo_id}/completion.json", "action", "todo", "reopen"),
        ("get", "/hotel-offers", "list", "hotel_offer", None),
        ("get", "/hotels/{hotelId}/offers", "list", "offer", None),
        ("get", "/locations/hotels/by-city", "list", "hotel", None),
        ("post", "/customers/search", "list", "customer", None),
        ("get", "/conversations.list", "list", "conversation", None),
        ("get", "/users.info", "get", "user", None),
        ("post", "/conversations.archive", "action", "conversation", "archive"),
    ],
)
def test_operation_kinds(method, path, kind, entity, verb):
    plan = plan_operation(Operation(method=method, path=path))
    assert plan.reason is None
    assert (plan.kind, plan.entity, plan.verb) == (kind, entity, verb)


@pytest.mark.parametrize(
    "method,path,reason_word",
    [
        ("get", "/health", "health"),
        ("post", "/oauth/token", "authentication"),
        ("post", "/auth/login", "authentication"),
        ("post", "/callbacks", "callback"),
        ("post", "/files/upload", "upload"),
        ("get", "/files/{id}/download", "download"),
        ("get", "/$metadata", "metadata"),
        ("head", "/hotels", "HEAD"),
        ("delete", "/hotels", "bulk"),
    ],
)
def test_operations_without_state_meaning_are_excluded(method, path, reason_word):
    plan = plan_operation(Operation(method=method, path=path))
    assert plan.reason is not None and reason_word.lower() in plan.reason.lower()


def test_entities_keys_and_foreign_keys(hotel_doc):
    res, spec = _env(hotel_doc)
    names = {e.name for e in spec.entities}
    assert {"hotel", "booking", "offer"} <= names
    assert spec.entity("hotel").primary_key == "id"
    booking = spec.entity("booking")
    assert booking.field("hotel_id").ref == "hotel"  # *_id naming a known entity
    assert spec.entity("offer").field("hotel_id").ref == "hotel"  # path nesting
    assert booking.field("status").enum == ["pending", "confirmed", "cancelled", "completed"]
    assert booking.field("check_in").type.value == "date"
    assert spec.entity("hotel").field("created_at").type.value == "datetime"
    assert spec.entity("hotel").display_field == "name"


def test_tool_kinds_and_names(hotel_doc):
    _, spec = _env(hotel_doc)
    kinds = {t.name: t.kind.value for t in spec.tools}
    assert kinds["search_hotels"] == "list"
    assert kinds["get_hotel"] == "get"
    assert kinds["create_booking"] == "create"
    assert kinds["update_booking"] == "update"
    assert kinds["delete_booking"] == "delete"
    assert kinds["cancel_booking"] == "action"
    assert kinds["confirm_booking"] == "action"
    assert "list_offers" in kinds and spec.tool("list_offers").param("hotel_id").required


def test_list_filters_paging_and_sort(hotel_doc):
    _, spec = _env(hotel_doc)
    t = spec.tool("search_hotels")
    ops = {p.name: (p.field, p.op) for p in t.params}
    assert ops["min_rating"] == ("rating", "gte")
    assert ops["q"] == ("name", "contains")
    assert ops["city"] == ("city", "contains")
    assert not {"limit", "offset", "sort"} & set(ops)
    assert t.sort is not None and "rating" in t.sort.fields
    status = spec.tool("list_bookings").param("status")
    assert status.op == "in" and status.enum == ["pending", "confirmed", "cancelled", "completed"]


def test_create_params_required_and_server_set(hotel_doc):
    _, spec = _env(hotel_doc)
    t = spec.tool("create_booking")
    req = {p.name for p in t.params if p.required}
    assert req == {"hotel_id", "guest_name", "check_in"}
    assert not {"id", "status", "total"} & {p.name for p in t.params}
    assert any(e.field == "status" and e.set == "pending" for e in t.effects)


@pytest.mark.parametrize(
    "tool,allowed,target,stamp",
    [
        ("cancel_booking", ["pending", "confirmed"], "cancelled", "cancelled_at"),
        ("confirm_booking", ["pending"], "confirmed", None),
    ],
)
def test_action_preconditions_and_effects(hotel_doc, tool, allowed, target, stamp):
    _, spec = _env(hotel_doc)
    t = spec.tool(tool)
    assert [(c.field, c.op, c.value) for c in t.preconditions] == [("status", "in", allowed)]
    assert t.effects[0].field == "status" and t.effects[0].set == target
    assert (stamp in [e.field for e in t.effects if e.now]) if stamp else len(t.effects) == 1


def test_cancel_runs_and_then_fails_cleanly(hotel_doc):
    _, spec = _env(hotel_doc)
    env = Environment.from_spec(spec)
    s = env.new_session()
    row = s.query("SELECT id FROM booking WHERE status = 'confirmed' LIMIT 1")[0]
    out = s.call("cancel_booking", {"booking_id": row[0]})
    assert out["status"] == "cancelled" and out["cancelled_at"] == spec.clock
    h = s.state_hash()
    again = s.try_call("cancel_booking", {"booking_id": row[0]})
    assert again["ok"] is False and again["error"] == "precondition_failed"
    assert s.state_hash() == h


def test_excluded_ops_are_listed_with_reasons(hotel_doc):
    res, spec = _env(hotel_doc)
    ex = {x.operation: x.reason for x in res.excluded}
    assert "health check" in ex["GET /health"]
    assert "callback" in ex["POST /callbacks"]
    assert any("GET /health" in line for line in spec.excluded)


def test_status_synthesized_when_actions_need_one():
    doc = openapi(
        {
            "/tickets": {"get": {"responses": ok({"type": "array", "items": ref("Ticket")})}},
            "/tickets/{ticketId}": {
                "get": {"parameters": [path_param("ticketId")], "responses": ok(ref("Ticket"))}
            },
            "/tickets/{ticketId}/close": {
                "post": {"parameters": [path_param("ticketId")], "responses": ok(ref("Ticket"))}
            },
        },
        {
            "Ticket": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
            }
        },
    )
    res, spec = _env(doc)
    f = spec.entity("ticket").field("status")
    assert "closed" in f.enum
    t = spec.tool("close_ticket")
    assert t.effects[0].set == "closed" and t.preconditions[0].value == ["open"]
    assert any("synthesized" in w for w in res.warnings)


def test_boolean_flag_action():
    doc = openapi(
        {
            "/notes/{noteId}": {"get": {"parameters": [path_param("noteId")], "responses": ok(ref("Note"))}},
            "/notes/{noteId}/archive": {
                "post": {"parameters": [path_param("noteId")], "responses": ok(ref("Note"))}
            },
        },
        {
            "Note": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "archived": {"type": "boolean"}},
            }
        },
    )
    _, spec = _env(doc)
    t = spec.tool("archive_note")
    assert (t.preconditions[0].field, t.preconditions[0].op, t.preconditions[0].value) == (
        "archived",
        "ne",
        True,
    )
    assert t.effects[0].set is True


def test_update_without_fields_is_excluded_with_reason():
    doc = openapi(
        {
            "/tags/{tagId}": {
                "get": {
                    "parameters": [path_param("tagId")],
                    "responses": ok(
                        {
                            "type": "object",
                            "properties": {"id": {"type": "string"}, "label": {"type": "string"}},
                        }
                    ),
                },
                "put": {
                    "parameters": [path_param("tagId")],
                    "requestBody": body(
                        {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}}
                    ),
                },
            },
        }
    )
    res, spec = _env(doc)
    assert any(x.operation == "PUT /tags/{tagId}" and "no field" in x.reason for x in res.excluded)


def test_nothing_usable_raises_explore_error():
    doc = openapi({"/health": {"get": {"responses": ok({"type": "object"})}}})
    with pytest.raises(ExploreError, match="no environment"):
        explore(doc, domain="test")


def test_same_input_same_spec(hotel_doc):
    a = explore(hotel_doc, domain="test", seed=3).envs[0]
    b = explore(hotel_doc, domain="test", seed=3).envs[0]
    assert a.model_dump() == b.model_dump()
    assert a.seed.seed == 3


def test_seed_recipe_scales_parents_below_children(hotel_doc):
    _, spec = _env(hotel_doc)
    rows = {k: v.rows for k, v in spec.seed.entities.items()}
    assert rows["hotel"] < rows["booking"]
    assert 990 <= sum(rows.values()) <= 10000
    env = Environment.from_spec(spec)
    counts = env.row_counts()
    assert counts == rows
    # the documented range is stated on the field (envfactory.spec.roles) and bounds the seeded values
    stars = spec.entity("hotel").field("stars")
    assert (stars.minimum, stars.maximum) == (1, 5)
    assert {r[0] for r in env.new_session().query("SELECT stars FROM hotel")} <= {1, 2, 3, 4, 5}


def test_every_tool_of_the_example_is_callable(hotel_doc):
    _, spec = _env(hotel_doc)
    env = Environment.from_spec(spec)
    s = env.new_session()
    hid = s.query("SELECT id FROM hotel LIMIT 1")[0][0]
    assert s.call("get_hotel", {"hotel_id": hid})["id"] == hid
    assert s.call("search_hotels", {"min_rating": 1, "limit": 5})["count"] <= 5
    out = s.call("create_booking", {"hotel_id": hid, "guest_name": "Ada", "check_in": "2026-07-01"})
    assert out["status"] == "pending"
    assert s.call("list_offers", {"hotel_id": hid})["offset"] == 0
    bad = s.try_call("create_booking", {"hotel_id": "nope", "guest_name": "Ada", "check_in": "2026-07-01"})
    assert bad["ok"] is False


# ---- several documents of one domain: one resource graph ------------------------------------------

_TRAVELER = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "email": {"type": "string"}},
}


def _travelers_doc(schema_name: str = "Traveler", pk: str = "id") -> object:
    schema = {
        **_TRAVELER,
        "properties": {pk: {"type": "string"}, "name": {"type": "string"}, "email": {"type": "string"}},
        "required": [pk, "name"],
    }
    return openapi(
        {
            "/travelers": {
                "get": {
                    "parameters": [query("name", {"type": "string"})],
                    "responses": ok({"type": "array", "items": ref(schema_name)}),
                },
                "post": {
                    "requestBody": body(
                        {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                        }
                    ),
                    "responses": ok(ref(schema_name)),
                },
            },
            "/travelers/{travelerId}": {
                "get": {"parameters": [path_param("travelerId")], "responses": ok(ref(schema_name))}
            },
        },
        {schema_name: schema},
        title="Travel API - Trips",
    )


def _orders_doc(fk: str, nested: bool = False) -> object:
    order = {
        "type": "object",
        "required": ["id", "amount"],
        "properties": {
            "id": {"type": "string"},
            fk: {"type": "string"},
            "amount": {"type": "number"},
            "status": {"type": "string", "enum": ["pending", "confirmed", "cancelled"]},
        },
    }
    create = {
        "type": "object",
        "required": [fk, "amount"],
        "properties": {fk: {"type": "string"}, "amount": {"type": "number"}},
    }
    coll = "/travelers/{travelerId}/orders" if nested else "/orders"
    params = [path_param("travelerId")] if nested else []
    if nested:
        order["properties"].pop(fk)
        create = {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}}
    return openapi(
        {
            coll: {
                "get": {"parameters": params, "responses": ok({"type": "array", "items": ref("Order")})},
                "post": {"parameters": params, "requestBody": body(create), "responses": ok(ref("Order"))},
            },
            "/orders/{orderId}": {
                "get": {"parameters": [path_param("orderId")], "responses": ok(ref("Order"))}
            },
            "/orders/{orderId}/cancel": {
                "post": {"parameters": [path_param("orderId")], "responses": ok(ref("Order"))}
            },
        },
        {"Order": order},
        title="Travel API - Orders",
    )


@pytest.mark.parametrize(
    "case,traveler_doc,orders_doc,fk",
    [
        ("snake_case field", lambda: _travelers_doc(), lambda: _orders_doc("traveler_id"), "traveler_id"),
        ("camelCase field", lambda: _travelers_doc(), lambda: _orders_doc("travelerId"), "traveler_id"),
        (
            "suffixed schema name",
            lambda: _travelers_doc("TravelerResponse"),
            lambda: _orders_doc("traveler_id"),
            "traveler_id",
        ),
        (
            "key named after the entity",
            lambda: _travelers_doc(pk="traveler_id"),
            lambda: _orders_doc("traveler_id"),
            "traveler_id",
        ),
        (
            "role prefix before the entity",
            lambda: _travelers_doc(),
            lambda: _orders_doc("booker_traveler_id"),
            "booker_traveler_id",
        ),
        (
            "path nesting across documents",
            lambda: _travelers_doc(),
            lambda: _orders_doc("traveler_id", nested=True),
            "traveler_id",
        ),
    ],
)
@pytest.mark.parametrize("order_first", [False, True])
def test_documents_of_a_domain_merge_into_one_graph(case, traveler_doc, orders_doc, fk, order_first):
    docs = [traveler_doc(), orders_doc()]
    if order_first:
        docs.reverse()
    res = explore(docs, domain="travel")
    assert len(res.envs) == 1, case  # 7 tools: one environment
    spec = res.envs[0]
    assert spec.entity("order").field(fk).ref == "traveler", case
    assert {"search_travelers", "create_order", "cancel_order"} <= {t.name for t in spec.tools}
    assert spec.sources == [d.source for d in docs]
    assert spec.name.startswith("travel_") and spec.name == explore(docs, domain="travel").envs[0].name
    env = Environment.from_spec(spec)
    s = env.new_session()
    traveler = s.query('SELECT "{}" FROM traveler LIMIT 1'.format(spec.entity("traveler").primary_key))[0][0]
    fk_param = next(p.name for p in spec.tool("create_order").params if p.field == fk)
    out = s.call("create_order", {fk_param: traveler, "amount": 12.5})
    assert out[fk] == traveler
    with pytest.raises(RuntimeToolError, match="TR-NOPE"):
        s.call("create_order", {fk_param: "TR-NOPE", "amount": 12.5})


def test_single_documents_are_explored_one_by_one_without_merge():
    docs = [_travelers_doc(), _orders_doc("traveler_id")]
    res = explore(docs, domain="travel", merge=False)
    assert [s.sources for s in res.envs] == [[docs[0].source], [docs[1].source]]
    order = next(s for s in res.envs if s.sources == [docs[1].source]).entity("order")
    assert order.field("traveler_id").ref is None  # the traveler lives in the other document


# POST /x/{x_id}/<verb>: an action on x, unless the answer is another resource with its own id.
_ENROLLMENT = {
    "type": "object",
    "required": ["id", "course", "status"],
    "properties": {
        "id": {"type": "string"},
        "course": {"type": "string"},
        "status": {"type": "string", "enum": ["enrolled", "waitlisted", "dropped", "completed"]},
        "grade": {"type": "string", "nullable": True},
        "dropped_on": {"type": "string", "format": "date", "nullable": True},
    },
}
_TICKET = {
    "type": "object",
    "required": ["id", "title", "status"],
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "closed", "reopened"]},
        "assignee_user_id": {"type": "string", "nullable": True},
    },
}
_USER = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
}
_ORDER = {
    "type": "object",
    "required": ["id", "status"],
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "enum": ["paid", "refunded"]},
        "total": {"type": "number"},
    },
}
_REFUND = {
    "type": "object",
    "required": ["refund_id", "order_id", "amount"],
    "properties": {
        "refund_id": {"type": "string"},
        "order_id": {"type": "string"},
        "amount": {"type": "number"},
        "reason": {"type": "string", "nullable": True},
    },
}


def _item_api(
    plural: str,
    schema: dict,
    verb: str,
    verb_body: dict | None,
    answer: dict,
    status: str = "200",
    extra: dict | None = None,
):
    item = f"{{{plural[:-1]}_id}}"
    post: dict = {
        "summary": f"{verb} it",
        "parameters": [path_param(item[1:-1])],
        "responses": {status: ok(answer)["200"]},
    }
    if verb_body is not None:
        post["requestBody"] = body(verb_body)
    paths = {
        f"/{plural}": {"get": {"responses": ok({"type": "array", "items": schema})}},
        f"/{plural}/{item}": {"get": {"parameters": [path_param(item[1:-1])], "responses": ok(schema)}},
        f"/{plural}/{item}/{verb}": {"post": post},
        **(extra or {}),
    }
    return openapi(paths)


@pytest.mark.parametrize("case", ["grade", "drop", "assign"])
def test_post_verb_on_an_item_is_an_action_on_it(case):
    if case == "grade":  # the verb names a field: written from the argument
        doc = _item_api(
            "enrollments",
            _ENROLLMENT,
            "grade",
            {"type": "object", "required": ["grade"], "properties": {"grade": {"type": "string"}}},
            _ENROLLMENT,
        )
        name, write, status_to, guard = (
            "grade_enrollment",
            ("grade", "grade"),
            None,
            ("status", "in", ["enrolled", "completed"]),
        )
    elif case == "drop":  # a table verb: a status move, with its timestamp
        doc = _item_api("enrollments", _ENROLLMENT, "drop", None, _ENROLLMENT)
        name, write, status_to, guard = (
            "drop_enrollment",
            None,
            "dropped",
            ("status", "in", ["enrolled", "waitlisted"]),
        )
    else:  # a foreign key written from the argument, only while the ticket is not closed
        doc = _item_api(
            "tickets",
            _TICKET,
            "assign",
            {
                "type": "object",
                "required": ["assignee_user_id"],
                "properties": {"assignee_user_id": {"type": "string"}},
            },
            _TICKET,
            extra={"/users": {"get": {"responses": ok({"type": "array", "items": _USER})}}},
        )
        name, write, status_to, guard = (
            "assign_ticket",
            ("assignee_user_id", "assignee_user_id"),
            None,
            ("status", "in", ["open", "reopened"]),
        )
    _, spec = _env(doc)
    assert not [t.name for t in spec.tools if t.kind.value == "create"]
    assert not {"grade", "drop", "assign"} & {e.name for e in spec.entities}
    t = spec.tool(name)
    assert t.kind.value == "action" and t.key_param is not None
    assert [(c.field, c.op, c.value) for c in t.preconditions] == [guard]
    writes = [(e.field, e.param) for e in t.effects if e.param]
    assert writes == ([write] if write else [])
    if write:
        assert t.param(write[1]).required and t.param(write[1]).field == write[0]
    moves = [e.set for e in t.effects if e.field == "status" and e.uses_set]
    assert moves == ([status_to] if status_to else [])
    assert t.description.startswith(f"{name.split('_')[0].capitalize()} a")
    assert f"Needs {t.key_param.name}" in t.description
    if case == "drop":
        assert any(e.field == "dropped_on" and e.now for e in t.effects)
    if case == "assign":
        assert spec.entity("ticket").field("assignee_user_id").ref == "user"
        assert "from list_users" in t.description


def test_assign_runs_and_is_refused_on_a_closed_ticket():
    doc = _item_api(
        "tickets",
        _TICKET,
        "assign",
        {
            "type": "object",
            "required": ["assignee_user_id"],
            "properties": {"assignee_user_id": {"type": "string"}},
        },
        _TICKET,
        extra={"/users": {"get": {"responses": ok({"type": "array", "items": _USER})}}},
    )
    _, spec = _env(doc)
    env = Environment.from_spec(spec)
    s = env.new_session()
    user = s.query("SELECT id FROM user LIMIT 1")[0][0]
    tid = s.query("SELECT id FROM ticket WHERE status != 'closed' LIMIT 1")[0][0]
    out = s.call("assign_ticket", {"ticket_id": tid, "assignee_user_id": user})
    assert out["assignee_user_id"] == user
    closed = s.query("SELECT id, assignee_user_id FROM ticket WHERE status = 'closed' LIMIT 1")
    if closed:
        before = s.state_hash()
        with pytest.raises(RuntimeToolError):
            s.call("assign_ticket", {"ticket_id": closed[0][0], "assignee_user_id": user})
        assert s.state_hash() == before


def test_sub_resource_with_its_own_id_stays_a_create():
    doc = _item_api(
        "orders",
        _ORDER,
        "refunds",
        {
            "type": "object",
            "required": ["amount"],
            "properties": {"amount": {"type": "number"}, "reason": {"type": "string"}},
        },
        _REFUND,
        status="201",
    )
    _, spec = _env(doc)
    t = next(t for t in spec.tools if t.source == "POST /orders/{order_id}/refunds")
    assert t.kind.value == "create" and t.entity == "refund"
    assert spec.entity("refund").field("order_id").ref == "order"


@pytest.mark.parametrize("verb,reason_word", [("price", "computes"), ("copy", "copy")])
def test_unexpressible_item_verbs_are_excluded_not_invented(verb, reason_word):
    doc = _item_api(
        "orders",
        _ORDER,
        verb,
        {"type": "object", "properties": {"total": {"type": "number"}}},
        _ORDER,
        status="201" if verb == "copy" else "200",
    )
    res, spec = _env(doc)
    assert verb not in {e.name for e in spec.entities}
    assert any(verb in x.operation and reason_word in x.reason for x in res.excluded)


def test_pay_verb_with_an_amount_lowers_a_balance():
    member = {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "fines_due_cents": {"type": "integer"},
        },
    }
    doc = _item_api(
        "members",
        member,
        "pay-fines",
        {"type": "object", "required": ["amount_cents"], "properties": {"amount_cents": {"type": "integer"}}},
        member,
    )
    _, spec = _env(doc)
    t = spec.tool("pay_member_fines")
    assert t.kind.value == "action"
    eff = next(e for e in t.effects if e.field == "fines_due_cents")
    assert eff.increment_param == "amount_cents" and eff.negate_param
    assert [(c.field, c.op, c.value_param) for c in t.preconditions] == [
        ("fines_due_cents", "gte", "amount_cents")
    ]
    assert t.param("amount_cents").field is None


def test_a_root_no_one_can_tell_apart_is_seeded_once():
    # PowerDNS's server is known by links and a type: sixty of them would make every request about one
    # a person cannot name; a hotel (a name) keeps its rows
    from envfactory.explore.seeding import seed_recipe
    from envfactory.spec import EntitySpec, FieldSpec, FieldType

    server = EntitySpec(
        name="server",
        primary_key="id",
        fields=[
            FieldSpec(name="id", type=FieldType.string),
            FieldSpec(name="url", type=FieldType.string),
            FieldSpec(name="daemon_type", type=FieldType.string),
        ],
    )
    hotel = EntitySpec(
        name="hotel",
        primary_key="id",
        fields=[FieldSpec(name="id", type=FieldType.string), FieldSpec(name="name", type=FieldType.string)],
    )
    zone = EntitySpec(
        name="zone",
        primary_key="id",
        fields=[
            FieldSpec(name="id", type=FieldType.string),
            FieldSpec(name="server_id", type=FieldType.string, ref="server"),
        ],
    )
    seed = seed_recipe([server, hotel, zone], {}, seed=0, clock="2026-06-01T09:00:00")
    assert seed.entities["server"].rows == 1
    assert seed.entities["hotel"].rows > 10 and seed.entities["zone"].rows > 10
