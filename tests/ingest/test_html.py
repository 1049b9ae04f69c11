import pytest

from envfactory.errors import IngestError
from envfactory.ingest import load_apidoc
from envfactory.ingest.html import read_html

WIDGETS = """<!doctype html><html><head><title>Widgets API</title><script>var GET = "/x";</script></head>
<body><nav><a href="/">Home</a> GET /nav</nav>
<h1>Widgets</h1>
<h2 id="list-widgets">List widgets</h2>
<p><code>GET /api/widgets</code> returns all widgets.</p>
<h3>Query parameters</h3>
<table><thead><tr><th>Name</th><th>Type</th><th>Required</th><th>Description</th></tr></thead>
<tbody><tr><td><code>limit</code></td><td>integer</td><td>no</td><td>Max results</td></tr>
<tr><td><code>color</code></td><td>string</td><td>yes</td><td>Filter by color</td></tr></tbody></table>
<h3>Response</h3>
<pre><code class="language-json">[{"id": 1, "name": "Bolt", "created_at": "2024-01-02T03:04:05Z"}]</code></pre>
<h2>Create a part</h2>
<pre><code class="language-http">POST /api/widgets/42/parts</code></pre>
<ul><li><code>name</code> - the part name</li><li><code>size</code> - Integer. size in cm</li></ul>
<h4>Example request</h4>
<pre><code>{"name": "Nut", "size": 3}</code></pre>
<dl><dt>Authorization</dt><dd>Bearer token</dd></dl>
</body></html>"""


def test_html_reference_endpoints_tables_and_examples():
    api = read_html(WIDGETS, "widgets.html")
    assert api.format == "html" and api.title == "Widgets"
    assert [op.key for op in api.operations] == ["GET /api/widgets", "POST /api/widgets/{widget_id}/parts"]
    get, post = api.operations
    assert get.summary == "List widgets" and "returns all widgets" in get.description
    assert [(p.name, p.location, p.required, p.type) for p in get.parameters] == [
        ("limit", "query", False, "integer"),
        ("color", "query", True, "string"),
    ]
    assert get.responses[0].schema_["items"]["properties"]["created_at"]["format"] == "date-time"
    assert post.request_example == {"name": "Nut", "size": 3}
    assert [(p.name, p.location) for p in post.parameters] == [
        ("widget_id", "path"),
        ("name", "body"),
        ("size", "body"),
        ("Authorization", "header"),
    ]
    assert post.request_body["properties"]["size"]["type"] == "integer"


def test_html_title_used_when_page_has_no_heading():
    api = read_html(
        "<html><head><title>Tiny</title></head><body><pre>DELETE /things/{id}</pre></body></html>", "t.html"
    )
    assert api.title == "Tiny" and api.operations[0].key == "DELETE /things/{id}"


@pytest.mark.parametrize(
    "html",
    [
        "<html><body><h1>About us</h1><p>We make widgets.</p></body></html>",
        "<html><head><script>fetch('GET /api/x')</script></head><body><div id=app></div></body></html>",
    ],
)
def test_html_that_is_not_an_api_reference_is_an_ingest_error(tmp_path, html):
    page = tmp_path / "about.html"
    page.write_text(html)
    with pytest.raises(IngestError, match=r"about\.html: not an API reference") as info:
        load_apidoc(page)
    assert "\n" not in str(info.value)


def test_a_heading_permalink_mark_is_no_part_of_the_path():
    # OpenStack Barbican's Sphinx pages (resources/utilities/barbican): every endpoint heading ends
    # in <a class="headerlink" title="Permalink to this heading">¶</a>, which gave the paths
    # /v1/containers¶ and a second, unmarked copy of each operation from the page's contents list
    page = """<html><head><title>Containers API - Barbican</title></head><body>
<div class="section"><h1>Containers API<a class="headerlink" href="#c" title="Permalink to this headline">¶</a></h1>
<h2>GET /v1/containers<a class="headerlink" href="#get-v1-containers" title="Permalink to this heading">¶</a></h2>
<p>Lists a project's containers.</p>
<pre><code class="language-json">{"containers": [{"container_ref": "x", "name": "a"}], "total": 1}</code></pre>
<h2>DELETE /v1/containers/{uuid}<a class="headerlink" href="#delete" title="Permalink to this heading">¶</a></h2>
<p>Deletes a container.</p></div>
<ul><li><a class="reference internal" href="#get-v1-containers">GET /v1/containers</a></li></ul>
</body></html>"""
    api = read_html(page, "containers.html")
    assert [op.key for op in api.operations] == ["GET /v1/containers", "DELETE /v1/containers/{uuid}"]
    assert api.title == "Containers API"


def test_an_endpoint_heading_keeps_its_attributes_and_examples():
    # Barbican's secrets.html: the heading's "Attributes" table ("Attribute Name" column), then the
    # example request (its request line repeats the endpoint), a "201 Created" response and an
    # example quoted with ' : with the headerlinks gone they were a second, bare operation
    page = """<html><body>
<h2>POST /v1/secrets<a class="headerlink" href="#p" title="Permalink to this heading">¶</a></h2>
<p>Creates a Secret entity.</p>
<h3>Attributes</h3>
<table><tr><th>Attribute Name</th><th>Type</th><th>Description</th></tr>
<tr><td>name</td><td>string</td><td>(optional) The name of the secret.</td></tr>
<tr><td>bit_length</td><td>integer</td><td>(optional) Metadata.</td></tr></table>
<h3>Request:</h3>
<pre>POST /v1/secrets
Headers:
    Content-Type: application/json</pre>
<h3>Response:</h3>
<pre>201 Created

{"secret_ref": "https://{barbican_host}/v1/secrets/{secret_uuid}"}</pre>
<h2>GET /v1/secrets/{uuid}/metadata</h2>
<p>Lists a secret's user-defined metadata.</p>
<h3>Response:</h3>
<pre>{
  'metadata': {'description': 'contains the AES key'}
}</pre>
</body></html>"""
    api = read_html(page, "secrets.html")
    ops = {op.key: op for op in api.operations}
    assert list(ops) == ["POST /v1/secrets", "GET /v1/secrets/{uuid}/metadata"]
    post = ops["POST /v1/secrets"]
    assert [(p.name, p.location) for p in post.parameters] == [("name", "body"), ("bit_length", "body")]
    assert post.success_response().example == {
        "secret_ref": "https://{barbican_host}/v1/secrets/{secret_uuid}"
    }
    meta = ops["GET /v1/secrets/{uuid}/metadata"].success_response()
    assert meta.example == {"metadata": {"description": "contains the AES key"}}
