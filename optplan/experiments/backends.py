"""Executors: where jobs run. One interface, a local process pool, Dask and Ray.

:meth:`Backend.execute` takes jobs and yields :class:`JobStarted` and :class:`JobFinished`
events; the runner turns them into rows, files and progress. Every backend runs each job in a
process of its own (so a segfaulting or hung solver cannot take the run down) under a
watchdog that kills it at ``job.deadline_s`` (about 1.5 × its time limit plus a grace) and
reports ``TIMEOUT``; a process that dies before reporting is ``CRASHED`` with the reason.

* :class:`LocalBackend` — at most ``parallel`` job processes at a time and, by default, no
  more solver threads than cores: a job takes ``job.workers`` cores (one for a heuristic), so
  a grid of exact jobs runs ``cores // workers_per_job`` at a time and heuristics fill in the
  rest. Job processes are forked from a fork server that has optplan imported
  (``spawn`` where there is no fork server). A job process, with any solver process it
  started, ends when the run that started it dies, so a SIGKILLed run leaves no solver behind.
* :class:`DaskBackend` — submits one task per job to a ``dask.distributed`` cluster (an
  address, or a local cluster); each task runs its job in a child process with the same
  watchdog. Needs the ``dask`` extra. Worker processes are daemonic by default and cannot
  start children: set ``distributed.worker.daemon: false`` on the cluster for isolation;
  otherwise jobs run inside the worker, without the watchdog, and their rows' ``info`` says
  ``isolation: in-process``. (A local cluster started here uses threads and isolates.)
* :class:`RayBackend` — submits one Ray task per job, asking for the cores the job uses, to a
  Ray cluster (an address, the cluster this process is already connected to, or a local one
  started on the loopback interface); each task runs its job in a child process under the
  same watchdog. Tasks are never retried, so a job whose worker died is recorded once, as
  ``CRASHED``. Needs the ``ray`` extra.
"""

from __future__ import annotations

import abc
import collections
import importlib.util
import logging
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Iterable, Iterator

from optplan.errors import InputError
from optplan.experiments.grid import Job
from optplan.experiments.job import (CRASHED, FAILURE_STATUSES, TIMEOUT, JobOutput,
                                     execute_job, job_row, utc_now)

__all__ = ["Backend", "LocalBackend", "DaskBackend", "RayBackend", "JobStarted", "JobFinished",
           "make_backend", "check_backend", "default_parallelism", "run_isolated", "BACKENDS"]

BACKENDS = ("local", "dask", "ray")
_POLL_S = 0.5
SAFE_PATH_MARK = "optplan-forkserver"  # the PYTHONSAFEPATH value the fork server starts with


@dataclass(frozen=True)
class JobStarted:
    job: Job


@dataclass(frozen=True)
class JobFinished:
    job: Job
    output: JobOutput


class Backend(abc.ABC):
    """Runs jobs and reports on them; ``slots`` is how many run at once."""

    name: str = "backend"
    slots: int = 1

    @abc.abstractmethod
    def execute(self, jobs: Iterable[Job]) -> Iterator[JobStarted | JobFinished]:
        """Yield a :class:`JobStarted` and then a :class:`JobFinished` for every job."""

    def close(self) -> None:
        """Release processes and connections (the generator's ``finally`` kills jobs)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_parallelism(workers_per_job: int) -> int:
    """``cores // workers_per_job``, at least one."""
    return max(1, available_cores() // max(1, workers_per_job))


# --- one job in a child process ------------------------------------------------------------


def _follow_lifeline(lifeline) -> None:
    """End this job's whole process group as soon as the run that started it is gone.

    The run holds the other end of ``lifeline``; when the run ends, for any reason (a
    SIGKILL included), the read sees end-of-file. A parent-death signal would not do: a job's
    parent is the fork server, which outlives the run while any job is alive.
    """
    def watch():
        try:
            lifeline.recv()
        except (EOFError, OSError):
            pass
        _kill_group(os.getpid())
        os._exit(70)

    threading.Thread(target=watch, name="optplan-lifeline", daemon=True).start()


def _kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (a job and any solver it started)."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _child_main(connection, lifeline, job: Job, log_path: str | None, backend: str) -> None:
    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)  # a group of its own, so the watchdog also ends solver subprocesses
    _follow_lifeline(lifeline)
    if log_path is not None:
        descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(descriptor, 1)
        os.dup2(descriptor, 2)
        os.close(descriptor)
    output = execute_job(job, backend)
    connection.send(output)
    connection.close()


