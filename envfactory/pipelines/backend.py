"""Where fan-out work runs: worker processes on this machine, or Ray tasks (``--backend ray``).

A job is a picklable value and the work a module-level function of it; a backend runs the
function over the jobs and hands each result back, in completion order, to a callback in this
process, which writes it. The work never writes the shared outputs, so the same jobs give the
same files whichever backend ran them, and on however many workers. A job that raised, ran past
its time or lost its worker comes back as a ``JobFailed`` (a failed item is data).

Ray is imported here only, and only when ``--backend ray`` is chosen (``envfactory[ray]``).
Without ``--ray-address`` it starts a local Ray on 127.0.0.1 with ``workers`` CPUs, no
dashboard and no usage reporting; with an address it joins that cluster. Jobs read their
inputs from the paths they are given (a cluster needs them on storage every node sees).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ConfigError

__all__ = ["BACKENDS", "Backend", "JobFailed", "LocalBackend", "RayBackend", "make_backend"]

BACKENDS = ("local", "ray")

OnResult = Callable[[int, Any], None]


@dataclass(frozen=True)
class JobFailed:
    """A job that did not give a result: why, in one line."""

    reason: str


def _why(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"


class Backend(Protocol):
    name: str
    workers: int

    def run(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        on_result: OnResult,
        *,
        timeout_s: float | None = None,
        fresh_process: bool = False,
    ) -> None:
        """``on_result(index, fn(jobs[index]) or JobFailed)`` for every job, as each finishes."""
        ...

    def close(self) -> None: ...


class LocalBackend:
    """``workers`` processes on this machine (forkserver on Linux); one worker runs in this process."""

    name = "local"

    def __init__(self, workers: int = 1, preload: Sequence[str] = ()):
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        self.preload = list(preload)

    def _context(self) -> Any:
        if sys.platform.startswith("linux"):
            ctx = mp.get_context("forkserver")
            if self.preload:
                ctx.set_forkserver_preload(self.preload)
            return ctx
        return mp.get_context("spawn")

    def run(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        on_result: OnResult,
        *,
        timeout_s: float | None = None,
        fresh_process: bool = False,
    ) -> None:
        if timeout_s is not None or fresh_process:
            raise ConfigError("the local backend's pool has no per-job budget (the corpus build has its own)")
        if self.workers == 1:
            for i, job in enumerate(jobs):
                on_result(i, fn(job))
            return
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=self._context()) as pool:
            pending = list(reversed(range(len(jobs))))
            running: dict[Future, int] = {}
            # at most two jobs in flight per worker: results are written (and memory freed) as they come
            while pending or running:
                while pending and len(running) < 2 * self.workers:
                    i = pending.pop()
                    running[pool.submit(fn, jobs[i])] = i
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in sorted(finished, key=lambda f: running[f]):
                    i = running.pop(fut)
                    exc = fut.exception()
                    on_result(i, JobFailed(_why(exc)) if exc is not None else fut.result())

    def close(self) -> None:
        pass


class RayBackend:
    """Ray tasks: a local Ray started here (127.0.0.1, ``workers`` CPUs) or the cluster at ``address``."""

    name = "ray"

    def __init__(self, workers: int = 2, address: str | None = None):
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        try:
            import ray
        except ImportError as e:
            raise ConfigError("--backend ray needs Ray: pip install 'envfactory[ray]'") from e
        self.ray = ray
        self.workers = workers
        self._started = False
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report to the internet
        if not ray.is_initialized():
            try:
                if address:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
                else:
                    ray.init(
                        num_cpus=workers,
                        include_dashboard=False,
                        _node_ip_address="127.0.0.1",
                        log_to_driver=False,
                        configure_logging=False,
                    )
            except Exception as e:  # a wrong address, a port in use: one line, not a trace
                raise ConfigError(f"--backend ray: cannot start or join Ray: {_why(e)}") from e
            self._started = True

    def run(
        self,
        fn: Callable[[Any], Any],
        jobs: Sequence[Any],
        on_result: OnResult,
        *,
        timeout_s: float | None = None,
        fresh_process: bool = False,
    ) -> None:
        ray = self.ray
        # max_calls=1: a worker process per job, so a job's memory limit and state die with it;
        # max_retries=0: a job whose worker died is reported once, as data (a retry of a corpus
        # build found the dead attempt's lock: "another build ... is running")
        remote = ray.remote(num_cpus=1, max_calls=1 if fresh_process else 0, max_retries=0)(fn)
        pending = list(reversed(range(len(jobs))))
        running: dict[Any, tuple[int, float]] = {}
        try:
            while pending or running:
                # as many in flight as CPUs: a job's clock starts when it is submitted, so it runs then
                while pending and len(running) < self.workers:
                    i = pending.pop()
                    running[remote.remote(jobs[i])] = (i, time.monotonic())
                wait_s = None
                if timeout_s is not None:
                    oldest = min(t for _, t in running.values())
                    wait_s = max(0.0, oldest + timeout_s - time.monotonic()) + 0.01
                ready, _ = ray.wait(list(running), num_returns=1, timeout=wait_s)
                for ref in ready:
                    i, _ = running.pop(ref)
                    try:
                        got = ray.get(ref)
                    except Exception as e:  # the job raised, or its worker died
                        got = JobFailed(_ray_reason(e))
                    on_result(i, got)
                if timeout_s is not None:
                    now = time.monotonic()
                    for ref, (i, t) in list(running.items()):
                        if now - t > timeout_s:
                            ray.cancel(ref, force=True)
                            del running[ref]
                            on_result(i, JobFailed(f"time budget exceeded ({timeout_s:g} s)"))
        finally:
            for ref in running:  # an error (or Ctrl-C) here: leave no task behind
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started:
            self.ray.shutdown()
            self._started = False


def _ray_reason(e: BaseException) -> str:
    cause = getattr(e, "cause", None)
    if isinstance(cause, BaseException):
        return _why(cause)
    name = type(e).__name__
    if "WorkerCrashed" in name or "ActorDied" in name or "OutOfMemory" in name:
        return f"worker died ({name})"
    return _why(e)


def make_backend(
    name: str, *, workers: int | None = None, address: str | None = None, preload: Sequence[str] = ()
) -> Backend:
    """The backend called ``name`` ("local" or "ray"); ``workers`` default 1 locally, 2 on a local Ray."""
    if name not in BACKENDS:
        raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {name!r}")
    if address and name != "ray":
        raise ConfigError("--ray-address needs --backend ray")
    if name == "ray":
        return RayBackend(workers or 2, address)
    return LocalBackend(workers or 1, preload)
