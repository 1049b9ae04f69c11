"""A dataset folder: the Parquet files of every config and split, and the dataset card."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .card import build_dataset_card

__all__ = ["write_dataset"]


def write_dataset(
    out: Path,
    name: str,
    rows_by_split: dict[str, list[dict[str, Any]]],
    sharegpt_by_split: dict[str, list[dict[str, Any]]],
    *,
    license: str,
    method: dict[str, Any],
    audit: list[tuple[str, str, str]] | None = None,
    rl_rows: list[dict[str, Any]] | None = None,
) -> list[Path]:
    """Write the Parquet files of both configs and the card into ``out``; returns the files.

    ``rows_by_split``: config ``default`` rows per split (sft, rl, eval); ``sharegpt_by_split``:
    config ``sharegpt`` rows (sft, eval); ``rl_rows``: config ``rl`` rows (with ``prompt`` and
    ``completion``); ``audit``: the (figure, value, target) rows of the dataset audit for the card. Parquet files of splits that are empty now are removed,
    so none lingers from an older run.
    """
    from .hf import (
        dataset_info_yaml,
        default_features,
        rl_features,
        sharegpt_features,
        split_path,
        write_parquet,
    )

    files: list[Path] = []
    info = []
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    feats = default_features()
    for split in ("sft", "rl", "eval"):
        rows = rows_by_split.get(split) or []
        if not rows:
            continue
        p = write_parquet(rows, feats, split_path(out, "default", split))
        files.append(p)
        counts[split], sizes[split] = len(rows), p.stat().st_size
    info.append(dataset_info_yaml("default", counts, sizes))
    if rl_rows:
        p = write_parquet(rl_rows, rl_features(), split_path(out, "rl", "rl"))
        files.append(p)
        info.append(dataset_info_yaml("rl", {"rl": len(rl_rows)}, {"rl": p.stat().st_size}))
    sg_counts: dict[str, int] = {}
    sg_sizes: dict[str, int] = {}
    sg_feats = sharegpt_features()
    for split in ("sft", "eval"):
        rows = sharegpt_by_split.get(split) or []
        if not rows:
            continue
        p = write_parquet(rows, sg_feats, split_path(out, "sharegpt", split))
        files.append(p)
        sg_counts[split], sg_sizes[split] = len(rows), p.stat().st_size
    if sg_counts:
        info.append(dataset_info_yaml("sharegpt", sg_counts, sg_sizes))
    written = {p.resolve() for p in files}
    for sub in ("data", "rl", "sharegpt"):
        for old in (out / sub).glob("*.parquet") if (out / sub).is_dir() else []:
            if old.resolve() not in written:
                old.unlink()
    card = build_dataset_card(
        name=name,
        rows_by_split=rows_by_split,
        sharegpt_counts=sg_counts,
        dataset_info=info,
        method=method,
        license=license,
        audit=audit,
    )
    readme = out / "README.md"
    tmp = readme.with_suffix(".md.tmp")
    tmp.write_text(card, encoding="utf-8")
    os.replace(tmp, readme)
    files.append(readme)
    return files
