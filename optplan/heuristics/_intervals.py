"""Interval look-ups shared by the heuristics: which placed records overlap a lifetime."""

from __future__ import annotations

from optplan.model import Instance
from optplan.profiles import compressed_times

__all__ = ["OverlapIndex", "smallest_gap_offset"]


class OverlapIndex:
    """Placed records, queried by lifetime on the compressed time axis.

    A placed record overlaps ``[first, last]`` iff it is live at ``first`` or starts in
    ``(first, last]``; both are kept in per-op buckets, so a query costs O(L + answers) and
    adding a record O(its lifetime). Answers come in insertion order (no duplicates).
    """

    def __init__(self, instance: Instance):
        first, last, count = compressed_times(instance)
        self.first = first.tolist()
        self.last = last.tolist()
        self._live_at: list[list[int]] = [[] for _ in range(count)]
        self._starts_at: list[list[int]] = [[] for _ in range(count)]
        self._sequence: dict[int, int] = {}

    def add(self, index: int) -> None:
        self._sequence[index] = len(self._sequence)
        self._starts_at[self.first[index]].append(index)
        for op in range(self.first[index], self.last[index] + 1):
            self._live_at[op].append(index)

    def overlapping(self, index: int) -> list[int]:
        start, end = self.first[index], self.last[index]
        found = list(self._live_at[start])
        for op in range(start + 1, end + 1):
            found.extend(self._starts_at[op])
        found.sort(key=self._sequence.__getitem__)
        return found


def smallest_gap_offset(size: int, neighbours, offsets, sizes, alignment: int) -> int:
    """Pisarchyk & Lee 2020, Algorithm 3, lines 7–20 (TFLite ``GreedyBySizeAssignment``).

    ``neighbours`` are the placed records whose lifetimes overlap, in offset order (ties in
    placement order). Take the smallest gap between them that fits ``size``; without one,
    go right after the highest of them. Gap starts are aligned; gaps are measured from there.
    """
    best_gap = best_offset = None
    previous_end = 0
    for other in neighbours:
        offset = offsets[other]
        if offset >= previous_end:
            gap = offset - previous_end
            if gap >= size and (best_gap is None or gap < best_gap):
                best_gap, best_offset = gap, previous_end
        end = offset + sizes[other]
        previous_end = max(previous_end, -(-end // alignment) * alignment)
    return previous_end if best_offset is None else best_offset
