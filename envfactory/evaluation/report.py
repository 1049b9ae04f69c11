"""Summaries of an evaluation run: accuracy per category, error types, tokens, latency.

``write_report`` writes ``results.jsonl`` (one entry per line) and ``summary.json`` into a
folder; ``summary_table`` renders the summary as a rich table.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from rich.table import Table

from .categories import CATEGORIES
from .runner import EvalReport
from .stats import pass_hat_k, wilson_interval

__all__ = ["summarize", "write_report", "summary_table"]


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def summarize(report: EvalReport) -> dict[str, Any]:
    """The summary of a run as plain data (what ``summary.json`` holds)."""
    categories: dict[str, Any] = {}
    for category in CATEGORIES:
        rows = [r for r in report.results if r.category == category]
        if not rows:
            continue
        correct = sum(r.valid for r in rows)
        stats: dict[str, Any] = {
            "total": len(rows),
            "correct": correct,
            "accuracy": round(correct / len(rows), 4),
            "error_types": dict(
                sorted(
                    Counter(r.error_type for r in rows if not r.valid).items(),
                    key=lambda kv: (-kv[1], str(kv[0])),
                )
            ),
        }
        stats["ci95"] = list(wilson_interval(correct, len(rows)))
        trials = [r.trial_valid for r in rows if r.trial_valid]
        if trials:
            k = min(len(t) for t in trials)
            stats["trials"] = k
            stats["pass^1"] = pass_hat_k(trials, 1)
            stats[f"pass^{k}"] = pass_hat_k(trials, k)
        rewards = [r.reward for r in rows if r.reward is not None]
        if rewards:
            stats["mean_reward"] = round(sum(x["reward"] for x in rewards) / len(rewards), 4)
            stats["mean_partial"] = round(sum(x["partial"] for x in rewards) / len(rewards), 4)
        categories[category] = stats
    total = len(report.results)
    correct = sum(r.valid for r in report.results)
    latencies = [r.latency_s for r in report.results]
    return {
        "suite": report.suite,
        "agent": report.agent,
        "mode": report.mode,
        "config": report.config,
        "overall": {
            "total": total,
            "correct": correct,
            "accuracy": round(correct / total, 4) if total else 0.0,
            "mean_category_accuracy": round(
                sum(c["accuracy"] for c in categories.values()) / len(categories), 4
            )
            if categories
            else 0.0,
        },
        "categories": categories,
        "model_errors": sum(r.model_error is not None for r in report.results),
        # why requests failed, commonest first: a dead endpoint must be visible, not just a low score
        "model_error_causes": dict(
            Counter(r.model_error for r in report.results if r.model_error).most_common(3)
        ),
        "tokens": {
            "requests": sum(r.requests for r in report.results),
            "prompt": sum(r.prompt_tokens for r in report.results),
            "completion": sum(r.completion_tokens for r in report.results),
            "total": sum(r.prompt_tokens + r.completion_tokens for r in report.results),
        },
        "latency_s": {
            "per_entry_mean": round(sum(latencies) / len(latencies), 4) if latencies else 0.0,
            "per_entry_p50": round(_percentile(latencies, 50), 4),
            "per_entry_p99": round(_percentile(latencies, 99), 4),
            "wall": report.wall_s,
        },
    }


def write_report(report: EvalReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``results.jsonl`` and ``summary.json`` under ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    with results.open("w", encoding="utf-8") as handle:
        for r in report.results:
            handle.write(json.dumps(r.to_dict(), ensure_ascii=False, default=repr) + "\n")
    summary = out / "summary.json"
    summary.write_text(json.dumps(summarize(report), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"results": results, "summary": summary}


def summary_table(summary: dict[str, Any]) -> Table:
    """Accuracy per category, the commonest error type, and reward for multi-turn."""
    table = Table(title=f"{summary['agent']} on {summary['suite']} ({summary['mode']})")
    for column in ("category", "entries", "correct", "accuracy", "95% CI", "top error type", "reward"):
        table.add_column(column, justify="left" if column in ("category", "top error type") else "right")
    for category, stats in summary["categories"].items():
        top = next(iter(stats["error_types"].items()), None)
        table.add_row(
            category,
            str(stats["total"]),
            str(stats["correct"]),
            f"{stats['accuracy']:.1%}",
            f"{stats['ci95'][0]:.0%}-{stats['ci95'][1]:.0%}" if "ci95" in stats else "-",
            f"{top[0]} ({top[1]})" if top else "-",
            f"{stats['mean_reward']:.2f}" if "mean_reward" in stats else "-",
        )
    overall = summary["overall"]
    table.add_section()
    table.add_row(
        "overall",
        str(overall["total"]),
        str(overall["correct"]),
        f"{overall['accuracy']:.1%}",
        "",
        f"macro {overall['mean_category_accuracy']:.1%}",
        "",
    )
    passes = []
    for category, stats in summary["categories"].items():
        if "trials" in stats:
            k = stats["trials"]
            passes.append(f"{category} pass^1 {stats['pass^1']:.2f} pass^{k} {stats['pass^' + str(k)]:.2f}")
    tokens, latency = summary["tokens"], summary["latency_s"]
    table.caption = (
        f"{tokens['requests']} requests, {tokens['prompt']} prompt + {tokens['completion']} completion tokens; "
        f"latency per entry mean {latency['per_entry_mean']:.3f}s p50 {latency['per_entry_p50']:.3f}s "
        f"p99 {latency['per_entry_p99']:.3f}s; wall {latency['wall']:.1f}s; model errors {summary['model_errors']}"
        + "".join(f"; {p}" for p in passes)
    )
    return table
