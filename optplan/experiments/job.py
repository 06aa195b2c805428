"""Run one job in the current process, and the shape of a results row.

A row is :meth:`optplan.result.Result.to_dict` without the solution (that goes to
``solutions/<job_id>.csv``, a preload plan to ``solutions/<job_id>.json``), plus the job's
identity and how it ran. ``budget`` is a preload job's memory budget in bytes (``None`` for
the other problems, and for an unlimited budget). The pipeline adds three
statuses that exist only in rows, never in :class:`~optplan.result.Status`:

* ``TIMEOUT`` — the watchdog killed the job at about 1.5 × its time limit;
* ``CRASHED`` — the job's process died (a signal, a non-zero exit) before reporting;
* ``ERROR`` — the method raised an exception (its message is the ``reason``).
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from optplan.experiments.grid import Job, import_plugins
from optplan.problems import get_problem
from optplan.result import Result, Status

__all__ = ["JobOutput", "execute_job", "job_row", "TIMEOUT", "CRASHED", "ERROR",
           "PIPELINE_STATUSES", "FAILURE_STATUSES"]

TIMEOUT, CRASHED, ERROR = "TIMEOUT", "CRASHED", "ERROR"
FAILURE_STATUSES = (TIMEOUT, CRASHED, ERROR)
PIPELINE_STATUSES = tuple(s.value for s in Status) + FAILURE_STATUSES


@dataclass(frozen=True)
class JobOutput:
    """What a finished job hands back: its row and its solution file's text (if any)."""

    row: dict
    solution_text: str | None = None
    solution_suffix: str = ".csv"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def job_row(job: Job, status: str, *, result: Result | None = None, reason: str = "",
            started_at: str | None = None, elapsed_s: float | None = None,
            backend: str = "") -> dict:
    """The results row of ``job``: its identity, the result's fields, and how it ran."""
    row = {"job_id": job.job_id, "instance": job.instance.label,
           "instance_key": job.instance.key, "num_tensors": job.instance.num_tensors,
           "problem": job.problem.value, "method": job.method, "kind": job.kind,
           "status": status, "objective": None, "lower_bound": None, "best_bound": None,
           "gap": None, "wall_time_s": None, "valid": None, "violations": [],
           "reason": reason, "params": dict(job.params), "solver": "", "solver_version": "",
           "time_limit": job.time_limit, "workers": job.workers, "seed": job.seed,
           "inplace": job.inplace, "repetition": job.repetition, "budget": job.budget,
           "trajectory": [], "info": {}}
    if result is not None:
        data = result.to_dict()
        data.pop("solution", None)
        data.pop("instance", None)
        data.pop("problem", None)
        data.pop("method", None)
        row.update(data)
        row["status"] = status
    row.update({"started_at": started_at, "finished_at": utc_now(),
                "elapsed_s": None if elapsed_s is None else round(elapsed_s, 6),
                "host": platform.node(), "pid": os.getpid(), "backend": backend})
    return row


def execute_job(job: Job, backend: str = "") -> JobOutput:
    """Load the instance, run the method through :func:`optplan.solve.solve`, build the row.

    An exception from plugins, the instance or the method becomes an ``ERROR`` row with the
    exception's type and message; nothing escapes.
    """
    started_at, start = utc_now(), time.perf_counter()
    try:
        import_plugins(job.plugins)
        instance = job.instance.load(job.problem)
        result = solve_job(job, instance)
    except Exception as error:  # every method failure is recorded, never raised
        message = f"{type(error).__name__}: {error}".splitlines()[0]
        return JobOutput(job_row(job, ERROR, reason=message, started_at=started_at,
                                 elapsed_s=time.perf_counter() - start, backend=backend))
    text = None if result.solution is None else _solution_text(instance, result)
    row = job_row(job, result.status.value, result=result, started_at=started_at,
                  elapsed_s=time.perf_counter() - start, backend=backend)
    spec = get_problem(job.problem)
    if "budget" in spec.options and job.budget is None:
        row["budget"] = instance.budget  # the budget the instance file states
    if result.valid is False:
        row["reason"] = "invalid solution: " + (result.violations[0] if result.violations
                                                else "rejected by the validator")
    return JobOutput(row, text, spec.solution_suffix)


def solve_job(job: Job, instance):
    from optplan.solve import solve
    params = dict(job.params)
    if job.budget is not None:
        params["budget"] = job.budget
    return solve(instance, job.method, job.problem, inplace=job.inplace,
                 time_limit=job.time_limit, workers=job.workers, seed=job.seed, **params)


def _solution_text(instance, result: Result) -> str:
    """The solution as the problem's writer puts it in a file."""
    spec = get_problem(result.problem)
    with tempfile.TemporaryDirectory(prefix="optplan-solution-") as folder:
        path = Path(folder) / f"solution{spec.solution_suffix}"
        spec.write_solution(instance, result.solution, path)
        return path.read_text(encoding="utf-8")
