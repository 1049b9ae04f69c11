"""build, ingest: documentation in, verified environments out (``domains/<domain>/<env>/``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import ConfigError
from ._app import app, console, handle_errors

if TYPE_CHECKING:  # the build machinery loads inside the commands (start-up time: see _app)
    from rich.progress import Progress

    from ..pipelines import BuildReport


class _Bar:
    """One rich progress display over documents, then environments, for one or many domains."""

    def __init__(self, progress: Progress):
        self.p = progress
        self.task = progress.add_task("reading", total=None)
        self.prefix = ""

    def __call__(self, event: str, detail: Any) -> None:
        if event == "documents":
            self.p.reset(
                self.task, total=max(1, int(detail)), description=f"{self.prefix}exploring documents"
            )
        elif event == "document":
            self.p.update(self.task, advance=1, description=f"{self.prefix}explored {detail}")
        elif event == "envs":
            self.p.reset(
                self.task, total=max(1, int(detail)), description=f"{self.prefix}verifying environments"
            )
        elif event == "env":
            self.p.update(self.task, advance=1, description=f"{self.prefix}verified {detail}")


def _print(reports: list[BuildReport]) -> None:
    from rich.table import Table

    table = Table(title="Built environments")
    longest = max((len(e.name) for r in reports for e in r.envs), default=11)
    for col in ("domain", "environment", "tools", "entities", "rows", "warnings", "check"):
        if col in ("tools", "entities", "rows", "warnings"):
            table.add_column(col, justify="right", no_wrap=True)
        elif col == "environment":  # names are what a reader copies from this table: fold, never cut off
            table.add_column(col, overflow="fold", min_width=min(longest, 40))
        else:
            table.add_column(col, overflow="fold", min_width=len(col))
    for r in reports:
        for e in r.envs:
            table.add_row(
                r.domain, e.name, str(e.tools), str(e.entities), f"{e.rows:,}", str(len(e.warnings)), e.check
            )
    console.print(table)
    for r in reports:
        for d in r.failed_documents:
            console.print(f"[yellow]failed[/] {d.error}", highlight=False)
        for line in r.dropped_envs:
            console.print(f"[yellow]dropped[/] {line}", highlight=False)
        for line in r.warnings:
            console.print(f"[yellow]warning[/] {line}", highlight=False)
    if len(reports) > 1:
        for r in reports:
            console.print(
                f"{r.domain}: {len(r.envs)} environments, {r.tools} tools, {r.rows:,} rows in {r.seconds:.1f}s",
                highlight=False,
            )
    envs = sum(len(r.envs) for r in reports)
    docs = sum(len(r.documents) for r in reports)
    failed = sum(len(r.failed_documents) for r in reports)
    secs = sum(r.seconds for r in reports)
    console.print(
        f"total: {envs} environments, {sum(r.tools for r in reports)} tools, {sum(r.rows for r in reports):,} rows "
        f"from {docs - failed}/{docs} documents ({failed} failed) in {secs:.1f}s"
    )


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.1f}%)" if b else "0/0"


def _print_fidelity(reports: list[BuildReport]) -> None:
    """Fidelity to the documents: one row per document, then the totals and why operations were dropped."""
    from rich.table import Table

    from ..explore import DocFidelity, drop_reasons

    docs = [d for r in reports for d in r.fidelity.documents]
    if not docs:
        return
    table = Table(title="Fidelity to the documents")
    for col in (
        "document",
        "operations",
        "tools made",
        "verified",
        "body kept",
        "required agree",
        "enums kept",
        "enums invented",
    ):
        table.add_column(col, justify="left" if col == "document" else "right", overflow="fold")
    total = DocFidelity(source="total")
    for d in docs:
        total.add(d)
    for d in [*docs, total]:
        table.add_row(
            Path(d.source).name,
            str(d.operations),
            str(d.tools_made),
            _pct(d.verified, d.operations),
            _pct(d.body_kept, d.body_documented),
            _pct(d.required_agree, d.required_checked),
            _pct(d.enums_kept, d.enums_documented),
            str(d.enums_invented),
            end_section=d is docs[-1],
        )
    console.print(table)
    built = sum(1 for r in reports for x in r.documents if x.ok)
    console.print(
        f"fidelity: {built}/{sum(len(r.documents) for r in reports)} documents built; "
        f"{_pct(total.verified, total.operations)} documented operations are verified tools; "
        f"body properties kept {_pct(total.body_kept, total.body_documented)}; required flags agree "
        f"{_pct(total.required_agree, total.required_checked)}; enums kept "
        f"{_pct(total.enums_kept, total.enums_documented)}, {total.enums_invented} invented",
        highlight=False,
    )
    for reason, n in list(drop_reasons(docs).items())[:12]:
        console.print(f"  dropped {n:>5}  {reason}", highlight=False)


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _agent(explorer: str, model: str | None, base_url: str | None, seed: int):
    if explorer == "rules":
        return None
    if explorer != "agent":
        raise ConfigError(f"--explorer must be 'rules' or 'agent', got {explorer!r}")
    if not model or not base_url:
        raise ConfigError(
            "--explorer agent needs --model NAME and --base-url URL (an OpenAI-compatible endpoint)"
        )
    from ..llm import ModelConfig, build_chat_model
    from ..pipelines import ExplorerAgentConfig, run_explorer_agent

    chat = build_chat_model(ModelConfig(model=model, base_url=base_url))

    def improve(docs, draft):
        # verify=False: the build verifies (and repairs) every environment right after.
        res = run_explorer_agent(
            docs,
            domain=draft[0].domain if draft else "custom",
            model=chat,
            config=ExplorerAgentConfig(verify=False, seed=seed),
            draft=draft,
        )
        fell = sum(1 for o in res.outcomes if getattr(o, "fell_back", False))
        console.print(
            f"explorer agent: {len(res.envs)} environments, {fell} fell back to the rules' draft; "
            f"cost {res.cost}"
        )
        return res.envs

    return improve


def _folder(value: str | None, flag: str) -> Path | None:
    """A folder option as a Path; an empty one would mean the current folder, so it is refused."""
    if value is None:
        return None
    if not value.strip():
        raise ConfigError(f"{flag} is empty: give a folder (use '.' for the current one)")
    return Path(value)


@app.command()
@handle_errors
def build(
    domain: str | None = typer.Option(
        None, "--domain", "-d", help="Build resources/<DOMAIN>/ into domains/<DOMAIN>/."
    ),
    all_: bool = typer.Option(False, "--all", help="Build every folder under resources/."),
    source: str | None = typer.Option(
        None, "--source", "-s", help="Build any documentation: a file, a folder or an http(s) URL."
    ),
    out_arg: str | None = typer.Option(
        None, "--out", "-o", help="With --source: folder for the environments (default domains/<name>)."
    ),
    name: str = typer.Option("custom", "--name", help="With --source: the domain name the environments get."),
    verify: bool = typer.Option(
        True, "--verify/--no-verify", help="Verify tools and ship only the ones that pass."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for seed data and every random choice."),
    row_scale: float = typer.Option(
        1.0,
        "--row-scale",
        min=0.01,
        help="Scale the seed rows of every entity (0.1: a tenth; a quick corpus build).",
    ),
    max_envs: int | None = typer.Option(
        None,
        "--max-envs",
        help="Keep at most this many environments per document (per domain graph when documents are merged).",
    ),
    resources_arg: str | None = typer.Option(
        None, "--resources", help="Documentation root (default ./resources)."
    ),
    domains_arg: str | None = typer.Option(None, "--domains", help="Output root (default ./domains)."),
    explorer: str = typer.Option(
        "rules",
        "--explorer",
        help="rules: the deterministic explorer (no model). agent: the LLM explorer agent, "
        "which improves the rules' draft (needs --model and --base-url).",
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="With --explorer agent: the model name."),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="With --explorer agent: an OpenAI-compatible endpoint, e.g. "
        "http://127.0.0.1:8000/v1 (vllm serve).",
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        "-j",
        min=1,
        help="With --source FOLDER --out FOLDER: a corpus build, each document on "
        "its own in N worker processes, resumable (corpus.json).",
    ),
    doc_cpu: float | None = typer.Option(
        600.0,
        "--doc-cpu",
        help="With --workers: CPU seconds per document (its own process's; the machine's other load "
        "does not move it, so a rerun or another backend fails the same documents).",
    ),
    doc_timeout: float | None = typer.Option(
        None,
        "--doc-timeout",
        help="With --workers: wall-clock seconds per document, a backstop for a worker that waits "
        "(default: 10 times --doc-cpu).",
    ),
    doc_memory: int | None = typer.Option(4096, "--doc-memory", help="With --workers: MiB per document."),
    backend: str = typer.Option(
        "local",
        "--backend",
        help="Corpus build on local worker processes or ray (a Ray task per document; envfactory[ray]).",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="--backend ray: a cluster to join (default: a local Ray on 127.0.0.1)."
    ),
    sample: int | None = typer.Option(
        None,
        "--sample",
        min=1,
        help="With --source FOLDER --out FOLDER: a corpus build of a seeded random sample of N "
        "documents (seed: --seed; the samples of one seed are nested).",
    ),
) -> None:
    """Turn API documentation into verified tool environments.

    Each document is read (OpenAPI/Swagger, Markdown, HTML), explored into environments (entities, tools, seed recipe), verified, and written atomically as domains/<domain>/<env>/env.yaml with its seeded template.db.

    Only the environment folders a build generated are replaced (they are listed in build.json); hand-written ones are kept. A document that fails is reported and skipped; the exit code is non-zero only for bad options.
    """  # noqa: E501
    # the options, by name, to the function that does the work (the command only declares them)
    _build(**locals())


def _build(
    *,
    domain: str | None,
    all_: bool,
    source: str | None,
    out_arg: str | None,
    name: str,
    verify: bool,
    seed: int,
    row_scale: float,
    max_envs: int | None,
    resources_arg: str | None,
    domains_arg: str | None,
    explorer: str,
    model: str | None,
    base_url: str | None,
    workers: int | None,
    doc_cpu: float | None,
    doc_timeout: float | None,
    doc_memory: int | None,
    backend: str,
    ray_address: str | None,
    sample: int | None,
) -> None:
    out, resources, domains = (
        _folder(v, f)
        for v, f in ((out_arg, "--out"), (resources_arg, "--resources"), (domains_arg, "--domains"))
    )
    chosen = sum(bool(x) for x in (domain, all_, source))
    if chosen != 1:
        raise ConfigError("give exactly one of --domain, --all or --source")
    if out is not None and not source:  # --out names one source's folder; bundled domains go under a root
        raise ConfigError("--out goes with --source; to build bundled domains elsewhere use --domains DIR")
    agent = _agent(explorer, model, base_url, seed)
    if workers is not None or backend != "local" or ray_address or sample is not None:
        from .corpus_view import run_corpus

        return run_corpus(
            source,
            out,
            workers=workers,
            backend=(backend, ray_address),
            timeout=doc_timeout if doc_timeout is not None or doc_cpu is None else 10 * doc_cpu,
            cpu=doc_cpu,
            memory=doc_memory,
            seed=seed,
            verify=verify,
            row_scale=row_scale,
            max_envs=max_envs,
            name=name,
            agent=agent,
            view=(_progress, _Bar),
            sample=sample,
        )
    options = dict(seed=seed, verify=verify, max_envs_per_doc=max_envs, agent=agent, row_scale=row_scale)
    if source:
        reports = _build_source(source, out, domains, name, options)
    else:
        reports = _build_domains(domain, all_, resources, domains, options)
    _print(reports)
    _print_fidelity(reports)
    if not any(r.envs for r in reports):
        # every document failed: nothing was written, and a script should know
        raise typer.Exit(1)


def _build_source(
    source: str, out: Path | None, domains: Path | None, name: str, options: dict[str, Any]
) -> list[BuildReport]:
    """``--source``: one file, folder or URL into ``--out`` (default ``domains/<name>``)."""
    from ..config import project_paths
    from ..pipelines import build_source

    out_dir = out or (domains or project_paths().domains_dir) / name
    with _progress() as p:
        return [build_source(source, out_dir=out_dir, domain=name, progress=_Bar(p), **options)]


def _build_domains(
    domain: str | None, all_: bool, resources: Path | None, domains: Path | None, options: dict[str, Any]
) -> list[BuildReport]:
    """``--domain`` / ``--all``: resources/<domain>/ into domains/<domain>/, one domain after another."""
    from ..config import project_paths
    from ..pipelines import build_domain

    paths = project_paths()
    res_root = resources or paths.resources_dir
    dom_root = domains or paths.domains_dir
    if all_:
        if not res_root.is_dir():
            raise ConfigError(f"no documentation folder {res_root}")
        names = sorted(d.name for d in res_root.iterdir() if d.is_dir() and not d.name.startswith("."))
    else:
        names = [domain]  # type: ignore[list-item]
    reports: list[BuildReport] = []
    with _progress() as p:
        bar = _Bar(p)
        for n in names:
            bar.prefix = f"{n}: " if len(names) > 1 else ""
            reports.append(
                build_domain(n, resources_root=res_root, domains_root=dom_root, progress=bar, **options)
            )
    return reports


@app.command()
@handle_errors
def ingest(
    source: str = typer.Argument(
        ..., help="An http(s) URL to crawl, a folder or a file of API documentation."
    ),
    domain: str = typer.Option(..., "--domain", "-d", help="Store it under resources/<DOMAIN>/."),
    resources_arg: str | None = typer.Option(
        None, "--resources", help="Documentation root (default ./resources)."
    ),
    max_depth: int = typer.Option(
        3, "--max-depth", min=0, help="URL: follow links at most this many hops away."
    ),
    max_pages: int = typer.Option(
        200, "--max-pages", min=1, help="URL: HTTP requests at most (redirects and failures count)."
    ),
    max_bytes: int = typer.Option(
        50_000_000,
        "--max-bytes",
        min=1,
        help="URL: decoded bytes in all (compressed bodies count as decoded).",
    ),
    timeout: float = typer.Option(10.0, "--timeout", min=0.001, help="URL: seconds per request."),
    deadline: float = typer.Option(300.0, "--deadline", min=0.001, help="URL: seconds for the whole crawl."),
) -> None:
    """Bring API documentation into resources/<domain>/ (crawl a site, copy a folder or a file).

    Then run 'envfactory build --domain DOMAIN' to turn it into environments.
    """
    from ..config import project_paths
    from ..ingest import ingest as run_ingest

    resources = _folder(resources_arg, "--resources")
    limits = {
        "max_depth": max_depth,
        "max_pages": max_pages,
        "max_bytes": max_bytes,
        "timeout": timeout,
        "deadline": deadline,
    }
    crawl_options = limits if source.startswith(("http://", "https://")) else {}
    dest = run_ingest(source, domain, resources or project_paths().resources_dir, **crawl_options)
    files = [f for f in Path(dest).rglob("*") if f.is_file()]
    console.print(f"ingested {len(files)} files into {dest}; next: envfactory build --domain {domain}")
