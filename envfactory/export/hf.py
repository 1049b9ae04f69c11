"""Hugging Face ``datasets``: features, Parquet files per split, and loading them back.

The only module that imports ``datasets`` (lazily, inside functions: it is slow to import and
only the export needs it). Free-form JSON (messages, tool schemas, reward specs) uses the
``Json()`` feature (datasets >= 4.7): each message and each tool is stored exactly as written,
with no ``None``-padded struct keys, so chat templates and TRL see plain OpenAI-format dicts.

Layout of a dataset folder::

    README.md                            dataset card (YAML front matter: configs, features, ...)
    data/<split>-00000-of-00001.parquet  config "default": splits sft, rl, eval (one schema, no prompt column)
    rl/rl-00000-of-00001.parquet         config "rl": the rl split with prompt and completion (TRL)
    sharegpt/<split>-00000-of-00001.parquet   config "sharegpt" (LlamaFactory): splits sft, eval
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = [
    "CONFIGS",
    "default_features",
    "rl_features",
    "sharegpt_features",
    "features_for",
    "split_path",
    "write_parquet",
    "load_trajectories",
    "dataset_info_yaml",
]

CONFIGS = {"default": "data", "rl": "rl", "sharegpt": "sharegpt"}


def _datasets():
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - an install problem
        raise ConfigError("the export needs the 'datasets' package: pip install 'datasets>=4.7,<6'") from e
    if not hasattr(datasets, "Json"):
        raise ConfigError(
            f"datasets {datasets.__version__} has no Json feature; pip install 'datasets>=4.7,<6'"
        )
    return datasets


def _provenance(d: Any) -> dict[str, Any]:
    V, L = d.Value, d.List
    return {
        "task_id": V("string"),
        "domain": V("string"),
        "env": V("string"),
        "env_id": V("string"),
        "source_docs": L(V("string")),
        "seed": V("int64"),
        "difficulty": V("string"),
        "predicted_pass_rate": V("float64"),
        "checks_passed": L(V("string")),
    }


def default_features() -> Any:
    """Columns of config ``default`` (every split)."""
    d = _datasets()
    V, L, J = d.Value, d.List, d.Json
    return d.Features(
        {
            "id": V("string"),
            "messages": L(J()),
            "tools": L(J()),
            **_provenance(d),
            "initial_state": V("string"),
            "initial_state_hash": V("string"),
            "reward_spec": J(),
            "turn_limit": V("int64"),
            "user": J(),
            "policy": V("string"),
            "attempts": V("int64"),
            "via": V("string"),
            "num_turns": V("int64"),
            "num_tool_calls": V("int64"),
            "reward": V("float64"),
        }
    )


def rl_features() -> Any:
    """Columns of config ``rl``: the default columns with ``prompt`` and ``completion`` (TRL's
    prompt-completion format) in place of ``messages``."""
    d = _datasets()
    f = {k: v for k, v in default_features().items() if k != "messages"}
    f["prompt"] = d.List(d.Json())
    f["completion"] = d.List(d.Json())
    return d.Features(f)


def sharegpt_features() -> Any:
    """Columns of config ``sharegpt`` (LlamaFactory's ShareGPT format with tools)."""
    d = _datasets()
    V, L = d.Value, d.List
    prov = _provenance(d)
    return d.Features(
        {
            "conversations": L({"from": V("string"), "value": V("string")}),
            "system": V("string"),
            "tools": V("string"),
            "id": V("string"),
            **prov,
            "policy": V("string"),
            "attempts": V("int64"),
            "num_turns": V("int64"),
            "num_tool_calls": V("int64"),
        }
    )


def features_for(config: str) -> Any:
    return {"default": default_features, "rl": rl_features}.get(config, sharegpt_features)()


def split_path(root: str | os.PathLike, config: str, split: str) -> Path:
    return Path(root) / CONFIGS[config] / f"{split}-00000-of-00001.parquet"


def write_parquet(rows: list[dict[str, Any]], features: Any, path: str | os.PathLike) -> Path:
    """Rows in the given order to one Parquet file (atomic; the same rows give the same bytes)."""
    d = _datasets()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    d.disable_progress_bars()
    ds = d.Dataset.from_list(rows, features=features)
    tmp = p.with_suffix(".parquet.tmp")
    ds.to_parquet(str(tmp))
    os.replace(tmp, p)
    return p


def load_trajectories(path: str | os.PathLike, *, config: str = "default") -> Any:
    """A ``DatasetDict`` of a dataset folder's splits (config ``default`` or ``sharegpt``).

    Reads the Parquet files directly (no cache folder is written); the rows equal what
    ``datasets.load_dataset("parquet", data_files=...)`` gives.
    """
    import pyarrow.parquet as pq

    d = _datasets()
    if config not in CONFIGS:
        raise ConfigError(f"unknown config {config!r}; choose one of: {', '.join(CONFIGS)}")
    folder = Path(path) / CONFIGS[config]
    files = sorted(folder.glob("*-*-of-*.parquet"))
    if not files:
        raise ConfigError(f"{path}: no Parquet files under {folder.name}/; run 'envfactory synth' first")
    order = {"sft": 0, "rl": 1, "eval": 2}
    by_split: dict[str, list[Path]] = {}
    for f in files:
        by_split.setdefault(f.name.split("-", 1)[0], []).append(f)
    out = {}
    features = features_for(config)
    for split in sorted(by_split, key=lambda s: (order.get(s, 9), s)):
        import pyarrow as pa

        table = pa.concat_tables([pq.read_table(f) for f in by_split[split]])
        out[split] = (
            d.Dataset(table).cast(features) if d.Dataset(table).features != features else d.Dataset(table)
        )
    return d.DatasetDict(out)


def dataset_info_yaml(
    config: str, split_counts: dict[str, int], split_bytes: dict[str, int]
) -> dict[str, Any]:
    """The ``dataset_info`` entry of a dataset card for one config."""
    d = _datasets()
    info = d.DatasetInfo(features=features_for(config))._to_yaml_dict()
    return {
        "config_name": config,
        "features": info["features"],
        "splits": [
            {"name": s, "num_bytes": split_bytes.get(s, 0), "num_examples": n}
            for s, n in split_counts.items()
        ],
        "download_size": sum(split_bytes.values()),
        "dataset_size": sum(split_bytes.values()),
    }
