"""Issue 14 fidelity, second round: operations the explorer dropped though the document says
what they do. Each fixture is cut down from a corpus document (named in the test)."""

from __future__ import annotations

from envfactory.explore import explore, plan_operation

from .conftest import body, ok, openapi, path_param, ref

CREDS = {
    "client_id": {"type": "string", "description": "Your Plaid API `client_id`."},
    "secret": {"type": "string", "description": "Your Plaid API `secret`."},
}
REPORT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "beacon_user_id": {"type": "string"},
        "type": {"type": "string"},
        "created_at": {"type": "string", "format": "date-time"},
    },
}


def _rpc(props: dict, required: list[str], resp: dict | None = None, summary: str = "") -> dict:
    schema = {"type": "object", "required": required, "properties": {**CREDS, **props}}
    return {"post": {"summary": summary, "requestBody": body(schema), "responses": ok(resp or REPORT)}}


def _plans(paths: dict, schemas: dict | None = None) -> dict:
    doc = openapi(paths, schemas or {})
    return {op.key: plan_operation(op) for op in doc.operations}


def test_slash_verb_reads_the_row_its_body_id_names():
    # Plaid: POST /beacon/report/get {beacon_report_id}, /transfer/recurring/get
    # {recurring_transfer_id}, /payment_profile/remove {payment_profile_token},
    # /item/get {access_token: "The access token associated with the Item"}
    plans = _plans(
        {
            "/beacon/report/get": _rpc({"beacon_report_id": {"type": "string"}}, ["beacon_report_id"]),
            "/transfer/recurring/get": _rpc(
                {"recurring_transfer_id": {"type": "string"}}, ["recurring_transfer_id"]
            ),
            "/payment_profile/remove": _rpc(
                {"payment_profile_token": {"type": "string"}}, ["payment_profile_token"]
            ),
            "/item/get": _rpc(
                {
                    "access_token": {
                        "type": "string",
                        "description": "The access token associated with the Item.",
                    }
                },
                ["access_token"],
            ),
            "/beta/transactions/rules/v1/remove": _rpc(
                {"client_user_id": {"type": "string"}, "rule_id": {"type": "string"}},
                ["client_user_id", "rule_id"],
            ),
        }
    )
    got = {k: (p.kind, p.entity, p.key_param) for k, p in plans.items()}
    assert got == {
        "POST /beacon/report/get": ("get", "report", "beacon_report_id"),
        "POST /transfer/recurring/get": ("get", "recurring", "recurring_transfer_id"),
        "POST /payment_profile/remove": ("delete", "payment_profile", "payment_profile_token"),
        "POST /item/get": ("get", "item", "access_token"),
        "POST /beta/transactions/rules/v1/remove": ("delete", "rule", "rule_id"),
    }


def test_slash_verb_without_a_row_id_stays_dropped():
    # Plaid /cra/loans/update {loans: [...]}, /transfer/capabilities/get {access_token, account_id}
    plans = _plans(
        {
            "/cra/loans/update": _rpc({"loans": {"type": "array", "items": {"type": "object"}}}, ["loans"]),
            "/transfer/capabilities/get": _rpc(
                {"access_token": {"type": "string"}, "account_id": {"type": "string"}},
                ["access_token", "account_id"],
            ),
        }
    )
    assert all(p.reason and "names no id" in p.reason for p in plans.values()), plans


def test_body_action_and_create_summary():
    # Plaid POST /transfer/recurring/cancel {recurring_transfer_id}; Jira POST /rest/api/3/issue "Create issue"
    plans = _plans(
        {
            "/transfer/recurring/cancel": _rpc(
                {"recurring_transfer_id": {"type": "string"}}, ["recurring_transfer_id"]
            ),
            "/rest/api/3/issue": {
                "post": {
                    "summary": "Create issue",
                    "requestBody": body({"type": "object", "properties": {"fields": {"type": "object"}}}),
                    "responses": ok({"type": "object", "properties": {"id": {"type": "string"}}}),
                }
            },
        }
    )
    cancel, issue = plans["POST /transfer/recurring/cancel"], plans["POST /rest/api/3/issue"]
    assert (cancel.kind, cancel.entity, cancel.key_param, cancel.verb) == (
        "action",
        "recurring",
        "recurring_transfer_id",
        "cancel",
    )
    assert (issue.kind, issue.entity) == ("create", "issue")


GRANT = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "client_id": {"type": "string"}, "scopes": {"type": "array"}},
}


