"""Build environments from documentation: ingest -> explore -> verify -> ``domains/<domain>/``.

A build is atomic: every environment is explored, verified and materialized in a temporary
dot-folder next to its destination, then the environment folders are swapped in
(``pipelines.swap``: a build killed at any point is recovered by the next build of its
target). A failing build leaves ``domains/`` as it was. A build replaces only the folders it
generated (listed in ``build.json``) and never touches others, such as a hand-written
``trip_desk``. A document that cannot be read or explored, or an environment that fails
verification with an EnvFactoryError, is a failed item: it is recorded and counted, and the
build goes on. Any other exception is a bug and stops the build.

The documents of one domain (or one source folder) are explored together as one resource
graph, so an environment can span documents (an order of ``orders.yaml`` references the
traveler of ``trips.yaml``). Paths recorded in specs and ``build.json`` are relative to the
project root (``resources/travel/orders.yaml``), never absolute machine paths. ``build.json``
holds no timings, so the same documents give the same bytes; they go to ``.build-times.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..audit import audit_environment
from ..config import project_paths
from ..errors import ConfigError, EnvFactoryError, ExploreError, IngestError
from ..explore import ExcludedOp, build_fidelity, explore
from ..graph import build_tool_graph, save_tool_graph
from ..ingest import ApiDoc, document_files, load_apidoc, load_apidocs
from ..runtime import Environment
from ..spec import EnvSpec, save_spec
from ..verify import VerificationReport, verify_and_repair
from .build_report import BUILD_FILE, TIMES_FILE, BuildReport, DocReport, EnvReport
from .swap import build_lock, new_build_dir, recover_interrupted, swap_in, write_atomic

# An explorer agent: (documents, deterministic draft) -> improved environment specs.
Agent = Callable[[list[ApiDoc], list[EnvSpec]], list[EnvSpec]]

__all__ = ["build_domain", "build_source", "Agent", "Progress"]

# progress(event, detail): event is "documents" (detail = total count), "document" (source
# name, after it is explored), "envs" (total to verify), "env" (an env name, after verifying).
Progress = Callable[[str, Any], None]


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _relative(path: str | os.PathLike, base: Path) -> str:
    """``path`` relative to the project root when it lies under it, else relative to ``base``
    (a folder above the documents); never an absolute machine path."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    p = p.resolve()
    for b in (project_paths().root, base):
        try:
            return p.relative_to(Path(b).resolve()).as_posix()
        except ValueError:
            continue
    return p.name


def _relabel(docs: list[ApiDoc], errors: list[IngestError], base: Path, report: BuildReport) -> list[ApiDoc]:
    """Give every document (and failed one) a project-relative source."""
    for e in errors:
        head, sep, tail = str(e).partition(": ")
        src = _relative(head, base) if sep and Path(head).is_absolute() else head
        report.documents.append(DocReport(src, False, error=f"{src}{sep}{tail}"))
    return [d.model_copy(update={"source": _relative(d.source, base)}) for d in docs]


def _previous(target: Path) -> list[str]:
    f = target / BUILD_FILE
    if not f.is_file():
        return []
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
        return [
            str(n)
            for n in data.get("envs", [])
            if isinstance(n, str) and n and "/" not in n and not n.startswith(".")
        ]
    except (OSError, ValueError, AttributeError):
        return []


# ---- verification ------------------------------------------------------------------------------


def _verify(
    spec: EnvSpec, env_dir: Path, *, seed: int, verify: bool
) -> tuple[EnvSpec | None, str, list[str], VerificationReport | None]:
    """Verify and repair one spec; returns the spec with only passing tools (None: no tool
    passed), how it was checked, the dropped tools and the report (writes verification.json
    and the cassette into ``env_dir``). An EnvFactoryError means this environment failed."""
    if not verify:
        return spec, "none", [], None
    fixed, report = verify_and_repair(spec, out_dir=env_dir, seed=seed)
    if fixed is None:
        return None, "verify_and_repair", [t.name for t in spec.tools], report
    return (
        fixed,
        "verify_and_repair",
        sorted({t.name for t in spec.tools} - {t.name for t in fixed.tools}),
        report,
    )


# ---- the build -----------------------------------------------------------------------------------


@dataclass
class _Explored:
    """What exploring produced, kept for the fidelity report."""

    docs: list[ApiDoc] = field(default_factory=list)
    excluded: list[ExcludedOp] = field(default_factory=list)
    made: list[EnvSpec] = field(default_factory=list)
    origins: dict[tuple[str, str], str] = field(default_factory=dict)
    verify_dropped: dict[tuple[str, str], str] = field(default_factory=dict)
    env_dropped: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)  # build's unique name -> the explorer's
    shipped: list[EnvSpec] = field(default_factory=list)  # verified specs, under the explorer's names


