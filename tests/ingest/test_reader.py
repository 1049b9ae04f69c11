import json

import pytest

from envfactory.errors import IngestError
from envfactory.ingest import ApiDoc, load_apidoc, load_apidocs
from envfactory.ingest import reader as reader_mod

from ._corpus import corpus_files, needs_corpus

MINI_OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "Mini", "version": "1"},
    "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}},
}
MINI_YAML = "openapi: 3.0.0\ninfo: {title: Mini, version: '1'}\npaths:\n  /a:\n    get:\n      responses: {'200': {description: ok}}\n"
MINI_MD = "# Things\n\n## List things\n\n`GET /things`\n"


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("api.json", json.dumps(MINI_OPENAPI), "openapi3"),
        ("api.yaml", MINI_YAML, "openapi3"),
        ("api.yml", MINI_YAML, "openapi3"),
        ("api.txt", MINI_YAML, "openapi3"),  # sniffed from content
        ("noext", json.dumps(MINI_OPENAPI), "openapi3"),
        ("weird.json", MINI_YAML, "openapi3"),  # YAML behind a .json name
        ("things.md", MINI_MD, "markdown"),
        ("things", MINI_MD, "markdown"),
        ("page.htm", "<html><body><h2>List</h2><pre>GET /things</pre></body></html>", "html"),
        ("page", "<!DOCTYPE html><html><body><pre>GET /things</pre></body></html>", "html"),
    ],
)
def test_load_apidoc_sniffs_format(tmp_path, name, content, fmt):
    path = tmp_path / name
    path.write_text(content)
    api = load_apidoc(path)
    assert isinstance(api, ApiDoc) and api.format == fmt and len(api.operations) == 1
    assert api.source == str(path)


def test_load_apidoc_from_bytes_names_the_source():
    api = load_apidoc(MINI_YAML.encode(), source="mem://mini.yaml")
    assert api.source == "mem://mini.yaml" and api.title == "Mini"
    with pytest.raises(IngestError, match="^<bytes>: empty document$"):
        load_apidoc(b"  \n")


@pytest.mark.parametrize(
    ("name", "data", "cause"),
    [
        ("bad.yaml", b"openapi: 3.0.0\npaths: [unclosed\n", "malformed YAML"),
        ("bad.json", b'{"openapi": "3.0.0", "paths": {', "malformed JSON"),
        ("empty.yaml", b"", "empty document"),
        ("blank.json", b"   \n\n", "empty document"),
        ("null.yaml", b"~\n", "empty document"),
        ("bin.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "binary file"),
        ("latin.md", "caf\xe9 GET /x".encode("latin-1"), "not UTF-8"),
        ("list.yaml", b"- a\n- b\n", "not an OpenAPI/Swagger document"),
        ("notes.md", b"# Notes\n\nNothing here.\n", "not an API reference"),
        ("noops.yaml", b"openapi: 3.0.0\ninfo: {title: x}\npaths: {}\n", "no operations"),
        ("v9.json", b'{"openapi": "9.1", "paths": {}}', "unsupported"),
    ],
)
def test_bad_inputs_raise_one_line_ingest_errors(tmp_path, name, data, cause):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(IngestError) as info:
        load_apidoc(path)
    msg = str(info.value)
    assert msg.startswith(str(path)) and cause in msg and "\n" not in msg


def test_missing_file_is_an_ingest_error(tmp_path):
    with pytest.raises(IngestError, match="nope.yaml: cannot read"):
        load_apidoc(tmp_path / "nope.yaml")


def test_oversized_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(MINI_OPENAPI))
    monkeypatch.setattr(reader_mod, "MAX_DOC_BYTES", 10)
    read = []
    monkeypatch.setattr(type(path), "read_bytes", lambda self: read.append(self) or b"")
    with pytest.raises(IngestError, match=r"big\.json: too large"):
        load_apidoc(path)
    assert read == []


def test_load_apidocs_merges_markdown_pages_of_one_folder(tmp_path):
    docs = tmp_path / "basecamp"
    docs.mkdir()
    (docs / "todos.md").write_text("# Todos\n\n## Get todos\n\n* `GET /todolists/3/todos.json` lists.\n")
    (docs / "people.md").write_text("# People\n\n## Get person\n\n* `GET /people/1.json` gets.\n")
    (docs / "manifest.json").write_text('{"pages": []}')  # crawler bookkeeping, not a document
    (docs / "broken.yaml").write_text("openapi: [")
    errors: list[IngestError] = []
    apis = load_apidocs(tmp_path, errors=errors)
    assert len(apis) == 1 and apis[0].title == "basecamp" and apis[0].format == "markdown"
    assert sorted(op.key for op in apis[0].operations) == [
        "GET /people/{person_id}.json",
        "GET /todolists/{todolist_id}/todos.json",
    ]
    assert len(errors) == 1 and "broken.yaml" in str(errors[0])
    with pytest.raises(IngestError, match="broken.yaml"):
        load_apidocs(tmp_path, strict=True)


def test_load_apidocs_keeps_markdown_separate_next_to_an_openapi_doc(tmp_path):
    (tmp_path / "api.json").write_text(json.dumps(MINI_OPENAPI))
    (tmp_path / "guide.md").write_text(MINI_MD)
    (tmp_path / "extra.md").write_text("# More\n\n`DELETE /things/1`\n")
    apis = load_apidocs(tmp_path)
    assert sorted(a.format for a in apis) == ["markdown", "markdown", "openapi3"]


def test_load_apidocs_on_a_folder_with_nothing_readable(tmp_path):
    (tmp_path / "x.yaml").write_text("a: [")
    with pytest.raises(IngestError, match="no readable API documentation"):
        load_apidocs(tmp_path)
    with pytest.raises(IngestError, match="not a folder"):
        load_apidocs(tmp_path / "missing")


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_file_loads_or_fails_cleanly(path):
    try:
        api = load_apidoc(path)
    except IngestError as e:  # allowed, but it must be a one-line message naming the file
        assert str(path) in str(e) and "\n" not in str(e)
        return
    assert len(api.operations) >= 1
    assert all(op.path.startswith("/") for op in api.operations)
    assert len(set(api.warnings)) == len(api.warnings)


def test_every_document_goes_through_the_reader_registry(tmp_path, monkeypatch):
    assert set(reader_mod.READERS) == {"openapi", "markdown", "html"}
    seen = []
    for name, reader in list(reader_mod.READERS.items()):

        def spy(text, src, kind, _name=name, _reader=reader):
            seen.append((_name, kind))
            return _reader(text, src, kind)

        monkeypatch.setitem(reader_mod.READERS, name, spy)
    for file, content in [
        ("a.yaml", MINI_YAML),
        ("a.json", json.dumps(MINI_OPENAPI)),
        ("a.md", MINI_MD),
        ("a.html", "<html><body><h2>List</h2><pre>GET /things</pre></body></html>"),
    ]:
        (tmp_path / file).write_text(content)
        load_apidoc(tmp_path / file)
    assert seen == [("openapi", "yaml"), ("openapi", "json"), ("markdown", "markdown"), ("html", "html")]