def test_oauth_grants_are_a_resource_token_exchange_is_not():
    # Resend GET /oauth/grants, DELETE /oauth/grants/{id}; Stripe POST /v1/tokens {card};
    # Plaid POST /oauth/token {grant_type}; Plaid POST /link/token/create -> {link_token}
    token_in = {"type": "object", "properties": {"grant_type": {"type": "string"}}}
    plans = _plans(
        {
            "/oauth/grants": {
                "get": {
                    "summary": "List grants",
                    "responses": ok(
                        {"type": "object", "properties": {"data": {"type": "array", "items": GRANT}}}
                    ),
                }
            },
            "/oauth/grants/{oauth_grant_id}": {
                "parameters": [path_param("oauth_grant_id")],
                "delete": {"summary": "Revoke an OAuth grant", "responses": ok(GRANT)},
            },
            "/v1/tokens": {
                "post": {
                    "requestBody": body({"type": "object", "properties": {"card": {"type": "string"}}}),
                    "responses": ok(
                        {
                            "type": "object",
                            "properties": {"id": {"type": "string"}, "used": {"type": "boolean"}},
                        }
                    ),
                }
            },
            "/oauth/token": {"post": {"requestBody": body(token_in), "responses": ok({"type": "object"})}},
            "/link/token/create": {
                "post": {
                    "requestBody": body(
                        {"type": "object", "properties": {"client_name": {"type": "string"}}}
                    ),
                    "responses": ok({"type": "object", "properties": {"link_token": {"type": "string"}}}),
                }
            },
        }
    )
    got = {k: p.reason or p.kind for k, p in plans.items()}
    assert got == {
        "GET /oauth/grants": "list",
        "DELETE /oauth/grants/{oauth_grant_id}": "delete",
        "POST /v1/tokens": "create",
        "POST /oauth/token": "authentication/session endpoint",
        "POST /link/token/create": "authentication/session endpoint",
    }


STATUS = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "description": "The text of the status."},
        "favourited": {"type": "boolean"},
        "reblogged": {"type": "boolean"},
        "muted": {"type": "boolean"},
        "bookmarked": {"type": "boolean"},
    },
}


def test_status_flags_are_set_by_their_verbs_and_the_text_is_no_state():
    # Mastodon statuses: POST /api/v1/statuses/{id}/favourite|unreblog|bookmark|mute; a
    # status's ``status`` is its text, so mute sets ``muted`` (it used to look up status "muted")
    paths: dict = {
        "/api/v1/statuses": {
            "get": {"responses": ok({"type": "array", "items": ref("Status")})},
            "post": {
                "requestBody": body({"type": "object", "properties": {"status": {"type": "string"}}}),
                "responses": ok(ref("Status")),
            },
        },
        "/api/v1/statuses/{id}": {"parameters": [path_param("id")], "get": {"responses": ok(ref("Status"))}},
    }
    for verb in (
        "favourite",
        "unfavourite",
        "reblog",
        "unreblog",
        "bookmark",
        "unbookmark",
        "mute",
        "unmute",
    ):
        paths[f"/api/v1/statuses/{{id}}/{verb}"] = {
            "parameters": [path_param("id")],
            "post": {"responses": ok(ref("Status"))},
        }
    res = explore(openapi(paths, {"Status": STATUS}), domain="d")
    tools = {t.name: t for e in res.envs for t in e.tools}
    effects = {n: [(e.field, e.set) for e in t.effects] for n, t in tools.items() if t.kind.value == "action"}
    assert effects == {
        "favourite_status": [("favourited", True)],
        "unfavourite_status": [("favourited", False)],
        "reblog_status": [("reblogged", True)],
        "unreblog_status": [("reblogged", False)],
        "bookmark_status": [("bookmarked", True)],
        "unbookmark_status": [("bookmarked", False)],
        "mute_status": [("muted", True)],
        "unmute_status": [("muted", False)],
    }, res.excluded
    status_field = next(
        f for e in res.envs for x in e.entities if x.name == "status" for f in x.fields if f.name == "status"
    )
    assert status_field.type.value == "string"


def test_map_placeholder_is_not_the_primary_key():
    # Just Eat GET /delivery/pools answers {"delivery-pool-id": {name, restaurants}}: the
    # pool's key is a string id, not that object (calls used to fail "must be a JSON object")
    pool = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "restaurants": {"type": "array", "items": {"type": "number"}},
        },
    }
    paths = {
        "/delivery/pools": {
            "get": {"responses": ok({"type": "object", "properties": {"delivery-pool-id": pool}})},
            "post": {"requestBody": body(pool), "responses": {"201": {"description": "created"}}},
        },
        "/delivery/pools/{deliveryPoolId}": {
            "parameters": [path_param("deliveryPoolId")],
            "get": {"responses": ok(pool)},
            "delete": {"responses": {"204": {"description": "gone"}}},
        },
    }
    res = explore(openapi(paths), domain="d")
    ent = next(x for e in res.envs for x in e.entities if x.name == "pool")
    pk = next(f for f in ent.fields if f.name == ent.primary_key)
    assert pk.type.value == "string"


def test_rpc_search_and_noun_methods_list_rows():
    # Slack GET /search.messages {query}; GET /team.accessLogs -> {"logins": [{...}]};
    # GET /conversations.members -> {"members": ["U123"]} lists no rows (plain ids)
    logins = {
        "type": "object",
        "properties": {
            "logins": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"user_id": {"type": "string"}, "ip": {"type": "string"}},
                },
            }
        },
    }
    members = {"type": "object", "properties": {"members": {"type": "array", "items": {"type": "string"}}}}
    q = {"name": "query", "in": "query", "required": True, "schema": {"type": "string"}}
    plans = _plans(
        {
            "/search.messages": {"get": {"parameters": [q], "responses": ok(logins)}},
            "/team.accessLogs": {"get": {"responses": ok(logins)}},
            "/conversations.members": {"get": {"responses": ok(members)}},
        }
    )
    got = {k: (p.kind, p.entity) if p.reason is None else p.reason for k, p in plans.items()}
    assert got["GET /search.messages"] == ("list", "message")
    assert got["GET /team.accessLogs"] == ("list", "access_logs")
    assert "not a state operation" in got["GET /conversations.members"]


