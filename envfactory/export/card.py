"""The dataset card (README.md): YAML front matter the Hub reads, and a body a person reads."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import yaml

__all__ = ["build_dataset_card", "size_category"]


def size_category(n: int) -> str:
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ]
    for b, label in bounds:
        if n < b:
            return label
    return "n>1T" if n >= 10**12 else "10M<n<100M"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _sample(row: dict[str, Any], limit: int = 600) -> str:
    msgs = []
    for m in row["messages"]:
        m = dict(m)
        if isinstance(m.get("content"), str) and len(m["content"]) > limit:
            m["content"] = m["content"][:limit] + " ..."
        msgs.append(m)
    return json.dumps(
        {"messages": msgs, "env_id": row["env_id"], "task_id": row["task_id"]}, indent=1, ensure_ascii=False
    )


def _front_matter(
    name: str,
    total: int,
    splits: list[str],
    sharegpt_counts: dict[str, int],
    dataset_info: list[dict[str, Any]],
    license: str,
) -> dict[str, Any]:
    """What the Hub reads: licence, sizes, and the configs with their data files."""
    configs = [
        {
            "config_name": "default",
            "default": True,
            "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in splits],
        }
    ]
    if "rl" in splits:
        configs.append({"config_name": "rl", "data_files": [{"split": "rl", "path": "rl/rl-*.parquet"}]})
    sg = [s for s in ("sft", "eval") if sharegpt_counts.get(s)]
    if sg:
        configs.append(
            {
                "config_name": "sharegpt",
                "data_files": [{"split": s, "path": f"sharegpt/{s}-*.parquet"} for s in sg],
            }
        )
    return {
        "license": license,
        "language": ["en"],
        "pretty_name": name,
        "size_categories": [size_category(total)],
        "task_categories": ["text-generation"],
        "tags": [
            "rl-environment",
            "tool-use",
            "function-calling",
            "multi-turn",
            "synthetic",
            "agents",
            "envfactory",
        ],
        "configs": configs,
        "dataset_info": dataset_info,
    }


def _how_policy(method: dict[str, Any]) -> str:
    """How the assistant and user sides were played, for the card's "How it was made"."""
    if method.get("policy", "oracle") == "oracle":
        return (
            "**No model was used.** The assistant side is the *oracle policy*: it replays each task's gold "
            "tool calls (discovery steps first, in the order the plan needs them) with short templated "
            "messages between them, asks the user for a hidden fact just before the first call that needs "
            "it, and ends with a final answer stating the task's required facts. The user side is the "
            "rule-based user simulator (templated phrasing, no model)."
        )
    return (
        f"The assistant side is the teacher model **{method.get('teacher_model')}** behind an "
        "OpenAI-compatible API, with the environment's tools as JSON Schemas. Each task was tried up "
        f"to {method.get('attempts')} times; only rollouts that earned full reward were kept "
        "(rejection sampling; the `attempts` column says which try succeeded). The user side is the "
        + (
            "simulated user driven by the same model."
            if method.get("user_model")
            else "rule-based user simulator (no model)."
        )
    )


def build_dataset_card(
    *,
    name: str,
    rows_by_split: dict[str, list[dict[str, Any]]],
    sharegpt_counts: dict[str, int],
    dataset_info: list[dict[str, Any]],
    method: dict[str, Any],
    license: str = "apache-2.0",
    audit: list[tuple[str, str, str]] | None = None,
) -> str:
    """A dataset card for the folder's configs (``default``: sft/rl/eval; ``rl``; ``sharegpt``).

    ``audit``: the (figure, value, target) rows of ``envfactory audit DATASET``, shown as a table."""
    total = sum(len(v) for v in rows_by_split.values())
    splits = [s for s in ("sft", "rl", "eval") if rows_by_split.get(s)]
    front = _front_matter(name, total, splits, sharegpt_counts, dataset_info, license)
    all_rows = [r for s in splits for r in rows_by_split[s]]
    body = (
        _intro(name, method)
        + _splits_section(rows_by_split, splits, method)
        + _counts_section(rows_by_split, splits)
        + _audit_section(audit)
        + _CHECKS_NOTE
        + _COLUMNS
        + _loading(name)
        + f"\n## Sample row\n\n```json\n{_sample(all_rows[0]) if all_rows else '{}'}\n```\n"
    )
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=120) + "---\n" + body


