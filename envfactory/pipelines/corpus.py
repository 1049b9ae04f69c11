"""Corpus builds: many documents, each built on its own, in a pool of worker processes.

``build_corpus(source, out_dir, workers=N)`` builds every document under ``source`` with the
project's per-document build (``build_source``) into ``out_dir/<slug>/``, one document per
worker process. Each worker runs under a CPU-time budget (``RLIMIT_CPU``: seconds the document's
own process computes, which the machine's other load does not move), a memory budget
(``RLIMIT_AS``) and a wall-clock backstop (the parent kills a worker that runs past it, for one
that waits rather than computes): a document over any is recorded as failed with the reason, and
the run goes on. A document is never merged with another here (each is
its own resource graph), so the result does not depend on the number of workers or the order
in which they finish: ``corpus.json`` lists the documents sorted by path and holds no timings
(they go to ``.corpus-times.json``), so the same documents and seed give the same bytes.

Resume: after every finished document, ``.corpus-state.json`` (written atomically) records its
content digest (the file's bytes and the build options) and its result. A rerun skips every
document whose digest matches a built record (its folder still present) or a failed record made
under the same budgets; a run killed at any point (SIGKILL included) loses at most the
documents in flight, whose half-built folders the next build of them recovers (``swap``).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import pickle
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from ..errors import ConfigError, EnvFactoryError
from ..explore import FIDELITY_COUNTS
from .backend import Backend, JobFailed
from .build import Progress, build_source
from .swap import write_atomic

__all__ = [
    "CORPUS_FILE",
    "CORPUS_STATE_FILE",
    "CORPUS_TIMES_FILE",
    "Budget",
    "CorpusDoc",
    "CorpusReport",
    "build_corpus",
]

CORPUS_FILE = "corpus.json"
CORPUS_STATE_FILE = ".corpus-state.json"  # resume state: digest and result per document
CORPUS_TIMES_FILE = ".corpus-times.json"  # seconds, kept out of corpus.json (same documents, same bytes)
_STATE_VERSION = 1
_FIDELITY_FIELDS = FIDELITY_COUNTS


@dataclass(frozen=True)
class Budget:
    """What one document may use (None: unlimited): wall-clock seconds, address space in MiB, and
    CPU seconds of the document's own process (what decides, under load, whether a large document
    builds: a wall-clock budget alone lets the machine's other tenants move a document across it)."""

    seconds: float | None = 900.0
    memory_mb: int | None = 4096
    cpu_seconds: float | None = None

    def key(self) -> list[float | int | None]:
        return [self.seconds, self.memory_mb, self.cpu_seconds]


class _CpuBudgetExceeded(BaseException):  # noqa: N818 - a budget spent, not an error of the document
    """Raised in a worker's main thread when its document has used its CPU seconds: a BaseException,
    so no ``except Exception`` in the build takes it for a failed tool (private: it never leaves
    the worker, which turns it into the document's failure reason)."""


@dataclass
class CorpusDoc:
    """One document's outcome in a corpus build."""

    source: str  # path relative to the corpus folder
    out: str  # its folder under the corpus output (relative)
    digest: str
    status: str  # built | failed
    reason: str | None = None  # why it failed (or why no environment shipped)
    envs: list[str] = field(default_factory=list)
    tools: int = 0
    rows: int = 0
    fidelity: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0  # not in corpus.json
    budget: list[Any] = field(default_factory=list)  # the budget it ran under (state only)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("seconds", "budget")}
        out["fidelity"] = {
            k: int(self.fidelity.get(k, 0)) for k in _FIDELITY_FIELDS
        }  # one order, resumed or not
        return out


