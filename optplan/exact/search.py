"""``search``: a dedicated exact method for the offsets problem, after MiniMalloc.

MiniMalloc (Moffitt, "MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated
Machine Learning", ASPLOS'23; ``google/minimalloc``) decides "is there a packing with arena
<= C?" by a depth-first search over canonical packings (see
:mod:`optplan.exact._search_core`). This module adds the optimisation on top: probe the lower
bound, then one granule below the best heuristic, then bisect. A probe that finds no packing
proves the bound C + one granule; a probe that runs out of time proves nothing.
"""

from __future__ import annotations

import dataclasses
import math
import time

from optplan import __version__
from optplan.bounds import offsets_bound
from optplan.errors import InputError
from optplan.exact._search_core import (PREORDERS, TIMEOUT, Prepared, SearchParams, decide,
                                        prepare)
from optplan.exact.budget import SPLIT
from optplan.exact.run import ExactRun
from optplan.heuristics.constructions import stacked_offsets
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["search", "pack", "SearchParams", "TIMEOUT", "PREORDERS"]

SOLVER = "optplan-search"


def _params(switches: dict) -> SearchParams:
    valid = SearchParams.switch_names()
    for name, value in switches.items():
        if name not in valid:
            raise InputError(f"unknown switch {name!r} of method 'search'; valid: "
                             + ", ".join(valid), field=name)
        if not isinstance(value, bool):
            raise InputError(f"switch {name!r} must be true or false, got {value!r}", field=name)
    return SearchParams(**switches)


def _prepare(instance: Instance) -> Prepared:
    if instance.inplace_pairs:
        raise InputError(f"method 'search' does not support in-place pairs (instance "
                         f"{instance.name!r} has {len(instance.inplace_pairs)})",
                         field="inplace")
    return prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)


def pack(instance: Instance, capacity: int, params: SearchParams = SearchParams(),
         deadline: float | None = None, *, stats: dict | None = None):
    """Decide whether ``instance`` packs with arena ``<= capacity`` (bytes).

    Parameters
    ----------
    instance : Instance
        Without in-place pairs.
    capacity : int
        The largest allowed ``offset + size``.
    params : SearchParams
        The search techniques to use.
    deadline : float, optional
        A :func:`time.perf_counter` value after which the search gives up.
    stats : dict, optional
        ``stats["nodes"]`` accumulates the search nodes.

    Returns
    -------
    tuple of int, None or TIMEOUT
        Offsets (multiples of the alignment) of a packing, ``None`` when none exists (proven),
        or :data:`TIMEOUT` when the deadline passed first (nothing proven).

    Examples
    --------
    >>> tetris = Instance.from_tuples([(0, 1, 2), (1, 2, 1), (2, 3, 2)])
    >>> pack(tetris, 3), pack(tetris, 2)
    ((0, 2, 0), None)
    """
    prep = _prepare(instance)
    result = decide(prep, capacity // prep.scale, params, deadline, stats)
    if result is None or result is TIMEOUT:
        return result
    return tuple(offset * prep.scale for offset in result)


@register("search", Problem.OFFSETS, kind="exact",
          reference="MiniMalloc (Moffitt, ASPLOS'23), google/minimalloc src/solver.cc")
def search(instance: Instance, *, time_limit: float | None = None, workers: int | None = None,
           seed: int | None = None, warm_start=True, initial_solution=None,
           **solver_params) -> SolverOutcome:
    """Minimise the arena by MiniMalloc-style depth-first search under a capacity bisection.

    Order of the probes (capacities in granules of the gcd of the sizes and the alignment):
    the lower bound (max breadth); then one granule below the best heuristic; then the middle
    of what is left open. A packing found at C is the new incumbent; no packing at C proves
    the bound C + 1 granule; a timed-out probe proves nothing. The lower-bound probe gets
    ``SPLIT.first_probe`` of the time (:data:`optplan.exact.budget.SPLIT`: when the bound is
    reachable, 8 of MiniMalloc's 11 challenging instances, that probe is all the proof needed),
    every later one ``SPLIT.later_probe`` of what remains (the last possible one all of it).

    Parameters
    ----------
    instance : Instance
        An offsets instance without in-place pairs.
    time_limit : float, optional
        Seconds for the whole run, warm start included (``None``: until proven).
    workers : int, optional
        Ignored: the search is pure Python and single-threaded.
    seed : int, optional
        Ignored: the search is deterministic.
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`): the first incumbent.
    **solver_params : bool
        Fields of :class:`SearchParams` (all ``True`` by default), e.g. ``dominance=False``.

    Returns
    -------
    SolverOutcome
        ``OPTIMAL`` only when the incumbent's arena (rounded up to the alignment) equals the
        proven bound; otherwise ``FEASIBLE`` with the proven bound. ``info`` holds ``nodes``,
        ``probes`` (capacity, result, seconds, nodes each), ``time_limit`` and the switches.

    Examples
    --------
    >>> outcome = search(Instance.from_tuples([(0, 1, 2), (1, 2, 1), (2, 3, 2)]))
    >>> outcome.status, outcome.solution.arena_size, outcome.best_bound
    (<Status.OPTIMAL: 'OPTIMAL'>, 3, 3)
    """
    params = _params(solver_params)
    prep = _prepare(instance)
    run = ExactRun(instance, Problem.OFFSETS, solver=SOLVER, version=__version__,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    granule = prep.alignment  # objective values are multiples of granule * prep.scale
    scale = prep.scale
    bound = round_up(math.ceil(offsets_bound(instance) / scale), granule)
    run.raise_bound(bound * scale)
    run.start(warm_start, initial_solution, fallback=stacked_offsets)
    incumbent = run.objective
    deadline = run.budget.deadline()
    probes: list[dict] = []
    nodes = 0

    search_low = bound  # where the next probes start (>= bound: timeouts prove nothing)
    while True:
        # Capacities (scaled, multiples of the granule) that could still beat the incumbent.
        high = (incumbent - 1) // scale // granule * granule
        if search_low > high:
            break
        if not probes:
            capacity = search_low
        elif len(probes) == 1:
            capacity = high
        else:
            capacity = search_low + (high - search_low) // 2 // granule * granule
        now = time.perf_counter()
        if run.out_of_time():
            break
        probe_deadline = None if deadline is None else (
            deadline if search_low == high else now + (deadline - now) * (
                SPLIT.first_probe if not probes else SPLIT.later_probe))
        stats = {"nodes": 0}
        result = decide(prep, capacity, params, probe_deadline, stats)
        nodes += stats["nodes"]
        if result is TIMEOUT:
            outcome_name = "timeout"
            search_low = capacity + granule
        elif result is None:
            outcome_name = "infeasible"
            bound = search_low = capacity + granule
            run.raise_bound(min(bound * scale, incumbent))
        else:
            outcome_name = "feasible"
            run.offer(OffsetsSolution.from_offsets(instance, [o * scale for o in result]))
            incumbent = run.objective
        probes.append({"capacity": capacity * scale, "result": outcome_name,
                       "seconds": round(time.perf_counter() - now, 6),
                       "nodes": stats["nodes"]})

    run.info |= {"nodes": nodes, "probes": probes, "granule": granule * scale,
                 "switches": dataclasses.asdict(params)}
    return run.outcome()
