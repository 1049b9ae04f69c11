"""The suite categories, BFCL's names for them (a leaf module: the CLI lists them in --help)."""

from __future__ import annotations

__all__ = ["CATEGORIES", "SINGLE_TURN_CATEGORIES"]

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "multi_turn")
SINGLE_TURN_CATEGORIES = CATEGORIES[:5]
