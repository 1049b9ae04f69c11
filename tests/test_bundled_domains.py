"""The bundled documentation: real published documents with provenance, read by every reader.

Every document under ``resources/`` is a real one, listed in its domain's ``manifest.json``
(source, version or commit, sha256, licence, why it may be redistributed, date); the documents
written for this project live only under ``tests/fixtures/``.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from envfactory.ingest import document_files, load_apidocs
from envfactory.pipelines import build_source
from envfactory.runtime import load_environment
from envfactory.verify import smoke_check

from .conftest import REPO

RESOURCES = REPO / "resources"
FIXTURES = REPO / "tests" / "fixtures"
BUNDLED = ("travel", "commerce", "finance", "office", "lifestyle", "healthcare", "academia", "utilities")
# licences that allow copying the document into this repository (the manifest says which applies and why)
REDISTRIBUTABLE = ("MIT", "Apache-2.0", "CC0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-SA-4.0")


def _manifest(domain: str) -> dict:
    return json.loads((RESOURCES / domain / "manifest.json").read_text(encoding="utf-8"))


def test_every_bundled_domain_is_there():
    assert sorted(p.name for p in RESOURCES.iterdir() if p.is_dir()) == sorted(BUNDLED)


@pytest.mark.parametrize("domain", BUNDLED)
def test_every_document_has_provenance_and_its_bytes_match(domain):
    pages = _manifest(domain)["pages"]
    files = {p.relative_to(RESOURCES / domain).as_posix(): p for p in document_files(RESOURCES / domain)}
    assert sorted(files) == sorted(e["file"] for e in pages)  # nothing unlisted, nothing missing
    for e in pages:
        data = files[e["file"]].read_bytes()
        assert hashlib.sha256(data).hexdigest() == e["sha256"] and len(data) == e["bytes"], e["file"]
        assert e["url"].startswith("https://") and e["fetched_at"], e["file"]
        src = e["source"]
        assert src.get("package") or src.get("repository"), e["file"]
        assert src.get("version") or src.get("commit"), e["file"]
        assert src.get("path"), e["file"]
        assert e["licence"].startswith(REDISTRIBUTABLE), e["licence"]
        assert len(e["redistribution"]) > 40, e["file"]  # a reason, in words


@pytest.mark.parametrize("domain", BUNDLED)
def test_no_bundled_document_was_written_for_this_project(domain):
    for path in document_files(RESOURCES / domain):
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        assert "envfactory" not in text, path  # the project's own documents name it (base URLs, prose)


def test_the_project_written_documents_are_test_fixtures():
    fixtures = [p for d in BUNDLED for p in document_files(FIXTURES / d)]
    assert len(fixtures) >= 20
    assert any("envfactory" in p.read_text(encoding="utf-8").lower() for p in fixtures)


@pytest.mark.parametrize("domain", BUNDLED)
def test_every_bundled_domain_has_enough_documentation(domain):
    docs = load_apidocs(RESOURCES / domain)
    assert docs
    assert sum(len(d.operations) for d in docs) >= 20, domain


def test_markdown_and_html_reference_pages_are_among_the_bundled_documents():
    formats = {d.format for domain in BUNDLED for d in load_apidocs(RESOURCES / domain)}
    assert {"markdown", "html"} <= formats and formats & {"openapi3", "openapi31", "swagger2"}


def _check_built(out) -> int:
    built = sorted(out.glob("*/env.yaml"))
    assert built
    tools = 0
    for spec_path in built:
        env = load_environment(spec_path.parent)
        checks = smoke_check(env)
        assert checks and all(c.ok for c in checks), [c for c in checks if not c.ok][:3]
        tools += len(env.spec.tools)
    return tools


def test_the_html_reference_pages_build_through_their_reader(tmp_path):
    folder = RESOURCES / "utilities" / "barbican"
    docs = load_apidocs(folder)
    assert docs and {d.format for d in docs} == {"html"}
    assert sum(len(d.operations) for d in docs) >= 20
    report = build_source(folder, out_dir=tmp_path / "out", domain="utilities", seed=0)
    assert not report.failed_documents
    assert _check_built(tmp_path / "out") >= 10


def test_the_markdown_pages_build_through_their_reader(tmp_path):
    folder = RESOURCES / "office" / "basecamp"
    docs = load_apidocs(folder)
    assert docs and {d.format for d in docs} == {"markdown"}
    assert sum(len(d.operations) for d in docs) >= 15
    report = build_source(folder, out_dir=tmp_path / "out", domain="office", seed=0)
    assert not report.failed_documents
    assert _check_built(tmp_path / "out") >= 10
