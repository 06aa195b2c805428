"""Offsets lower bounds above max breadth, proven by the search's decision procedure.

A capacity C is *refuted* when the complete search of :mod:`optplan.exact._search_core`
finds no packing with every top <= C: then every packing needs at least C + 1 granule (the
granule is the step between possible arenas, see :func:`granule`). Refuting upward from the
max breadth, C, C + 1 granule, ..., proves a bound that stops either at the first capacity the
search packs (that packing is optimal) or when time runs out (the bound proven so far). The
search (``method="search"``) and CP-SAT (``method="cpsat"``) both take their bound from here.

Sound for any instance without in-place pairs (with pairs, an arena may be smaller than any
packing without them, so the refutations prove nothing and the plain bound is returned).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from optplan.bounds import lower_bound
from optplan.exact._search_core import TIMEOUT, Prepared, SearchParams, decide, prepare
from optplan.model import Instance, round_up
from optplan.problems import Problem

__all__ = ["CapacityBound", "capacity_bound", "refute_upward", "granule", "breadth_capacity"]


@dataclass(frozen=True)
class CapacityBound:
    """A proven lower bound on the arena (bytes), and how it was proven."""

    bound: int
    offsets: tuple[int, ...] | None  # a packing with arena <= bound, when one was found
    probes: tuple[dict, ...]          # capacity (bytes), result, seconds, nodes of each probe
    nodes: int

    @property
    def optimal(self) -> bool:
        """True when a packing at the bound was found (then the bound is the optimum)."""
        return self.offsets is not None


def granule(prep: Prepared) -> int:
    """The step, in scaled units, between arenas worth probing: the scaled alignment (every
    lowest-offset packing has offsets and tops on multiples of the sizes' gcd; objective
    values are rounded up to the alignment)."""
    return prep.alignment


def breadth_capacity(instance: Instance, prep: Prepared) -> int:
    """Max breadth in scaled units, rounded up to the granule: the first capacity to probe."""
    return round_up(math.ceil(lower_bound(instance, Problem.OFFSETS) / prep.scale),
                    granule(prep))


def refute_upward(prep: Prepared, low: int, high: int | None, deadline: float | None, *,
                  params: SearchParams = SearchParams(), engine: str = "compiled",
                  stop: bytearray | None = None,
                  on_probe: Callable[[int, str, float, int, list | None], None] | None = None
                  ) -> tuple[int, list | None]:
    """Probe capacities ``low``, ``low + granule``, ... (scaled units) until one packs, time
    runs out, ``stop[0]`` is set, or the capacity passes ``high`` (``None``: no end).

    Returns ``(bound, offsets)``: the least capacity not refuted (a proven lower bound in
    scaled units) and the scaled offsets of a packing within it, or ``None`` when none was
    found. ``on_probe(capacity, result, seconds, nodes, offsets)`` is called after each probe
    (``result`` one of ``"feasible"``, ``"infeasible"``, ``"timeout"``).
    """
    step = granule(prep)
    capacity = low
    while high is None or capacity <= high:
        if (stop is not None and stop[0]) or (
                deadline is not None and time.perf_counter() >= deadline):
            break
        started = time.perf_counter()
        stats = {"nodes": 0}
        result = decide(prep, capacity, params, deadline, stats, engine=engine, stop=stop)
        seconds = time.perf_counter() - started
        if result is TIMEOUT:
            if on_probe:
                on_probe(capacity, "timeout", seconds, stats["nodes"], None)
            break
        if on_probe:
            on_probe(capacity, "infeasible" if result is None else "feasible", seconds,
                     stats["nodes"], result)
        if result is not None:
            return capacity, result
        capacity += step
    return capacity, None


def capacity_bound(instance: Instance, time_limit: float | None = None, *,
                   params: SearchParams = SearchParams(), engine: str = "compiled"
                   ) -> CapacityBound:
    """The max breadth raised by refuting capacities upward for ``time_limit`` seconds.

    Examples
    --------
    >>> gap = Instance.from_tuples([(0, 1, 6), (0, 2, 5), (0, 0, 2)], alignment=4)
    >>> lower_bound(gap, "offsets"), capacity_bound(gap).bound
    (16, 20)
    """
    plain = lower_bound(instance, Problem.OFFSETS)
    if instance.inplace_pairs or not len(instance):
        return CapacityBound(plain, None, (), 0)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    probes: list[dict] = []

    def record(capacity, result, seconds, nodes, offsets):
        probes.append({"capacity": capacity * prep.scale, "result": result,
                       "seconds": round(seconds, 6), "nodes": nodes})

    bound, offsets = refute_upward(prep, breadth_capacity(instance, prep), None, deadline,
                                   params=params, engine=engine, on_probe=record)
    scaled = None if offsets is None else tuple(o * prep.scale for o in offsets)
    return CapacityBound(max(plain, round_up(bound * prep.scale, instance.alignment)), scaled,
                         tuple(probes), sum(p["nodes"] for p in probes))
