"""One time budget, one anytime curve and one time split for every exact method of every
problem.

* :class:`Budget` — the wall-clock budget of one call. ``time_limit`` covers everything the
  method does (set-up, warm start, model building, solving, extraction): every stage asks the
  budget what is left, and no solver starts once it is spent. What cannot be interrupted —
  a model build that started in time, a solver's start-up (CP-SAT's presolve runs past its
  own limit: 1.2 s on the GPT-2 training graph, several seconds on a loaded machine) — may
  overrun the limit; a solver's overrun is learnt (:meth:`Budget.solver_seconds`) and kept
  free in later stages. Beyond that a call may take :data:`MARGIN_SECONDS` to extract and
  check its answer; ``bench/time_limits.py`` prints the figures.
* :class:`Trajectory` — the ``(seconds, incumbent, bound)`` samples of the anytime curve, kept
  monotone; the heartbeat (:mod:`optplan.exact.heartbeat`) reads it while a method runs.
* :data:`SPLIT` — how an exact method splits its time between its stages: the one place that
  decides it.

The clock is :data:`clock` (``time.perf_counter``); tests replace it to check that each stage
consults the budget without timing anything.
"""

from __future__ import annotations

import itertools
import time
import weakref
from dataclasses import dataclass, field

from optplan.errors import InputError
from optplan.result import Status

__all__ = ["Budget", "Trajectory", "TimeSplit", "SPLIT", "MARGIN_SECONDS", "DEFAULT_TIME_LIMIT",
           "clock", "solver_options", "status_for", "STOPPED", "active_trajectories"]

clock = time.perf_counter
"""The clock every :class:`Budget` reads (seconds; only differences matter)."""

MARGIN_SECONDS = 1.0
"""What a call may use beyond its time limit besides a model build already under way:
validating, extracting and stitching its answer after the last solver stopped."""

DEFAULT_TIME_LIMIT = 60.0
"""The time limit of exact methods on the command line when none is given (``optplan solve``,
``optplan compare``; ``--time-limit none`` lifts it). The Python API has none by default."""

STOPPED = "time limit"
"""``info["stopped"]`` of a method that stopped because its budget was spent."""


@dataclass(frozen=True)
class TimeSplit:
    """Shares of a call's time limit given to its stages, and the stage lengths used when
    there is no limit. Every exact method takes its defaults from :data:`SPLIT`.

    ``warm_start``: heuristics for the warm start are *started* during this share;
    ``warm_start_cap``: a started heuristic is stopped when this share is spent (so that one
    slow heuristic cannot eat the solver's time); ``feasibility_first``: an offsets part's
    share for the model with the arena fixed at the bound; ``search_bound``: an offsets part's
    share for CP-SAT's bound from the search's refutations; ``first_model`` and
    ``column_generation``: the first CP-SAT phase and the configuration LP of shared objects;
    ``dive`` and ``integer_master``: within column generation, the price-and-branch dive (of
    what is left) and the integer restricted master (of the stage's limit); ``first_probe``
    and ``later_probe``: a capacity bisection's lower-bound probe and every later probe (of
    what is left; the ``minimalloc`` peer), ``first_probe`` also ``search``'s *prove* loop
    with one worker; ``search_refute``: with two workers, the share of the time ``search``'s
    *prove* loop refutes its bound before it turns to the rounds that probe it;
    ``relaxation``: preload's cumulative relaxation and its packings;
    ``slicing_search``: preload with layer slicing, the search over slicings before the joint
    model, and within it ``fluid_master`` (doubled when a master solve found nothing new),
    ``unsliced`` and ``fixed_slicing`` (of the stage's limit) for the first master solve, the
    plan without slicing and every other slicing solved exactly. The ``*_seconds`` fields
    are the stage lengths without a time limit.
    """

    warm_start: float = 0.1
    warm_start_cap: float = 0.3
    feasibility_first: float = 0.3
    search_bound: float = 0.1
    first_model: float = 0.2
    column_generation: float = 0.3
    dive: float = 0.5
    integer_master: float = 0.25
    first_probe: float = 0.5
    later_probe: float = 0.5
    search_refute: float = 0.1
    relaxation: float = 0.3
    slicing_search: float = 0.6
    fluid_master: float = 0.25
    unsliced: float = 0.6
    fixed_slicing: float = 0.15
    first_model_seconds: float = 10.0
    configuration_seconds: float = 60.0
    integer_master_seconds: float = 30.0
    pack_seconds: float = 2.0


SPLIT = TimeSplit()


