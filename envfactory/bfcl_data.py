"""Where BFCL's published data lives on this machine: the ``data`` folder of the ``bfcl-eval``
wheel (``BFCL_v4_*.json``, ``possible_answer/``, ``multi_turn_func_doc/``).

A neutral, bottom-layer module: the evaluation harness reads BFCL's entries from it and task
synthesis reads its questions to decontaminate against them, without either importing the
other. The package is located, not imported (importing it pulls BFCL's model handlers).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["find_bfcl_data_dir"]


def find_bfcl_data_dir() -> Path | None:
    """The data folder of the installed ``bfcl_eval`` package; None when it is not installed
    or ships no data folder."""
    try:
        spec = importlib.util.find_spec("bfcl_eval")
    except (ImportError, ValueError):  # a broken install: a parent missing, or no __spec__
        return None
    if spec is None or not spec.origin:
        return None
    data = Path(spec.origin).resolve().parent / "data"
    return data if data.is_dir() else None
