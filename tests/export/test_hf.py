"""Datasets on disk: Parquet round trips, the dataset card, push --dry-run, lazy import of datasets."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.errors import ConfigError
from envfactory.export import list_upload_files, load_trajectories, push_dataset, read_shards
from tests.synth._fixtures import REPO, synth_two_envs


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "twins"
    res = synth_two_envs(out, 24)
    return out, res


def _shard_rows(out):
    by_split = {}
    for r in read_shards(out / ".synth" / "shards"):
        if r["status"] == "ok":
            by_split.setdefault(r["split"], []).append(r["row"])
    return by_split


def test_load_dataset_parquet_round_trip_gives_the_written_rows(ds, tmp_path):
    import datasets

    out, res = ds
    files = {s: str(out / "data" / f"{s}-00000-of-00001.parquet") for s, n in res.split_counts.items() if n}
    loaded = datasets.load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
    ours = load_trajectories(out)
    shard = _shard_rows(out)
    assert set(loaded) == set(ours) == {s for s, n in res.split_counts.items() if n}
    for split in loaded:
        rows = list(loaded[split])
        assert rows == list(ours[split])
        assert sorted(rows, key=lambda r: r["id"]) == sorted(shard[split], key=lambda r: r["id"])
        call = next(m for m in rows[0]["messages"] if m.get("tool_calls"))["tool_calls"][0]
        assert isinstance(call["function"]["arguments"], str) and set(call) == {"id", "type", "function"}
        assert "tool_calls" not in rows[0]["messages"][1]  # no None-padded keys
        assert rows[0]["tools"][0]["function"]["parameters"]["type"] == "object"
    sg = load_trajectories(out, config="sharegpt")
    assert len(sg["sft"]) == res.split_counts["sft"]
    assert sg["sft"][0]["conversations"][0]["from"] == "human"


def test_dataset_card_parses_and_describes_the_configs(ds):
    from huggingface_hub import DatasetCard

    out, res = ds
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert {"rl-environment", "tool-use"} <= set(data["tags"])
    assert data["license"] == "apache-2.0" and data["size_categories"] == ["n<1K"]
    configs = {c["config_name"]: c for c in data["configs"]}
    assert [f["split"] for f in configs["default"]["data_files"]] == [
        s for s in ("sft", "rl", "eval") if res.split_counts[s]
    ]
    assert "sharegpt" in configs
    info = {i["config_name"]: i for i in data["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in info["default"]["splits"]} == {
        k: v for k, v in res.split_counts.items() if v
    }
    assert {"name": "messages", "list": "json"} in info["default"]["features"]
    assert "**No model was used.**" in card.text and "trip_desk_twin" in card.text
    assert "Per number of user turns" in card.text and "Held-out rule" in card.text


def test_push_dry_run_lists_exactly_the_files_without_a_token(ds, monkeypatch):
    out, _ = ds
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    files = list_upload_files(out)
    names = [f for f, _ in files]
    assert "README.md" in names and "data/sft-00000-of-00001.parquet" in names
    assert not any(f.startswith(".synth") for f in names)
    assert all(size == (out / f).stat().st_size for f, size in files)
    res = CliRunner().invoke(app, ["push", str(out), "--repo-id", "org/trips", "--dry-run"])
    assert res.exit_code == 0, res.output
    for f in names:
        assert f in res.output
    assert "would upload to datasets/org/trips" in res.output


def test_push_without_a_token_says_how_to_get_one(ds, monkeypatch, tmp_path):
    out, _ = ds
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "hf" / "token"))
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        push_dataset(out, "org/trips")
    with pytest.raises(ConfigError, match="ORG/NAME"):
        push_dataset(out, "trips", dry_run=True)


def test_datasets_is_imported_only_when_exporting():
    code = (
        "import sys, envfactory.cli, envfactory.export, envfactory.synth.trajectories; "
        "print('datasets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
