"""Defects 2 and 6 (issue 14): operations read by what they do (summary, method, request,
response together), not by the path's shape or a word inside a name.

Each case is an operation shaped after one of the corpus documents (named in the id).
"""

from __future__ import annotations

import pytest

from envfactory.explore import plan_operation

from .conftest import body, ok, openapi, path_param, query

OBJ = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
LIST = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": OBJ}, "cursor": {"type": "string"}},
}


def _plan(method, path, *, summary="", params=(), req=None, resp=OBJ, description="", operation_id=None):
    op = {"summary": summary, "responses": ok(resp)}
    if description:
        op["description"] = description
    if operation_id:
        op["operationId"] = operation_id
    if params:
        op["parameters"] = list(params)
    if req is not None:
        op["requestBody"] = body(req)
    doc = openapi({path: {method: op}})
    return plan_operation(doc.operations[0])


def _body_with(*names, required=()):
    return {
        "type": "object",
        "required": list(required),
        "properties": {n: {"type": "string"} for n in names},
    }


CASES = [
    # (id, plan arguments, kind, entity, key_param)
    (
        "square-search-events",
        dict(method="post", path="/v2/events", summary="SearchEvents", req=_body_with("cursor"), resp=LIST),
        "list",
        "event",
        None,
    ),
    (
        "invoices-search",
        dict(
            method="post",
            path="/invoices/search",
            summary="Search invoices",
            req=_body_with("status"),
            resp=LIST,
        ),
        "list",
        "invoice",
        None,
    ),
    (
        "plaid-item-get",
        dict(
            method="post",
            path="/transfer/get",
            summary="Retrieve a transfer",
            req=_body_with("transfer_id", required=["transfer_id"]),
        ),
        "get",
        "transfer",
        "transfer_id",
    ),
    (
        "justeat-create-on-scope",
        dict(
            method="post",
            path="/consumers/{tenant}",
            summary="Create consumer",
            params=[path_param("tenant")],
            req=_body_with("emailAddress"),
        ),
        "create",
        "consumer",
        None,
    ),
    (
        "put-id-in-body",
        dict(
            method="put",
            path="/api/Task",
            summary="Update a task",
            req=_body_with("TaskID", "Title", required=["TaskID"]),
        ),
        "update",
        "task",
        "TaskID",
    ),
    (
        "delete-id-in-query",
        dict(
            method="delete",
            path="/api/Task",
            summary="Delete a task",
            params=[query("TaskID", {"type": "integer"})],
        ),
        "delete",
        "task",
        "TaskID",
    ),
    (
        "plaid-cancel-id-in-body",
        dict(
            method="post",
            path="/transfer/cancel",
            summary="Cancel a transfer",
            req=_body_with("transfer_id", required=["transfer_id"]),
        ),
        "action",
        "transfer",
        "transfer_id",
    ),
    (
        "clubhouse-get-club",
        dict(method="post", path="/get_club", summary="gets club by id", req=_body_with("club_id")),
        "get",
        "club",
        "club_id",
    ),
    (
        "health-records-are-real",
        dict(method="get", path="/patients/{id}/health-records", params=[path_param("id")], resp=LIST),
        "list",
        "health_record",
        None,
    ),
    (
        "paypal-authorize-is-real",
        dict(
            method="post",
            path="/v2/checkout/orders/{id}/authorize",
            summary="Authorize payment for order",
            params=[path_param("id")],
        ),
        "action",
        "order",
        "id",
    ),
    (
        "set-password-is-real",
        dict(
            method="put", path="/users/{id}/password", params=[path_param("id")], req=_body_with("password")
        ),
        "update",
        "user",
        "id",
    ),
    (
        "stripe-create-test-clock",  # "test" opens the path word, but the document says it creates one
        dict(
            method="post",
            path="/v1/test_helpers/test_clocks",
            description="<p>Creates a new test clock that can be attached to new customers and quotes.</p>",
            operation_id="PostTestHelpersTestClocks",
            req=_body_with("frozen_time", "name", required=["frozen_time"]),
        ),
        "create",
        "test_clock",
        None,
    ),
    (
        "gmail-create-send-as-alias",
        dict(
            method="post",
            path="/gmail/v1/users/{userId}/settings/sendAs",
            description='Creates a custom "from" send-as alias.',
            operation_id="gmail.users.settings.sendAs.create",
            params=[path_param("userId")],
            req=_body_with("sendAsEmail", "displayName"),
        ),
        "create",
        "send_as",
        None,
    ),
    (
        "jira-create-project-version",  # a first word "version" that names a resource, not the API's
        dict(method="post", path="/rest/api/3/version", summary="Create version", req=_body_with("name")),
        "create",
        "version",
        None,
    ),
    (
        "jira-get-project-version",
        dict(method="get", path="/rest/api/3/version/{id}", params=[path_param("id")]),
        "get",
        "version",
        "id",
    ),
    (
        "jira-list-workflow-statuses",  # GET /status answering a list: the statuses, not a probe
        dict(
            method="get",
            path="/rest/api/3/status",
            summary="Get all statuses",
            resp={"type": "array", "items": OBJ},
        ),
        "list",
        "status",
        None,
    ),
    (
        "justeat-checkout-under-a-tenant",  # /checkout/{tenant}/{checkoutId}: a scope, then the row's id
        dict(
            method="patch",
            path="/checkout/{tenant}/{checkoutId}",
            summary="Update Checkout",
            params=[path_param("tenant"), path_param("checkoutId")],
            req=_body_with("notes"),
        ),
        "update",
        "checkout",
        "checkoutId",
    ),
    (
        "box-file-versions-are-real",
        dict(method="get", path="/files/{file_id}/versions", params=[path_param("file_id")], resp=LIST),
        "list",
        "version",
        None,
    ),
]


