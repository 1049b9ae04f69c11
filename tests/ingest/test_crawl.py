import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from envfactory.errors import IngestError
from envfactory.ingest import CrawlResult, crawl, ingest, load_apidocs

PAGES = {
    "/docs/": (
        "text/html",
        b'<html><body><h1>Docs</h1><a href="todos.html">Todos</a> <a href="api/openapi.yaml">spec</a>'
        b' <a href="/elsewhere/page.html">off prefix</a> <a href="http://other.invalid/x">other host</a>'
        b' <a href="logo.png">logo</a> <a href="moved.html">moved</a> <a href="away.html">away</a>'
        b' <a href="missing.html">404</a> <a href="#top">top</a></body></html>',
    ),
    "/docs/todos.html": (
        "text/html; charset=utf-8",
        b'<html><body><h2>Get todos</h2><pre>GET /todos</pre><a href="deep/one.md">deeper</a></body></html>',
    ),
    "/docs/deep/one.md": ("text/markdown", b"# One\n\n`GET /one`\n\n[two](two.md)\n"),
    "/docs/deep/two.md": ("text/markdown", b"# Two\n\n`GET /two`\n"),
    "/docs/api/openapi.yaml": (
        "application/yaml",
        b"openapi: 3.0.0\ninfo: {title: T, version: '1'}\npaths:\n"
        b"  /a:\n    get:\n      responses:\n        '200': {$ref: 'common.yaml#/R'}\n",
    ),
    "/docs/api/common.yaml": ("application/yaml", b"R: {description: ok}\n"),
    "/docs/logo.png": ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00"),
    "/docs/target.html": ("text/html", b"<html><body><pre>DELETE /target</pre></body></html>"),
    "/elsewhere/page.html": ("text/html", b"<html><body>not ours</body></html>"),
}
REDIRECTS = {
    "/docs/moved.html": "/docs/target.html",
    "/docs/away.html": "/elsewhere/page.html",
    "/docs/start-away": "/elsewhere/page.html",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.hits.append(self.path)
        if self.path in REDIRECTS:
            self.send_response(302)
            self.send_header("Location", REDIRECTS[self.path])
            self.end_headers()
            return
        if self.path not in PAGES:
            self.send_error(404)
            return
        ctype, body = PAGES[self.path]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_crawl_fetches_the_site_under_the_prefix(site, tmp_path):
    server, base = site
    out = tmp_path / "resources" / "todo"
    result = crawl(f"{base}/docs/", out, timeout=5)
    assert isinstance(result, CrawlResult)
    files = {p.url.removeprefix(base): p.file for p in result.pages}
    assert files == {
        "/docs/": "index.html",
        "/docs/todos.html": "todos.html",
        "/docs/api/openapi.yaml": "api/openapi.yaml",
        "/docs/target.html": "target.html",
        "/docs/deep/one.md": "deep/one.md",
        "/docs/api/common.yaml": "api/common.yaml",
        "/docs/deep/two.md": "deep/two.md",
    }
    assert "/elsewhere/page.html" not in server.hits  # off-prefix link never requested
    assert "/docs/logo.png" not in server.hits  # skipped by extension, never downloaded
    assert any(r["url"].endswith("/docs/away.html") and "leaves" in r["reason"] for r in result.refused)
    assert any(s["url"].endswith("/docs/missing.html") and "404" in s["reason"] for s in result.skipped)
    assert (out / "deep/two.md").read_bytes() == PAGES["/docs/deep/two.md"][1]
    assert not [p for p in tmp_path.joinpath("resources").iterdir() if p.name != "todo"]  # no temp dirs left


def test_crawl_manifest_records_url_file_hash_time_and_type(site, tmp_path):
    _, base = site
    out = tmp_path / "todo"
    crawl(f"{base}/docs/", out, timeout=5)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["start_url"] == f"{base}/docs/" and manifest["prefix"] == f"{base}/docs/"
    by_file = {p["file"]: p for p in manifest["pages"]}
    todos = by_file["todos.html"]
    assert todos["url"] == f"{base}/docs/todos.html" and todos["content_type"] == "html"
    assert todos["sha256"] == hashlib.sha256(PAGES["/docs/todos.html"][1]).hexdigest()
    assert todos["fetched_at"].endswith("+00:00")
    assert by_file["api/openapi.yaml"]["content_type"] == "yaml"
    for page in manifest["pages"]:
        assert hashlib.sha256((out / page["file"]).read_bytes()).hexdigest() == page["sha256"]


@pytest.mark.parametrize(
    ("kwargs", "expected", "limit"),
    [
        ({"max_depth": 0}, {"/docs/"}, None),
        (
            {"max_depth": 1},
            {"/docs/", "/docs/todos.html", "/docs/api/openapi.yaml", "/docs/target.html"},
            None,
        ),
        ({"max_pages": 2}, {"/docs/", "/docs/todos.html"}, "max_pages"),
        (
            {"max_bytes": len(PAGES["/docs/"][1]) + len(PAGES["/docs/todos.html"][1])},
            {"/docs/", "/docs/todos.html"},
            "max_bytes",
        ),
    ],
)
def test_crawl_limits(site, tmp_path, kwargs, expected, limit):
    _, base = site
    result = crawl(f"{base}/docs/", tmp_path / "out", timeout=5, **kwargs)
    got = {p.url.removeprefix(base) for p in result.pages}
    if limit == "max_bytes":
        assert expected <= got and "/docs/api/openapi.yaml" not in got
        assert result.bytes_total <= kwargs["max_bytes"]
    else:
        assert got == expected
    assert result.limit_hit == limit


def test_crawled_folder_loads_as_documentation(site, tmp_path):
    _, base = site
    out = tmp_path / "todo"
    crawl(f"{base}/docs/", out, timeout=5)
    errors = []
    apis = load_apidocs(out, errors=errors)
    keys = {op.key for api in apis for op in api.operations}
    assert {"GET /a", "GET /todos", "GET /one", "GET /two", "DELETE /target"} <= keys
    assert any("common.yaml" in str(e) for e in errors)  # a $ref'd fragment is not a document by itself


def test_start_redirect_off_prefix_is_refused(site, tmp_path):
    _, base = site
    with pytest.raises(IngestError, match="start-away.*leaves"):
        crawl(f"{base}/docs/start-away", tmp_path / "out", timeout=5)
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []  # the temp folder was removed


def test_unreachable_url_is_an_ingest_error_naming_it(tmp_path):
    with httpx.Client(
        transport=httpx.MockTransport(lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused")))
    ) as c:
        with pytest.raises(IngestError, match=r"^http://docs\.invalid/api/: cannot fetch start page"):
            crawl("http://docs.invalid/api/", tmp_path / "out", client=c)


def test_unreachable_real_port_is_an_ingest_error(tmp_path, site):
    server, base = site
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    with pytest.raises(IngestError, match=f"127.0.0.1:{port}/docs/"):
        crawl(f"http://127.0.0.1:{port}/docs/", tmp_path / "out", timeout=2)


def test_failed_recrawl_keeps_the_previous_crawl(site, tmp_path):
    _, base = site
    out = tmp_path / "todo"
    crawl(f"{base}/docs/", out, timeout=5)
    before = (out / "manifest.json").read_text()
    with pytest.raises(IngestError):
        crawl(f"{base}/docs/missing.html", out, timeout=5)
    assert (out / "manifest.json").read_text() == before


def test_ingest_file_folder_and_url(site, tmp_path):
    _, base = site
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\n`GET /a`\n")
    (src / "sub").mkdir()
    (src / "sub" / "b.md").write_text("# B\n\n`GET /b`\n")
    root = tmp_path / "resources"
    dest = ingest(src, "shop", resources_root=root)
    assert dest == root / "shop" and (dest / "sub/b.md").is_file()
    single = tmp_path / "extra.yaml"
    single.write_text("openapi: 3.0.0\npaths: {/c: {get: {responses: {'200': {description: ok}}}}}\n")
    ingest(single, "shop", resources_root=root)
    manifest = json.loads((dest / "manifest.json").read_text())
    assert sorted(p["file"] for p in manifest["pages"]) == ["a.md", "extra.yaml", "sub/b.md"]
    ingest(f"{base}/docs/deep/one.md", "deep", resources_root=root, timeout=5)
    assert sorted(p.name for p in (root / "deep").iterdir()) == ["manifest.json", "one.md", "two.md"]
    with pytest.raises(IngestError, match="no such file"):
        ingest(tmp_path / "nothing", "x", resources_root=root)
    with pytest.raises(IngestError, match="invalid domain"):
        ingest(src, "../evil", resources_root=root)


def test_ingest_file_into_folder_with_damaged_manifest_keeps_the_files(tmp_path):
    res = tmp_path / "resources"
    (res / "d").mkdir(parents=True)
    (res / "d" / "old.md").write_text("# Old\n\n## GET /old\n")
    (res / "d" / "manifest.json").write_text("{not json")
    new = tmp_path / "new.md"
    new.write_text("# New\n\n## GET /new\n")
    dest = ingest(new, "d", res)
    assert sorted(p.name for p in dest.iterdir()) == ["manifest.json", "new.md", "old.md"]
    assert [e["file"] for e in json.loads((dest / "manifest.json").read_text())["pages"]] == ["new.md"]
