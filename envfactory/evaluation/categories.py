"""The suite categories, under BFCL's own names (a leaf module: the CLI lists them in --help).

Names are BFCL v4's (``bfcl_eval.constants.category_mapping``), so files are
``BFCL_v4_<category>.json`` and entry ids ``<category>_<n>``: BFCL's ``extract_test_category``,
``extract_test_category_from_id`` and ``load_dataset_entry`` read our suites unchanged.
BFCL categories not built (live_simple and the other live_* but live_relevance,
multi_turn_long_context, simple_java/javascript, memory, web_search, format_sensitivity) are
listed with the reason in eval/README.md. ``simple`` and ``multi_turn`` (the names of earlier suites) are accepted as aliases.
"""

from __future__ import annotations

__all__ = [
    "CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "MULTI_TURN_CATEGORIES",
    "CATEGORY_ALIASES",
    "FORMAT_VERSION",
    "canonical_category",
    "is_multi_turn_category",
]

FORMAT_VERSION = "BFCL_v4"
SINGLE_TURN_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_relevance",
)
MULTI_TURN_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
)
CATEGORIES = SINGLE_TURN_CATEGORIES + MULTI_TURN_CATEGORIES
CATEGORY_ALIASES = {"simple": "simple_python", "multi_turn": "multi_turn_base"}


def canonical_category(name: str) -> str:
    """BFCL's name for a category (``simple`` -> ``simple_python``); unknown names pass through."""
    return CATEGORY_ALIASES.get(name, name)


def is_multi_turn_category(category: str) -> bool:
    return category.startswith("multi_turn")