SINGLETONS = [
    # (id, plan arguments, kind, entity, singleton kind, key)
    ("me", dict(method="get", path="/me", resp=OBJ), "get", "current_user", "global", None),
    ("settings", dict(method="get", path="/settings", resp=OBJ), "get", "settings", "global", None),
    (
        "discord-patch-users-me",
        dict(method="patch", path="/users/@me", req=_body_with("username")),
        "update",
        "current_user",
        "global",
        None,
    ),
    (
        "vtex-delete-feed-config",
        dict(method="delete", path="/api/orders/feed/config", resp=OBJ),
        "delete",
        "feed_config",
        "global",
        None,
    ),
    (
        "discord-guild-welcome-screen",
        dict(
            method="patch",
            path="/guilds/{guild_id}/welcome-screen",
            params=[path_param("guild_id")],
            req=_body_with("enabled", "welcome_channels", "description"),
        ),
        "update",
        "guild_welcome_screen",
        "parent",
        "guild_id",
    ),
    (
        "justeat-restaurant-fees-under-a-tenant",
        dict(
            method="put",
            path="/restaurants/{tenant}/{restaurantId}/fees",
            params=[path_param("tenant"), path_param("restaurantId")],
            req=_body_with("bagFee", "deliveryFees"),
        ),
        "update",
        "restaurant_fees",
        "parent",
        "restaurantId",
    ),
    (
        "resend-domain-claim",
        dict(method="get", path="/domains/{domain_id}/claim", params=[path_param("domain_id")], resp=OBJ),
        "get",
        "domain_claim",
        "parent",
        "domain_id",
    ),
]


@pytest.mark.parametrize(
    "args,kind,entity,single,key", [c[1:] for c in SINGLETONS], ids=[c[0] for c in SINGLETONS]
)
def test_one_object_with_no_id_is_a_singleton(args, kind, entity, single, key):
    p = _plan(**args)
    assert p.reason is None, p.reason
    assert (p.kind, p.entity, p.singleton, p.key_param) == (kind, entity, single, key)


