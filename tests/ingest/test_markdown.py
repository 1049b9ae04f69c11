import pytest

from envfactory.errors import IngestError
from envfactory.ingest import load_apidoc
from envfactory.ingest.markdown import normalize_path, read_markdown, singular

from ._corpus import CORPUS, needs_corpus

BASECAMP_STYLE = """\
Comments
========

Get comments
------------

* `GET /buckets/1/recordings/3/comments.json` will return a list of comments.

_Optional query parameters_:

* `status` - when set to `archived`, returns archived comments.

###### Example JSON Response
<!-- START GET /buckets/1/recordings/3/comments.json -->
```json
[{"id": 1, "content": "Hi", "created_at": "2024-01-02T03:04:05.000Z", "due_on": "2024-02-01"}]
```
<!-- END GET /buckets/1/recordings/3/comments.json -->

Create a comment
----------------

* `POST /buckets/1/recordings/3/comments.json` creates a comment.

**Required parameters**: `content` as the body of the comment.

_Optional parameters_:

* `notify` - when set to `true`, notify people.
* `subscriber_ids` - an array of people to notify.

This endpoint will return `201 Created` with the comment.

###### Example JSON Request

```json
{"content": "<div>Hello</div>"}
```

###### Copy as cURL

```shell
curl -s https://3.basecampapi.com/$ACCOUNT_ID/buckets/1/recordings/3/comments.json
```

Legacy routes
-------------

* `GET /projects/7/comments.json` → [Get comments](#get-comments)
"""

MASTODON_STYLE = """\
---
title: polls API methods
description: View and vote on polls.
---

## View a poll {#get}

```http
GET /api/v1/polls/:id HTTP/1.1
```

#### Request

##### Path parameters

:id
: {{<required>}} String. The ID of the Poll in the database.

##### Headers

Authorization
: Provide this header with `Bearer <user_token>`.

#### Response
##### 200: OK

```json
{
  "id": "34830",
  "expired": true,
  // ...
}
```

##### 404: Not found

```json
{"error": "Record not found"}
```

## Vote on a poll {#vote}

```http
POST /api/v1/polls/:id/votes HTTP/1.1
```

##### Form data parameters

choices[]
: {{<required>}} Array of Integer. Provide your own votes as an index for each option.
"""

TABLE_STYLE = """\
# Items API

### GET /v2/items

| Parameter | Type | Required | Description |
|-----------|------|----------|-------------|
| `limit` | integer | no | Page size |
| `q` | string | yes | Search text |

### POST /v2/items

- `name` (string, required) - the item name
- `price` - Number. the price
"""


def test_basecamp_style_endpoints_params_and_examples():
    api = read_markdown(BASECAMP_STYLE, "comments.md")
    assert api.title == "Comments" and api.format == "markdown"
    ops = {op.key: op for op in api.operations}
    get = ops["GET /buckets/{bucket_id}/recordings/{recording_id}/comments.json"]
    assert get.summary == "Get comments" and get.operation_id == "get_comments"
    assert [(p.name, p.location, p.type) for p in get.parameters] == [
        ("bucket_id", "path", "integer"),
        ("recording_id", "path", "integer"),
        ("status", "query", "string"),
    ]
    items = get.success_response().schema_["items"]
    assert items["properties"]["created_at"] == {"type": "string", "format": "date-time"}
    assert items["properties"]["due_on"] == {"type": "string", "format": "date"}
    post = ops["POST /buckets/{bucket_id}/recordings/{recording_id}/comments.json"]
    body = {p.name: (p.required, p.type) for p in post.parameters if p.location == "body"}
    assert body == {
        "content": (True, "string"),
        "notify": (False, "boolean"),
        "subscriber_ids": (False, "array"),
    }
    assert post.request_example == {"content": "<div>Hello</div>"}
    assert post.request_body["required"] == ["content"]
    assert [r.status for r in post.responses] == ["201"]
    assert api.base_url == "https://3.basecampapi.com/{account_id}"


