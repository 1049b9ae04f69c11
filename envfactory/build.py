"""Build environments from documentation: ingest -> explore -> verify -> ``domains/<domain>/``.

A build is atomic: every environment is explored, verified and materialized in a temporary
folder next to its destination, then the environment folders are swapped in. A failing
build leaves ``domains/`` as it was. A build replaces only the folders it generated (listed
in ``build.json``) and never touches others, such as a hand-written ``trip_desk``.
A document that cannot be read or explored is a failed item: it is recorded and counted,
and the build goes on.

The documents of one domain (or one source folder) are explored together as one resource
graph, so an environment can span documents (an order of ``orders.yaml`` references the
traveler of ``trips.yaml``). Paths recorded in specs and ``build.json`` are relative to the
project root (``resources/travel/orders.yaml``), never absolute machine paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .graph import build_tool_graph, save_tool_graph
from .errors import ConfigError, EnvFactoryError, ExploreError, IngestError, RuntimeToolError
from .explore import explore
from .config import project_paths
from .ingest import ApiDoc, document_files, load_apidoc, load_apidocs
from .runtime import Environment
from .spec import EnvSpec, ToolKind, save_spec

# An explorer agent: (documents, deterministic draft) -> improved environment specs.
Agent = Callable[[list[ApiDoc], list[EnvSpec]], list[EnvSpec]]

__all__ = ["build_domain", "build_source", "BuildReport", "EnvReport", "DocReport", "BUILD_FILE", "Progress"]

BUILD_FILE = "build.json"

# progress(event, detail): event is "documents" (detail = total count), "document" (source
# name, after it is explored), "envs" (total to verify), "env" (an env name, after verifying).
Progress = Callable[[str, Any], None]


@dataclass
class EnvReport:
    name: str
    source: str                     # the first of ``sources``
    tools: int
    entities: int
    rows: int
    check: str                      # verify_and_repair | smoke_check | basic
    dropped_tools: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sources: list[str] = field(default_factory=list)


@dataclass
class DocReport:
    source: str
    ok: bool
    envs: list[str] = field(default_factory=list)
    error: str | None = None
    excluded: int = 0
    warnings: int = 0
    seconds: float = 0.0


@dataclass
class BuildReport:
    """What one build produced; ``to_dict()`` is what ``build.json`` holds."""

    domain: str
    out_dir: str
    envs: list[EnvReport] = field(default_factory=list)
    documents: list[DocReport] = field(default_factory=list)
    dropped_envs: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # file (relative to the project root) -> sha256
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed_documents(self) -> list[DocReport]:
        return [d for d in self.documents if not d.ok]

    @property
    def tools(self) -> int:
        return sum(e.tools for e in self.envs)

    @property
    def rows(self) -> int:
        return sum(e.rows for e in self.envs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "envs": [e.name for e in self.envs],
            "sources": self.sources,
            "totals": {"envs": len(self.envs), "tools": self.tools, "rows": self.rows,
                       "documents": len(self.documents), "failed_documents": len(self.failed_documents)},
            "environments": [asdict(e) for e in self.envs],
            "documents": [asdict(d) for d in self.documents],
            "dropped_envs": self.dropped_envs,
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
        }


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
        return [str(n) for n in data.get("envs", []) if isinstance(n, str) and n and "/" not in n and not n.startswith(".")]
    except (OSError, ValueError, AttributeError):
        return []


# ---- checks ------------------------------------------------------------------------------------


def _load_verifiers() -> list[tuple[str, Any]]:
    """The checks available, best first: verify_and_repair, smoke_check, our basic check."""
    out: list[tuple[str, Any]] = []
    try:
        from .verify import verify_and_repair  # type: ignore[attr-defined]

        out.append(("verify_and_repair", verify_and_repair))
    except ImportError:
        pass
    try:
        from .verify import smoke_check  # type: ignore[attr-defined]

        out.append(("smoke_check", smoke_check))
    except ImportError:
        pass
    out.append(("basic", None))
    return out


def _valid_args(session, spec: EnvSpec, tool, rng: random.Random) -> list[dict[str, Any]]:
    """Candidate arguments for a call that should succeed, drawn from the seeded rows."""
    ent = spec.entity(tool.entity)
    cols = [f.name for f in ent.fields]
    rows = session.query(f'SELECT * FROM "{ent.name}" ORDER BY "{ent.primary_key}" LIMIT 60')
    rows = [dict(zip(cols, r)) for r in rows]
    rng.shuffle(rows)
    keyp = tool.key_param
    out: list[dict[str, Any]] = []
    if tool.kind == ToolKind.list:
        return [{}]
    for row in rows[:12] or [{}]:
        args: dict[str, Any] = {}
        if keyp is not None and tool.kind != ToolKind.create:
            if ent.primary_key not in row:
                continue
            args[keyp.name] = row[ent.primary_key]
        donor = rows[rng.randrange(len(rows))] if rows else {}
        for p in tool.params:
            if p.key or not (p.required or tool.kind == ToolKind.update and len(args) < 2):
                continue
            f = ent.field(p.field) if p.field else None
            v = donor.get(p.field) if p.field else None
            if f is not None and v is not None:
                v = session.env._entities[ent.name].db_to_py(f.name, v)
            if v is None:
                v = _typed_value(p)
            args[p.name] = v
        out.append(args)
    return out


def _typed_value(p) -> Any:
    t = p.type.value
    if p.enum:
        return p.enum[0]
    return {"string": "sample", "integer": 1, "number": 1.0, "boolean": True, "date": "2026-06-01",
            "datetime": "2026-06-01T09:00:00", "object": {}, "array": []}.get(t, "sample")


def _basic_check(env: Environment, *, seed: int = 0) -> list[tuple[str, bool, str]]:
    """Our own minimal check when envfactory.verify is not there: per tool, a call built from
    seeded rows succeeds on a fresh session, and a call with an unknown argument fails with a
    tool error and leaves the state hash unchanged."""
    rng = random.Random(seed)
    out = []
    for tool in env.spec.tools:
        ok, msg = False, "no valid call found"
        s = env.new_session()
        try:
            for args in _valid_args(s, env.spec, tool, rng):
                fresh = env.new_session()
                try:
                    fresh.call(tool.name, args)
                    ok, msg = True, "ok"
                    break
                except RuntimeToolError as e:
                    msg = f"valid call failed: {e}"
                finally:
                    fresh.close()
            if ok:
                before = s.state_hash()
                try:
                    s.call(tool.name, {"__not_an_argument__": 1})
                    ok, msg = False, "malformed call succeeded"
                except RuntimeToolError:
                    if s.state_hash() != before:
                        ok, msg = False, "failed call changed the state"
        finally:
            s.close()
        out.append((tool.name, ok, msg))
    return out


def _without(spec: EnvSpec, drop: set[str]) -> EnvSpec | None:
    tools = [t for t in spec.tools if t.name not in drop]
    if not tools:
        return None
    return spec.model_copy(update={"tools": tools})


def _check(spec: EnvSpec, env_dir: Path, *, seed: int, verify: bool,
           warnings: list[str] | None = None) -> tuple[EnvSpec | None, str, list[str]]:
    """Verify (or smoke-check) one spec; return the spec with only passing tools.

    A checker that crashes (not an EnvFactoryError: a bug in it) is reported in ``warnings``
    and the next one is used, so one broken checker does not stop every build.
    """
    if not verify:
        return spec, "none", []
    chain = _load_verifiers()
    for i, (how, fn) in enumerate(chain):
        try:
            return _run_check(how, fn, spec, env_dir, seed)
        except EnvFactoryError:
            raise
        except Exception as e:  # noqa: BLE001 - see the docstring
            if i == len(chain) - 1:
                raise
            if warnings is not None:
                warnings.append(f"{how} crashed ({type(e).__name__}: {' '.join(str(e).split())[:200]}); "
                                f"fell back to {chain[i + 1][0]}")
    raise AssertionError("unreachable")


def _run_check(how: str, fn: Any, spec: EnvSpec, env_dir: Path, seed: int) -> tuple[EnvSpec | None, str, list[str]]:
    if how == "verify_and_repair":
        fixed, _report = fn(spec, out_dir=env_dir, seed=seed)
        if fixed is None:
            return None, how, [t.name for t in spec.tools]
        return fixed, how, sorted({t.name for t in spec.tools} - {t.name for t in fixed.tools})
    env = Environment.from_spec(spec)
    if how == "smoke_check":
        results = [(c.tool, c.ok, c.message) for c in fn(env, seed=seed)]
    else:
        results = _basic_check(env, seed=seed)
    bad = {name for name, ok, _ in results if not ok}
    return _without(spec, bad), how, sorted(bad)


# ---- the build -----------------------------------------------------------------------------------


def _explore_docs(docs: list[ApiDoc], domain: str, seed: int, report: BuildReport, progress: Progress | None,
                  max_envs: int | None, row_scale: float, agent: Agent | None = None
                  ) -> list[tuple[EnvSpec, list[str], list[str]]]:
    """Explore the documents together (one resource graph); per-document reports from the result."""
    specs: list[tuple[EnvSpec, list[str], list[str]]] = []
    if not docs:
        return specs
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
        return specs
    share = (time.perf_counter() - t0) / len(docs)
    for d in docs:
        envs = [s.name for s in res.envs if d.source in s.sources]
        mine = [x for x in res.excluded if x.source == d.source]
        warns = sum(1 for w in res.warnings if w.startswith(f"{d.source}: "))
        err = None
        if not envs:
            why = Counter(x.reason for x in mine).most_common(2)
            detail = "; ".join(f"{n}x {r}" for r, n in why) or "it documents no operations"
            err = f"{d.source}: no environment could be derived ({detail})"
        report.documents.append(DocReport(d.source, bool(envs), envs, error=err,
                                          excluded=len(mine), warnings=warns, seconds=round(share, 3)))
        if progress:
            progress("document", Path(d.source).name)
    many = len(docs) > 1
    for s in res.envs:
        ents = {e.name for e in s.entities}
        warns = [w for w in res.warnings if not many or w.split(":", 1)[0] in s.sources
                 or w.split(".", 1)[0].split(":", 1)[0] in ents]
        excl = [f"{Path(x.source).name}: {x}" if many else str(x)
                for x in res.excluded if x.operation and x.source in s.sources]
        specs.append((s, warns[:50], excl[:200]))
    return specs


def _build(docs: list[ApiDoc], *, domain: str, target: Path, seed: int, verify: bool, progress: Progress | None,
           agent: Agent | None = None,
           report: BuildReport, max_envs_per_doc: int | None = None, row_scale: float = 1.0) -> BuildReport:
    t_start = time.perf_counter()
    report.sources = dict(sorted(report.sources.items()))
    specs = _explore_docs(docs, domain, seed, report, progress, max_envs_per_doc, row_scale, agent)
    previous = set(_previous(target))
    foreign = {p.name for p in target.iterdir() if p.is_dir()} - previous if target.is_dir() else set()
    taken: set[str] = set(foreign)
    if progress:
        progress("envs", len(specs))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.build-", dir=target.parent))
    try:
        for spec, warns, excl in specs:
            t0 = time.perf_counter()
            name = spec.name
            i = 2
            while name in taken:  # never overwrite a folder this build does not own
                name = f"{spec.name}_{i}"
                i += 1
            if name != spec.name:
                spec = spec.model_copy(update={"name": name})
            env_dir = tmp / name
            env_dir.mkdir()
            try:
                warns = list(warns)
                checked, how, dropped = _check(spec, env_dir, seed=seed, verify=verify, warnings=warns)
                report.warnings += [f"{name}: {w}" for w in warns if "crashed" in w]
                if checked is None:
                    report.dropped_envs.append(f"{name}: no tool passed the checks ({how})")
                    shutil.rmtree(env_dir, ignore_errors=True)
                    continue
                save_spec(checked, env_dir)
                # the tool-dependency graph the samplers plan over, saved beside the spec
                save_tool_graph(build_tool_graph(checked), env_dir)
                env = Environment.from_spec(checked, cache_path=env_dir / "template.db")
                rows = sum(env.row_counts().values())
            except EnvFactoryError as e:
                report.dropped_envs.append(f"{name}: {' '.join(str(e).split())[:300]}")
                shutil.rmtree(env_dir, ignore_errors=True)
                continue
            finally:
                if progress:
                    progress("env", name)
            taken.add(name)
            report.envs.append(EnvReport(
                name=name, source=checked.sources[0] if checked.sources else "", tools=len(checked.tools),
                entities=len(checked.entities), rows=rows, check=how, dropped_tools=dropped, warnings=warns,
                excluded=excl, seconds=round(time.perf_counter() - t0, 3), sources=list(checked.sources)))
        report.seconds = time.perf_counter() - t_start
        if report.envs:
            _swap_in(tmp, target, [e.name for e in report.envs], previous, report)
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap_in(tmp: Path, target: Path, names: list[str], previous: set[str], report: BuildReport) -> None:
    """Move the built env folders into ``target``; on failure put every old folder back."""
    target.mkdir(parents=True, exist_ok=True)
    old = tmp / ".old"
    old.mkdir()
    moved: list[tuple[Path, Path | None]] = []  # (placed folder, the old one it replaced)
    try:
        for name in sorted(set(names) | previous):
            dest = target / name
            backup = None
            if dest.exists() and (name in previous or name in names):
                backup = old / name
                os.replace(dest, backup)
            moved.append((dest, backup))
            if name in names:
                os.replace(tmp / name, dest)
        data = json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"
        fd, tmpfile = tempfile.mkstemp(dir=target, prefix=".build-", suffix=".json.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
        os.replace(tmpfile, target / BUILD_FILE)
    except BaseException:
        for dest, backup in reversed(moved):
            if dest.exists() and dest.name in names:
                shutil.rmtree(dest, ignore_errors=True)
            if backup is not None and backup.exists():
                os.replace(backup, dest)
        raise


def _check_domain_name(domain: str) -> None:
    # the domain names a folder under domains/: "../resources" must not reach outside it
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", domain):
        raise ConfigError(f"{domain!r}: invalid domain name (letters, digits, '_', '-', '.')")


def build_domain(domain: str, *, resources_root: str | os.PathLike, domains_root: str | os.PathLike, seed: int = 0,
                 verify: bool = True, progress: Progress | None = None,
                 max_envs_per_doc: int | None = None, row_scale: float = 1.0,
                 agent: Agent | None = None) -> BuildReport:
    """Build every document of ``resources_root/<domain>/`` into ``domains_root/<domain>/<env>/``.

    Raises ConfigError when the domain folder does not exist; a document that fails is
    recorded in the report (``failed_documents``), not raised.
    """
    _check_domain_name(domain)
    folder = Path(resources_root) / domain
    if not folder.is_dir():
        known = ", ".join(sorted(p.name for p in Path(resources_root).iterdir() if p.is_dir())) \
            if Path(resources_root).is_dir() else "none"
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
    return _build(docs, domain=domain, target=target, seed=seed, verify=verify, progress=progress, report=report,
                  max_envs_per_doc=max_envs_per_doc, row_scale=row_scale, agent=agent)


def build_source(path_or_url: str | os.PathLike, *, out_dir: str | os.PathLike, domain: str = "custom",
                 seed: int = 0, verify: bool = True, progress: Progress | None = None,
                 max_envs_per_doc: int | None = None, row_scale: float = 1.0,
                 agent: Agent | None = None) -> BuildReport:
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
        base = (scratch if scratch is not None else path.resolve().parent)
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
        return _build(docs, domain=domain, target=Path(out_dir), seed=seed, verify=verify, progress=progress,
                      report=report, max_envs_per_doc=max_envs_per_doc, row_scale=row_scale, agent=agent)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
