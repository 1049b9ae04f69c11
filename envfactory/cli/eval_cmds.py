"""eval-suite, eval: BFCL-format suites from tasks, and models (or reference agents) scored on them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..config import project_paths
from ..errors import ConfigError
from ..evaluation import (
    CATEGORIES,
    REFERENCE_AGENTS,
    EvalConfig,
    ModelAgent,
    build_reference_agent,
    build_suite,
    load_suite,
    run_eval,
    summarize,
    summary_table,
    write_report,
    write_suite,
)
from ..runtime import load_environment
from ._app import app, console, env_dirs, fail, handle_errors

_EVAL_HELP = """Score a model behind an OpenAI-compatible API (or a reference agent) on a suite.

Serve a model with vLLM: vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes

Then: envfactory eval --model MODEL --base-url http://127.0.0.1:8000/v1 --suite travel

--mode fc sends the functions as `tools` and reads the reply's tool calls (the server needs a tool parser). --mode prompt lists the functions in the system prompt and parses BFCL call strings such as \\[func(a=1)] from the reply text.

Multi-turn entries run live against the suite's environments. Writes results.jsonl and summary.json under --out and prints a table. --agent oracle|noop|random|drop-one runs a reference agent instead of a model (no server needed). Build suites with 'envfactory eval-suite --domain DOMAIN'.
"""


def _categories(value: Optional[str]) -> tuple[str, ...]:
    if not value:
        return CATEGORIES
    chosen = tuple(c.strip() for c in value.split(",") if c.strip())
    unknown = [c for c in chosen if c not in CATEGORIES]
    if unknown:
        fail(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    return chosen


def _simulated_user(seed: int):
    """The user factory for ``--user-sim``: synth's simulator (the eval harness does not import synth)."""
    from ..synth import UserSimulator

    return lambda task: UserSimulator(task, seed=seed)


def _load_tasks(domain: str, tasks_file: Optional[Path], envs: list, n: int, seed: int) -> list:
    if tasks_file is not None:
        from ..spec import load_tasks

        return list(load_tasks(tasks_file))
    try:
        from ..synth.tasks import build_tasks  # written separately; optional until it lands
    except ImportError as e:
        raise ConfigError(f"the task builder is not available ({e}); pass --tasks FILE.jsonl") from e
    return list(build_tasks(envs, n=n, seed=seed).tasks)


