"""Run an agent (a model behind an OpenAI-compatible API, or a reference agent) on a suite.

Single-turn entries: one request, the reply decoded into calls (``fc``: the message's tool
calls; ``prompt``: BFCL call strings parsed by :mod:`bfcl_format`), scored by ``check_ast``.

Multi-turn entries run live: the model's calls execute on a fresh ``Session`` of the entry's
environment and their results go back to the model, up to ``max_steps_per_turn`` replies per
user turn; the gold calls of each turn run on a second session. After each turn
``check_multi_turn`` compares the two states (state hashes) and looks for the gold results among
the model's; the state-based reward (``score_trajectory``) scores the whole episode. User turns
are the task's sub-goals (BFCL's multi-turn format) or, with ``user="simulator"``, come from a
user simulator built for the task (then the episode is checked as one turn).

Multi-turn entries run BFCL's inference loop by default (``EvalConfig.loop``; see
:mod:`envfactory.evaluation.episode`), ``trials`` times each (pass^k: ``valid`` is every trial).

Entries run concurrently (threads, ``concurrency`` at a time); results come back in suite order.
A model that fails after its retries fails that entry (``error_type`` ``model_error``), not the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import EnvFactoryError, ModelError
from ..llm import ChatMessage
from ..spec import Task
from .agents import Agent, AgentContext
from .categories import canonical_category
from .checker import check_ast
from .conversation import (
    PROMPT_SYSTEM,
    EntryResult,
    EvalConfig,
    EvalReport,
    Usage,
    decode_reply,
    openai_tools,
    prompt_messages,
)
from .episode import run_multi_turn
from .suites import CATEGORIES, Suite, SuiteEntry, SuiteError

__all__ = [
    "PROMPT_SYSTEM",
    "EvalConfig",
    "EntryResult",
    "EvalReport",
    "run_eval",
    "openai_tools",
    "decode_reply",
    "load_suite_envs",
    "EntryJob",
    "score_job",
]


# ----------------------------------------------------------------------------- single-turn


def _run_single(entry: SuiteEntry, agent: Agent, config: EvalConfig) -> EntryResult:
    usage = Usage()
    messages = prompt_messages(entry, config.mode) + [
        ChatMessage.model_validate(m) for m in entry.question[0]
    ]
    ctx = AgentContext(entry, 0, 0, config.mode, messages, openai_tools(entry.functions))
    started = time.perf_counter()
    try:
        response = agent.act(ctx)
    except ModelError as e:
        return usage.fill(
            EntryResult(entry.id, entry.category, False, "model_error", [str(e)], model_error=str(e))
        )
    usage.add(response, started)
    calls = decode_reply(response, config.mode)
    verdict = check_ast(entry.functions, calls, entry.ground_truth, entry.category, matching=config.matching)
    raw = (
        response.content
        if config.mode == "prompt" or not response.tool_calls
        else json.dumps([c.to_openai()["function"] for c in response.tool_calls])
    )
    return usage.fill(
        EntryResult(
            entry.id,
            entry.category,
            verdict.valid,
            verdict.error_type,
            [str(e)[:500] for e in verdict.errors],
            model_calls=calls,
            raw_output=raw,
        )
    )


# ----------------------------------------------------------------------------- the run


def load_suite_envs(suite: Suite, domains_root: str | Path) -> dict[str, Any]:
    """The environments a suite's multi-turn entries run against, from ``domains_root``."""
    from ..runtime import load_environment  # the runtime is needed only for multi-turn entries

    root = Path(domains_root)
    envs = {}
    needed = {e.env for e in suite.entries if e.is_multi_turn}
    for name in sorted(needed):
        folder = root / suite.envs.get(name, f"{suite.domain}/{name}")
        if not (folder / "env.yaml").is_file():
            raise SuiteError(f"environment {name!r} of suite {suite.domain!r} not found at {folder}")
        envs[name] = load_environment(folder)
    return envs