def _intro(name: str, method: dict[str, Any]) -> str:
    return f"""
# {name}

Multi-turn, tool-using conversations synthesized by envfactory on executable,
verified environments built from published API documentation. Every row was **replayed** before it was
kept: its tool calls, executed on a fresh environment session from its initial state, return exactly
the recorded tool results and earn reward 1 (final state equal to the gold state, final answer stating
every required fact as a value).

## How it was made

1. Tasks: intent-first plans (find and report; change one's own thing; create with references looked up;
   cancel or refund under a precondition; compare and choose; errands on related rows) sampled on each
   environment's tool graph, document by document, and executed on a fresh session (gold calls, outputs,
   final state), realized as a request in a person's words with a persona who holds some facts back until
   asked, split into sub-goals (one per user turn), with a verifiable reward spec. Rows are named by what a
   person knows (a name, an email, a date; never seeded filler, a bookkeeping stamp or a link to the record).
   A task is dropped when a gold argument has no provenance (the user's words, a fact the user gives when
   asked, an earlier tool result, a documented default, or the key of the account's own project that the
   system prompt states), a gold call is not needed, the goal's words do not pick the rows the gold run
   acts on, or the user would have to say something no person says.
2. Rollouts: {_how_policy(method)}
   Tool calls ran against live environment sessions ({method.get("via", "in-process")}).
3. Verification: every row replayed; {method.get("replay_failures", 0)} failed the replay and were dropped;
   {method.get("rollout_failures", 0)} tasks gave no full-reward rollout.

Seed: `{method.get("seed")}`. Tasks requested: `{method.get("n")}`. Command: `{method.get("command", "envfactory synth")}`.
"""


_SPLIT_WHAT = {
    "sft": "training trajectories (SFT)",
    "rl": "training tasks for RL (each with a verified reference trajectory)",
    "eval": "held-out environments (none of them appears in sft or rl)",
}


def _splits_section(
    rows_by_split: dict[str, list[dict[str, Any]]], splits: list[str], method: dict[str, Any]
) -> str:
    rows = "\n".join(f"| {s} | {len(rows_by_split[s]):,} | {_SPLIT_WHAT[s]} |" for s in splits)
    return f"""
## Splits

| split | rows | what |
|---|---|---|
{rows}

**Held-out rule.** `eval` holds out whole APIs: environments that share a source document (one document
split into several environments, or two merged into one) are one API, named by its first document `D`
(an environment with no document by its own `domain/env`); an API is held out when
`int(sha256("envfactory-eval-v1:" + D)[:8 bytes]) / 2**64 < {method.get("eval_fraction")}`;
with two or more APIs at least one is held out (the lowest hash) and one stays in training (the highest);
with a single API nothing is held out. No table of an eval environment appears in sft or rl. The rest go to `rl` when the same hash of the
task id (salt `envfactory-rl-v1:`) is below {method.get("rl_fraction")}, else to `sft`.
"""