@dataclass
class CorpusReport:
    source: str
    out_dir: str
    documents: list[CorpusDoc] = field(default_factory=list)
    skipped: int = 0  # documents resumed from the state file, not rebuilt
    seconds: float = 0.0

    @property
    def built(self) -> list[CorpusDoc]:
        return [d for d in self.documents if d.status == "built"]

    @property
    def failed(self) -> list[CorpusDoc]:
        return [d for d in self.documents if d.status != "built"]

    def fidelity_total(self) -> dict[str, int]:
        return {k: sum(d.fidelity.get(k, 0) for d in self.documents) for k in _FIDELITY_FIELDS}

    def failure_reasons(self) -> dict[str, int]:
        """Failed documents grouped by reason (without the document's name), most common first."""
        counts = Counter(_reason_key(d.reason or "unknown") for d in self.failed)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def to_dict(self) -> dict[str, Any]:
        return {
            "totals": {
                "documents": len(self.documents),
                "built": len(self.built),
                "failed": len(self.failed),
                "envs": sum(len(d.envs) for d in self.documents),
                "tools": sum(d.tools for d in self.documents),
                "rows": sum(d.rows for d in self.documents),
            },
            "fidelity": self.fidelity_total(),
            "failure_reasons": self.failure_reasons(),
            "documents": [d.to_dict() for d in self.documents],
        }

    def timings(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "skipped": self.skipped,
            "documents": {d.source: round(d.seconds, 3) for d in self.documents},
        }


def _reason_key(reason: str) -> str:
    """'travel/x.yaml: no environment could be derived (3x ...)' -> 'no environment could be derived'."""
    text = " ".join(reason.split())
    head, sep, tail = text.partition(": ")
    if sep and ("/" in head or "." in head) and " " not in head:
        text = tail
    return re.sub(r"\s*\(.*$", "", text)[:160] or "unknown"


def _slug(rel: str) -> str:
    return re.sub(r"[^\w.-]", "_", rel.replace("/", "__")).lstrip(".") or "document"


def _domain(rel: str, default: str) -> str:
    parent = Path(rel).parent.name
    return parent if re.fullmatch(r"[A-Za-z0-9][\w.-]*", parent) else default


def _digest(path: Path, options: dict[str, Any]) -> str:
    h = hashlib.sha256(json.dumps(options, sort_keys=True).encode())
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---- the worker (one document, in its own process) --------------------------------------------------


def _watch_parent(life: Connection) -> None:
    """Exit when the parent goes away (its end of ``life`` closes), even if it was SIGKILLed."""
    try:
        life.recv()
    except (EOFError, OSError):
        pass
    os._exit(70)


def _limit_memory(memory_mb: int | None) -> None:
    if memory_mb is None:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: no memory budget
        return
    limit = int(memory_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _cpu_reason(cpu_s: float) -> str:
    return f"CPU budget exceeded ({cpu_s:g} s)"


def _limit_cpu(cpu_s: float | None) -> None:
    """From now on, ``cpu_s`` more CPU seconds for this process (all its threads, user and system):
    then a profiling timer (``ITIMER_PROF``, which counts only this process's CPU time) raises
    _CpuBudgetExceeded in the main thread. ``RLIMIT_CPU`` 30 s later is the kernel's backstop for a
    process stuck where no Python signal handler runs (SIGXCPU ends it).

    The budget is sticky: a callback that swallows the exception (a sqlite3 function, a
    ``__del__``) cannot keep the build alive, because the timer then fires again every 50 ms of
    CPU, and ``_cpu_spent`` tells the caller afterwards (a build that finished past its budget is
    failed all the same, so the verdict does not depend on where the signal landed).

    Off the main thread (no signal handler can be set there) a watcher thread ends the process.
    """
    global _CPU_LIMIT, _CPU_STOPPED
    _CPU_STOPPED = False
    if cpu_s is None:
        _CPU_LIMIT = None
        return
    import math
    import resource
    import signal

    used = time.process_time()
    _CPU_LIMIT = (used + cpu_s, cpu_s)
    if threading.current_thread() is not threading.main_thread():
        threading.Thread(target=_watch_cpu, args=(used + cpu_s,), daemon=True).start()
        return

    def over(signum: int, frame: Any) -> None:
        if _CPU_STOPPED:  # a signal that was pending when the build ended: no new timer
            return
        signal.setitimer(signal.ITIMER_PROF, 0.05)  # again, until the worker is done
        raise _CpuBudgetExceeded(_cpu_reason(cpu_s))

    signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, max(cpu_s, 0.001))
    soft = math.ceil(used + cpu_s + 30)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


_CPU_LIMIT: tuple[float, float] | None = None  # (process_time at which the budget is spent, budget)
_CPU_STOPPED = False  # set by _stop_cpu_timer: the SIGPROF handler then does nothing