def _combine_trials(runs: list[EntryResult]) -> EntryResult:
    """k trials of one entry -> one result: valid when every trial is (pass^k); the first failing
    trial's details; requests, tokens and latency summed."""
    if len(runs) == 1:
        return runs[0]
    first = next((r for r in runs if not r.valid), runs[0])
    combined = EntryResult(**{**first.to_dict(), "trial_valid": [r.valid for r in runs]})
    combined.valid = all(r.valid for r in runs)
    combined.requests = sum(r.requests for r in runs)
    combined.prompt_tokens = sum(r.prompt_tokens for r in runs)
    combined.completion_tokens = sum(r.completion_tokens for r in runs)
    combined.latency_s = round(sum(r.latency_s for r in runs), 6)
    return combined


def _score_one(
    entry: SuiteEntry,
    suite: Suite,
    agent: Agent,
    config: EvalConfig,
    envs: Mapping[str, Any] | None,
    user_factory: Callable[[Task], Any] | None,
) -> EntryResult:
    """One entry's result; a bad entry (an EnvFactoryError) is data, our own bugs still raise."""
    try:
        if not entry.is_multi_turn:
            return _run_single(entry, agent, config)
        env = (envs or {}).get(entry.env)
        if env is None:
            return EntryResult(
                entry.id, entry.category, False, "suite_error", [f"no environment {entry.env!r}"]
            )
        task = suite.tasks.get(entry.task_id or "")
        runs = [run_multi_turn(entry, agent, config, env, task, user_factory) for _ in range(config.trials)]
        return _combine_trials(runs)
    except EnvFactoryError as e:
        return EntryResult(entry.id, entry.category, False, "suite_error", [str(e)])


def _threads(
    suite, entries, agent, config, envs, user_factory, on_progress, on_result
) -> dict[str, EntryResult]:
    def one(entry: SuiteEntry) -> EntryResult:
        result = _score_one(entry, suite, agent, config, envs, user_factory)
        if on_result is not None:  # from the worker, as soon as the entry is done (a kill keeps it)
            on_result(result)
        return result

    results: dict[str, EntryResult] = {}
    with ThreadPoolExecutor(max_workers=min(config.concurrency, max(1, len(entries)))) as pool:
        futures = {pool.submit(one, e): e for e in entries}
        for done, future in enumerate(as_completed(futures), 1):
            entry = futures[future]
            results[entry.id] = future.result()
            if on_progress is not None:
                on_progress(done, len(entries))
    return results


@dataclass(frozen=True)
class EntryJob:
    """One suite entry as a backend job: what a worker needs to score it on its own."""

    suite_path: str
    entry_id: str
    agent_factory: Callable[[], Agent]
    config: EvalConfig
    domains_root: str
    user_factory: Callable[[Task], Any] | None = None


_LOADED: dict[tuple[str, str], tuple[Suite, dict[str, Any]]] = {}  # per worker process: the last suite


def score_job(job: EntryJob) -> EntryResult:
    """Score one entry in a worker process (the suite and its environments loaded once per process)."""
    key = (job.suite_path, job.domains_root)
    if key not in _LOADED:
        from .suites import load_suite

        suite = load_suite(job.suite_path)
        envs = load_suite_envs(suite, job.domains_root) if any(e.is_multi_turn for e in suite.entries) else {}
        _LOADED.clear()
        _LOADED[key] = (suite, envs)
    suite, envs = _LOADED[key]
    entry = next((e for e in suite.entries if e.id == job.entry_id), None)
    if entry is None:
        raise SuiteError(f"entry {job.entry_id!r} is not in the suite at {job.suite_path}")
    return _score_one(entry, suite, job.agent_factory(), job.config, envs, job.user_factory)