def _explore_docs(
    docs: list[ApiDoc],
    domain: str,
    seed: int,
    report: BuildReport,
    progress: Progress | None,
    max_envs: int | None,
    row_scale: float,
    agent: Agent | None = None,
    explored: _Explored | None = None,
) -> list[tuple[EnvSpec, list[str], list[str]]]:
    """Explore the documents together (one resource graph); per-document reports from the result."""
    specs: list[tuple[EnvSpec, list[str], list[str]]] = []
    if not docs:
        return specs
    if explored is not None:
        explored.docs += docs
    t0 = time.perf_counter()
    try:
        res = explore(docs, domain=domain, seed=seed, max_envs=max_envs, row_scale=row_scale)
        if agent is not None:
            # The LLM explorer agent starts from the deterministic draft and improves it; it
            # falls back to the draft (and says why) when the model's spec is worse.
            res.envs = agent(docs, res.envs)
    except ExploreError as e:
        share = (time.perf_counter() - t0) / len(docs)
        for d in docs:
            err = str(e) if len(docs) == 1 else f"{d.source}: no environment could be derived ({e})"
            report.documents.append(DocReport(d.source, False, error=err, seconds=round(share, 3)))
            if progress:
                progress("document", Path(d.source).name)
        if explored is not None:
            explored.excluded += [
                ExcludedOp(d.source, op.key, "no environment could be derived from the document")
                for d in docs
                for op in d.operations
            ]
        return specs
    if explored is not None:
        explored.excluded += res.excluded
        explored.made += res.envs
        explored.origins.update(res.origins)
    share = (time.perf_counter() - t0) / len(docs)
    for d in docs:
        envs = [s.name for s in res.envs if d.source in s.sources]
        mine = [x for x in res.excluded if x.source == d.source]
        n_warns = sum(1 for w in res.warnings if w.startswith(f"{d.source}: "))
        doc_err: str | None = None
        if not envs:
            why = Counter(x.reason for x in mine).most_common(2)
            detail = "; ".join(f"{n}x {r}" for r, n in why) or "it documents no operations"
            doc_err = f"{d.source}: no environment could be derived ({detail})"
        report.documents.append(
            DocReport(
                d.source,
                bool(envs),
                envs,
                error=doc_err,
                excluded=len(mine),
                warnings=n_warns,
                seconds=round(share, 3),
            )
        )
        if progress:
            progress("document", Path(d.source).name)
    many = len(docs) > 1
    for s in res.envs:
        ents = {e.name for e in s.entities}
        warns = [
            w
            for w in res.warnings
            if not many or w.split(":", 1)[0] in s.sources or w.split(".", 1)[0].split(":", 1)[0] in ents
        ]
        excl = [
            f"{Path(x.source).name}: {x}" if many else str(x)
            for x in res.excluded
            if x.operation and x.source in s.sources
        ]
        specs.append((s, warns[:50], excl[:200]))
    return specs


def _unique_name(spec: EnvSpec, taken: set[str]) -> EnvSpec:
    name, i = spec.name, 2
    while name in taken:  # never overwrite a folder this build does not own
        name, i = f"{spec.name}_{i}", i + 1
    return spec if name == spec.name else spec.model_copy(update={"name": name})


