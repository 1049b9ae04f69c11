"""Environment bundles in a dataset folder: written by synth, listed by push, loaded by envfactory.rl."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

import envfactory.rl as rl
from envfactory.errors import ConfigError
from envfactory.export import find_bundles, list_upload_files, load_bundle

from ._data import dataset


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return dataset(tmp_path_factory)


def _copy(ds, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(ds, out)
    return out, out / "envs" / "travel" / "trip_desk"


def test_synth_writes_one_bundle_per_environment_and_push_ships_it(ds):
    (b,) = find_bundles(ds)
    info = json.loads((b / "bundle.json").read_text())
    assert info["env_id"] == "travel/trip_desk" and info["envfactory_version"] and info["faker_version"]
    env = load_bundle(b)
    assert env.spec.name == "trip_desk"
    rows = rl.load_rows(ds)
    assert {r["initial_state_hash"] for r in rows} == {info["template_state_hash"]}
    shipped = {f for f, _ in list_upload_files(ds)}
    assert {
        "envs/travel/trip_desk/env.yaml",
        "envs/travel/trip_desk/bundle.json",
        "envs/travel/trip_desk/template.db.gz",
    } <= shipped


def test_a_damaged_template_or_spec_is_refused(ds, tmp_path):
    out, b = _copy(ds, tmp_path)
    data = gzip.decompress((b / "template.db.gz").read_bytes())
    (b / "template.db.gz").write_bytes(gzip.compress(data[:-100] + b"\0" * 100))
    with pytest.raises(ConfigError, match="sha256"):
        load_bundle(b)
    (b / "template.db.gz").write_bytes(b"not gzip")
    with pytest.raises(ConfigError, match="unreadable"):
        load_bundle(b)
    shutil.copy(ds / "envs/travel/trip_desk/template.db.gz", b / "template.db.gz")
    (b / "env.yaml").write_text((b / "env.yaml").read_text().replace("A travel agency", "A travel agencY", 1))
    with pytest.raises(ConfigError, match="spec_digest"):
        load_bundle(b)
    (b / "bundle.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="not an environment bundle"):
        load_bundle(b)


def test_without_its_template_a_bundle_rebuilds_the_same_state(ds, tmp_path):
    out, b = _copy(ds, tmp_path)
    (b / "template.db.gz").unlink()
    env = rl.load_environment(b)
    row = rl.load_rows(out)[0]
    assert rl.make(row, environment=env).reset()["state_hash"] == row["initial_state_hash"]


def test_load_environment_picks_a_bundle_of_a_dataset(ds, tmp_path):
    assert rl.load_environment(ds).spec.name == "trip_desk"
    assert rl.load_environment(ds, "travel/trip_desk").spec.domain == "travel"
    with pytest.raises(ConfigError, match="not found"):
        rl.load_environment(ds, "travel/nowhere")
    with pytest.raises(ConfigError, match="DOMAIN/ENV"):
        rl.load_environment(ds, "../../etc")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="0 environment bundles"):
        rl.load_environment(empty)
    with pytest.raises(ConfigError, match="no such folder"):
        rl.load_environment(str(tmp_path / "missing"))


def test_a_hub_repo_id_is_fetched_with_huggingface_hub(ds, monkeypatch):
    import huggingface_hub

    seen = {}

    def fake_snapshot_download(repo_id, **kw):
        seen.update(kw, repo_id=repo_id)
        return str(ds)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    rows = rl.load_rows("someorg/travel-trajectories")
    assert seen["repo_id"] == "someorg/travel-trajectories" and seen["repo_type"] == "dataset"
    assert "envs/**" in seen["allow_patterns"]
    env = rl.make(rows[0], source="someorg/travel-trajectories")
    assert env.reset()["state_hash"] == rows[0]["initial_state_hash"]