@dataclass
class _Running:
    job: Job
    process: multiprocessing.process.BaseProcess
    connection: object
    lifeline: object
    start: float
    started_at: str
    log_path: Path | None
    deadline: float = field(init=False)

    def __post_init__(self):
        self.deadline = self.start + self.job.deadline_s


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["optplan.experiments._warm"])
        _start_forkserver()
        return context
    return multiprocessing.get_context("spawn")


def _start_forkserver() -> None:
    """Start the fork server with ``PYTHONSAFEPATH``: it is a ``python -c`` process, which
    would otherwise put the current folder first on its path, and run from a folder holding
    an ``optplan/`` directory (a checkout's parent) it would import that instead of the
    installed package, and every job would crash. (Its preload module drops the variable
    again, so that jobs do not hand it on to programs they start.)"""
    from multiprocessing import forkserver

    if os.environ.get("PYTHONSAFEPATH"):
        forkserver.ensure_running()
        return
    os.environ["PYTHONSAFEPATH"] = SAFE_PATH_MARK
    try:
        forkserver.ensure_running()
    finally:
        del os.environ["PYTHONSAFEPATH"]


def _last_line(path: Path | None) -> str:
    if path is None or not path.is_file():
        return ""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - 4096))
        lines = [line.strip() for line in handle.read().decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else ""


def _exit_reason(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    if exitcode:
        return f"exited with code {exitcode}"
    return "exited without reporting a result"


class LocalBackend(Backend):
    """A pool of at most ``parallel`` job processes on this machine, one process per job.

    With ``core_budget``, jobs start in order while their ``workers`` (one for a heuristic)
    add up to at most that many cores (a job wider than the budget runs alone).
    ``log_dir`` receives each job's stdout/stderr (kept for failed jobs only); without it
    the job processes write to a temporary folder.
    """

    name = "local"

    def __init__(self, parallel: int, *, core_budget: int | None = None,
                 log_dir: str | Path | None = None, row_backend: str | None = None):
        self.slots = max(1, int(parallel))
        self.core_budget = core_budget
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.row_backend = row_backend or self.name
        self._context = _context()

    def execute(self, jobs: Iterable[Job]) -> Iterator[JobStarted | JobFinished]:
        pending = collections.deque(jobs)
        running: list[_Running] = []
        own_logs = None
        if self.log_dir is None:
            own_logs = tempfile.TemporaryDirectory(prefix="optplan-logs-")
            log_dir = Path(own_logs.name)
        else:
            log_dir = self.log_dir
            log_dir.mkdir(parents=True, exist_ok=True)
        try:
            while pending or running:
                while pending and len(running) < self.slots and (
                        not running or self._fits(pending[0], running)):
                    entry = self._start(pending.popleft(), log_dir)
                    running.append(entry)
                    yield JobStarted(entry.job)
                now = time.monotonic()
                timeout = max(0.0, min(min(r.deadline for r in running) - now, _POLL_S))
                wait([r.connection for r in running] + [r.process.sentinel for r in running],
                     timeout=timeout)
                for entry in list(running):
                    output = self._check(entry)
                    if output is not None:
                        running.remove(entry)
                        yield JobFinished(entry.job, output)
        finally:
            for entry in running:
                self._kill(entry)
            if own_logs is not None:
                own_logs.cleanup()

    def _fits(self, job: Job, running: list[_Running]) -> bool:
        if self.core_budget is None:
            return True
        used = sum(entry.job.workers or 1 for entry in running)
        return used + min(self.core_budget, job.workers or 1) <= self.core_budget

    def _start(self, job: Job, log_dir: Path) -> _Running:
        receiver, sender = self._context.Pipe(duplex=False)
        lifeline_end, lifeline = self._context.Pipe(duplex=False)
        log_path = log_dir / f"{job.job_id}.log"
        process = self._context.Process(
            target=_child_main, name=f"optplan-job-{job.job_id}",
            args=(sender, lifeline_end, job, str(log_path), self.row_backend),
            daemon=False)  # a method may start processes of its own
        process.start()
        sender.close()
        lifeline_end.close()
        return _Running(job, process, receiver, lifeline, time.monotonic(), utc_now(),
                        log_path)

    def _check(self, entry: _Running) -> JobOutput | None:
        """The job's output when it has finished (in any way), else ``None``."""
        if entry.connection.poll():
            try:
                output = entry.connection.recv()
            except (EOFError, OSError):
                return self._crashed(entry)
            entry.process.join(timeout=10)
            self._kill(entry)
            self._tidy_log(entry, output.row["status"])
            return output
        if not entry.process.is_alive():
            if entry.connection.poll():  # it reported just before it exited
                return self._check(entry)
            return self._crashed(entry)
        if time.monotonic() >= entry.deadline:
            self._kill(entry)
            elapsed = time.monotonic() - entry.start
            limit = (f"its time limit {entry.job.time_limit:g} s"
                     if entry.job.time_limit is not None else "the heuristic limit")
            reason = (f"killed by the watchdog after {elapsed:.1f} s (deadline "
                      f"{entry.job.deadline_s:g} s from {limit})")
            return self._failure(entry, TIMEOUT, reason, elapsed)
        return None

    def _crashed(self, entry: _Running) -> JobOutput:
        entry.process.join(timeout=5)
        reason = _exit_reason(entry.process.exitcode)
        last = _last_line(entry.log_path)
        if last:
            reason += f"; last output: {last}"
        self._kill(entry)
        return self._failure(entry, CRASHED, reason, time.monotonic() - entry.start)

    def _failure(self, entry: _Running, status: str, reason: str, elapsed: float) -> JobOutput:
        row = job_row(entry.job, status, reason=reason, started_at=entry.started_at,
                      elapsed_s=elapsed, backend=self.row_backend)
        self._tidy_log(entry, status)
        return JobOutput(row)

    def _tidy_log(self, entry: _Running, status: str) -> None:
        """Keep the output of failed jobs, drop the rest."""
        path = entry.log_path
        if path is None or not path.exists():
            return
        if status not in FAILURE_STATUSES or path.stat().st_size == 0:
            path.unlink(missing_ok=True)
        entry.log_path = path if path.exists() else None

    @staticmethod
    def _kill(entry: _Running) -> None:
        if entry.process.is_alive():
            _kill_group(entry.process.pid)
            entry.process.kill()
        entry.process.join(timeout=10)
        entry.connection.close()
        entry.lifeline.close()


# --- Dask ----------------------------------------------------------------------------------


def run_isolated(job: Job, backend: str = "dask") -> JobOutput:
    """Run one job in a child process under the watchdog (what a Dask or Ray task does).

    A daemonic worker process may not start children (Dask's default for worker processes,
    unless ``distributed.worker.daemon`` is false): there the job runs in the worker itself,
    without the watchdog, and its row's ``info`` says ``isolation: in-process``.
    """
    if multiprocessing.current_process().daemon:
        output = execute_job(job, backend)
        output.row["info"] = dict(output.row.get("info") or {}, isolation="in-process")
        return output
    for event in LocalBackend(1, row_backend=backend).execute([job]):
        if isinstance(event, JobFinished):
            return event.output
    raise RuntimeError(f"job {job.job_id} produced no result")  # unreachable by construction


class DaskBackend(Backend):
    """Submit every job to a Dask cluster: ``address`` (``tcp://host:8786``, or a
    ``Client``), or a local cluster of ``parallel`` threads, each driving one job process."""

    name = "dask"

    def __init__(self, parallel: int, *, address=None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputError("the dask backend needs the dask extra: pip install "
                             "'optplan[dask]'", field="--backend") from None
        self._cluster = None
        if isinstance(address, Client):
            self._client, self._own_client = address, False
        elif address:
            self._client, self._own_client = Client(address), True
        else:
            self._cluster = LocalCluster(n_workers=1, threads_per_worker=max(1, parallel),
                                         processes=False, dashboard_address=None)
            self._client, self._own_client = Client(self._cluster), True
        threads = self._client.nthreads()
        self.slots = max(1, sum(threads.values())) if threads else max(1, parallel)

    def execute(self, jobs: Iterable[Job]) -> Iterator[JobStarted | JobFinished]:
        from dask.distributed import as_completed
        futures = {}
        for job in jobs:
            future = self._client.submit(run_isolated, job, self.name, pure=False,
                                         key=f"optplan-job-{job.job_id}-{os.urandom(4).hex()}")
            futures[future] = job
            yield JobStarted(job)
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    output = future.result()
                except Exception as error:  # a lost worker or a task the cluster failed
                    output = JobOutput(job_row(job, CRASHED, backend=self.name,
                                               reason=f"dask task failed: "
                                                      f"{type(error).__name__}: {error}"))
                yield JobFinished(job, output)
        finally:
            for future in futures:
                if not future.done():
                    future.cancel()

    def close(self) -> None:
        if self._own_client:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


# --- Ray -----------------------------------------------------------------------------------

_RAY_LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's node address is loopback


class RayBackend(Backend):
    """Submit every job as a Ray task: to the cluster at ``address`` (``auto``, ``host:port``,
    ``ray://host:port``), to the cluster this process is already connected to, or to a local
    cluster of ``parallel`` CPUs started here, which listens on the loopback interface only
    (and is shut down by :meth:`close`).

    A task asks for ``job.workers`` CPUs (one for a heuristic; at most the cluster's), so Ray
    runs as many jobs at a time as the cluster's cores hold, and runs its job through
    :func:`run_isolated`: a child process under the watchdog. ``max_retries=0``: a task whose
    worker died is not run again behind the runner's back; its job gets a ``CRASHED`` row.
    """

    name = "ray"

    def __init__(self, parallel: int, *, address=None):
        check_backend(self.name)
        if not address and "ray" not in sys.modules:
            os.environ.setdefault(_RAY_LOOPBACK, "0")  # read once, when ray is imported
        import ray

        self._ray = ray
        self._own_cluster = False
        if not ray.is_initialized():
            options = dict(log_to_driver=False, logging_level=logging.WARNING,
                           configure_logging=True)
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=max(1, parallel), include_dashboard=False, **options)
                self._own_cluster = True
        self._cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.slots = self._cpus
        self._remote = ray.remote(run_isolated)

    def execute(self, jobs: Iterable[Job]) -> Iterator[JobStarted | JobFinished]:
        ray = self._ray
        pending = {}
        for job in jobs:
            task = self._remote.options(num_cpus=min(self._cpus, job.workers or 1),
                                        max_retries=0, name=f"optplan-job-{job.job_id}")
            pending[task.remote(job, self.name)] = job
            yield JobStarted(job)
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(done[0])
                try:
                    output = ray.get(done[0])
                except Exception as error:  # a lost worker or node, a cancelled task
                    first_line = (str(error).splitlines() or [""])[0]
                    output = JobOutput(job_row(job, CRASHED, backend=self.name,
                                               reason=f"ray task failed: "
                                                      f"{type(error).__name__}: {first_line}"))
                yield JobFinished(job, output)
        finally:
            for ref in pending:  # force: the worker dies, and with it the job's process group
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # the cluster is gone already: so are its workers
                    pass

    def close(self) -> None:
        if self._own_cluster and self._ray.is_initialized():
            self._ray.shutdown()


_EXTRA_MODULES = {"dask": "distributed", "ray": "ray"}  # what each backend's extra installs


def check_backend(name: str) -> None:
    """Raise :class:`InputError` unless backend ``name`` can run here (checked before a run
    touches its directory)."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}",
                         field="--backend")
    module = _EXTRA_MODULES.get(name)
    if module is not None and importlib.util.find_spec(module) is None:
        raise InputError(f"the {name} backend needs the {name} extra: pip install "
                         f"'optplan[{name}]'", field="--backend")


def make_backend(name: str, parallel: int, *, core_budget: int | None = None,
                 log_dir: str | Path | None = None, address=None) -> Backend:
    """The backend called ``name``: ``local``, ``dask`` or ``ray`` (``address``: the Dask
    scheduler or the Ray cluster; default a local one)."""
    check_backend(name)
    if name == "dask":
        return DaskBackend(parallel, address=address)
    if name == "ray":
        return RayBackend(parallel, address=address)
    return LocalBackend(parallel, core_budget=core_budget, log_dir=log_dir)
