"""Shared placement primitives for the offset planners of the allocator zoo.

Two pieces every offline planner needs:

* :class:`IntervalIndex` answers "which records overlap record i in time?" without building
  the whole conflict graph (MiniMalloc-like instances have ~10^8 conflicting pairs at 10^5
  tensors). The time axis is compressed to interval endpoints and cut into blocks; a record
  overlapping ``[s, e]`` is either live at ``s`` (found in ``s``'s block) or starts in
  ``(s, e]`` (a slice of the records sorted by start). A query costs O(k + B + m): k records
  live at ``s``, B the block length, m the answer.
* Gap searches over the chunks ``[offset, offset + size)`` that already occupy memory during
  the window: :func:`lowest_fit` (first fit), :func:`xla_best_fit_offset` (XLA's smallest free
  chunk), :func:`tflite_best_fit_offset` (TFLite's SimpleMemoryArena quirks included).
  Each sorts the m chunks once: O(m log m).
"""

from __future__ import annotations

import math

import numpy as np

from optplan.errors import InputError
from optplan.model import Instance, OffsetsSolution
from optplan.profiles import compressed_times

__all__ = ["IntervalIndex", "conflict_degrees", "conflict_edges", "effective_alignment",
           "align_up", "lowest_fit", "xla_best_fit_offset", "tflite_best_fit_offset", "top_fit",
           "offsets_solution", "place_in_order", "place", "RULES", "UNPLACED"]

UNPLACED = -1
_MAX_BLOCKS = 4096


def effective_alignment(instance: Instance, alignment: int | None) -> int:
    """A planner's own alignment combined with the instance's (their least common multiple)."""
    if alignment is None:
        return instance.alignment
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
        raise InputError(f"must be a positive integer, got {alignment!r}", field="alignment")
    return math.lcm(int(alignment), instance.alignment)