def test_body_action_with_an_optional_id_names_no_row():
    # Gmail POST /users/{userId}/messages/send {id?, raw}: sends a new message; it used to
    # become an action on an existing message (or on the user) with the optional id required
    msg = {"type": "object", "properties": {"id": {"type": "string"}, "raw": {"type": "string"}}}
    plans = _plans(
        {
            "/users/{userId}/messages/send": {
                "parameters": [path_param("userId")],
                "post": {"requestBody": body(msg), "responses": ok(msg)},
            }
        }
    )
    (p,) = plans.values()
    assert p.kind is None and p.reason and "optional" in p.reason


def test_credentials_controls_and_type_tags_are_not_documented_body_fields():
    # Plaid {client_id, secret} "Your Plaid API ...", Slack token "Authentication token",
    # Stripe expand "fields in the response", Google kind "Type of the resource" / etag
    from envfactory.explore import documented_body

    props = {
        "client_id": {"type": "string", "description": "Your Plaid API `client_id`."},
        "secret": {"type": "string", "description": "Your Plaid API `secret`."},
        "token": {"type": "string", "description": "Authentication token. Requires scope: `chat:write`"},
        "expand": {
            "type": "array",
            "description": "Specifies which fields in the response should be expanded.",
        },
        "kind": {"type": "string", "description": 'Type of the resource ("calendar#event").'},
        "etag": {"type": "string", "description": "ETag of the resource."},
        "idempotency_key": {"type": "string"},
        "name": {"type": "string", "description": "The name."},
        "client_user_id": {"type": "string", "description": "A unique ID representing the end user."},
        "tokenized": {"type": "string", "description": "Authentication token stand-in."},
    }
    doc = openapi(
        {
            "/things": {
                "post": {
                    "requestBody": body({"type": "object", "properties": props}),
                    "responses": ok(REPORT),
                }
            }
        }
    )
    kept, _ = documented_body(doc.operations[0])
    assert sorted(kept) == ["client_user_id", "name", "tokenized"]


def test_token_key_keeps_its_documented_name():
    # Plaid POST /payment_profile/remove {payment_profile_token}: the tool's key is that name
    # (it used to be renamed payment_profile_id, losing the documented property)
    prof = {
        "type": "object",
        "properties": {"payment_profile_token": {"type": "string"}, "status": {"type": "string"}},
    }
    paths = {
        "/payment_profile/create": _rpc({}, [], prof, "Create payment profile"),
        "/payment_profile/remove": _rpc(
            {"payment_profile_token": {"type": "string"}},
            ["payment_profile_token"],
            {"type": "object", "properties": {"request_id": {"type": "string"}}},
        ),
    }
    res = explore(openapi(paths), domain="d")
    tools = {t.name: t for e in res.envs for t in e.tools}
    delete = next(t for t in tools.values() if t.kind.value == "delete")
    assert [p.name for p in delete.params if p.key] == ["payment_profile_token"], res.excluded


def test_rpc_add_or_remove_of_other_rows_is_a_link_not_a_create_or_delete():
    # Slack admin.usergroups.removeChannels {usergroup_id, channel_ids} became delete_channel
    # keyed by the user group's id; restrictAccess.addGroup "Add an allowlist of IDP groups"
    # became create_group. admin.usergroups.removeChannels links, it deletes no channel.
    form = {
        "type": "object",
        "required": ["usergroup_id"],
        "properties": {"usergroup_id": {"type": "string"}, "channel_ids": {"type": "string"}},
    }
    arch = {"type": "object", "required": ["channel_id"], "properties": {"channel_id": {"type": "string"}}}
    plans = _plans(
        {
            "/admin.usergroups.removeChannels": {
                "post": {"summary": "", "requestBody": body(form), "responses": ok({"type": "object"})}
            },
            "/admin.conversations.restrictAccess.addGroup": {
                "post": {
                    "description": "Add an allowlist of IDP groups for accessing a channel",
                    "requestBody": body(arch),
                    "responses": ok({"type": "object"}),
                }
            },
            "/admin.conversations.archive": {
                "post": {"requestBody": body(arch), "responses": ok({"type": "object"})}
            },
        }
    )
    assert "links or unlinks" in (plans["POST /admin.usergroups.removeChannels"].reason or "")
    assert "links or unlinks" in (plans["POST /admin.conversations.restrictAccess.addGroup"].reason or "")
    archive = plans["POST /admin.conversations.archive"]
    assert (archive.kind, archive.entity, archive.key_param) == ("action", "conversation", "channel_id")
