"""Online allocators in allocation order: ``first_fit`` (the malloc-like baseline) and
``best_fit``.

Tensors are allocated in the order a runtime would request them — by first op, then index —
and each sees only the tensors still live at that moment, as ``malloc`` would (Knuth, TAOCP
vol. 1 §2.5, first-fit and best-fit reservation). ``first_fit`` takes the lowest free aligned
offset; ``best_fit`` takes the smallest free gap between live tensors that holds the tensor
(the lowest such gap on a tie), else the top of the live tensors.
"""

from __future__ import annotations

import numpy as np

from optplan.heuristics._placement import (IntervalIndex, effective_alignment, lowest_fit,
                                           offsets_solution, xla_best_fit_offset, UNPLACED)
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["first_fit", "best_fit", "allocate_online"]


def allocate_online(instance: Instance, order, choose) -> np.ndarray:
    """Allocate records in ``order`` (non-decreasing first op); ``choose(starts, ends, size)``
    sees the chunks of the placed records live when the record starts. O(n·k) numpy work."""
    index = IntervalIndex(instance)
    sizes = instance.sizes
    offsets = np.full(len(instance), UNPLACED, dtype=np.int64)
    for record in order:
        live = index.live_at(int(index.first[record]))
        placed = live[offsets[live] >= 0]
        starts = offsets[placed]
        offsets[record] = choose(starts, starts + sizes[placed], int(sizes[record]))
    return offsets


def _allocation_order(instance: Instance) -> np.ndarray:
    return np.argsort(instance.first_ops, kind="stable")


@register("first_fit", Problem.OFFSETS, kind="heuristic", input="records",
          reference="Knuth, TAOCP vol. 1 §2.5 (first-fit), in allocation order")
def first_fit(instance: Instance) -> OffsetsSolution:
    """Each tensor, in allocation order, at the lowest aligned offset free of live tensors.

    Complexity O(n log n + n·k log k), k the live tensors at a time.

    Examples
    --------
    >>> from optplan import Instance
    >>> first_fit(Instance.from_tuples([(0, 1, 8), (0, 2, 16), (2, 3, 8)])).offsets
    (0, 8, 0)
    """
    alignment = effective_alignment(instance, None)
    offsets = allocate_online(instance, _allocation_order(instance).tolist(),
                              lambda s, e, size: lowest_fit(s, e, size, alignment))
    return offsets_solution(instance, offsets)


@register("best_fit", Problem.OFFSETS, kind="heuristic", input="records",
          reference="Knuth, TAOCP vol. 1 §2.5 (best-fit), in allocation order")
def best_fit(instance: Instance) -> OffsetsSolution:
    """Each tensor, in allocation order, in the smallest gap between live tensors that holds
    it, else on top of them.

    Complexity O(n log n + n·k log k), k the live tensors at a time.
    """
    alignment = effective_alignment(instance, None)
    offsets = allocate_online(instance, _allocation_order(instance).tolist(),
                              lambda s, e, size: xla_best_fit_offset(s, e, size, alignment))
    return offsets_solution(instance, offsets)
