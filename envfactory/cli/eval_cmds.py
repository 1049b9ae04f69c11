"""eval-suite, eval: BFCL-format suites from tasks, and models (or reference agents) scored on them."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import typer

from ..evaluation import CATEGORIES, REFERENCE_AGENTS  # leaf modules: cheap for --help
from ._app import app, console, env_dirs, err_console, fail, handle_errors, nonempty_path

if TYPE_CHECKING:
    from ..llm import OpenAICompatModel

PREFLIGHT_TIMEOUT_S = 10.0  # the endpoint check before a run; requests then get --timeout

_EVAL_HELP = """Score a model behind an OpenAI-compatible API (or a reference agent) on a suite.

Serve a model with vLLM, then point eval at it:

\b
  vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes
  envfactory eval --model MODEL --base-url http://127.0.0.1:8000/v1 --suite travel

--mode fc sends the functions as `tools` and reads the reply's tool calls (the server needs a tool parser). --mode prompt lists the functions in the system prompt and parses BFCL call strings such as [func(a=1)] from the reply text.

Before the run the endpoint is checked (GET /models, at most 10 s): an unreachable server is an error, not a 0% score. A run in which every request failed exits 1 with the cause.

Multi-turn entries run live against the suite's environments, with BFCL's loop by default (--loop bfcl: a malformed tool call ends the turn; more than --max-steps 20 steps force-quits, scored invalid); --loop lenient is envfactory's earlier loop. --trials K runs each multi-turn entry K times (pass^K). Every run goes to the results database (eval/results/results.db, or --db), entry by entry; 'envfactory eval compare [--runs 1,2] [--format markdown]' prints runs side by side. Writes results.jsonl and summary.json under --out (default: eval/results/SUITE/AGENT under the project root) and prints a table. --agent {agents} runs a reference agent instead of a model (no server needed). Build suites with 'envfactory eval-suite --domain DOMAIN'.
""".format(agents="|".join(REFERENCE_AGENTS))


def _categories(value: str | None) -> tuple[str, ...]:
    if not value:
        return CATEGORIES
    from ..evaluation.categories import canonical_category

    chosen = tuple(canonical_category(c.strip()) for c in value.split(",") if c.strip())
    unknown = [c for c in chosen if c not in CATEGORIES]
    if unknown:
        fail(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    return chosen


def _simulated_user(seed: int):
    """The user factory for ``--user-sim``: synth's simulator (the eval harness does not import synth)."""
    from ..synth import UserSimulator

    return functools.partial(UserSimulator, seed=seed)  # picklable: a Ray task builds it


def _load_tasks(tasks_file: Path | None, envs: list, n: int, seed: int) -> list:
    if tasks_file is not None:
        from ..spec import load_tasks

        return list(load_tasks(tasks_file))
    from ..synth.tasks import build_tasks

    return list(build_tasks(envs, n=n, seed=seed).tasks)


@app.command("eval-suite")
@handle_errors
def eval_suite(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Domain to build the suite for."),
    all_domains: bool = typer.Option(False, "--all", help="Build a suite for every domain under domains/."),
    tasks_file: Path | None = typer.Option(
        None,
        "--tasks",
        help="Tasks (JSON Lines) to build from; default: build tasks with envfactory.synth.tasks.",
    ),
    n_tasks: int = typer.Option(
        400,
        "--n-tasks",
        help="Tasks to build when --tasks is not given (an API whose every path names one parent, "
        "Sinao's apps, has few one-call tasks among them).",
    ),
    per_category: int = typer.Option(
        20, "--per-category", "-n", help="At most this many entries per category."
    ),
    categories: str | None = typer.Option(
        None, "--categories", help=f"Comma-separated subset of {', '.join(CATEGORIES)}."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed: the same tasks and seed give the same files."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        parser=nonempty_path,
        help="Suites folder (default: eval/suites); writes OUT/<domain>/.",
    ),
) -> None:
    """Write a BFCL-format evaluation suite for a domain (or --all) under eval/suites/<domain>/.

    Prints, per category, the entries and how many a bare call (the right function, no
    arguments) passes: 0 wherever the question states an argument.
    """
    from ..config import project_paths
    from ..runtime import load_environment

    if (domain is None) == (not all_domains):
        fail("give --domain DOMAIN or --all")
    if all_domains and tasks_file is not None:
        fail("--tasks needs one --domain (tasks belong to one domain's environments)")
    chosen = _categories(categories)
    paths = project_paths()
    root = paths.domains_dir.resolve()
    every = [(d, load_environment(d)) for d in env_dirs(None)]
    names = [domain] if domain else sorted({d.resolve().relative_to(root).parts[0] for d, _ in every})
    if domain:
        env_dirs(domain)  # a one-line error naming the known domains
    for name in names:
        envs = [e for d, e in every if d.resolve().relative_to(root).parts[0] == name]
        others = [e for d, e in every if d.resolve().relative_to(root).parts[0] != name]
        _write_one_suite(
            name,
            envs,
            others,
            tasks_file,
            n_tasks,
            per_category,
            chosen,
            seed,
            (out or paths.eval_dir / "suites") / name,
        )