def _counts_section(rows_by_split: dict[str, list[dict[str, Any]]], splits: list[str]) -> str:
    all_rows = [r for s in splits for r in rows_by_split[s]]
    by_domain = Counter(r["domain"] for r in all_rows)
    by_env: dict[tuple[str, str], Counter] = {}
    for s in splits:
        for r in rows_by_split[s]:
            by_env.setdefault((r["env_id"], s), Counter())["n"] += 1
    envs = sorted({r["env_id"] for r in all_rows})
    env_split = {e: next(s for s in splits if (e, s) in by_env) for e in envs}
    turns = Counter(r["num_turns"] for r in all_rows)
    calls = [r["num_tool_calls"] for r in all_rows]
    diff = Counter(r["difficulty"] for r in all_rows)
    intents = Counter((r.get("user") or {}).get("intent") or "unknown" for r in all_rows)
    env_rows = [[e, env_split[e], f"{by_env[(e, env_split[e])]['n']:,}"] for e in envs]
    return f"""
## Counts

Per domain:

{_table(["domain", "rows"], [[d, f"{n:,}"] for d, n in sorted(by_domain.items())])}

Per environment:

{_table(["environment", "split", "rows"], env_rows)}

Per number of user turns:

{_table(["user turns", "rows"], [[t, f"{n:,}"] for t, n in sorted(turns.items())])}

Per intent:

{_table(["intent", "rows"], [[k, f"{n:,}"] for k, n in sorted(intents.items())])}

Tool calls per row: mean {sum(calls) / max(1, len(calls)):.2f}, max {max(calls, default=0)}.
Difficulty: {", ".join(f"{k} {v:,}" for k, v in sorted(diff.items()))}.
"""


def _audit_section(audit: list[tuple[str, str, str]] | None) -> str:
    if not audit:
        return ""
    return (
        "\n## Audit (`envfactory audit DATASET`)\n\nShares of rows, measured on this dataset:\n\n"
        + _table(["figure", "value", "target"], [list(r) for r in audit])
        + "\n"
    )


_CHECKS_NOTE = """
`checks_passed` lists the checks that ran on a row's task and passed; a check that could not run (the
decontamination index was absent, for one) is not listed.
"""

_COLUMNS = """
## Columns (config `default`)

- `messages`: OpenAI chat format (`system`, `user`, `assistant` with `tool_calls`
  `{"id", "type": "function", "function": {"name", "arguments": "<JSON string>"}}`, `tool` with
  `tool_call_id`); `tools`: OpenAI function declarations with JSON Schema parameters. Both load as plain
  dicts (the `Json` feature), ready for `tokenizer.apply_chat_template(messages, tools=tools)`. An
  assistant message with `"weight": 0` (the key of OpenAI's chat fine-tuning format) is a call in a form
  the service rejects, kept because the recovery after it needs it: mask it out of the loss if your
  trainer reads the key (TRL's `SFTTrainer` does not; chat templates ignore it). There is
  no `prompt` column here, so TRL's `SFTTrainer` and `maybe_apply_chat_template` read the rows as
  conversations as they are.
- RL: `env_id`, `initial_state` (`template` = the environment's seeded state, else a state file relative to
  the environment folder) and `initial_state_hash`, `reward_spec` (state hash, gold diff, gold calls,
  required facts), `turn_limit`, `user` (persona, goal, intent and sub-goals for the user simulator).
  Config `rl` holds the rl split with `prompt` (system + first user message) and `completion` (the
  verified rest) in place of `messages`: TRL's prompt-completion format. Serve the environment with
  `envfactory serve --domain DOMAIN --env ENV` (stdio or HTTP with a control channel to start sessions
  from a state and read the final hash and diff), and score with `envfactory.reward.score_trajectory`.
- Provenance: `domain`, `env`, `source_docs`, `task_id`, `seed`, `difficulty`, `predicted_pass_rate`,
  `checks_passed`, `policy`, `attempts`, `via`, `num_turns`, `num_tool_calls`, `reward`.

Config `sharegpt` has the sft and eval rows in LlamaFactory's ShareGPT format (`conversations` with
`human` / `gpt` / `function_call` / `observation`, `system`, `tools` as a JSON string).
"""


def _loading(name: str) -> str:
    return f"""
## Loading

```python
from datasets import load_dataset
ds = load_dataset("parquet", data_files={{"sft": "data/sft-*.parquet"}})   # or load_dataset("ORG/NAME")
```

With envfactory installed, the same folder loads as a `DatasetDict` of every split:

```python
from envfactory.export import load_trajectories
ds = load_trajectories("trajectories/{name}")
```
"""
