"""Trajectory datasets on disk and on the Hub: writers and readers, no orchestration.

    write_dataset(out, name, rows_by_split, sharegpt_by_split, ...)  -> Parquet files + card
    load_trajectories("trajectories/NAME")                           -> datasets.DatasetDict
    push_dataset("trajectories/NAME", "ORG/NAME", dry_run=True)      -> PushResult
    ShardWriter / read_shards                                        crash-safe JSON Lines shards
    write_bundles(out, envs) / load_bundle(folder)                   environment bundles (envs/)

The synthesis run that produces a dataset is ``envfactory.pipelines.synthesize_dataset``.
``datasets`` is imported lazily, only in ``envfactory.export.hf``.
"""

from .bundle import find_bundles, load_bundle, write_bundles
from .card import build_dataset_card, size_category
from .dataset import write_dataset
from .hf import load_trajectories
from .push import PushResult, list_upload_files, push_dataset
from .shards import ShardWriter, read_shard, read_shards

__all__ = [
    "PushResult",
    "ShardWriter",
    "build_dataset_card",
    "find_bundles",
    "load_bundle",
    "list_upload_files",
    "load_trajectories",
    "push_dataset",
    "read_shard",
    "read_shards",
    "size_category",
    "write_bundles",
    "write_dataset",
]