def _make_env(
    spec: EnvSpec,
    env_dir: Path,
    warns: list[str],
    excl: list[str],
    *,
    seed: int,
    verify: bool,
    report: BuildReport,
    explored: _Explored | None = None,
) -> EnvReport | None:
    """Verify one environment and write it into ``env_dir``; None (recorded in ``report``)
    when it cannot ship. Only an EnvFactoryError is a failed environment: anything else is
    our bug and stops the build."""
    t0 = time.perf_counter()
    env_dir.mkdir()
    try:
        checked, how, dropped, vreport = _verify(spec, env_dir, seed=seed, verify=verify)
        if explored is not None and vreport is not None:
            orig = explored.renamed.get(spec.name, spec.name)
            explored.verify_dropped.update({(orig, x["tool"]): x["reason"] for x in vreport.excluded})
        if checked is None:
            report.dropped_envs.append(f"{spec.name}: no tool passed the checks ({how})")
            shutil.rmtree(env_dir)
            return None
        save_spec(checked, env_dir)
        # the tool-dependency graph the samplers plan over, saved beside the spec
        save_tool_graph(build_tool_graph(checked), env_dir)
        env = Environment.from_spec(checked, cache_path=env_dir / "template.db")
        rows = sum(env.row_counts().values())
        seed_audit = audit_environment(env, seed=seed).figures()  # envfactory audit's figures, in build.json
    except EnvFactoryError as e:
        report.dropped_envs.append(f"{spec.name}: {' '.join(str(e).split())[:300]}")
        if explored is not None:
            explored.env_dropped[explored.renamed.get(spec.name, spec.name)] = " ".join(str(e).split())[:300]
        shutil.rmtree(env_dir, ignore_errors=True)
        return None
    if explored is not None:
        explored.shipped.append(
            checked.model_copy(update={"name": explored.renamed.get(spec.name, spec.name)})
        )
    return EnvReport(
        name=checked.name,
        source=checked.sources[0] if checked.sources else "",
        tools=len(checked.tools),
        entities=len(checked.entities),
        rows=rows,
        check=how,
        dropped_tools=dropped,
        warnings=warns,
        excluded=excl,
        seconds=time.perf_counter() - t0,
        sources=list(checked.sources),
        verify_seconds=vreport.seconds if vreport is not None else 0.0,
        seed_audit=seed_audit,
    )


def _build(
    docs: list[ApiDoc],
    *,
    domain: str,
    target: Path,
    seed: int,
    verify: bool,
    progress: Progress | None,
    report: BuildReport,
    agent: Agent | None = None,
    max_envs_per_doc: int | None = None,
    row_scale: float = 1.0,
    groups: list[tuple[str, list[ApiDoc]]] | None = None,
) -> BuildReport:
    """``groups``: (domain, documents) explored as separate resource graphs (default: all of
    ``docs`` as one graph of ``domain``)."""
    t_start = time.perf_counter()
    report.sources = dict(sorted(report.sources.items()))
    explored = _Explored()
    specs = []
    for gdomain, gdocs in groups if groups is not None else [(domain, docs)]:
        specs += _explore_docs(
            gdocs, gdomain, seed, report, progress, max_envs_per_doc, row_scale, agent, explored
        )
    if progress:
        progress("envs", len(specs))
    with build_lock(target):
        recover_interrupted(target)  # what a killed build of this target left
        previous = set(_previous(target))
        taken = {p.name for p in target.iterdir() if p.is_dir()} - previous if target.is_dir() else set()
        tmp = new_build_dir(target)
        try:
            for spec, warns, excl in specs:
                orig = spec.name
                spec = _unique_name(spec, taken)
                explored.renamed[spec.name] = orig
                env_report = _make_env(
                    spec,
                    tmp / spec.name,
                    list(warns),
                    excl,
                    seed=seed,
                    verify=verify,
                    report=report,
                    explored=explored,
                )
                if progress:
                    progress("env", spec.name)
                if env_report is not None:
                    taken.add(spec.name)
                    report.envs.append(env_report)
            report.fidelity = build_fidelity(
                explored.docs,
                explored.excluded,
                explored.made,
                explored.shipped,
                explored.verify_dropped,
                explored.env_dropped,
                explored.origins,
            )
            report.seconds = time.perf_counter() - t_start
            if report.envs:
                build_json = json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"
                swap_in(tmp, target, [e.name for e in report.envs], previous, build_json)
                _write_timings(target, report)
            return report
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _write_timings(target: Path, report: BuildReport) -> None:
    """The build's seconds, beside build.json in an ignored file (never in committed artifacts)."""
    try:
        write_atomic(target / TIMES_FILE, json.dumps(report.timings(), indent=2) + "\n")
    except OSError:
        pass  # timings are for people; a read-only corner of the disk must not fail a finished build


def _check_domain_name(domain: str) -> None:
    # the domain names a folder under domains/: "../resources" must not reach outside it
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", domain):
        raise ConfigError(f"{domain!r}: invalid domain name (letters, digits, '_', '-', '.')")