@app.command("eval-suite")
@handle_errors
def eval_suite(
    domain: str = typer.Option(..., "--domain", "-d", help="Domain to build the suite for."),
    tasks_file: Optional[Path] = typer.Option(
        None, "--tasks", help="Tasks (JSON Lines) to build from; default: build tasks with envfactory.synth.tasks."),
    n_tasks: int = typer.Option(200, "--n-tasks", help="Tasks to build when --tasks is not given."),
    per_category: int = typer.Option(20, "--per-category", "-n", help="At most this many entries per category."),
    categories: Optional[str] = typer.Option(None, "--categories", help=f"Comma-separated subset of {', '.join(CATEGORIES)}."),
    seed: int = typer.Option(0, "--seed", help="Seed: the same tasks and seed give the same files."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Suites folder (default: eval/suites); writes OUT/<domain>/."),
) -> None:
    """Write a BFCL-format evaluation suite for a domain under eval/suites/<domain>/."""
    paths = project_paths()
    envs = [load_environment(d) for d in env_dirs(domain)]
    others = [load_environment(d) for d in env_dirs(None)
              if d.resolve().relative_to(paths.domains_dir.resolve()).parts[0] != domain]
    tasks = _load_tasks(domain, tasks_file, envs, n_tasks, seed)
    suite = build_suite(tasks, envs, domain=domain, n_per_category=per_category, categories=_categories(categories),
                        seed=seed, other_envs=others)
    folder = write_suite(suite, (out or paths.resolve(paths.eval) / "suites") / domain)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    counts = ", ".join(f"{c} {n}" for c, n in suite.counts.items())
    console.print(f"suite {domain}: {counts} -> {folder} ({size / 1024:.0f} KiB)")


@app.command("eval", help=_EVAL_HELP)
@handle_errors
def eval_(
    suite_name: str = typer.Option(..., "--suite", "-s", help="Suite: a domain under eval/suites, or a suite folder."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model name as the server serves it."),
    base_url: str = typer.Option("http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible endpoint, with /v1."),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="Bearer token (default: $OPENAI_API_KEY, if set)."),
    agent_name: Optional[str] = typer.Option(None, "--agent", help=f"Reference agent instead of a model: {', '.join(REFERENCE_AGENTS)}."),
    categories: Optional[str] = typer.Option(None, "--categories", help=f"Comma-separated subset of {', '.join(CATEGORIES)}."),
    mode: str = typer.Option("fc", "--mode", help="fc: native function calling; prompt: call strings in text."),
    concurrency: int = typer.Option(8, "--concurrency", help="Entries (and requests) in flight at once."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per request."),
    retries: int = typer.Option(3, "--retries", help="Retries per request on 5xx, 429, timeouts."),
    limit: Optional[int] = typer.Option(None, "--limit", help="At most N entries per category."),
    max_steps: int = typer.Option(10, "--max-steps", help="Assistant replies per user turn in multi-turn entries."),
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Completion token limit per request."),
    user_sim: bool = typer.Option(False, "--user-sim", help="Multi-turn users from the user simulator instead of the sub-goal turns."),
    seed: int = typer.Option(0, "--seed", help="Seed for the random and drop-one agents and the simulator."),
    out: Path = typer.Option(Path("results"), "--out", "-o", help="Folder for results.jsonl and summary.json."),
) -> None:
    paths = project_paths()
    folder = Path(suite_name)
    if not (folder / "manifest.json").is_file():
        folder = paths.resolve(paths.eval) / "suites" / suite_name
    if not (folder / "manifest.json").is_file():
        fail(f"suite {suite_name!r} not found (looked for {folder}/manifest.json); "
             f"build it with 'envfactory eval-suite --domain {suite_name}'")
    if mode not in ("fc", "prompt"):
        fail(f"--mode must be fc or prompt, got {mode!r}")
    if (model is None) == (agent_name is None):
        fail("give exactly one of --model (with --base-url) or --agent")
    if limit is not None and limit < 0:
        fail(f"--limit must be >= 0, got {limit}")
    try:  # before the run, so an unusable --out does not throw the results away
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        fail(f"--out {out}: cannot create the results folder: {e.strerror or e}")
    suite = load_suite(folder)
    if agent_name is not None:
        if agent_name not in REFERENCE_AGENTS:
            fail(f"unknown agent {agent_name!r}; known: {', '.join(REFERENCE_AGENTS)}")
        agent = build_reference_agent(agent_name, seed=seed)
        client = None
    else:
        from ..llm import OpenAICompatModel

        client = OpenAICompatModel(base_url, model, api_key=api_key or os.environ.get("OPENAI_API_KEY"),
                                   timeout=timeout, max_retries=retries, concurrency=concurrency)
        agent = ModelAgent(client, temperature=temperature, max_tokens=max_tokens)
    config = EvalConfig(categories=_categories(categories), mode=mode, concurrency=concurrency, limit=limit,
                        max_steps_per_turn=max_steps, user="simulator" if user_sim else "subgoals", seed=seed)
    try:
        with Progress(TextColumn(f"[bold]{agent.name}[/] on {suite.domain}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as progress:
            bar = progress.add_task("eval", total=None)

            def tick(done: int, total: int) -> None:
                progress.update(bar, completed=done, total=total)

            report = run_eval(suite, agent, config=config, domains_root=paths.domains_dir, on_progress=tick,
                              user_factory=_simulated_user(seed) if user_sim else None)
    finally:
        if client is not None:
            client.close()
    files = write_report(report, out)
    console.print(summary_table(summarize(report)))
    console.print(f"results: {files['results']}\nsummary: {files['summary']}")
