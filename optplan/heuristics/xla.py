"""XLA's global decreasing-size best-fit heap (``xla_best_fit``).

Follows ``xla/service/heap_simulator/heap_simulator.cc``,
``GlobalDecreasingSizeBestFitHeap`` (unsliced buffers, no colocations), read for its
semantics:

* buffers are placed one by one in a fixed order — *spatial*: size descending, then live range
  descending, then buffer id; *temporal*: live range descending, then size descending, then id;
* each buffer goes to the smallest free chunk that holds it among the gaps between the
  already placed buffers that overlap it in time (sorted by offset, each gap starting at the
  aligned end of what lies below); ties go to the lowest offset; without a fitting gap it goes
  on top of them (``MakeFreeChunksList`` ends with an unbounded chunk). Older XLA versions
  also offered the room between that top and the current heap size as a finite chunk; the
  carried-over test vectors give the same answer either way;
* XLA's buffer assignment runs both orders (``ChooseBestHeapAlgorithm``) and keeps the smaller
  heap, the first (spatial) on a tie.
"""

from __future__ import annotations

import numpy as np

from optplan.heuristics._placement import (IntervalIndex, effective_alignment,
                                           offsets_solution, place_in_order,
                                           xla_best_fit_offset)
from optplan.errors import InputError
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["xla_best_fit", "xla_order", "XLA_ORDERS"]

XLA_ORDERS = ("spatial", "temporal")


def xla_order(instance: Instance, packing: str) -> np.ndarray:
    """Record indices in XLA's ``spatial`` or ``temporal`` order. O(n log n)."""
    sizes = instance.sizes
    durations = instance.last_ops - instance.first_ops
    index = np.arange(len(instance))
    if packing == "spatial":
        return np.lexsort((index, -durations, -sizes))
    if packing == "temporal":
        return np.lexsort((index, -sizes, -durations))
    raise InputError(f"unknown order {packing!r}; valid: spatial, temporal, best",
                     field="order")


def _pack(instance: Instance, order: np.ndarray, alignment: int,
          index: IntervalIndex) -> np.ndarray:
    return place_in_order(instance, order.tolist(),
                          lambda starts, ends, size: xla_best_fit_offset(starts, ends, size,
                                                                         alignment),
                          index)


@register("xla_best_fit", Problem.OFFSETS, kind="heuristic", input="records",
          reference="xla/service/heap_simulator/heap_simulator.cc "
                    "(GlobalDecreasingSizeBestFitHeap)")
def xla_best_fit(instance: Instance, *, order: str = "best") -> OffsetsSolution:
    """XLA ``GlobalDecreasingSizeBestFitHeap``, spatial and temporal orders, the better kept.

    Parameters
    ----------
    instance : Instance
    order : {"best", "spatial", "temporal"}
        ``best`` (XLA's buffer assignment) runs both and keeps the smaller arena.

    Complexity O(n log n + sum over buffers of m log m), m the placed buffers overlapping it.
    """
    alignment = effective_alignment(instance, None)
    packings = XLA_ORDERS if order == "best" else (order,)
    index = IntervalIndex(instance)
    best = None
    for packing in packings:
        offsets = _pack(instance, xla_order(instance, packing), alignment, index)
        solution = offsets_solution(instance, offsets)
        if best is None or solution.arena_size < best.arena_size:
            best = solution
    return best
