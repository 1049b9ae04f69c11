"""Benchmarks: figures and ratios against a floor measured in the same run (never tests)."""

from .runtime import RuntimeBenchReport, run_runtime_bench

__all__ = ["RuntimeBenchReport", "run_runtime_bench"]
