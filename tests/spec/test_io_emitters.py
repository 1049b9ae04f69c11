"""env.yaml is written by libyaml's emitter when present: the bytes must be the pure-Python emitter's."""

from __future__ import annotations

import json

import pytest
import yaml

import envfactory.spec.io as spec_io
from envfactory.spec import dump_spec, load_spec

from ..conftest import REPO, TRIP_DESK

BUNDLED = sorted((REPO / "domains").glob("*/*/env.yaml"))


def _generated(path) -> bool:
    """Whether a build wrote this env.yaml (listed in its domain's build.json), not a person."""
    build = path.parent.parent / "build.json"
    return build.is_file() and path.parent.name in json.loads(build.read_text(encoding="utf-8"))["envs"]


needs_libyaml = pytest.mark.skipif(
    getattr(yaml, "CSafeDumper", None) is None, reason="PyYAML built without libyaml: only one emitter"
)


def _pure(spec, monkeypatch) -> str:
    with monkeypatch.context() as m:
        m.setattr(spec_io, "_C_DUMPER", None)
        return dump_spec(spec)


@needs_libyaml
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_both_emitters_write_every_bundled_env_identically(path, monkeypatch):
    spec = load_spec(path)
    fast = dump_spec(spec)
    assert spec_io._dumper({"x": "plain"}) is yaml.CSafeDumper  # the fast path is the one under test
    assert fast == _pure(spec, monkeypatch)
    if _generated(path):
        assert fast == path.read_text(encoding="utf-8")  # and the committed file is that text


def test_bundled_envs_are_found():
    assert len(BUNDLED) >= 10
    assert sum(map(_generated, BUNDLED)) >= 10


@needs_libyaml
@pytest.mark.parametrize("text", ["launch \U0001f680 day", "line\x85next", "a\u2028b", "para\u2029graph"])
def test_characters_the_emitters_judge_differently_take_the_pure_emitter(text, monkeypatch):
    spec = load_spec(TRIP_DESK).model_copy(update={"description": text})
    data = {"description": text}
    assert spec_io._dumper(data) is yaml.SafeDumper
    assert dump_spec(spec) == _pure(spec, monkeypatch)


@needs_libyaml
def test_libyaml_alone_would_escape_an_emoji():
    # why the fallback exists: the C emitter quotes and escapes non-BMP characters
    data = {"enum": ["\U0001f606"]}
    pure = yaml.dump(data, Dumper=yaml.SafeDumper, allow_unicode=True)
    fast = yaml.dump(data, Dumper=yaml.CSafeDumper, allow_unicode=True)
    assert pure != fast