def build_domain(
    domain: str,
    *,
    resources_root: str | os.PathLike,
    domains_root: str | os.PathLike,
    seed: int = 0,
    verify: bool = True,
    progress: Progress | None = None,
    max_envs_per_doc: int | None = None,
    row_scale: float = 1.0,
    agent: Agent | None = None,
) -> BuildReport:
    """Build every document of ``resources_root/<domain>/`` into ``domains_root/<domain>/<env>/``.

    Each entry of the domain folder is one API, explored as its own resource graph: a document, or
    a sub-folder (pages of one site, or several documents of one API, whose keys may cross files).
    Two APIs side by side (Barbican and PowerDNS, Adyen and Sinao) never share a table because two of
    their schemas happen to have one name. Raises ConfigError when the domain folder does not exist;
    a document that fails is recorded in the report (``failed_documents``), not raised.
    """
    _check_domain_name(domain)
    folder = Path(resources_root) / domain
    if not folder.is_dir():
        known = (
            ", ".join(sorted(p.name for p in Path(resources_root).iterdir() if p.is_dir()))
            if Path(resources_root).is_dir()
            else "none"
        )
        raise ConfigError(f"no documentation folder {folder} (known domains: {known or 'none'})")
    target = Path(domains_root) / domain
    report = BuildReport(domain=domain, out_dir=str(target))
    files = document_files(folder)
    base = Path(resources_root).resolve().parent
    report.sources = {_relative(p, base): _sha256(p) for p in files}
    errors: list[IngestError] = []
    try:
        docs = load_apidocs(folder, errors=errors)
    except IngestError as e:
        docs = []
        if not errors:
            errors.append(e)
    docs = _relabel(docs, errors, base, report)
    if progress:
        progress("documents", len(docs))
    return _build(
        docs,
        domain=domain,
        target=target,
        seed=seed,
        verify=verify,
        progress=progress,
        report=report,
        max_envs_per_doc=max_envs_per_doc,
        row_scale=row_scale,
        agent=agent,
        groups=_entry_groups(docs, domain),
    )


def _entry_groups(docs: list[ApiDoc], domain: str) -> list[tuple[str, list[ApiDoc]]]:
    """The documents of a domain by the entry of the domain folder they come from (sources are
    ``resources/<domain>/<entry>[/...]``), in order."""
    by: dict[str, list[ApiDoc]] = {}
    for d in docs:
        parts = Path(d.source).parts
        by.setdefault(parts[2] if len(parts) > 2 else d.source, []).append(d)
    return [(domain, group) for _, group in sorted(by.items())]


def _folder_groups(docs: list[ApiDoc], domain: str) -> list[tuple[str, list[ApiDoc]]] | None:
    """A folder of folders (a corpus of domains): each folder's documents are one resource
    graph, named after the folder; documents in different folders never merge."""
    by: dict[str, list[ApiDoc]] = {}
    for d in docs:
        by.setdefault(Path(d.source).parent.as_posix(), []).append(d)
    if len(by) < 2:
        return None
    out = []
    for folder, group in sorted(by.items()):
        name = Path(folder).name
        out.append((name if re.fullmatch(r"[A-Za-z0-9][\w.-]*", name) else domain, group))
    return out


def build_source(
    path_or_url: str | os.PathLike,
    *,
    out_dir: str | os.PathLike,
    domain: str = "custom",
    seed: int = 0,
    verify: bool = True,
    progress: Progress | None = None,
    max_envs_per_doc: int | None = None,
    row_scale: float = 1.0,
    agent: Agent | None = None,
) -> BuildReport:
    """Build any documentation (a file, a folder, or an http(s) URL, crawled) into ``out_dir/<env>/``."""
    _check_domain_name(domain)
    src = str(path_or_url)
    report = BuildReport(domain=domain, out_dir=str(out_dir))
    scratch: Path | None = None
    try:
        if src.startswith(("http://", "https://")):
            from .ingest import ingest

            scratch = Path(tempfile.mkdtemp(prefix="envfactory-src-"))
            folder = ingest(src, "source", scratch)
            path = Path(folder)
        else:
            path = Path(src)
            if not path.exists():
                raise IngestError(f"{path}: no such file or folder")
        errors: list[IngestError] = []
        base = scratch if scratch is not None else path.resolve().parent
        if path.is_dir():
            report.sources = {_relative(p, base): _sha256(p) for p in document_files(path)}
            try:
                docs = load_apidocs(path, errors=errors)
            except IngestError as e:
                docs = []
                if not errors:
                    errors.append(e)
        else:
            report.sources = {_relative(path, base): _sha256(path)}
            try:
                docs = [load_apidoc(path)]
            except IngestError as e:
                docs, errors = [], [e]
        docs = _relabel(docs, errors, base, report)
        if progress:
            progress("documents", len(docs))
        return _build(
            docs,
            domain=domain,
            target=Path(out_dir),
            seed=seed,
            verify=verify,
            progress=progress,
            report=report,
            max_envs_per_doc=max_envs_per_doc,
            row_scale=row_scale,
            agent=agent,
            groups=_folder_groups(docs, domain) if path.is_dir() else None,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
