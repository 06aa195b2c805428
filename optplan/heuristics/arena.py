"""TFLite's CPU arena planner (``tflite_arena``).

Follows ``tensorflow/lite/arena_planner.cc`` (``ArenaPlanner::CreateTensorAllocationVector``
and ``CalculateAllocations``) and ``tensorflow/lite/simple_memory_arena.cc``
(``SimpleMemoryArena::Allocate``), read for their semantics:

1. order: tensors live for the whole run (allocated at op 0, never freed) first, by index;
   then by size, largest first; equal sizes by allocation op (then index — TFLite's
   ``std::sort`` leaves that tie open);
2. each tensor goes to the best-fitting gap among the tensors already placed that overlap it in
   time (the gap measured with TFLite's own aligned/unaligned asymmetry), else to the aligned
   top of those tensors.

TFLite aligns every tensor to ``kDefaultTensorAlignment`` = 64 bytes; here ``alignment=None``
means the instance's alignment, and ``alignment=64`` reproduces TFLite (combined with the
instance's alignment by least common multiple, so the result is always valid).
"""

from __future__ import annotations

from optplan.heuristics._placement import (effective_alignment, offsets_solution,
                                           place_in_order, tflite_best_fit_offset)
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["tflite_arena", "tflite_allocation_order", "TFLITE_TENSOR_ALIGNMENT"]

TFLITE_TENSOR_ALIGNMENT = 64


def tflite_allocation_order(instance: Instance) -> list[int]:
    """TFLite's allocation order: whole-run tensors by index, then size descending, then
    first op, then index. O(n log n)."""
    last_op = instance.num_ops - 1
    whole_run = [i for i, record in enumerate(instance.records)
                 if record.first_op == 0 and record.last_op == last_op]
    marked = set(whole_run)
    rest = sorted((i for i in range(len(instance)) if i not in marked),
                  key=lambda i: (-instance.records[i].size, instance.records[i].first_op, i))
    return whole_run + rest


@register("tflite_arena", Problem.OFFSETS, kind="heuristic", input="records",
          reference="tensorflow/lite/arena_planner.cc + simple_memory_arena.cc")
def tflite_arena(instance: Instance, *, alignment: int | None = None) -> OffsetsSolution:
    """TFLite CPU ``ArenaPlanner``: whole-run tensors first, then largest first, best-fit gap.

    Parameters
    ----------
    instance : Instance
    alignment : int, optional
        Tensor alignment; ``None`` uses ``instance.alignment``; TFLite itself uses 64.

    Complexity O(n log n + sum over tensors of m log m), m the placed tensors overlapping it.

    Examples
    --------
    >>> from optplan import Instance
    >>> tflite_arena(Instance.from_tuples([(0, 1, 32), (1, 2, 8), (2, 3, 32)])).arena_size
    40
    """
    step = effective_alignment(instance, alignment)
    order = tflite_allocation_order(instance)
    offsets = place_in_order(instance, order,
                             lambda starts, ends, size: tflite_best_fit_offset(starts, ends,
                                                                               size, step))
    return offsets_solution(instance, offsets)