def test_alias_route_copies_the_linked_section():
    api = read_markdown(BASECAMP_STYLE, "comments.md")
    legacy = next(op for op in api.operations if op.path == "/projects/{project_id}/comments.json")
    assert legacy.summary == "Get comments"
    assert legacy.success_response().schema_["type"] == "array"


def test_mastodon_style_definition_lists_and_status_headings():
    api = read_markdown(MASTODON_STYLE, "polls.md")
    assert (api.title, api.description) == ("polls API methods", "View and vote on polls.")
    get, vote = api.operations
    assert get.key == "GET /api/v1/polls/{id}" and get.operation_id == "get"
    assert [(p.name, p.location, p.required) for p in get.parameters] == [
        ("id", "path", True),
        ("Authorization", "header", False),
    ]
    assert {r.status: r.schema_ for r in get.responses}["200"]["properties"]["expired"] == {"type": "boolean"}
    assert {r.status for r in get.responses} == {"200", "404"}
    assert vote.parameters[-1].name == "choices[]" and vote.parameters[-1].location == "body"
    assert vote.parameters[-1].schema_ == {"type": "array", "items": {"type": "integer"}}
    assert vote.parameters[-1].required


def test_tables_and_typed_bullets():
    api = read_markdown(TABLE_STYLE, "items.md")
    get, post = api.operations
    assert [(p.name, p.required, p.type) for p in get.parameters] == [
        ("limit", False, "integer"),
        ("q", True, "string"),
    ]
    assert [(p.name, p.required, p.type) for p in post.parameters] == [
        ("name", True, "string"),
        ("price", False, "number"),
    ]


def test_markdown_without_endpoints_is_an_ingest_error():
    with pytest.raises(IngestError, match=r"notes\.md: not an API reference"):
        read_markdown("# Release notes\n\nWe fixed bugs.\n", "notes.md")


@pytest.mark.parametrize(
    ("raw", "path", "types"),
    [
        (
            "/buckets/1/todos/2.json",
            "/buckets/{bucket_id}/todos/{todo_id}.json",
            {"bucket_id": "integer", "todo_id": "integer"},
        ),
        (
            "/schedule_entries/2/occurrences/20190218.json",
            "/schedule_entries/{schedule_entry_id}/occurrences/{occurrence_id}.json",
            None,
        ),
        ("/api/v1/statuses/:id/context", "/api/v1/statuses/{id}/context", {"id": "string"}),
        (
            "/buckets/{id}/todolists/{id}/todos.json",
            "/buckets/{bucket_id}/todolists/{todolist_id}/todos.json",
            None,
        ),
        ("/people/5?page=2", "/people/{person_id}", None),
    ],
)
def test_normalize_path(raw, path, types):
    got, got_types = normalize_path(raw)
    assert got == path
    if types is not None:
        assert got_types == types


@pytest.mark.parametrize(
    ("word", "one"),
    [
        ("todolists", "todolist"),
        ("entries", "entry"),
        ("statuses", "status"),
        ("people", "person"),
        ("boxes", "box"),
        ("address", "address"),
    ],
)
def test_singular(word, one):
    assert singular(word) == one


@needs_corpus
@pytest.mark.parametrize(
    ("name", "min_ops", "key"),
    [
        ("project_management/basecamp__todos.md", 14, "POST /todolists/{todolist_id}/todos.json"),
        ("project_management/basecamp__todolists.md", 8, "POST /todosets/{todoset_id}/todolists.json"),
        (
            "project_management/basecamp__card_table_cards.md",
            10,
            "POST /card_tables/cards/{card_id}/moves.json",
        ),
        (
            "calendar_scheduling/basecamp__schedule_entries.md",
            8,
            "POST /schedules/{schedule_id}/entries.json",
        ),
        ("messaging_email/mastodon__statuses.md", 25, "POST /api/v1/statuses"),
    ],
)
def test_corpus_markdown_references(name, min_ops, key):
    api = load_apidoc(CORPUS / name)
    assert len(api.operations) >= min_ops
    op = next(o for o in api.operations if o.key == key)
    assert op.request_body and op.request_body["type"] == "object"
    assert any(p.location == "body" and p.required for p in op.parameters)
    assert any(r.schema_ for o in api.operations for r in o.responses)