@pytest.mark.parametrize("args,kind,entity,key", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_operation_read_by_what_it_does(args, kind, entity, key):
    p = _plan(**args)
    assert p.reason is None, p.reason
    assert (p.kind, p.entity, p.key_param) == (kind, entity, key)


EXCLUDED = [
    (
        "justeat-delivery-estimate-computed",
        dict(
            method="get",
            path="/delivery/estimate",
            params=[
                {"name": n, "in": "query", "required": True, "schema": {"type": "number"}}
                for n in ("toLat", "toLon")
            ],
            resp=OBJ,
        ),
        "computed",
    ),
    (
        "discord-reaction-of-a-user",  # /reactions/{emoji_name}/{user_id}: no parameter is a reaction's id
        dict(
            method="delete",
            path="/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}",
            params=[path_param(n) for n in ("channel_id", "message_id", "emoji_name", "user_id")],
        ),
        "path values in a row (emoji_name, user_id)",
    ),
    ("start-timer", dict(method="post", path="/start-timer", req=_body_with("note")), "verb"),
    (
        "powerdns-cache-flush",
        dict(method="put", path="/servers/{server_id}/cache/flush", params=[path_param("server_id")]),
        "verb",
    ),
    ("generate-number", dict(method="post", path="/invoices/generate-next-invoice-number"), "verb"),
    ("health-probe", dict(method="get", path="/health", resp=OBJ), "health check"),
    ("status-probe", dict(method="get", path="/status", resp=OBJ), "health check"),
    ("api-version", dict(method="get", path="/version", resp=OBJ), "API metadata"),
    ("oauth-token", dict(method="post", path="/oauth/token", req=_body_with("code")), "authentication"),
]


@pytest.mark.parametrize("args,word", [c[1:] for c in EXCLUDED], ids=[c[0] for c in EXCLUDED])
def test_non_resources_are_excluded_with_a_reason(args, word):
    p = _plan(**args)
    assert p.reason is not None and word in p.reason, (p.kind, p.entity, p.reason)


def test_a_webhook_the_api_invokes_is_no_operation_of_the_api():
    # Just Eat: PUT /order-requires-delivery-acceptance "This webhook will be invoked when we have
    # determined that an order is required acceptance for delivery" became an update of an order
    # (with a body 'Id' the document marks optional), POST /order-accepted a create
    for method, path in (("put", "/order-requires-delivery-acceptance"), ("post", "/order-accepted")):
        p = _plan(
            method,
            path,
            summary="Order requires delivery acceptance",
            description="This webhook will be invoked when we have determined that an order is required acceptance.",
            req=_body_with("Id", "OrderId"),
        )
        assert p.reason is not None and "webhook callback" in p.reason, (p.kind, p.entity)


def test_a_like_of_the_caller_is_no_update_or_delete_of_the_row():
    # SoundCloud: POST/DELETE /likes/tracks/{track_id} ("Likes a track") had become update_track and
    # delete_track, which delete the track itself once a seeded track is free to delete
    for method in ("post", "delete"):
        p = _plan(
            method, "/likes/tracks/{track_id}", summary="Likes a track.", params=[path_param("track_id")]
        )
        assert p.reason is not None and "a like on a track" in p.reason, (p.kind, p.entity)
    assert _plan("get", "/me/likes/tracks", resp=LIST).kind == "list"


def test_leaving_or_following_under_the_caller_s_path_is_no_write_of_the_row():
    # Discord DELETE /users/@me/guilds/{guild_id} (leave_guild) had become delete_guild;
    # SoundCloud PUT /me/followings/{user_id} ("Follows a user.") an update of the user's fields
    leave = _plan(
        "delete", "/users/@me/guilds/{guild_id}", operation_id="leave_guild", params=[path_param("guild_id")]
    )
    assert leave.reason is not None and "the caller leaves it" in leave.reason
    follow = _plan(
        "put", "/me/followings/{user_id}", summary="Follows a user.", params=[path_param("user_id")]
    )
    assert follow.reason is not None and "the caller follows it" in follow.reason
    # removing a calendar from the caller's list deletes the list entry, a row of its own
    entry = _plan(
        "delete",
        "/users/me/calendarList/{calendarId}",
        summary="Removes a calendar from the user's calendar list.",
        params=[path_param("calendarId")],
    )
    assert (entry.kind, entry.entity) == ("delete", "calendar_list")