def _cpu_spent() -> str | None:
    """The reason, if this process has used its CPU-seconds budget (see ``_limit_cpu``)."""
    if _CPU_LIMIT is None or time.process_time() < _CPU_LIMIT[0]:
        return None
    return _cpu_reason(_CPU_LIMIT[1])


def _stop_cpu_timer() -> None:
    """No more SIGPROF: the flag first (a late handler neither raises nor re-arms a timer that would
    kill the process at exit), then the timer, then the signal ignored. Callers call it again from
    ``except _CpuBudgetExceeded`` (the handler may raise once, before the flag)."""
    global _CPU_STOPPED
    _CPU_STOPPED = True
    if _CPU_LIMIT is not None and threading.current_thread() is threading.main_thread():
        import signal

        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, signal.SIG_IGN)


def _watch_cpu(limit: float) -> None:
    while time.process_time() < limit:
        time.sleep(0.2)
    os._exit(76)


def _summary(report: Any) -> dict[str, Any]:
    """The corpus row of one document's BuildReport (from h14's report: envs, tools, fidelity)."""
    fid = {k: 0 for k in _FIDELITY_FIELDS}
    for d in report.fidelity.documents:
        for k in _FIDELITY_FIELDS:
            fid[k] += int(getattr(d, k))
    reason = None
    if not report.envs:
        errs = [d.error for d in report.failed_documents if d.error]
        reason = (
            errs[0] if errs else (report.dropped_envs[0] if report.dropped_envs else "no environment shipped")
        )
    return {
        "status": "built" if report.envs else "failed",
        "reason": reason,
        "envs": [e.name for e in report.envs],
        "tools": report.tools,
        "rows": report.rows,
        "fidelity": fid,
    }


def _build_one(job: dict[str, Any], result: Connection, life: Connection) -> None:
    threading.Thread(target=_watch_parent, args=(life,), daemon=True).start()
    # made before the limit: past it, even the message saying so may not be allocatable
    over = pickle.dumps({"status": "failed", "reason": f"memory budget exceeded ({job['memory_mb']} MiB)"})
    try:
        _limit_memory(job["memory_mb"])
        _limit_cpu(job.get("cpu_s"))
        msg = _build_summary(job)
        _stop_cpu_timer()
        spent = _cpu_spent()
        result.send({"status": "failed", "reason": spent} if spent else msg)
    except MemoryError:
        result.send_bytes(over)
    except _CpuBudgetExceeded as e:
        _stop_cpu_timer()
        result.send({"status": "failed", "reason": str(e)})


def build_job(job: dict[str, Any]) -> dict[str, Any]:
    """One document as a backend job (``--backend ray``): its corpus row, ``seconds`` included.

    Runs in a process of its own (the backend's ``fresh_process``). The memory budget is watched
    as resident memory, not ``RLIMIT_AS``: a Ray worker maps gigabytes of address space before it
    starts, and one past the limit cannot even send its result. Past the budget the worker exits,
    and the document is recorded as "worker died".
    """
    t0 = time.perf_counter()
    if job["memory_mb"] is not None:
        threading.Thread(target=_watch_memory, args=(int(job["memory_mb"]),), daemon=True).start()
    try:
        try:
            _limit_cpu(job.get("cpu_s"))
            msg = _build_summary(job)
        finally:
            _stop_cpu_timer()  # a Ray worker may be reused by Ray's own code after the job
        spent = _cpu_spent()
        if spent:
            msg = {"status": "failed", "reason": spent}
    except _CpuBudgetExceeded as e:
        _stop_cpu_timer()
        msg = {"status": "failed", "reason": str(e)}
    return {**msg, "seconds": time.perf_counter() - t0}


def _watch_memory(memory_mb: int) -> None:
    import psutil

    me = psutil.Process()
    while me.memory_info().rss < memory_mb * 2**20:
        time.sleep(0.2)
    os._exit(75)


def _build_summary(job: dict[str, Any]) -> dict[str, Any]:
    try:
        report = build_source(
            job["path"],
            out_dir=job["out_dir"],
            domain=job["domain"],
            seed=job["seed"],
            verify=job["verify"],
            max_envs_per_doc=job["max_envs"],
            row_scale=job["row_scale"],
        )
        return _summary(report)
    except EnvFactoryError as e:
        return {"status": "failed", "reason": " ".join(str(e).split())[:300]}
    except MemoryError:
        raise
    except Exception as e:  # a bug on one document must not stop a corpus of thousands: record it
        return {
            "status": "failed",
            "reason": f"internal error: {type(e).__name__}: {' '.join(str(e).split())[:200]}",
        }


