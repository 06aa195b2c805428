"""NNTrainer's memory planners (``nntrainer_basic``, ``nntrainer_v1``, ``nntrainer_v3``).

Follows ``nntrainer/tensor/basic_planner.cpp``, ``optimized_v1_planner.cpp`` and
``optimized_v3_planner.cpp`` (``planLayout``), read for their semantics. NNTrainer's validity
intervals are half-open ``[start, end)``; a record ``[first_op, last_op]`` becomes
``start = first_op``, ``end = last_op + 1``, so "expired" (``end <= start`` of a later request)
means ``last_op < first_op``.

* **basic**: no sharing; offsets are the running sum of sizes in index order.
* **v1**: requests by ``(start, end)``; a stack of allocations ordered by offset; expired
  allocations are popped off the top; an expired allocation of *exactly* the same size inside
  the stack (the highest one) is reused in place; otherwise the request goes on top.
* **v3**: requests by ``(start, end)``; expired allocations are dropped; the request takes the
  first (lowest) vacant gap between the live allocations that holds it, else the top.

NNTrainer does not align offsets; here every new offset is rounded up to the instance's
alignment (a no-op for alignment 1).
"""

from __future__ import annotations

import heapq

import numpy as np

from optplan.heuristics._placement import (align_up, effective_alignment, lowest_fit,
                                           offsets_solution)
from optplan.heuristics.fit import allocate_online
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["nntrainer_basic", "nntrainer_v1", "nntrainer_v3", "nntrainer_request_order"]


def nntrainer_request_order(instance: Instance) -> np.ndarray:
    """Requests by start, then end (then index: NNTrainer's ``std::sort`` leaves it open)."""
    return np.lexsort((np.arange(len(instance)), instance.last_ops, instance.first_ops))


@register("nntrainer_basic", Problem.OFFSETS, kind="heuristic", input="records",
          reference="nnstreamer/nntrainer nntrainer/tensor/basic_planner.cpp")
def nntrainer_basic(instance: Instance) -> OffsetsSolution:
    """NNTrainer ``BasicPlanner``: every tensor its own memory, in index order. O(n)."""
    alignment = effective_alignment(instance, None)
    offsets, top = [], 0
    for size in instance.sizes.tolist():
        offset = int(align_up(top, alignment))
        offsets.append(offset)
        top = offset + size
    return offsets_solution(instance, offsets)


@register("nntrainer_v1", Problem.OFFSETS, kind="heuristic", input="records",
          reference="nnstreamer/nntrainer nntrainer/tensor/optimized_v1_planner.cpp")
def nntrainer_v1(instance: Instance) -> OffsetsSolution:
    """NNTrainer ``OptimizedV1Planner``: a stack with same-size reuse of expired slots.

    The reference scans the stack from the top for an expired slot of the same size; here a
    per-size heap of expired slot positions finds the same slot. O(n log n).
    """
    alignment = effective_alignment(instance, None)
    sizes = instance.sizes.tolist()
    ends = (instance.last_ops + 1).tolist()
    starts = instance.first_ops.tolist()
    offsets = [0] * len(sizes)
    stack: list[int] = []                       # request per slot, slots ordered by offset
    running: list[tuple[int, int, int]] = []    # (end, slot, request) not yet seen expired
    expired: dict[int, list[tuple[int, int]]] = {}  # size -> heap of (-slot, request)

    def holds(slot: int, request: int) -> bool:
        return slot < len(stack) and stack[slot] == request

    for request in nntrainer_request_order(instance).tolist():
        start, size = starts[request], sizes[request]
        while stack and ends[stack[-1]] <= start:
            stack.pop()
        while running and running[0][0] <= start:
            _, slot, old = heapq.heappop(running)
            if holds(slot, old):
                heapq.heappush(expired.setdefault(sizes[old], []), (-slot, old))
        same_size = expired.get(size, [])
        while same_size and not holds(-same_size[0][0], same_size[0][1]):
            heapq.heappop(same_size)
        if same_size:
            slot = -heapq.heappop(same_size)[0]
            offsets[request] = offsets[stack[slot]]
            stack[slot] = request
        else:
            top = stack[-1] if stack else None
            offsets[request] = 0 if top is None else int(align_up(offsets[top] + sizes[top],
                                                                  alignment))
            slot = len(stack)
            stack.append(request)
        heapq.heappush(running, (ends[request], slot, request))
    return offsets_solution(instance, offsets)


@register("nntrainer_v3", Problem.OFFSETS, kind="heuristic", input="records",
          reference="nnstreamer/nntrainer nntrainer/tensor/optimized_v3_planner.cpp")
def nntrainer_v3(instance: Instance) -> OffsetsSolution:
    """NNTrainer ``OptimizedV3Planner``: the lowest vacant gap among live allocations.

    Complexity O(n log n + n·k log k), k the live tensors at a time.
    """
    alignment = effective_alignment(instance, None)
    offsets = allocate_online(instance, nntrainer_request_order(instance).tolist(),
                              lambda s, e, size: lowest_fit(s, e, size, alignment))
    return offsets_solution(instance, offsets)
