"""The plan of a sharded synthesis run (``synth --workers N``): which shards, in what order.

A plan depends only on the environments, ``n`` and the seed (never on the workers): ``n`` split
evenly over the APIs, each API's share over its environments, each environment's share cut into
blocks of at most ``SHARD_TASKS`` tasks; then top-up rounds, planned from the finished shards
alone, give a shortfall to the environments that delivered their share. See ``synth_shards``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..runtime import Environment

__all__ = ["SHARD_TASKS", "TOPUP_ROUNDS", "ShardJob", "plan_shards", "plan_topup"]

SHARD_TASKS = 250  # tasks per shard at most: what one worker holds at once
TOPUP_ROUNDS = 3  # rounds that give a shortfall to environments that delivered their share


@dataclass(frozen=True)
class ShardJob:
    """One shard: ``n`` tasks of one environment, built with ``task_seed``."""

    shard_id: str
    env_dir: str
    env_key: str
    n: int
    task_seed: int
    seed: int
    held_out: tuple[str, ...]
    rl_fraction: float
    via_mcp: str | None
    task_config: dict[str, Any] | None
    api: str = ""  # the API the environment comes from (``api_groups``): shares are per API


def _shard_seed(seed: int, env_key: str, block: int) -> int:
    h = hashlib.sha256(f"envfactory-shard-v1:{seed}:{env_key}:{block}".encode()).hexdigest()
    return int(h[:8], 16) % (2**31)


def _spread(count: int, keys: Sequence[str]) -> dict[str, int]:
    """``count`` split evenly over ``keys`` (in the order given; the first take the remainder)."""
    return {k: count // len(keys) + (1 if i < count % len(keys) else 0) for i, k in enumerate(keys)}


def _blocks(base: ShardJob, key: str, env_dir: str, share: int, first_block: int) -> list[ShardJob]:
    return [
        ShardJob(
            shard_id=f"{key.replace('/', '__')}__{block:05d}",
            env_dir=env_dir,
            env_key=key,
            n=min(SHARD_TASKS, share - start),
            task_seed=_shard_seed(base.seed, key, block),
            seed=base.seed,
            held_out=base.held_out,
            rl_fraction=base.rl_fraction,
            via_mcp=base.via_mcp,
            task_config=base.task_config,
            api=base.api,
        )
        for block, start in enumerate(range(0, share, SHARD_TASKS), start=first_block)
    ]


def plan_shards(
    envs: dict[str, Environment],
    *,
    n: int,
    seed: int,
    eval_fraction: float,
    rl_fraction: float,
    via_mcp: str | None = None,
    task_config: dict[str, Any] | None = None,
) -> list[ShardJob]:
    """The shards of a run, in the order the dataset is assembled (independent of the workers).

    ``n`` is split evenly over the APIs (environments that share a source document are one API:
    one document split into twenty environments is one API, as the one-process path draws goals
    document by document), then each API's share evenly over its environments.
    """
    from ..synth import eval_envs
    from ..synth.trajectories import api_groups

    keys = sorted(envs)
    if not keys:
        raise ConfigError("no environments to synthesize for")
    sources = {k: list(envs[k].spec.sources) for k in keys}
    held_out = tuple(sorted(eval_envs(keys, fraction=eval_fraction, sources=sources)))
    api = api_groups(sources)
    members: dict[str, list[str]] = {}
    for k in keys:
        members.setdefault(api[k], []).append(k)
    jobs = []
    for name, count in _spread(n, sorted(members)).items():
        for key, share in _spread(count, members[name]).items():
            env = envs[key]
            if env.path is None:
                raise ConfigError(
                    f"{key}: sharded synthesis loads environments from their folders; this one has none"
                )
            base = ShardJob(
                "", str(env.path), key, 0, 0, seed, held_out, rl_fraction, via_mcp, task_config, name
            )
            jobs += _blocks(base, key, str(env.path), share, 0)
    return jobs


def plan_topup(plan: list[ShardJob], summaries: list[dict[str, Any]], *, n: int) -> list[ShardJob]:
    """Shards that make up what the finished ``plan`` fell short of ``n`` by, on the environments
    that delivered every task their shards asked for.

    An API's shortfall goes to its own full environments; what an API with none cannot take is
    split evenly over the APIs that have some. New blocks follow each environment's last; nothing
    when nothing is short or no environment is full (all are out of tasks).
    """
    asked: Counter = Counter()
    got: Counter = Counter()
    blocks: Counter = Counter()
    first: dict[str, ShardJob] = {}
    for j, summ in zip(plan, summaries):
        asked[j.env_key] += j.n
        got[j.env_key] += len(summ["task_ids"])
        blocks[j.env_key] += 1
        first.setdefault(j.env_key, j)
    if n - sum(got.values()) <= 0:
        return []
    full: dict[str, list[str]] = {}
    short: Counter = Counter()
    for k in sorted(asked):
        short[first[k].api] += max(0, asked[k] - got[k])
        if got[k] >= asked[k] > 0:
            full.setdefault(first[k].api, []).append(k)
    if not full:
        return []
    extra: Counter = Counter()
    homeless = 0
    for name, count in short.items():
        if name in full:
            extra[name] += count
        else:
            homeless += count
    for name, count in _spread(homeless, sorted(full)).items():
        extra[name] += count
    jobs = []
    for name in sorted(full):
        for key, share in _spread(extra[name], full[name]).items():
            jobs += _blocks(first[key], key, first[key].env_dir, share, blocks[key])
    return jobs
