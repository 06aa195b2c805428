"""Brute force for tiny preload instances (method ``brute_force``; the tests' ground truth).

Every combination of weight decisions (each weight: a preload step of its window, or pinned)
is timed with the simulator's recurrences; memory feasibility of a combination at the budget is
decided by an exhaustive packing: the residence intervals are placed one tensor at a time, in
every order, each at its lowest free offset. Every packing can be compacted downwards into one
that this search generates (place the tensors in order of their offsets in the compacted
packing: each lands no higher than before), so the search is exact. Exponential: meant for
<= 4 layers, <= 3 weights, <= 8 tensors.
"""

from __future__ import annotations

import itertools

from optplan import __version__
from optplan.errors import InputError
from optplan.exact.run import ExactRun
from optplan.preload.bounds import latency_lower_bound
from optplan.preload.flexnn import plan_from_decisions
from optplan.preload.formulation import preload_options
from optplan.preload.model import PreloadInstance
from optplan.preload.simulate import memory_intervals, schedule
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["brute_force_preload", "brute_force_minimum_budget", "tightest_packing",
           "MAX_TENSORS"]

MAX_TENSORS = 8


def tightest_packing(intervals: list[tuple[int, int]], sizes: list[int],
                     cap: int | None = None) -> tuple[int, list[int]] | None:
    """The minimum ``max(offset + size)`` of the closed step ``intervals`` and its offsets;
    ``None`` when nothing fits within ``cap``. Branch and bound over placement orders."""
    count = len(sizes)
    best: list = [cap + 1 if cap is not None else float("inf"), None]
    offsets = [0] * count

    def lowest(index: int, placed: list[int]) -> int:
        first, last = intervals[index]
        busy = sorted((offsets[j], offsets[j] + sizes[j]) for j in placed
                      if intervals[j][0] <= last and first <= intervals[j][1])
        cursor = 0
        for low, high in busy:
            if low - cursor >= sizes[index]:
                return cursor
            cursor = max(cursor, high)
        return cursor

    def search(placed: list[int], top: int) -> None:
        if top >= best[0]:
            return
        if len(placed) == count:
            best[0], best[1] = top, list(offsets)
            return
        for index in range(count):
            if index in placed:
                continue
            offsets[index] = lowest(index, placed)
            search(placed + [index], max(top, offsets[index] + sizes[index]))

    search([], 0)
    if best[1] is None:
        return None
    return best[0], best[1]


def _combinations(instance: PreloadInstance):
    weights = [i for i, t in enumerate(instance.tensors) if t.is_weight]
    choices = [list(preload_options(instance, i)) + [None] for i in weights]
    for combination in itertools.product(*choices):
        yield dict(zip(weights, combination))


def _check_size(instance: PreloadInstance) -> None:
    if len(instance) > MAX_TENSORS:
        raise InputError(f"brute force takes at most {MAX_TENSORS} tensors, got {len(instance)}",
                         field="tensors")


def brute_force_preload(instance: PreloadInstance, *, time_limit=None, workers=None, seed=None,
                        warm_start=False, initial_solution=None,
                        **solver_params) -> SolverOutcome:
    """The minimum latency at ``instance.budget`` by exhaustive search (objective (a)): the
    decision sets by increasing latency, the first that packs is optimal. The keyword
    contract of every exact method; the warm start is off by default (an oracle owes nothing
    to the heuristics it checks); when the time limit stops the search, the warm start (if
    any) is returned, FEASIBLE."""
    if solver_params:
        name = next(iter(solver_params))
        raise InputError(f"brute force takes no solver parameter {name!r}", field=name)
    _check_size(instance)
    run = ExactRun(instance, "preload", solver="brute_force", version=__version__,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    run.raise_bound(latency_lower_bound(instance))
    run.start(warm_start, initial_solution)
    sizes = [t.size for t in instance.tensors]
    timed = sorted(((schedule(instance, d).latency_us, k, d)
                    for k, d in enumerate(_combinations(instance))), key=lambda x: x[:2])
    for latency, _, decisions in timed:
        run.raise_bound(latency)   # every faster decision set failed to pack
        if run.meets_bound() or run.out_of_time():
            return run.outcome()
        packing = tightest_packing(memory_intervals(instance, decisions), sizes, instance.budget)
        if packing is not None:
            run.offer(plan_from_decisions(instance, dict(enumerate(packing[1])), decisions))
            return run.outcome()
    return run.outcome(infeasible=True)


def brute_force_minimum_budget(instance: PreloadInstance,
                               latency_target: int | None = None) -> int | None:
    """The smallest budget at which latency <= ``latency_target`` (``None``: any latency)."""
    _check_size(instance)
    sizes = [t.size for t in instance.tensors]
    best = None
    for decisions in _combinations(instance):
        if latency_target is not None and schedule(instance, decisions).latency_us \
                > latency_target:
            continue
        packing = tightest_packing(memory_intervals(instance, decisions), sizes,
                                   None if best is None else best - 1)
        if packing is not None:
            best = packing[0]
    return best


@register("brute_force", "preload", kind="exact", input="records",
          reference="exhaustive search over preload decisions and packings (tests only)")
def brute_force(instance: PreloadInstance, *, time_limit=None, workers=None, seed=None,
                warm_start=False, initial_solution=None, **solver_params) -> SolverOutcome:
    """Exhaustive minimum latency for tiny instances (see :func:`brute_force_preload`)."""
    return brute_force_preload(instance, time_limit=time_limit, workers=workers, seed=seed,
                               warm_start=warm_start, initial_solution=initial_solution,
                               **solver_params)