class Budget:
    """Wall-clock budget of one solver call (``time_limit=None``: unlimited; 0: spent)."""

    def __init__(self, time_limit: float | None):
        if time_limit is not None and not time_limit >= 0:
            raise InputError(f"must be >= 0, got {time_limit!r}", field="time_limit")
        self.time_limit = None if time_limit is None else float(time_limit)
        self.start = clock()
        self.solver_overrun = 0.0

    def elapsed(self) -> float:
        return clock() - self.start

    def remaining(self) -> float | None:
        """Seconds left (0 when spent; ``None`` when unlimited)."""
        if self.time_limit is None:
            return None
        return max(0.0, self.time_limit - self.elapsed())

    def exhausted(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    def share(self, fraction: float) -> float | None:
        """``fraction`` of the time limit, at most what is left (``None`` when unlimited)."""
        if self.time_limit is None:
            return None
        return min(fraction * self.time_limit, self.remaining())

    def solver_seconds(self, seconds: float | None = None) -> float | None:
        """The limit to give a solver: ``seconds`` (``None``: what is left), at most what is
        left less the largest overrun a solver has shown so far (0: do not start one)."""
        left = self.remaining()
        if left is None:
            return seconds
        left = max(0.0, left - self.solver_overrun)
        return left if seconds is None else min(seconds, left)

    def solver_ran(self, limit: float | None, seconds: float) -> None:
        """A solver given ``limit`` seconds took ``seconds``: remember its overrun."""
        if limit is not None:
            self.solver_overrun = max(self.solver_overrun, seconds - limit)

    def part(self, seconds: float | None) -> "Budget":
        """A budget for one stage: ``seconds`` (``None``: the rest), never beyond this one."""
        left = self.remaining()
        if left is None:
            return Budget(seconds)
        return Budget(left if seconds is None else min(seconds, left))

    def deadline(self) -> float | None:
        """The end of the budget as a ``time.perf_counter()`` value (for solver loops that
        read that clock themselves)."""
        left = self.remaining()
        return None if left is None else time.perf_counter() + left


_ACTIVE: "weakref.WeakValueDictionary[int, Trajectory]" = weakref.WeakValueDictionary()
_SEQUENCE = itertools.count()


@dataclass
class Trajectory:
    """``(seconds, incumbent, bound)`` samples in objective units, kept monotone.

    ``label`` names the run for the heartbeat (e.g. ``"cpsat offsets"``), ``unit`` the
    objective's unit. A trajectory is *active* from its creation until :meth:`as_tuple` hands
    its samples over.
    """

    budget: Budget
    label: str = ""
    unit: str = ""
    samples: list = field(default_factory=list)
    _key: int = field(default=-1, init=False, repr=False, compare=False)

    def __post_init__(self):
        self._key = next(_SEQUENCE)
        _ACTIVE[self._key] = self

    def record(self, incumbent: int | None, bound: int | None, seconds: float | None = None):
        seconds = self.budget.elapsed() if seconds is None else seconds
        if self.samples:
            _, last_incumbent, last_bound = self.samples[-1]
            if last_incumbent is not None:
                incumbent = last_incumbent if incumbent is None else min(incumbent,
                                                                         last_incumbent)
            if last_bound is not None:
                bound = last_bound if bound is None else max(bound, last_bound)
            if (incumbent, bound) == (last_incumbent, last_bound):
                return
        self.samples.append((round(seconds, 6), incumbent, bound))

    def latest(self) -> tuple[int | None, int | None]:
        """The incumbent and bound of the last sample."""
        return self.samples[-1][1:] if self.samples else (None, None)

    def as_tuple(self) -> tuple:
        _ACTIVE.pop(self._key, None)
        return tuple(self.samples)


def active_trajectories() -> list[Trajectory]:
    """The trajectories of the runs under way, oldest first (the heartbeat shows the
    oldest: the whole run, not one of its parts)."""
    return [trajectory for _, trajectory in sorted(_ACTIVE.items())]


def solver_options(time_limit, workers, seed, default_workers: int) -> dict:
    """The effective solver flags (what ``info`` records)."""
    return {"time_limit": time_limit, "workers": default_workers if workers is None else workers,
            "seed": 0 if seed is None else seed}


def status_for(objective: int | None, bound: int | None, proven: bool) -> Status:
    """OPTIMAL when the solver proved it or the objective meets a proven bound."""
    if objective is None:
        return Status.UNKNOWN
    if proven or (bound is not None and objective <= bound):
        return Status.OPTIMAL
    return Status.FEASIBLE
