"""Combinatorial lower bounds (Pisarchyk & Lee 2020, §4–5), and :func:`lower_bound` of any
problem on the problem table.

* Shared objects: the sum of **positional maximums** — the i-th positional maximum is the
  largest i-th biggest size over all operator profiles. Any assignment needs, at the op where
  the i-th positional maximum is attained, i distinct objects, the i-th of size at least that.
* Offsets: the **max breadth**, rounded up to the alignment.

With in-place pairs both are taken over the in-place-trimmed profiles (``docs/problems.md``).
"""

from __future__ import annotations

import numpy as np

from optplan.model import Instance, round_up
from optplan.problems import Problem, get_problem
from optplan.profiles import breadths, compressed_times
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["positional_maximums", "max_breadth", "lower_bound", "trimmed_lifetimes",
           "maximal_profiles", "inplace_positional_maximums", "inplace_max_breadth",
           "shared_objects_bound", "offsets_bound"]


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


def lower_bound(instance, problem: Problem | str) -> int:
    """The combinatorial lower bound of ``problem`` on ``instance`` (the problem table's)."""
    return get_problem(problem).lower_bound(instance)


# --- In-place variants: profiles without each pair's junction op --------------------------

def trimmed_lifetimes(instance: Instance, trim: str = "targets"
                      ) -> list[tuple[int, int] | None]:
    """Each record's lifetime without its in-place junction op (``None`` when nothing is left).

    ``trim="targets"`` drops the first op of every pair's target (what the models use);
    ``trim="sources"`` drops the last op of every pair's source instead. See the module
    docstring. Without in-place pairs these are the records' lifetimes.
    """
    if trim not in ("targets", "sources"):
        raise ValueError(f"trim must be 'targets' or 'sources', got {trim!r}")
    trimmed = {b if trim == "targets" else a for a, b in instance.inplace_pairs}
    lifetimes: list[tuple[int, int] | None] = []
    for index, record in enumerate(instance.records):
        first = record.first_op + (trim == "targets" and index in trimmed)
        last = record.last_op - (trim == "sources" and index in trimmed)
        lifetimes.append((first, last) if first <= last else None)
    return lifetimes


def maximal_profiles(lifetimes: list[tuple[int, int] | None]) -> list[list[int]]:
    """The operator profiles of ``lifetimes`` that no other profile contains, deduplicated.

    A profile is maximal exactly when some lifetime starts there and some lifetime ends there
    (otherwise its neighbour on one side contains it). O(n log n + sum of maximal profile
    sizes).
    """
    # Sweep: starts before ends at the same op (closed lifetimes); the live set at the first
    # end after a start is a maximal profile, and no two recorded sets contain each other.
    events = []
    for index, life in enumerate(lifetimes):
        if life is not None:
            events.append((life[0], 0, index))   # starts before ends at the same op
            events.append((life[1], 1, index))
    events.sort()
    live: set[int] = set()
    profiles: list[list[int]] = []
    grew = False
    for _, kind, index in events:
        if kind == 0:
            live.add(index)
            grew = True
        else:
            if grew:
                profiles.append(sorted(live))
                grew = False
            live.discard(index)
    return profiles


def _positional_maximums_of(instance: Instance, lifetimes) -> list[int]:
    result: list[int] = []
    for profile in maximal_profiles(lifetimes):
        ranked = sorted((instance.records[i].size for i in profile), reverse=True)
        for position, size in enumerate(ranked):
            if position == len(result):
                result.append(size)
            elif size > result[position]:
                result[position] = size
    return result


def inplace_positional_maximums(instance: Instance) -> list[int]:
    """Positional maximums over the trimmed profiles (Pisarchyk & Lee 2020, §4).

    Equal to :func:`optplan.bounds.positional_maximums` without in-place pairs; with them it is
    still a valid lower bound, because trimmed profiles are cliques of must-differ records.
    Of the two trims (targets, sources) the one with the larger sum is returned.
    """
    options = [_positional_maximums_of(instance, trimmed_lifetimes(instance, trim))
               for trim in (("targets", "sources") if instance.inplace_pairs else ("targets",))]
    return max(options, key=sum)


def inplace_max_breadth(instance: Instance) -> int:
    """Max breadth over the trimmed profiles (a valid OC lower bound with in-place pairs)."""
    sizes = [r.size for r in instance.records]
    return max((sum(sizes[i] for i in profile)
                for trim in ("targets", "sources")
                for profile in maximal_profiles(trimmed_lifetimes(instance, trim))), default=0)


def shared_objects_bound(instance: Instance) -> int:
    """Lower bound on the SO(-IP) objective: the sum of (trimmed) positional maximums.

    With in-place pairs the plain bound is not valid (a pair may share memory at its junction
    op); it is then taken over the trimmed profiles, which equal the plain ones without pairs.
    """
    if instance.inplace_pairs:
        return sum(inplace_positional_maximums(instance))
    return sum(positional_maximums(instance))


def offsets_bound(instance: Instance) -> int:
    """Lower bound on the OC(-IP) objective: the (trimmed) max breadth, rounded up."""
    breadth = inplace_max_breadth(instance) if instance.inplace_pairs else max_breadth(instance)
    return round_up(breadth, instance.alignment)


@register("lower_bound", Problem.SHARED_OBJECTS, kind="bound",
          reference="Pisarchyk & Lee 2020, sum of positional maximums")
def shared_objects_bound_method(instance: Instance) -> SolverOutcome:
    """The positional-maximums bound as a method (no solution, status UNKNOWN)."""
    return SolverOutcome(Status.UNKNOWN, None, best_bound=shared_objects_bound(instance),
                         solver="combinatorial")


@register("lower_bound", Problem.OFFSETS, kind="bound",
          reference="Pisarchyk & Lee 2020, max breadth")
def offsets_bound_method(instance: Instance) -> SolverOutcome:
    """The max-breadth bound as a method (no solution, status UNKNOWN)."""
    return SolverOutcome(Status.UNKNOWN, None, best_bound=offsets_bound(instance),
                         solver="combinatorial")
