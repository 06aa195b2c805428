"""The run loop: config → grid → backend → run directory, resumable, with progress.

:func:`run_experiment` validates the whole config before any job starts, skips the jobs that
already have a row in ``results.jsonl`` (resume), hands the rest to a backend, writes each
finished job's solution file and then its row (flushed), and compacts the table at the end,
also when interrupted. A preload budget sweep's endpoints are frozen in
``RUN/preload_budgets.json`` on the first run and read back on resume
(:mod:`optplan.experiments.budgets`). Jobs that crashed (their process died) run again on
resume unless ``retry_crashed=False``. Exit-code policy (``optplan run``): config errors are
:class:`~optplan.errors.InputError` (2); a run whose jobs all reached a terminal status other
than ``CRASHED`` is a success (0), timeouts and method errors included; a run with crashed
jobs, or one that did not finish, exits 1.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pandas as pd

from optplan.experiments.backends import (JobFinished, JobStarted, available_cores,
                                          check_backend, default_parallelism, make_backend)
from optplan.experiments.budgets import CACHE_FILE, BudgetCache
from optplan.experiments.config import load_config
from optplan.experiments.grid import Job, expand
from optplan.experiments.job import CRASHED, FAILURE_STATUSES, PIPELINE_STATUSES, utc_now
from optplan.experiments.manifest import Manifest
from optplan.experiments.store import RunStore, read_rows
from optplan.formats.paths import check_output_folder

__all__ = ["RunOutcome", "Progress", "run_experiment", "default_out", "format_summary"]


@dataclass(frozen=True)
class RunOutcome:
    """What one invocation did: jobs in the grid, already done, run now, and final counts."""

    run_dir: Path
    jobs_total: int
    jobs_skipped: int
    jobs_run: int
    status_counts: dict[str, int]
    state: str
    table: pd.DataFrame

    @property
    def complete(self) -> bool:
        return self.state == "complete" and sum(self.status_counts.values()) == self.jobs_total

    @property
    def crashed(self) -> int:
        """Jobs of the grid whose row is ``CRASHED`` (after this invocation's retries)."""
        return self.status_counts.get(CRASHED, 0)


def default_out(config_name: str) -> Path:
    """``runs/<config name>``: the same command always finds its run again."""
    return Path("runs") / config_name


class Progress:
    """A tqdm bar (done/total, running, elapsed/ETA) on a terminal; otherwise one summary line
    per finished job."""

    def __init__(self, total: int, done: int, slots: int, *, stream: TextIO = sys.stderr,
                 bar: bool | None = None):
        self.total, self.done, self.slots, self.stream = total, done, slots, stream
        self.running = 0
        self.start = time.monotonic()
        self.bar = None
        if bar if bar is not None else _is_terminal(stream):
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=done, file=stream, unit="job",
                            dynamic_ncols=True, smoothing=0.05)
            self.bar.set_postfix(running=0)

    def started(self, job: Job) -> None:
        self.running += 1
        self._postfix()

    def finished(self, job: Job, row: dict) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
            self._postfix()
            if row["status"] in FAILURE_STATUSES:
                self.bar.write(f"{row['status']}: {job.describe()}: {row.get('reason', '')}",
                               file=self.stream)
            return
        width = len(str(self.total))
        self._emit(f"[{self.done:>{width}}/{self.total}] {row['status']:<10} {job.describe()}"
                   f"{_outcome_text(row)}")

    def _emit(self, line: str) -> None:
        """Print a line; a closed or broken stream silences progress, never the run."""
        if self.stream is None:
            return
        try:
            print(line, file=self.stream, flush=True)
        except (OSError, ValueError):
            self.stream = None

    def _postfix(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix(running=min(self.running, self.slots), refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _outcome_text(row: dict) -> str:
    if row["status"] in FAILURE_STATUSES:
        return f": {row.get('reason') or ''}"
    parts = []
    if row.get("objective") is not None:
        parts.append(f"objective {row['objective']}")
    if row.get("best_bound") is not None:
        parts.append(f"bound {row['best_bound']}")
    if row.get("gap") is not None:
        parts.append(f"gap {100 * row['gap']:.2f}%")
    if row.get("valid") is False:
        parts.append("INVALID")
    if row.get("wall_time_s") is not None:
        parts.append(f"{row['wall_time_s']:.3g} s")
    return ": " + ", ".join(parts) if parts else ""


def run_experiment(config_path: str | Path, *, out: str | Path | None = None,
                   jobs: int | None = None, backend: str = "local", address=None,
                   stream: TextIO = sys.stderr, bar: bool | None = None,
                   retry_crashed: bool = True) -> RunOutcome:
    """Run (or resume) the experiment at ``config_path`` into ``out``.

    Parameters
    ----------
    config_path : path
        The TOML experiment config.
    out : path, optional
        The run directory (default ``runs/<config name>``). Re-running on the same directory
        skips finished jobs and redoes the others.
    retry_crashed : bool
        On resume, run the jobs whose row is ``CRASHED`` (their process died: a signal, a
        killed worker, a lost Dask task) again; their new row supersedes the old one, which
        stays in ``results.jsonl``, and counts the attempt. ``False`` keeps them as they are.
    jobs : int, optional
        Jobs at a time. Default: as many as fit in the cores, a job taking its ``workers``
        (so ``cores // workers`` for exact jobs; heuristics take one core each).
    backend : {"local", "dask", "ray"}
        Where jobs run; ``address`` is the Dask scheduler or the Ray cluster (default: a
        local cluster).
    stream, bar
        Where progress goes, and whether to draw a bar (default: when ``stream`` is a tty).

    Raises
    ------
    InputError
        For any config error, before a job starts or the directory is touched.
    """
    check_backend(backend)
    config = load_config(config_path)
    run_dir = Path(out) if out is not None else default_out(config.name)
    check_output_folder(run_dir, "--out")
    budget_cache = BudgetCache.read(run_dir / CACHE_FILE)
    plan = expand(config, budget_cache)
    for note in plan.warnings:
        print(f"optplan: warning: {note}", file=stream)
    for identity in budget_cache.computed:
        ends = budget_cache.entries[identity]
        print(f"optplan: preload budgets of {identity.split('@')[0]}: {ends.minimum} "
              f"({ends.minimum_status}) to {ends.no_pressure} ({ends.no_pressure_status})",
              file=stream)
    store = RunStore(run_dir)
    store.lock()
    try:
        store.prepare(config.text, config.path)
        budget_cache.write(run_dir / CACHE_FILE)
        finished, cut_lines = store.finished_rows()
        order = [job.job_id for job in plan.jobs]
        in_grid = set(order)
        foreign = len(set(finished) - in_grid)
        if cut_lines:
            print(f"optplan: ignoring {cut_lines} incomplete line(s) of "
                  f"{store.results_path}; their jobs run again", file=stream)
        if foreign:
            print(f"optplan: warning: {foreign} row(s) of {store.results_path} belong to no "
                  "job of this grid; they stay there but not in the table", file=stream)
        attempts = {job_id: int(row.get("attempt") or 1) for job_id, row in finished.items()}
        if retry_crashed:
            crashed = [i for i in order if finished.get(i, {}).get("status") == CRASHED]
            for job_id in crashed:
                del finished[job_id]
            if crashed:
                print(f"optplan: running {len(crashed)} crashed job(s) again "
                      "(--no-retry-crashed keeps them)", file=stream)
        counts = collections.Counter(finished[i]["status"] for i in in_grid & set(finished))
        pending = [job for job in plan.jobs if job.job_id not in finished]
        if jobs is not None:  # the user's count, whatever the jobs' widths
            parallel, core_budget = jobs, None
        elif backend in ("local", "ray"):  # a job takes its workers' cores
            parallel = core_budget = available_cores()
        else:
            parallel, core_budget = default_parallelism(config.workers), None
        manifest = Manifest(store.manifest_path)
        session = manifest.start_session(
            config_name=config.name, config_path=str(config.path), config_text=config.text,
            jobs_total=len(plan.jobs), jobs_done=len(plan.jobs) - len(pending),
            backend=backend, parallel=parallel, core_budget=core_budget, started_at=utc_now(),
            warnings=list(plan.warnings), settings=_settings(config))
        run_count, state = 0, "interrupted"
        try:
            if pending:
                run_count = _run_pending(store, pending, backend, parallel, core_budget,
                                         address, counts, attempts, total=len(plan.jobs),
                                         stream=stream, bar=bar)
            state = "complete"
        finally:
            manifest.end_session(session, ended_at=utc_now(), state=state, jobs_run=run_count,
                                 status_counts=_ordered_counts(counts))
            table = store.compact(order)
    finally:
        store.unlock()
    return RunOutcome(run_dir, len(plan.jobs), len(plan.jobs) - len(pending), run_count,
                      _ordered_counts(counts), state, table)


def _settings(config) -> dict:
    """The grid-wide solver settings, for the manifest."""
    return {"problems": [p.value for p in config.problems], "time_limits": config.time_limits,
            "seeds": config.seeds, "workers": config.workers,
            "repetitions": config.repetitions, "inplace": config.inplace,
            "watchdog": dataclasses.asdict(config.watchdog)}


def _run_pending(store: RunStore, pending: list[Job], backend_name: str, parallel: int,
                 core_budget: int | None, address, counts: collections.Counter,
                 attempts: dict[str, int], *, total: int, stream: TextIO,
                 bar: bool | None) -> int:
    run_count = 0
    with make_backend(backend_name, parallel, core_budget=core_budget, log_dir=store.log_dir,
                      address=address) as backend, \
            Progress(total, total - len(pending), backend.slots, stream=stream,
                     bar=bar) as progress:
        for event in backend.execute(pending):
            if isinstance(event, JobStarted):
                progress.started(event.job)
                continue
            assert isinstance(event, JobFinished)
            output = event.output
            row = dict(output.row)
            row["attempt"] = attempts.get(event.job.job_id, 0) + 1
            row["solution_file"] = None
            if output.solution_text is not None:
                row["solution_file"] = store.write_solution(event.job.job_id,
                                                            output.solution_text,
                                                            output.solution_suffix)
            store.append(row)
            counts[row["status"]] += 1
            run_count += 1
            progress.finished(event.job, row)
    return run_count


def _ordered_counts(counts) -> dict[str, int]:
    known = {status: counts[status] for status in PIPELINE_STATUSES if counts.get(status)}
    return known | {s: n for s, n in sorted(counts.items()) if s not in known and n}


def format_summary(run_dir: str | Path, *, max_failures: int = 20) -> str:
    """A plain-text summary of a run directory: jobs done and pending, counts per status and
    per method, and every failure (timeout, crash, error, invalid solution) with its reason."""
    run_dir = Path(run_dir)
    rows, cut = read_rows(run_dir / "results.jsonl")
    manifest = Manifest(run_dir / "manifest.json").data
    total = manifest.get("jobs_total")
    lines = [f"run: {run_dir}"]
    config = manifest.get("config", {})
    if config:
        lines[0] += f"  (config {config.get('name')!r})"
    pending = "" if total is None else f", {max(0, total - len(rows))} pending of {total}"
    lines.append(f"jobs: {len(rows)} finished{pending}"
                 + (f"; {cut} incomplete line(s) ignored" if cut else ""))
    sessions = manifest.get("sessions", [])
    if sessions:
        last = sessions[-1]
        git = last.get("provenance", {}).get("git", {})
        lines.append(f"last session: {last.get('state')} {last.get('started_at')} → "
                     f"{last.get('ended_at')} on {last.get('backend')} "
                     f"({last.get('parallel')} at a time), git {git.get('commit') or '?'}"
                     + (" (dirty)" if git.get("dirty") else ""))
    counts = _ordered_counts(collections.Counter(row.get("status") for row in rows.values()))
    if counts:
        lines.append("status: " + ", ".join(f"{s} {n}" for s, n in counts.items()))
    by_method: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bounds = {row.get("method") for row in rows.values() if row.get("kind") == "bound"}
    for row in rows.values():
        by_method[row.get("method", "?")][row.get("status")] += 1
    if by_method:
        width = max(map(len, by_method))
        lines.append("by method:")
        for method in sorted(by_method):
            text = ", ".join(f"{s} {n}" for s, n in _ordered_counts(by_method[method]).items())
            if method in bounds:
                text += " (a bound method: a bound and no solution, so UNKNOWN)"
            lines.append(f"  {method:<{width}}  {text}")
    failures = [row for row in rows.values()
                if row.get("status") in FAILURE_STATUSES or row.get("valid") is False]
    if failures:
        lines.append(f"failures ({len(failures)}):")
        for row in failures[:max_failures]:
            lines.append(f"  {row.get('status'):<8} {row.get('method')} "
                         f"{str(row.get('problem', '')).replace('_', '-')} "
                         f"{row.get('instance')} [{row.get('job_id')}]: {row.get('reason')}")
        if len(failures) > max_failures:
            lines.append(f"  ... and {len(failures) - max_failures} more")
    return "\n".join(lines)