def _fan_out(
    suite, entries, agent_factory, config, domains_root, user_factory, backend, on_result, on_progress
):
    """The entries as backend jobs; results handed to ``on_result`` here as they arrive."""
    if suite.path is None or agent_factory is None:
        raise SuiteError("a fanned-out run needs a suite loaded from a folder and an agent factory")
    jobs = [
        EntryJob(str(suite.path), e.id, agent_factory, config, str(domains_root), user_factory)
        for e in entries
    ]
    results: dict[str, EntryResult] = {}

    def arrived(i: int, got: Any) -> None:
        if not isinstance(got, EntryResult):  # the job raised or lost its worker: a bug, as with threads
            raise EnvFactoryError(f"entry {entries[i].id}: {getattr(got, 'reason', got)}")
        results[got.id] = got
        if on_result is not None:
            on_result(got)
        if on_progress is not None:
            on_progress(len(results), len(entries))

    backend.run(score_job, jobs, arrived)
    return results


def run_eval(
    suite: Suite,
    agent: Agent,
    *,
    config: EvalConfig | None = None,
    envs: Mapping[str, Any] | None = None,
    domains_root: str | Path | None = None,
    user_factory: Callable[[Task], Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    on_result: Callable[[EntryResult], None] | None = None,
    backend: Any = None,
    agent_factory: Callable[[], Agent] | None = None,
) -> EvalReport:
    """Evaluate ``agent`` on ``suite``; see the module docstring.

    envs: environments by name for multi-turn entries (else loaded from ``domains_root``).
    user_factory: builds the user simulator for a task; required with ``user="simulator"``
        (the CLI passes ``envfactory.synth.UserSimulator``).
    on_progress(done, total): called from the calling thread as entries finish.
    on_result(result): called with each finished entry, from the worker thread that scored it
        and before the next entry starts there (the results store writes it then, so a killed run
        keeps what it finished); it must be thread-safe (``ResultsStore.add_result`` is).
    backend: a fan-out backend (``pipelines.backend``: ``run(fn, jobs, on_result)``) that runs
        each entry as a job (a Ray task) instead of a thread here; the jobs load the suite from
        ``suite.path`` and its environments from ``domains_root`` in the worker, and build the
        agent with ``agent_factory`` and the user with ``user_factory`` (both picklable: module
        functions, classes, ``functools.partial``). ``on_result`` and ``on_progress`` run here.
        Same entries, same results as the threads (the reference agents draw per entry).
    """
    config = config or EvalConfig()
    categories = {canonical_category(c) for c in config.categories}
    unknown = sorted(categories - set(CATEGORIES))
    if unknown:
        raise SuiteError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    if config.mode not in ("fc", "prompt"):
        raise SuiteError(f"mode must be 'fc' or 'prompt', got {config.mode!r}")
    if config.concurrency < 1 or config.max_steps_per_turn < 1 or config.trials < 1:
        raise SuiteError("concurrency, max_steps_per_turn and trials must be >= 1")
    if config.loop not in ("bfcl", "lenient"):
        raise SuiteError(f"loop must be 'bfcl' or 'lenient', got {config.loop!r}")
    if config.limit is not None and config.limit < 0:
        raise SuiteError(f"limit must be >= 0 entries per category, got {config.limit}")
    entries: list[SuiteEntry] = []
    for category in CATEGORIES:
        if category in categories:
            chosen = suite.by_category(category)
            entries += chosen[: config.limit] if config.limit is not None else chosen
    needs_envs = any(e.is_multi_turn for e in entries)
    if domains_root is None and (backend is not None or (needs_envs and envs is None)):
        from ..config import project_paths

        domains_root = project_paths().domains_dir
    if needs_envs and envs is None and backend is None:
        envs = load_suite_envs(suite, domains_root)  # type: ignore[arg-type]

    started = time.perf_counter()
    if backend is not None:
        results = _fan_out(
            suite, entries, agent_factory, config, domains_root, user_factory, backend, on_result, on_progress
        )
    else:
        results = _threads(suite, entries, agent, config, envs, user_factory, on_progress, on_result)
    return EvalReport(
        suite=suite.domain,
        agent=agent.name,
        mode=config.mode,
        config={k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()},
        results=[results[e.id] for e in entries],
        wall_s=round(time.perf_counter() - started, 3),
    )
