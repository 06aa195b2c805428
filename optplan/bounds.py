"""Combinatorial lower bounds (Pisarchyk & Lee 2020, §4–5).

* Shared objects: the sum of **positional maximums** — the i-th positional maximum is the
  largest i-th biggest size over all operator profiles. Any assignment needs, at the op where
  the i-th positional maximum is attained, i distinct objects, the i-th of size at least that.
* Offsets: the **max breadth**, rounded up to the alignment.
"""

from __future__ import annotations

import numpy as np

from optplan.model import Instance, Problem, round_up
from optplan.profiles import breadths, compressed_times
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["positional_maximums", "max_breadth", "lower_bound"]


def positional_maximums(instance: Instance) -> list[int]:
    """Positional maximums, largest first.

    Processes records by decreasing size and keeps, per kept op, the count of records placed
    so far: after placing a record of size s the deepest profile holds c records of size >= s,
    so positions up to c are at least s, and the first record to reach a depth fixes it.
    Complexity O(n log n + n·L) with L the mean compressed lifetime.
    """
    first, last, count = compressed_times(instance)
    depth = np.zeros(count, dtype=np.int64)
    result: list[int] = []
    order = np.argsort(-instance.sizes, kind="stable")
    for index in order.tolist():
        start, end = int(first[index]), int(last[index]) + 1
        depth[start:end] += 1
        deepest = int(depth[start:end].max())
        while len(result) < deepest:
            result.append(int(instance.sizes[index]))
    return result


def max_breadth(instance: Instance) -> int:
    """The largest operator breadth (0 for an empty instance)."""
    values = breadths(instance)
    return int(values.max()) if len(values) else 0


def lower_bound(instance: Instance, problem: Problem | str) -> int:
    """The combinatorial lower bound of ``problem`` on ``instance``."""
    problem = Problem.parse(problem)
    if problem is Problem.PRELOAD:
        from optplan.preload import latency_lower_bound

        return latency_lower_bound(instance)
    if problem is Problem.SHARED_OBJECTS:
        return sum(positional_maximums(instance))
    return round_up(max_breadth(instance), instance.alignment)


def _bound_outcome(instance: Instance, problem: Problem) -> SolverOutcome:
    return SolverOutcome(Status.UNKNOWN, None, best_bound=lower_bound(instance, problem),
                         solver="combinatorial")


@register("lower_bound", Problem.SHARED_OBJECTS, kind="bound",
          reference="Pisarchyk & Lee 2020, sum of positional maximums")
def shared_objects_bound(instance: Instance) -> SolverOutcome:
    """The positional-maximums bound as a method (no solution, status UNKNOWN)."""
    return _bound_outcome(instance, Problem.SHARED_OBJECTS)


@register("lower_bound", Problem.OFFSETS, kind="bound",
          reference="Pisarchyk & Lee 2020, max breadth")
def offsets_bound(instance: Instance) -> SolverOutcome:
    """The max-breadth bound as a method (no solution, status UNKNOWN)."""
    return _bound_outcome(instance, Problem.OFFSETS)
