"""Trajectory datasets: synthesis to Parquet + dataset card, loading back, and pushing to the Hub.

    synthesize_dataset(envs, "trajectories/NAME", n=..., seed=...)  -> SynthResult (crash-safe, resumable)
    load_trajectories("trajectories/NAME")                           -> datasets.DatasetDict
    push_dataset("trajectories/NAME", "ORG/NAME", dry_run=True)      -> PushResult

``datasets`` is imported lazily, only in ``envfactory.export.hf``.
"""

from .card import build_dataset_card, size_category
from .hf import load_trajectories
from .pipeline import WORK_DIR, SynthResult, synthesize_dataset
from .push import PushResult, list_upload_files, push_dataset
from .shards import ShardWriter, read_shard, read_shards

__all__ = [
    "WORK_DIR",
    "PushResult",
    "ShardWriter",
    "SynthResult",
    "build_dataset_card",
    "list_upload_files",
    "load_trajectories",
    "push_dataset",
    "read_shard",
    "read_shards",
    "size_category",
    "synthesize_dataset",
]
