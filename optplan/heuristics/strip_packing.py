"""Strip-packing best fit (``strip_packing_best_fit``), after Sekiyama et al. 2018.

Sekiyama, Imamichi, Imai and Raymond, "Profile-guided memory optimization for deep neural
networks" (arXiv:1804.10001), §4: offset planning is two-dimensional rectangle packing with
each rectangle's horizontal position (its lifetime) fixed, solved with the best-fit placement
heuristic of Burke, Kendall and Whitwell (2004) for strip packing:

1. the *skyline* holds, for every time step, the height up to which memory is used;
2. take the lowest segment of the skyline (the leftmost of the lowest), a maximal run of time
   steps at one height;
3. among the unplaced blocks whose lifetime lies inside that segment, place the one that fills
   it best — the longest lifetime, then the largest size, then the lowest index (the paper
   publishes no code, so these ties are ours) — at the segment's height, and raise the skyline
   over its lifetime;
4. if no block fits, raise the segment to its lower neighbour and merge them (wasted space).

Time is compressed to interval endpoints. A segment query scans the blocks starting inside the
segment; all but the k that cross its right end fit, so the scan is vectorised numpy work.
"""

from __future__ import annotations

import heapq

import numpy as np

from optplan.heuristics._placement import align_up, effective_alignment, offsets_solution
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.profiles import compressed_times
from optplan.registry import register

__all__ = ["strip_packing_best_fit"]


class _Skyline:
    """Maximal segments ``[start, end]`` of equal height in a doubly linked list, with a heap
    that yields the lowest (then leftmost) live segment."""

    def __init__(self, num_times: int):
        self.start, self.end, self.height = [], [], []
        self.previous, self.next, self.alive = [], [], []
        self.heap: list[tuple[int, int, int]] = []
        self.add(0, num_times - 1, 0, -1, -1)

    def add(self, start: int, end: int, height: int, previous: int, following: int) -> int:
        segment = len(self.start)
        self.start.append(start)
        self.end.append(end)
        self.height.append(height)
        self.previous.append(previous)
        self.next.append(following)
        self.alive.append(True)
        if previous >= 0:
            self.next[previous] = segment
        if following >= 0:
            self.previous[following] = segment
        heapq.heappush(self.heap, (height, start, segment))
        return segment

    def lowest(self) -> int:
        while not self.alive[self.heap[0][2]]:
            heapq.heappop(self.heap)
        return self.heap[0][2]

    def replace(self, segments: list[int], pieces: list[tuple[int, int, int]]) -> None:
        """Replace consecutive ``segments`` by ``pieces`` (start, end, height), merging equal
        heights with each other and with the outer neighbours."""
        before, after = self.previous[segments[0]], self.next[segments[-1]]
        for segment in segments:
            self.alive[segment] = False
        merged: list[list[int]] = []
        for start, end, height in pieces:
            if merged and merged[-1][2] == height:
                merged[-1][1] = end
            else:
                merged.append([start, end, height])
        if before >= 0 and self.height[before] == merged[0][2]:
            self.alive[before] = False
            merged[0][0] = self.start[before]
            before = self.previous[before]
        if after >= 0 and self.height[after] == merged[-1][2]:
            self.alive[after] = False
            merged[-1][1] = self.end[after]
            after = self.next[after]
        for start, end, height in merged:
            before = self.add(start, end, height, before, -1)
        if after >= 0:
            self.next[before] = after
            self.previous[after] = before


class _UnplacedBlocks:
    """Unplaced blocks sorted by start; placed ones are dropped lazily (the arrays are rebuilt
    once half of their entries are placed), so a query scans mostly live blocks."""

    def __init__(self, first: np.ndarray, last: np.ndarray, sizes: np.ndarray):
        self.first, self.last, self.sizes = first, last, sizes
        self.remaining = len(first)
        self._build(np.lexsort((np.arange(len(first)), first)))

    def _build(self, indices: np.ndarray) -> None:
        self.index = indices
        self.starts, self.ends = self.first[indices], self.last[indices]
        self.placed = np.zeros(len(indices), dtype=bool)
        self.position = {int(i): p for p, i in enumerate(indices.tolist())}
        self.dropped = 0

    def best_inside(self, low: int, high: int) -> int | None:
        """The block inside ``[low, high]`` with the longest lifetime, then the largest size,
        then the lowest index; ``None`` if none fits."""
        begin = np.searchsorted(self.starts, low, side="left")
        stop = np.searchsorted(self.starts, high, side="right")
        inside = ~self.placed[begin:stop] & (self.ends[begin:stop] <= high)
        candidates = self.index[begin:stop][inside]
        if len(candidates) == 0:
            return None
        lengths = self.last[candidates] - self.first[candidates]
        candidates = candidates[lengths == lengths.max()]
        sizes = self.sizes[candidates]
        candidates = candidates[sizes == sizes.max()]
        return int(candidates.min())

    def remove(self, block: int) -> None:
        self.placed[self.position[block]] = True
        self.remaining -= 1
        self.dropped += 1
        if self.dropped * 2 > len(self.index):
            self._build(self.index[~self.placed])


@register("strip_packing_best_fit", Problem.OFFSETS, kind="heuristic", input="records",
          reference="Sekiyama et al. 2018, arXiv:1804.10001 §4 (best fit of Burke et al. 2004)")
def strip_packing_best_fit(instance: Instance) -> OffsetsSolution:
    """Skyline best fit: fill the lowest skyline segment with the block that fits it best.

    Complexity O(n log n) heap work plus, per segment query, O(m) vectorised work over the m
    blocks that start inside the segment (placed ones are compacted away in amortised O(n)).
    """
    alignment = effective_alignment(instance, None)
    count = len(instance)
    if count == 0:
        return offsets_solution(instance, [])
    first, last, num_times = compressed_times(instance)
    blocks = _UnplacedBlocks(first, last, instance.sizes)
    offsets = np.zeros(count, dtype=np.int64)
    skyline = _Skyline(num_times)
    while blocks.remaining:
        segment = skyline.lowest()
        low, high = skyline.start[segment], skyline.end[segment]
        height = skyline.height[segment]
        chosen = blocks.best_inside(low, high)
        if chosen is None:
            before, after = skyline.previous[segment], skyline.next[segment]
            raised = min(skyline.height[s] for s in (before, after) if s >= 0)
            skyline.replace([segment], [(low, high, raised)])
            continue
        blocks.remove(chosen)
        offset = int(align_up(height, alignment))
        offsets[chosen] = offset
        block_start, block_end = int(first[chosen]), int(last[chosen])
        pieces = []
        if block_start > low:
            pieces.append((low, block_start - 1, height))
        pieces.append((block_start, block_end, offset + int(instance.sizes[chosen])))
        if block_end < high:
            pieces.append((block_end + 1, high, height))
        skyline.replace([segment], pieces)
    return offsets_solution(instance, offsets)
