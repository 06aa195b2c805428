"""TFLite strategies for the offsets problem, and the objects-to-offsets conversion.

Reference: ``tensorflow/lite/delegates/gpu/common/memory_management/greedy_by_size_assignment.cc``
(``GreedyBySizeAssignment``) and ``memory_management.cc`` (``AssignOffsetsToTensors``: every
other strategy is a shared-objects assignment whose objects are stacked in id order by
``ObjectsToOffsets``); greedy by breadth for offsets follows Pisarchyk & Lee 2020, §5.3
(TFLite has no code for it).
"""

from __future__ import annotations

import numpy as np

from optplan.heuristics import tflite_shared_objects as shared
from optplan.heuristics._intervals import OverlapIndex, smallest_gap_offset
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["greedy_by_size_offsets", "greedy_by_breadth_offsets", "objects_to_offsets",
           "place_in_order"]

_OC = Problem.OFFSETS
_DIR = "tensorflow/lite/delegates/gpu/common/memory_management"


def objects_to_offsets(instance: Instance, solution: SharedObjectsSolution) -> OffsetsSolution:
    """Stack the shared objects in id order; each tensor takes its object's offset.

    With an alignment, every object's slot is rounded up to it so all offsets stay aligned.
    """
    starts, total = [], 0
    for size in solution.object_sizes:
        starts.append(total)
        total += round_up(size, instance.alignment)
    return OffsetsSolution.from_offsets(instance, [starts[obj] for obj in solution.object_ids])


def place_in_order(instance: Instance, order) -> OffsetsSolution:
    """Place records in ``order``, each in the smallest gap among the placed records whose
    lifetimes overlap its own (Pisarchyk & Lee 2020, Algorithm 3). O(n·k log k)."""
    offsets = [0] * len(instance)
    sizes = instance.sizes.tolist()
    placed = OverlapIndex(instance)
    for index in order:
        neighbours = sorted(placed.overlapping(index), key=offsets.__getitem__)
        offsets[index] = smallest_gap_offset(sizes[index], neighbours, offsets, sizes,
                                             instance.alignment)
        placed.add(index)
    return OffsetsSolution.from_offsets(instance, offsets)


@register("greedy_by_size", _OC, reference=f"TFLite {_DIR}/greedy_by_size_assignment.cc "
          "(GreedyBySizeAssignment); Pisarchyk & Lee 2020 §5.2")
def greedy_by_size_offsets(instance: Instance) -> OffsetsSolution:
    """Records by non-increasing size (ties: lower index), each into the smallest fitting gap."""
    return place_in_order(instance, np.argsort(-instance.sizes, kind="stable").tolist())


@register("greedy_by_breadth", _OC, reference="Pisarchyk & Lee 2020 §5.3")
def greedy_by_breadth_offsets(instance: Instance) -> OffsetsSolution:
    """Ops by non-increasing breadth, their unplaced records by size, each into the smallest
    fitting gap."""
    seen: set[int] = set()
    order = []
    for profile in shared.breadth_order(instance):
        for index in profile:
            if index not in seen:
                seen.add(index)
                order.append(index)
    return place_in_order(instance, order)


def _stacked(strategy):
    def offsets_from_objects(instance: Instance) -> OffsetsSolution:
        return objects_to_offsets(instance, strategy(instance))

    offsets_from_objects.__name__ = f"{strategy.__name__}_offsets"
    offsets_from_objects.__doc__ = (f"``{strategy.__name__}`` shared objects stacked in id order "
                                    "(TFLite AssignOffsetsToTensors / ObjectsToOffsets).")
    return offsets_from_objects


for _strategy in (shared.naive, shared.equality, shared.greedy_in_order, shared.greedy_best,
                  shared.min_cost_flow):
    register(_strategy.__name__, _OC, reference="TFLite tensorflow/lite/delegates/gpu/common/"
             "memory_management.cc (ObjectsToOffsets)")(_stacked(_strategy))
