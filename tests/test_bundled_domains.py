"""The bundled documentation builds: the Markdown-only and HTML-only domains go through their readers."""

from __future__ import annotations

import pytest

from envfactory.pipelines import build_domain
from envfactory.ingest import load_apidocs
from envfactory.runtime import load_environment
from envfactory.verify import smoke_check

from .conftest import REPO

RESOURCES = REPO / "resources"


@pytest.mark.parametrize("domain,fmt", [("academia", "markdown"), ("utilities", "html")])
def test_single_format_domain_builds_through_its_reader(tmp_path, domain, fmt):
    docs = load_apidocs(RESOURCES / domain)
    assert docs and {d.format for d in docs} == {fmt}
    assert sum(len(d.operations) for d in docs) >= 20
    report = build_domain(domain, resources_root=RESOURCES, domains_root=tmp_path, seed=0)
    built = sorted((tmp_path / domain).glob("*/env.yaml"))
    assert built, report
    tools = 0
    for spec_path in built:
        env = load_environment(spec_path.parent)
        checks = smoke_check(env)
        assert checks and all(c.ok for c in checks), [c for c in checks if not c.ok][:3]
        tools += len(env.spec.tools)
    assert tools >= 20


def test_every_bundled_domain_has_enough_documentation():
    domains = sorted(p for p in RESOURCES.iterdir() if p.is_dir())
    assert len(domains) >= 8
    for d in domains:
        docs = load_apidocs(d)
        files = {doc.source for doc in docs}
        ops = sum(len(doc.operations) for doc in docs)
        assert ops >= 20, d.name
        assert len(list(d.glob("*.yaml")) + list(d.glob("*.md")) + list(d.glob("*.html"))) - \
            len(list(d.glob("README.md"))) >= 2, d.name
        assert files
