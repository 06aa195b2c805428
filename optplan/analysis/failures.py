"""Why a heuristic plan is above the optimum: a failure mode per (heuristic, instance) pair.

Offsets plans (``classify_offsets``), from the tensor whose top edge sets the arena:

* ``stacked objects`` — the plan is a shared-objects plan stacked into one arena (its arena
  equals the method's shared-objects total): each object keeps its largest tensor's height
  over its whole lifetime, so the stack is as tall as the sum of the objects;
* ``fragmented peak`` — the arena-setting tensor is live at an operator of maximum breadth:
  the heuristic left holes in the peak itself;
* ``off-peak fragmentation`` — the arena-setting tensor is live only at operators below the
  maximum breadth: placements made elsewhere pushed it above the optimum.

Shared-objects plans (``classify_shared_objects``), against the positional maximums (the
i-th largest tensor size over all profiles, Pisarchyk & Lee 2020):

* ``extra objects`` — more objects than the largest profile has tensors;
* ``oversized objects`` — no more objects than that, but some object is larger than its
  positional maximum: a small tensor shares with a large one although a better grouping
  exists.
"""

from __future__ import annotations

import numpy as np

from optplan.bounds import positional_maximums
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution
from optplan.profiles import breadths, compressed_times

__all__ = ["OFFSETS_MODES", "SHARED_OBJECTS_MODES", "classify_offsets",
           "classify_shared_objects"]

OFFSETS_MODES = ("stacked objects", "fragmented peak", "off-peak fragmentation")
SHARED_OBJECTS_MODES = ("extra objects", "oversized objects")


def classify_offsets(instance: Instance, solution: OffsetsSolution,
                     shared_objects_total: int | None = None) -> str:
    """The failure mode of an offsets plan above the optimum (module docstring);
    ``shared_objects_total`` is the same method's shared-objects objective, if it has one."""
    if shared_objects_total is not None and solution.arena_size == shared_objects_total:
        return "stacked objects"
    top = int(np.argmax(np.asarray(solution.offsets) + instance.sizes))
    first, last, _ = compressed_times(instance)
    profile = breadths(instance)
    at_peak = (profile[first[top]:last[top] + 1] == profile.max()).any()
    return "fragmented peak" if at_peak else "off-peak fragmentation"


def classify_shared_objects(instance: Instance, solution: SharedObjectsSolution) -> str:
    """The failure mode of a shared-objects plan above the optimum (module docstring)."""
    maxima = positional_maximums(instance)
    sizes = sorted(solution.object_sizes, reverse=True)
    if len(sizes) > len(maxima):
        return "extra objects"
    return "oversized objects"
