"""Small statistics for eval summaries: confidence intervals and pass^k (no heavy imports)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["wilson_interval", "pass_hat_k"]


def wilson_interval(correct: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of an accuracy (sound at 0% and 100%, unlike the normal one)."""
    if total == 0:
        return (0.0, 0.0)
    p = correct / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def pass_hat_k(trials: Sequence[Sequence[bool]], k: int) -> float:
    """tau2-bench's pass^k: over entries, the chance that k trials drawn from an entry's n all
    pass, C(c, k) / C(n, k) with c passing of n; entries with fewer than k trials are left out."""
    scores = [math.comb(sum(t), k) / math.comb(len(t), k) for t in trials if len(t) >= k]
    return round(sum(scores) / len(scores), 4) if scores else 0.0