def align_up(values, alignment: int):
    """Round ``values`` (an int or an int array) up to a multiple of ``alignment``."""
    if alignment == 1:
        return values
    return -(-values // alignment) * alignment


class IntervalIndex:
    """Overlap queries on the records of one instance (closed intervals).

    Parameters
    ----------
    instance : Instance
        The records to index; queries name records by index.
    """

    def __init__(self, instance: Instance):
        first, last, count = compressed_times(instance)
        self.first = first.astype(np.int64)
        self.last = last.astype(np.int64)
        self.by_first = np.argsort(self.first, kind="stable")
        self.sorted_first = self.first[self.by_first]
        self.block = max(16, -(-count // _MAX_BLOCKS))
        if len(first) == 0:
            self.members = np.zeros(0, dtype=np.int64)
            self.pointers = np.zeros(1, dtype=np.int64)
            return
        first_block = self.first // self.block
        spans = self.last // self.block - first_block + 1
        records = np.repeat(np.arange(len(first)), spans)
        starts_of_run = np.repeat(np.cumsum(spans) - spans, spans)
        blocks = np.repeat(first_block, spans) + (np.arange(len(records)) - starts_of_run)
        order = np.argsort(blocks, kind="stable")
        self.members = records[order]
        num_blocks = int(blocks.max()) + 1
        self.pointers = np.searchsorted(blocks[order], np.arange(num_blocks + 1))

    def live_at(self, time: int) -> np.ndarray:
        """Records live at compressed time ``time``, in index order."""
        block = time // self.block
        if block + 1 >= len(self.pointers):
            return np.zeros(0, dtype=np.int64)
        bucket = self.members[self.pointers[block]:self.pointers[block + 1]]
        return bucket[(self.first[bucket] <= time) & (self.last[bucket] >= time)]

    def overlapping(self, index: int) -> np.ndarray:
        """Records whose interval intersects record ``index``'s, itself excluded (any order)."""
        start, end = int(self.first[index]), int(self.last[index])
        live = self.live_at(start)
        low = np.searchsorted(self.sorted_first, start, side="right")
        high = np.searchsorted(self.sorted_first, end, side="right")
        result = np.concatenate([live, self.by_first[low:high]])
        return result[result != index]


def conflict_degrees(instance: Instance) -> np.ndarray:
    """Number of records each record conflicts with, by binary search. O(n log n)."""
    first, last = instance.first_ops, instance.last_ops
    sorted_first, sorted_last = np.sort(first), np.sort(last)
    starting_by_end = np.searchsorted(sorted_first, last, side="right")
    ended_before_start = np.searchsorted(sorted_last, first, side="left")
    return (starting_by_end - ended_before_start - 1).astype(np.int64)


def conflict_edges(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Every conflicting pair ``(u, v)`` once, by a sweep over start times. O(n log n + E)."""
    first, last = instance.first_ops, instance.last_ops
    order = np.argsort(first, kind="stable")
    sorted_first = first[order]
    position = np.arange(len(order))
    reach = np.searchsorted(sorted_first, last[order], side="right")
    counts = reach - position - 1
    owners = np.repeat(position, counts)
    steps = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    partners = owners + 1 + steps
    return order[owners], order[partners]


def lowest_fit(starts: np.ndarray, ends: np.ndarray, size: int, alignment: int) -> int:
    """The lowest aligned offset where ``size`` bytes avoid every chunk ``[start, end)``."""
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    running_end = np.maximum.accumulate(ends)
    candidates = align_up(np.concatenate(([0], running_end[:-1])), alignment)
    fits = np.flatnonzero(candidates + size <= starts)
    if len(fits):
        return int(candidates[fits[0]])
    return int(align_up(int(running_end[-1]), alignment))


def xla_best_fit_offset(starts: np.ndarray, ends: np.ndarray, size: int,
                        alignment: int) -> int:
    """XLA's choice: the smallest free chunk that holds ``size``, else the top of the chunks.

    Free chunks are the gaps between the used chunks (sorted by offset, each gap starting at
    the aligned running end) and, last, the unbounded space above them; the smallest gap that
    holds ``size`` wins, the lowest on a tie (``MakeFreeChunksList`` and
    ``FindUnslicedChunkCandidates`` of ``GlobalDecreasingSizeBestFitHeap``).
    """
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    running_end = np.maximum.accumulate(ends)
    candidates = align_up(np.concatenate(([0], running_end[:-1])), alignment)
    gap_sizes = starts - candidates
    usable = np.flatnonzero(gap_sizes >= size)
    if len(usable):
        return int(candidates[usable[np.argmin(gap_sizes[usable])]])
    return int(align_up(int(running_end[-1]), alignment))


def tflite_best_fit_offset(starts: np.ndarray, ends: np.ndarray, size: int,
                           alignment: int) -> int:
    """TFLite's ``SimpleMemoryArena::Allocate`` gap choice.

    Chunks are visited by offset; a gap before chunk j is taken when the aligned running end
    plus ``size`` reaches no further than the chunk and the gap (measured from the *aligned*
    end) is smaller than the best so far, which is stored measured from the *unaligned* end —
    TFLite's own asymmetry, kept. Without a gap the tensor goes to the aligned top.
    """
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    running_end = np.maximum.accumulate(ends)
    unaligned = np.concatenate(([0], running_end[:-1]))
    aligned = align_up(unaligned, alignment)
    best_offset, best_fit = -1, None
    for j in np.flatnonzero(aligned + size <= starts).tolist():
        if best_fit is None or int(starts[j] - aligned[j]) < best_fit:
            best_offset, best_fit = int(aligned[j]), int(starts[j] - unaligned[j])
            if best_fit == 0:
                break
    if best_offset < 0:
        return int(align_up(int(running_end[-1]), alignment))
    return best_offset


def top_fit(starts: np.ndarray, ends: np.ndarray, size: int, alignment: int) -> int:
    """Above every chunk: the highest aligned end (TVM USMP's greedy), 0 without chunks."""
    return int(align_up(int(ends.max()), alignment)) if len(ends) else 0


def offsets_solution(instance: Instance, offsets) -> OffsetsSolution:
    """Wrap planner offsets (numpy or list) as a solution with the exact arena size."""
    return OffsetsSolution.from_offsets(instance, np.asarray(offsets, dtype=np.int64).tolist())


RULES = {"lowest": (0, lowest_fit), "xla": (1, xla_best_fit_offset),
         "tflite": (2, tflite_best_fit_offset), "top": (3, top_fit)}
"""Gap rules of :func:`place`: the C code and the Python function it is tested against."""


def place(instance: Instance, order, rule: str, alignment: int) -> np.ndarray:
    """Place records one by one in ``order``, each by ``rule`` (a key of :data:`RULES`) among
    the chunks of the already placed records that overlap it in time; the compiled loop of
    :func:`place_in_order` (``_placement_ext``). O(n log n + sum of overlaps) C work."""
    from optplan.heuristics import _placement_ext

    first, last, count = compressed_times(instance)
    first, last = first.astype(np.int64), last.astype(np.int64)
    offsets = _placement_ext.place(first, last, instance.sizes.astype(np.int64),
                                   np.argsort(first, kind="stable").astype(np.int64),
                                   np.asarray(order, dtype=np.int64), RULES[rule][0],
                                   alignment, count)
    return np.frombuffer(offsets, dtype=np.int64).copy()


def place_in_order(instance: Instance, order, choose, index: IntervalIndex | None = None
                   ) -> np.ndarray:
    """Place records one by one in ``order``; ``choose(starts, ends, size)`` picks each offset
    from the chunks of the already placed records that overlap it in time. The reference
    that :func:`place` is tested against, for any ``choose``."""
    index = IntervalIndex(instance) if index is None else index
    sizes = instance.sizes
    offsets = np.full(len(instance), UNPLACED, dtype=np.int64)
    for record in order:
        others = index.overlapping(record)
        placed = others[offsets[others] >= 0]
        starts = offsets[placed]
        offsets[record] = choose(starts, starts + sizes[placed], int(sizes[record]))
    return offsets
