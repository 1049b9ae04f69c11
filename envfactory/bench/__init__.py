"""Benchmarks: figures and ratios against a floor measured in the same run (never tests)."""

from .cli import CliBenchReport, run_cli_bench
from .runtime import RuntimeBenchReport, run_runtime_bench

__all__ = ["CliBenchReport", "RuntimeBenchReport", "run_cli_bench", "run_runtime_bench"]
