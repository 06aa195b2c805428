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

from optplan.bounds import lower_bound
from optplan.errors import InputError
from optplan.exact._search_core import (PREORDERS, TIMEOUT, Prepared, SearchParams, decide,
                                        prepare)
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["search", "pack", "SearchParams", "TIMEOUT", "PREORDERS"]

SOLVER = "optplan-search"
FIRST_PROBE_SHARE = 0.5
"""Share of the time limit for the lower-bound probe. When the bound is reachable (8 of
MiniMalloc's 11 challenging instances) that probe is all the proof needed, and it needs at
most 4.2 CPU-s there; the other half goes to the bisection where it is not."""


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


INCUMBENT_HEURISTICS = ("strip_packing_best_fit", "greedy_by_size", "xla_best_fit",
                        "tflite_arena", "greedy_by_breadth", "nntrainer_v3", "best_fit",
                        "first_fit")
"""Registered offsets heuristics tried for the first incumbent, in this order: the fast ones
(O(n^2) or less) that give the best arenas on the MiniMalloc suite. Slow local searches such
as ``usmp_hill_climb`` (20 s on 213 buffers) are left out on purpose. When none of them is
registered, every registered offsets heuristic on records is tried."""


def _heuristic_incumbent(instance: Instance, budget: float | None = None
                         ) -> tuple[tuple[int, ...], int, str]:
    """The best valid packing among the registered offsets heuristics (and plain stacking).

    Stops starting new heuristics once ``budget`` seconds have passed; a heuristic that
    raises or returns an invalid packing is skipped.
    """
    from optplan.registry import methods
    from optplan.solve import solve

    start = time.perf_counter()
    offsets, position = [], 0
    for record in instance.records:  # stacking: every tensor on top of the previous one
        offsets.append(position)
        position = round_up(position + record.size, instance.alignment)
    best = (tuple(offsets), round_up(position, instance.alignment), "stacking")
    try:
        registered = methods(builtin_only=True)
    except Exception:  # noqa: BLE001 - a broken method module must not stop the search
        registered = {}
    usable = [name for name, info in registered.items()
              if info.kind == "heuristic" and info.input == "records"
              and Problem.OFFSETS in info.implementations]
    preferred = [name for name in INCUMBENT_HEURISTICS if name in usable]
    for name in preferred or usable:
        if budget is not None and time.perf_counter() - start > budget:
            break
        try:
            result = solve(instance, name, Problem.OFFSETS)
        except Exception:  # noqa: BLE001 - a failing heuristic only loses its incumbent
            continue
        if result.valid and result.objective is not None and result.objective < best[1]:
            best = (result.solution.offsets, result.objective, name)
    return best


@register("search", Problem.OFFSETS, kind="exact",
          reference="MiniMalloc (Moffitt, ASPLOS'23), google/minimalloc src/solver.cc")
def search(instance: Instance, *, time_limit: float | None = None, workers: int | None = None,
           seed: int | None = None, **switches) -> SolverOutcome:
    """Minimise the arena by MiniMalloc-style depth-first search under a capacity bisection.

    Order of the probes (capacities in granules of the gcd of the sizes and the alignment):
    the lower bound (max breadth); then one granule below the best heuristic; then the middle
    of what is left open. A packing found at C is the new incumbent; no packing at C proves
    the bound C + 1 granule; a timed-out probe proves nothing. The lower-bound probe gets
    :data:`FIRST_PROBE_SHARE` of the time, every later one half of what remains (the last
    possible one all of it).

    Parameters
    ----------
    instance : Instance
        An offsets instance without in-place pairs.
    time_limit : float, optional
        Seconds for the whole run, heuristics included (``None``: until proven).
    workers : int, optional
        Ignored: the search is pure Python and single-threaded.
    seed : int, optional
        Ignored: the search is deterministic.
    **switches : bool
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
    from optplan import __version__

    params = _params(switches)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    prep = _prepare(instance)
    granule = prep.alignment  # objective values are multiples of granule * prep.scale
    scale = prep.scale
    offsets, incumbent, heuristic = _heuristic_incumbent(
        instance, None if time_limit is None else 0.1 * float(time_limit))
    bound = round_up(math.ceil(lower_bound(instance, Problem.OFFSETS) / scale), granule)
    trajectory = [(time.perf_counter() - start, incumbent, bound * scale)]
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
        if deadline is not None and now >= deadline:
            break
        probe_deadline = None if deadline is None else (
            deadline if search_low == high else now + (deadline - now) * (
                FIRST_PROBE_SHARE if not probes else 0.5))
        stats = {"nodes": 0}
        result = decide(prep, capacity, params, probe_deadline, stats)
        nodes += stats["nodes"]
        if result is TIMEOUT:
            outcome_name = "timeout"
            search_low = capacity + granule
        elif result is None:
            outcome_name = "infeasible"
            bound = search_low = capacity + granule
        else:
            outcome_name = "feasible"
            offsets = tuple(offset * scale for offset in result)
            incumbent = round_up(OffsetsSolution.from_offsets(instance, offsets).arena_size,
                                 instance.alignment)
        probes.append({"capacity": capacity * scale, "result": outcome_name,
                       "seconds": round(time.perf_counter() - now, 6),
                       "nodes": stats["nodes"]})
        trajectory.append((time.perf_counter() - start, incumbent,
                           min(bound * scale, incumbent)))

    proven = min(bound * scale, incumbent)
    status = Status.OPTIMAL if proven >= incumbent else Status.FEASIBLE
    solution = OffsetsSolution.from_offsets(instance, offsets)
    return SolverOutcome(
        status=status, solution=solution, best_bound=incumbent if status is Status.OPTIMAL
        else proven, solver=SOLVER, solver_version=__version__,
        trajectory=tuple(trajectory),
        info={"nodes": nodes, "probes": probes, "time_limit": time_limit,
              "heuristic": heuristic, "granule": granule * scale,
              "switches": dataclasses.asdict(params)})
