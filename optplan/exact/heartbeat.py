"""A heartbeat on stderr while an exact method runs: the incumbent, the bound, the gap and the
elapsed time every few seconds, read from the run's :class:`~optplan.exact.budget.Trajectory`
(so every exact method of every problem has it).

>>> with Heartbeat(every=5.0):            # doctest: +SKIP
...     solve(instance, "cpsat", "offsets", time_limit=60)
optplan: cpsat offsets  5.0 s of 60 s  incumbent 4,816,896 bytes  bound 4,608,000  gap 4.53%
"""

from __future__ import annotations

import sys
import threading

from optplan.exact.budget import active_trajectories
from optplan.result import relative_gap

__all__ = ["Heartbeat", "HEARTBEAT_SECONDS"]

HEARTBEAT_SECONDS = 5.0
"""Seconds between two heartbeat lines."""


class Heartbeat:
    """A context manager: while it is open, a daemon thread writes :meth:`line` to ``stream``
    every ``every`` seconds when an exact method is running."""

    def __init__(self, stream=None, every: float = HEARTBEAT_SECONDS):
        self.stream = sys.stderr if stream is None else stream
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="optplan-heartbeat",
                                        daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.beat()

    def beat(self) -> None:
        """Write one line about the oldest run under way (nothing when none is)."""
        line = self.line()
        if line:
            print(line, file=self.stream, flush=True)

    @staticmethod
    def line() -> str:
        """``optplan: LABEL  ELAPSED s of LIMIT s  incumbent X UNIT  bound Y  gap Z%``."""
        running = active_trajectories()
        if not running:
            return ""
        trajectory = running[0]
        budget = trajectory.budget
        incumbent, bound = trajectory.latest()
        limit = "" if budget.time_limit is None else f" of {budget.time_limit:g} s"
        gap = relative_gap(incumbent, bound)
        unit = f" {trajectory.unit}" if trajectory.unit else ""
        return (f"optplan: {trajectory.label}  {budget.elapsed():.1f} s{limit}  "
                f"incumbent {_number(incumbent)}{unit}  bound {_number(bound)}  "
                f"gap {'-' if gap is None else f'{100 * gap:.2f}%'}")


def _number(value) -> str:
    return "-" if value is None else f"{value:,}"
