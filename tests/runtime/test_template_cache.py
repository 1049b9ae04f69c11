"""A build makes each environment's template twice (verify, then save): the second reuses the
first's seed rows and DDL, and the bytes are those of a fresh build."""

from __future__ import annotations

import envfactory.runtime.template as template
from envfactory.runtime import build_template
from envfactory.spec import load_spec

from ..conftest import TRIP_DESK


def _fresh(spec, monkeypatch) -> bytes:
    with monkeypatch.context() as m:
        m.setattr(template, "_DDL", template.OrderedDict())
        m.setattr(template, "_ROWS", template.OrderedDict())
        m.setattr(template, "_create_schema", template._create_schema_sqlalchemy)
        return build_template(spec)


def test_a_second_template_of_the_same_data_reuses_the_rows_and_is_the_same_bytes(monkeypatch):
    spec = load_spec(TRIP_DESK)
    fewer_tools = spec.model_copy(update={"tools": spec.tools[:3]})  # what repair leaves
    seeded = []
    real = template.build_seed_rows
    monkeypatch.setattr(template, "build_seed_rows", lambda s: seeded.append(s.name) or real(s))
    template._ROWS.clear()
    first = build_template(spec)
    second = build_template(fewer_tools)
    assert seeded == ["trip_desk"]  # seeded once for both
    assert first == _fresh(spec, monkeypatch)
    assert second == _fresh(fewer_tools, monkeypatch)
    assert second != first  # the meta row holds each spec's own digest


def test_other_data_is_seeded_again(monkeypatch):
    spec = load_spec(TRIP_DESK)
    other = spec.model_copy(deep=True)
    other.seed.seed += 1
    assert build_template(other) == _fresh(other, monkeypatch)
    assert build_template(other) != build_template(spec)


def test_field_lookup_follows_a_replaced_fields_list():
    ent = load_spec(TRIP_DESK).entities[0]
    first = ent.fields[0]
    assert ent.field(first.name) is first and ent.has_field(first.name)
    renamed = first.model_copy(update={"name": "renamed_field"})
    ent.fields = [renamed, *ent.fields[1:]]
    assert ent.field("renamed_field") is renamed
    assert not ent.has_field(first.name) or first.name == "renamed_field"