def _write_one_suite(
    domain: str,
    envs: list,
    others: list,
    tasks_file: Path | None,
    n_tasks: int,
    per_category: int,
    chosen: tuple[str, ...],
    seed: int,
    folder: Path,
) -> None:
    from ..evaluation import BareAgent, EvalConfig, build_suite, run_eval, write_suite

    tasks = _load_tasks(tasks_file, envs, n_tasks, seed)
    suite = build_suite(
        tasks,
        envs,
        domain=domain,
        n_per_category=per_category,
        categories=chosen,
        seed=seed,
        other_envs=others,
    )
    folder = write_suite(suite, folder)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    single = [
        c
        for c in suite.counts
        if not c.startswith("multi_turn") and c not in ("irrelevance", "live_relevance")
    ]
    bare = (
        run_eval(suite, BareAgent(), config=EvalConfig(categories=tuple(single), concurrency=1))
        if single
        else None
    )
    passed = {c: sum(r.valid for r in bare.results if r.category == c) for c in single} if bare else {}
    counts = ", ".join(
        f"{c} {n}" + (f" (bare call passes {passed[c]})" if c in passed else "")
        for c, n in suite.counts.items()
    )
    console.print(f"suite {domain}: {counts} -> {folder} ({size / 1024:.0f} KiB)", highlight=False)


def _results_dir(suite_domain: str, agent_name: str) -> Path:
    """``<root>/eval/results/<suite>/<agent>``: under the project root, never the current folder (git ignores it)."""
    from ..config import project_paths

    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", agent_name).strip("._") or "agent"
    return project_paths().eval_dir / "results" / suite_domain / safe


def _preflight(client: OpenAICompatModel, model: str) -> None:
    """Fail before the run when the endpoint cannot answer at all (a dead server is not a 0% score)."""
    with console.status(f"checking {client.base_url} ..."):
        served = client.check_endpoint(timeout=PREFLIGHT_TIMEOUT_S)
    if served is not None and model not in served:
        err_console.print(
            f"[yellow]warning:[/] {client.base_url} serves {', '.join(served) or 'no model'}, "
            f"not {model!r}; requests will likely fail",
            highlight=False,
        )


def _report_model_errors(summary: dict[str, Any]) -> None:
    """Say why requests failed; every request failing is a failed run (exit 1), not a score."""
    failed, total = summary["model_errors"], summary["overall"]["total"]
    if not failed:
        return
    causes = summary.get("model_error_causes", {})
    cause = next(iter(causes), "unknown")
    if failed == total:
        fail(f"every entry failed on a model error ({failed}/{total}); the commonest cause: {cause}", code=1)
    err_console.print(
        f"[yellow]warning:[/] {failed}/{total} entries failed on a model error (scored as wrong); "
        f"commonest cause: {cause}",
        highlight=False,
    )


