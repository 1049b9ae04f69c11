"""Issue 17 (crawler): compression bombs, request counting, a deadline, dot segments, long names, flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.errors import IngestError
from envfactory.ingest import crawl
from envfactory.ingest.crawl import normalize_url

REPO = Path(__file__).resolve().parents[2]
LONG = "a" * 300


def _gzip(data: bytes, level: int = 9) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def _bomb(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzipped twice (a few KB): served with ``Content-Encoding: gzip, gzip``."""
    c = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    inner = b"".join(c.compress(zeros) for _ in range(mib)) + c.flush()
    return _gzip(inner)


BOMB = _bomb(256)
LINKS = "".join(f'<a href="missing{i}.html">m{i}</a>' for i in range(300))
PAGES: dict[str, tuple[str, bytes, str]] = {  # path -> (content type, body, content encoding)
    "/docs/": (
        "text/html",
        (
            '<html><body><a href="ok.md">ok</a> <a href="bomb.html">bomb</a> <a href="../secret/a.md">up</a>'
            ' <a href="/docs/../secret/b.md">abs</a> <a href="/docs/%2e%2e/secret/c.md">enc</a>'
            f' <a href="{LONG}.md">long</a> <a href="http://other.invalid/page">off-site</a>'
            ' <a href="gz.md">gz</a></body></html>'
        ).encode(),
        "",
    ),
    "/docs/ok.md": ("text/markdown", b"# OK\n\n`GET /ok`\n", ""),
    "/docs/gz.md": ("text/markdown", _gzip(_gzip(b"# GZ\n\n`GET /gz`\n")), "gzip, gzip"),
    f"/docs/{LONG}.md": ("text/markdown", b"# Long\n\n`GET /long`\n", ""),
    "/docs/bomb.html": ("text/html", BOMB, "gzip, gzip"),
    "/secret/a.md": ("text/markdown", b"secret", ""),
    "/secret/b.md": ("text/markdown", b"secret", ""),
    "/secret/c.md": ("text/markdown", b"secret", ""),
    "/many/": ("text/html", f"<html><body>{LINKS}</body></html>".encode(), ""),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.hits.append(self.path)
        if self.path == "/slow/":
            self.send_response(200)
            self.send_header("Content-Type", "text/markdown")
            self.end_headers()
            try:
                for _ in range(200):  # one byte each 50 ms, 10 s at most
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass  # the crawler hung up
            return
        if self.path not in PAGES:
            self.send_error(404)
            return
        ctype, body, encoding = PAGES[self.path]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

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


CRAWL_UNDER_A_MEMORY_LIMIT = """
import json, resource, sys
from envfactory.errors import IngestError
from envfactory.ingest import crawl

def vm_bytes():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

# address space: what this process has now, plus 128 MiB (the bomb decodes to 256 MiB)
limit = vm_bytes() + (128 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
result = crawl(sys.argv[1], sys.argv[2], max_bytes=4 << 20, timeout=10)
print(json.dumps({"files": sorted(p.file for p in result.pages), "skipped": result.skipped}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc to size the memory limit")
def test_a_double_gzip_bomb_stops_at_the_byte_limit_under_a_memory_limit(site, tmp_path):
    server, base = site
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CRAWL_UNDER_A_MEMORY_LIMIT), f"{base}/docs/", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "/docs/bomb.html" in server.hits
    assert "bomb.html" not in got["files"] and "ok.md" in got["files"]
    bomb = [s for s in got["skipped"] if s["url"].endswith("/docs/bomb.html")]
    assert bomb and "decoded bytes" in bomb[0]["reason"]


def test_stacked_gzip_bodies_are_decoded(site, tmp_path):
    _, base = site
    crawl(f"{base}/docs/", tmp_path / "out", max_bytes=4 << 20, timeout=10)
    assert (tmp_path / "out" / "gz.md").read_bytes() == b"# GZ\n\n`GET /gz`\n"


def test_dot_segments_cannot_leave_the_prefix(site, tmp_path):
    server, base = site
    result = crawl(f"{base}/docs/", tmp_path / "out", max_bytes=4 << 20, timeout=10)
    assert not [h for h in server.hits if h.startswith(("/secret", "/docs/..", "/docs/%2e"))]
    offsite = {s["url"] for s in result.skipped if s["reason"].startswith("off-site")}
    assert {
        f"{base}/secret/a.md",
        f"{base}/secret/b.md",
        f"{base}/secret/c.md",
        "http://other.invalid/page",
    } <= offsite
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {s["url"] for s in manifest["skipped"]} >= offsite  # listed in the manifest as skipped


def test_normalize_url_resolves_dot_segments():
    assert normalize_url("http://H/docs/../secret/x.md") == "http://h/secret/x.md"
    assert normalize_url("http://h/docs/%2E%2e/x") == "http://h/x"
    assert normalize_url("http://h/docs/./a/../b/") == "http://h/docs/b/"
    assert normalize_url("http://h/../../x?q=1") == "http://h/x?q=1"


def test_a_300_character_link_name_is_stored_under_a_short_name(site, tmp_path):
    _, base = site
    result = crawl(f"{base}/docs/", tmp_path / "out", max_bytes=4 << 20, timeout=10)
    (long_page,) = [p for p in result.pages if LONG in p.url]
    assert len(long_page.file) <= 100 and long_page.file.endswith(".md")
    assert (tmp_path / "out" / long_page.file).read_bytes() == PAGES[f"/docs/{LONG}.md"][1]


def test_max_pages_counts_requests_not_stored_pages(site, tmp_path):
    server, base = site
    result = crawl(f"{base}/many/", tmp_path / "out", max_pages=10, timeout=10)
    assert len(server.hits) == 10 == result.requests  # 300 links, all 404: only 10 requests made
    assert result.limit_hit == "max_pages"
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["requests"] == 10


def test_a_trickling_server_is_cut_off_by_the_crawl_deadline(site, tmp_path):
    _, base = site  # /slow/ sends one byte every 50 ms: each read is well within the request timeout
    with pytest.raises(IngestError, match="crawl deadline of 0.5 s passed while reading"):
        crawl(f"{base}/slow/", tmp_path / "out", timeout=5, deadline=0.5)
    assert not (tmp_path / "out").exists()


def test_ingest_takes_the_crawl_limits_as_flags(site, tmp_path):
    from envfactory.cli import app

    server, base = site
    r = CliRunner().invoke(
        app,
        [
            "ingest",
            f"{base}/many/",
            "--domain",
            "many",
            "--resources",
            str(tmp_path),
            "--max-pages",
            "3",
            "--deadline",
            "30",
            "--max-bytes",
            "100000",
            "--timeout",
            "5",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "many" / "manifest.json").read_text())
    assert manifest["limits"] == {
        "max_depth": 3,
        "max_pages": 3,
        "max_bytes": 100000,
        "timeout": 5.0,
        "deadline": 30.0,
    }
    assert manifest["requests"] == 3 and len(server.hits) == 3


def test_an_empty_folder_option_is_refused_not_taken_for_the_current_folder(tmp_path, monkeypatch):
    from envfactory.cli import app

    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\n`GET /x`\n")
    for args in (
        ["ingest", str(doc), "--domain", "d", "--resources", ""],
        ["build", "--source", str(doc), "--out", ""],
        ["build", "--domain", "d", "--domains", " "],
    ):
        r = CliRunner().invoke(app, args, catch_exceptions=False)
        assert r.exit_code == 2 and "is empty: give a folder" in r.output, (args, r.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.md"]