def _run_backend(jobs: list[dict[str, Any]], backend: Backend, budget: Budget, done: Any) -> None:
    """The documents as backend jobs (Ray tasks), each in its own worker process, under the budget."""

    def arrived(i: int, got: Any) -> None:
        if isinstance(got, JobFailed):
            got = {"status": "failed", "reason": got.reason, "seconds": budget.seconds or 0.0}
        done(jobs[i], got)

    backend.run(build_job, jobs, arrived, timeout_s=budget.seconds, fresh_process=True)


# ---- the pool ----------------------------------------------------------------------------------------


def _context() -> Any:
    if sys.platform.startswith("linux"):
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["envfactory.pipelines.build"])  # each worker forks with it imported
        return ctx
    return mp.get_context("spawn")


@dataclass
class _Running:
    job: dict[str, Any]
    proc: Any
    result: Connection
    life: Connection
    started: float


def _finish(run: _Running, msg: dict[str, Any]) -> dict[str, Any]:
    run.result.close()
    run.life.close()
    run.proc.join(5)
    if run.proc.is_alive():
        run.proc.kill()
        run.proc.join()
    return {**msg, "seconds": time.perf_counter() - run.started}


def _poll(run: _Running, budget: Budget, now: float) -> dict[str, Any] | None:
    """The document's result when it has one (finished, died or over its time), else None."""
    if run.result.poll():
        try:
            return _finish(run, run.result.recv())
        except (EOFError, OSError):
            pass  # died while sending: below
    if not run.proc.is_alive():
        run.proc.join()
        code = run.proc.exitcode
        if code in (76, -24, -27):  # the CPU watcher's exit, SIGXCPU's default action, or SIGPROF's
            return _finish(run, {"status": "failed", "reason": _cpu_reason(run.job.get("cpu_s") or 0)})
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return _finish(run, {"status": "failed", "reason": f"worker died ({why})"})
    if budget.seconds is not None and now - run.started > budget.seconds:
        run.proc.kill()
        return _finish(run, {"status": "failed", "reason": f"time budget exceeded ({budget.seconds:g} s)"})
    return None


def _start(ctx: Any, job: dict[str, Any]) -> _Running:
    res_r, res_w = ctx.Pipe(duplex=False)
    life_r, life_w = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_build_one, args=(job, res_w, life_r), daemon=True)
    proc.start()
    res_w.close()
    life_r.close()
    return _Running(job, proc, res_r, life_w, time.perf_counter())


def _run_pool(jobs: list[dict[str, Any]], workers: int, budget: Budget, done: Any) -> None:
    ctx = _context()
    pending = list(reversed(jobs))
    running: list[_Running] = []
    try:
        while pending or running:
            while pending and len(running) < workers:
                running.append(_start(ctx, pending.pop()))
            now = time.perf_counter()
            timeout = (
                None
                if budget.seconds is None
                else max(0.0, min(r.started + budget.seconds for r in running) - now) + 0.01
            )
            wait([r.result for r in running] + [r.proc.sentinel for r in running], timeout)
            now = time.perf_counter()
            for run in list(running):
                msg = _poll(run, budget, now)
                if msg is not None:
                    running.remove(run)
                    done(run.job, msg)
    finally:
        for run in running:  # an error (or Ctrl-C) in the parent: leave no worker behind
            run.proc.kill()
            run.proc.join()


# ---- the corpus build --------------------------------------------------------------------------------


def _load_state(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != _STATE_VERSION
        or not isinstance(data.get("documents"), dict)
    ):
        return {}
    return {k: v for k, v in data["documents"].items() if isinstance(v, dict)}


def _doc(record: dict[str, Any]) -> CorpusDoc | None:
    try:
        return CorpusDoc(**{k: record[k] for k in CorpusDoc.__dataclass_fields__ if k in record})
    except TypeError:
        return None