@app.command("eval", help=_EVAL_HELP)
@handle_errors
def eval_(
    action: str | None = typer.Argument(
        None, help="'compare': print stored runs side by side (see --runs, --format)."
    ),
    suite_name: str | None = typer.Option(
        None, "--suite", "-s", help="Suite: a domain under eval/suites, or a suite folder."
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="Model name as the server serves it."),
    base_url: str = typer.Option(
        "http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible endpoint, with /v1."
    ),
    api_key: str | None = typer.Option(
        None, "--api-key", help="Bearer token (default: $OPENAI_API_KEY, if set)."
    ),
    agent_name: str | None = typer.Option(
        None, "--agent", help=f"Reference agent instead of a model: {', '.join(REFERENCE_AGENTS)}."
    ),
    categories: str | None = typer.Option(
        None, "--categories", help=f"Comma-separated subset of {', '.join(CATEGORIES)}."
    ),
    mode: str = typer.Option(
        "fc", "--mode", help="fc: native function calling; prompt: call strings in text."
    ),
    concurrency: int = typer.Option(8, "--concurrency", help="Entries (and requests) in flight at once."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per request."),
    retries: int = typer.Option(3, "--retries", help="Retries per request on 5xx, 429, timeouts."),
    limit: int | None = typer.Option(None, "--limit", help="At most N entries per category."),
    max_steps: int = typer.Option(
        20, "--max-steps", help="Multi-turn: steps per user turn (bfcl loop: one more force-quits)."
    ),
    loop: str = typer.Option(
        "bfcl",
        "--loop",
        help="Multi-turn loop: bfcl (BFCL's semantics) or lenient (envfactory's earlier loop).",
    ),
    trials: int = typer.Option(1, "--trials", help="Runs per multi-turn entry; the summary gives pass^k."),
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Completion token limit per request."),
    user_sim: bool = typer.Option(
        False, "--user-sim", help="Multi-turn users from the user simulator instead of the sub-goal turns."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for the random and drop-one agents and the simulator."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        parser=nonempty_path,
        show_default=False,
        help="Folder for results.jsonl and summary.json (default: "
        "eval/results/SUITE/AGENT under the project root).",
    ),
    db: Path | None = typer.Option(None, "--db", help="Results database (default: eval/results/results.db)."),
    runs: str | None = typer.Option(
        None, "--runs", help="compare: comma-separated run ids (default: the last 5)."
    ),
    fmt: str = typer.Option("table", "--format", help="compare: table or markdown (a leaderboard)."),
    backend: str = typer.Option(
        "local", "--backend", help="local: entries on threads here; ray: a Ray task per entry (--agent only)."
    ),
    workers: int | None = typer.Option(
        None, "--workers", help="--backend ray: CPUs of the local Ray (default 2)."
    ),
    ray_address: str | None = typer.Option(None, "--ray-address", help="--backend ray: a cluster to join."),
) -> None:
    # the options, by name, to the function that does the work (the command only declares them)
    _eval(**locals())


def _eval(
    *,
    action: str | None,
    suite_name: str | None,
    model: str | None,
    base_url: str,
    api_key: str | None,
    agent_name: str | None,
    categories: str | None,
    mode: str,
    concurrency: int,
    timeout: float,
    retries: int,
    limit: int | None,
    max_steps: int,
    loop: str,
    trials: int,
    temperature: float,
    max_tokens: int | None,
    user_sim: bool,
    seed: int,
    out: Path | None,
    db: Path | None,
    runs: str | None,
    fmt: str,
    backend: str,
    workers: int | None,
    ray_address: str | None,
) -> None:
    from ..config import project_paths

    paths = project_paths()
    db_path = db or paths.eval_dir / "results" / "results.db"
    if action is not None:
        if action != "compare":
            fail(f"unknown action {action!r}; the one action is 'compare'")
        from .eval_compare import print_compare

        print_compare(db_path, runs, suite_name, fmt)
        return
    folder = _suite_folder(suite_name, paths.eval_dir)
    # Every option is checked before anything is created or contacted.
    _check_options(mode, model, agent_name, limit, loop, trials, max_steps)
    if backend not in ("local", "ray"):
        fail(f"--backend must be one of local, ray, got {backend!r}")
    if backend != "local" and agent_name is None:
        fail(
            "--backend ray runs reference agents (--agent); a model's requests already run --concurrency at once"
        )
    chosen = _categories(categories)
    from ..evaluation import EvalConfig, load_suite

    suite = load_suite(folder)
    out = out or _results_dir(suite.domain, agent_name or str(model))
    try:  # before the run, so an unusable --out does not throw the results away
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        fail(f"--out {out}: cannot create the results folder: {e.strerror or e}")
    if agent_name is not None:
        from ..evaluation import build_reference_agent

        agent, client = build_reference_agent(agent_name, seed=seed), None
    else:
        assert model is not None
        agent, client = _model_agent(
            model, base_url, api_key, timeout, retries, concurrency, temperature, max_tokens
        )
    config = EvalConfig(
        categories=chosen,
        mode=cast(Literal["fc", "prompt"], mode),  # checked by _check_options
        concurrency=concurrency,
        limit=limit,
        max_steps_per_turn=max_steps,
        user="simulator" if user_sim else "subgoals",
        seed=seed,
        loop=cast(Literal["bfcl", "lenient"], loop),  # checked by _check_options
        trials=trials,
    )
    fan = _fan_out(backend, workers, ray_address, agent_name, seed)
    try:
        run_id, report = _run_and_store(
            suite, folder, agent, client, config, db_path, paths.domains_dir, base_url, user_sim, seed, fan
        )
    finally:
        if fan is not None:
            fan[0].close()
    from ..evaluation import summarize, summary_table, write_report

    files = write_report(report, out)
    summary = summarize(report)
    console.print(summary_table(summary))
    console.print(f"results: {files['results']}\nsummary: {files['summary']}\nrun #{run_id} in {db_path}")
    _report_model_errors(summary)


def _fan_out(backend: str, workers: int | None, address: str | None, agent_name: str | None, seed: int):
    """(the backend, the agent factory its tasks call) for --backend ray; None for the local threads."""
    if backend == "local" and not address:
        return None
    from ..evaluation import build_reference_agent
    from ..pipelines.backend import make_backend

    made = make_backend(backend, workers=workers, address=address)
    if made.name == "local":
        return None
    assert agent_name is not None  # checked: --backend ray needs --agent
    return made, functools.partial(build_reference_agent, agent_name, seed=seed)


def _suite_folder(suite_name: str | None, eval_dir: Path) -> Path:
    """--suite as a folder holding manifest.json: a path, or a domain under eval/suites."""
    if suite_name is None:
        fail("--suite is required (a domain under eval/suites, or a suite folder)")
    assert suite_name is not None
    folder = Path(suite_name)
    if not (folder / "manifest.json").is_file():
        folder = eval_dir / "suites" / suite_name
    if not (folder / "manifest.json").is_file():
        fail(
            f"suite {suite_name!r} not found (looked for {folder}/manifest.json); "
            f"build it with 'envfactory eval-suite --domain {suite_name}'"
        )
    return folder


def _model_agent(
    model: str,
    base_url: str,
    api_key: str | None,
    timeout: float,
    retries: int,
    concurrency: int,
    temperature: float,
    max_tokens: int | None,
) -> tuple[Any, OpenAICompatModel]:
    """(the agent, its client) for a model behind an OpenAI-compatible endpoint."""
    from ..evaluation import ModelAgent
    from ..llm import OpenAICompatModel

    client = OpenAICompatModel(
        base_url,
        model,
        api_key=api_key or os.environ.get("OPENAI_API_KEY"),
        timeout=timeout,
        max_retries=retries,
        concurrency=concurrency,
    )
    return ModelAgent(client, temperature=temperature, max_tokens=max_tokens), client


def _run_and_store(
    suite,
    folder: Path,
    agent,
    client: OpenAICompatModel | None,
    config,
    db_path: Path,
    domains_root: Path,
    base_url: str,
    user_sim: bool,
    seed: int,
    fan=None,
):
    """Run the suite, entry by entry into the results database; (run id, report)."""
    from ..evaluation import ResultsStore, suite_digest

    store = ResultsStore(db_path)
    try:
        if client is not None:
            _preflight(client, client.model)
        run_id = store.start_run(
            agent=agent.name,
            suite=suite.domain,
            suite_digest=suite_digest(folder),
            config=config,
            endpoint=base_url if client is not None else "",
        )
        report = _run(
            suite,
            agent,
            config,
            domains_root,
            _simulated_user(seed) if user_sim else None,
            lambda result: store.add_result(run_id, result),
            fan,
        )
        store.finish_run(run_id, report.wall_s)
    finally:
        store.close()
        if client is not None:
            client.close()
    return run_id, report


def _check_options(
    mode: str,
    model: str | None,
    agent_name: str | None,
    limit: int | None,
    loop: str,
    trials: int,
    max_steps: int,
) -> None:
    if mode not in ("fc", "prompt"):
        fail(f"--mode must be fc or prompt, got {mode!r}")
    if (model is None) == (agent_name is None):
        fail("give exactly one of --model (with --base-url) or --agent")
    if limit is not None and limit < 0:
        fail(f"--limit must be >= 0, got {limit}")
    if loop not in ("bfcl", "lenient"):
        fail(f"--loop must be bfcl or lenient, got {loop!r}")
    if trials < 1 or max_steps < 1:
        fail("--trials and --max-steps must be >= 1")
    if agent_name is not None and agent_name not in REFERENCE_AGENTS:
        fail(f"unknown agent {agent_name!r}; known: {', '.join(REFERENCE_AGENTS)}")


def _run(suite, agent, config, domains_root: Path, user_factory, on_result, fan=None):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..evaluation import run_eval

    with Progress(
        TextColumn(f"[bold]{agent.name}[/] on {suite.domain}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("eval", total=None)

        def tick(done: int, total: int) -> None:
            progress.update(bar, completed=done, total=total)

        return run_eval(
            suite,
            agent,
            config=config,
            domains_root=domains_root,
            on_progress=tick,
            user_factory=user_factory,
            on_result=on_result,
            backend=fan[0] if fan else None,
            agent_factory=fan[1] if fan else None,
        )
