"""``optplan run CONFIG``: run (or resume) an experiment config into a run directory."""

from __future__ import annotations

import signal
import sys
import threading

from optplan.commands._common import positive_int
from optplan.experiments.backends import BACKENDS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run an experiment config (resumable)",
        description="Expand an experiment config (TOML) into jobs and run them, one process "
                    "per job, under a watchdog. Re-running the same command resumes: finished "
                    "jobs are skipped and crashed jobs run again. Exit 0 when every job reached "
                    "a terminal status other than CRASHED (timeouts and method errors "
                    "included), 1 when jobs crashed or the run did not finish, 2 for a config "
                    "error.")
    parser.add_argument("config", metavar="CONFIG", help="experiment config, e.g. "
                        "experiments/smoke.toml")
    parser.add_argument("--out", metavar="DIR",
                        help="run directory (default: runs/<config name>)")
    parser.add_argument("--jobs", type=positive_int, metavar="N",
                        help="jobs at a time (default: as many as fit in the cores, "
                             "a job taking its workers: cores // workers for exact jobs)")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where jobs run (default: local process pool)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="Dask scheduler or Ray cluster address (default: a local "
                             "cluster; Ray's listens on the loopback interface only)")
    parser.add_argument("--no-retry-crashed", dest="retry_crashed", action="store_false",
                        help="on resume, keep the rows of jobs that crashed instead of running "
                             "them again")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="bar", action="store_true", default=None,
                          help="always draw the progress bar")
    progress.add_argument("--no-progress", dest="bar", action="store_false",
                          help="one line per finished job instead of a bar")
    parser.set_defaults(run=run)


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # the run loop then stops its jobs and compacts the table


def run(args) -> int:
    from optplan.experiments.runner import format_summary, run_experiment

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    outcome = run_experiment(args.config, out=args.out, jobs=args.jobs, backend=args.backend,
                             address=args.scheduler, stream=sys.stderr, bar=args.bar,
                             retry_crashed=args.retry_crashed)
    print(format_summary(outcome.run_dir))
    print(f"manifest: {outcome.run_dir / 'manifest.json'}")
    print(f"table: {outcome.run_dir / 'results.parquet'} ({len(outcome.table)} rows), "
          f"{outcome.run_dir / 'results.csv'}")
    if outcome.crashed:
        print(f"optplan: {outcome.crashed} job(s) crashed (reasons above); running the same "
              "command again retries them", file=sys.stderr)
    return 0 if outcome.complete and not outcome.crashed else 1