def _reusable(doc: CorpusDoc | None, digest: str, budget: Budget, out: Path) -> bool:
    if doc is None or doc.digest != digest:
        return False
    if doc.status == "built":
        return (out / doc.out / "build.json").is_file()
    return doc.budget == budget.key()


def build_corpus(
    source: str | os.PathLike,
    *,
    out_dir: str | os.PathLike,
    workers: int = 1,
    budget: Budget | None = None,
    seed: int = 0,
    verify: bool = True,
    row_scale: float = 1.0,
    max_envs_per_doc: int | None = None,
    domain: str = "corpus",
    progress: Progress | None = None,
    backend: Backend | None = None,
    sample: int | None = None,
) -> CorpusReport:
    """Build every document under ``source`` (a folder, or one file) into ``out_dir/<slug>/``.

    Writes ``corpus.json`` (no timings), ``.corpus-times.json`` and the resume state into
    ``out_dir``. Raises ConfigError for a missing source or a bad worker count; a document that
    fails (unreadable, over budget, no environment) is recorded, never raised. ``backend``: a
    non-local backend (Ray) runs each document as a job in a fresh worker process under the same
    budgets, into the same folders (``workers`` is then the backend's). ``sample``: see ``sampled``.
    """
    from .corpus_source import find_documents

    budget = budget or Budget()
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    src = Path(source)
    out = Path(out_dir)
    found = find_documents(src, out)  # a folder, a file, an npm package folder or .tgz
    found = found if sample is None else found.sampled(sample, seed=seed)  # a seeded random sample
    root, files = found.root, found.files
    out.mkdir(parents=True, exist_ok=True)
    found.write(out)  # sources.json: each document's provenance (packages only)
    t0 = time.perf_counter()
    options: dict[str, Any] = {"v": _STATE_VERSION, "seed": seed, "verify": verify, "row_scale": row_scale}
    options["max_envs"] = max_envs_per_doc
    state_path = out / CORPUS_STATE_FILE
    state = _load_state(state_path)
    report = CorpusReport(source=str(src), out_dir=str(out))
    results: dict[str, CorpusDoc] = {}
    jobs: list[dict[str, Any]] = []
    if progress:
        progress("documents", len(files))
    common = {"seed": seed, "verify": verify, "max_envs": max_envs_per_doc, "row_scale": row_scale}
    common.update(memory_mb=budget.memory_mb, cpu_s=budget.cpu_seconds)
    for p in files:
        rel = p.relative_to(root).as_posix()
        digest = _digest(p, options)
        prior = _doc(state.get(rel, {}))
        if _reusable(prior, digest, budget, out):
            results[rel] = prior  # type: ignore[assignment]
            report.skipped += 1
            if progress:
                progress("document", f"{p.name} (done before)")
            continue
        jobs.append({"rel": rel, "digest": digest, "path": str(p), "out": _slug(rel), **common})
        jobs[-1].update(out_dir=str(out / _slug(rel)), domain=_domain(rel, domain))

    def done(job: dict[str, Any], msg: dict[str, Any]) -> None:
        doc = CorpusDoc(
            source=job["rel"],
            out=job["out"],
            digest=job["digest"],
            status=msg["status"],
            reason=msg.get("reason"),
            envs=list(msg.get("envs", [])),
            tools=int(msg.get("tools", 0)),
            rows=int(msg.get("rows", 0)),
            fidelity=dict(msg.get("fidelity", {})),
            seconds=round(float(msg["seconds"]), 3),
            budget=budget.key(),
        )
        results[doc.source] = doc
        state[doc.source] = asdict(doc)
        write_atomic(
            state_path, json.dumps({"version": _STATE_VERSION, "documents": state}, sort_keys=True) + "\n"
        )
        if progress:
            progress("document", Path(doc.source).name)

    if backend is not None and backend.name != "local":
        _run_backend(jobs, backend, budget, done)
    else:
        _run_pool(jobs, workers, budget, done)
    report.documents = [results[k] for k in sorted(results)]
    report.seconds = time.perf_counter() - t0
    return _write_report(out, report)


def _write_report(out: Path, report: CorpusReport) -> CorpusReport:
    write_atomic(out / CORPUS_FILE, json.dumps(report.to_dict(), indent=2) + "\n")
    write_atomic(out / CORPUS_TIMES_FILE, json.dumps(report.timings(), indent=2) + "\n")
    return report
