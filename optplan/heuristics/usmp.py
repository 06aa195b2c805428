"""TVM's Unified Static Memory Planner algorithms (``usmp_greedy_by_size``,
``usmp_greedy_by_conflicts``, ``usmp_hill_climb``).

Follows ``src/tir/usmp/algo/greedy.cc`` and ``src/tir/usmp/algo/hill_climb.cc`` (one unbounded
workspace pool), read for their semantics:

* **greedy** (``GreedyBase::PostSortAllocation``): buffers in a fixed order; each goes right
  above the highest already-placed buffer it conflicts with (no gap filling): offset = max over
  placed conflicts of their aligned end, 0 without any;
* **by size**: size descending, then number of conflicts descending, then name descending;
  **by conflicts**: conflicts descending, then size descending, then name descending;
* **hill climb**: starts from the by-size order and repeats, up to 500 times, a first-fit
  greedy (each buffer at the lowest offset free among its placed conflicts); it accepts a
  result when it is smaller, or with probability ``(50·(total − best) / total) / attempt``
  percent, else rolls back the last swap; then it swaps two buffers near a randomly chosen
  buffer that touches the top of the pool (a conflict placed before it, and one of the
  conflicts' earlier conflicts with probability 74/100). It returns the last *accepted*
  allocation (TVM's ``result_pool_allocations``), and stops early once the pool reaches the
  memory pressure (the max breadth). TVM draws numbers with glibc ``rand_r`` from seed 0;
  :class:`GlibcRandR` replays that generator, so ``seed=None`` (= 0) reproduces TVM.

Conflicts come from the records (two records conflict when their intervals intersect); the
core functions also accept explicit conflict lists, as TVM's ``BufferInfo`` has them.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from optplan.bounds import max_breadth
from optplan.errors import InputError
from optplan.heuristics._placement import (IntervalIndex, align_up, conflict_degrees,
                                           effective_alignment, lowest_fit, offsets_solution,
                                           UNPLACED)
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["usmp_greedy_by_size", "usmp_greedy_by_conflicts", "usmp_hill_climb", "GlibcRandR",
           "usmp_order", "greedy_above_conflicts", "hill_climb", "HILL_CLIMB_MAX_ATTEMPTS"]

HILL_CLIMB_MAX_ATTEMPTS = 500
_UINT32 = 0xFFFFFFFF

Neighbours = Callable[[int], np.ndarray]


class GlibcRandR:
    """glibc's ``rand_r``: three steps of its LCG folded into 31 bits (what TVM calls)."""

    def __init__(self, seed: int = 0):
        self.state = int(seed) & _UINT32

    def __call__(self) -> int:
        state = (self.state * 1103515245 + 12345) & _UINT32
        result = (state >> 16) % 2048
        for _ in range(2):
            state = (state * 1103515245 + 12345) & _UINT32
            result = (result << 10) ^ ((state >> 16) % 1024)
        self.state = state
        return result


def usmp_order(sizes: Sequence[int], conflict_counts: Sequence[int], names: Sequence[str],
               by: str) -> list[int]:
    """TVM's sort: ``by="size"`` or ``by="conflicts"`` first, the other second, name descending
    last. O(n log n)."""
    by_name = sorted(range(len(sizes)), key=lambda i: names[i], reverse=True)
    if by == "size":
        return sorted(by_name, key=lambda i: (-sizes[i], -conflict_counts[i]))
    return sorted(by_name, key=lambda i: (-conflict_counts[i], -sizes[i]))


def greedy_above_conflicts(order: Sequence[int], sizes: np.ndarray, neighbours: Neighbours,
                           alignment: int) -> np.ndarray:
    """``PostSortAllocation``: each buffer at the highest aligned end of its placed conflicts.

    O(n + E) numpy work, E the conflicting pairs.
    """
    offsets = np.full(len(sizes), UNPLACED, dtype=np.int64)
    for buffer in order:
        others = neighbours(buffer)
        placed = others[offsets[others] >= 0]
        if len(placed):
            offsets[buffer] = int(align_up(offsets[placed] + sizes[placed], alignment).max())
        else:
            offsets[buffer] = 0
    return offsets


class _FirstFitPasses:
    """Hill climb's greedy pass (``HillClimbAllocator::greedy``): each buffer, in order, at
    the lowest aligned offset free among its conflicts placed before it.

    A pass re-runs only from the lowest slot touched by a swap since the previous pass (the
    prefix of the order, hence of the allocation, is unchanged). Short conflict lists are
    handled in plain Python, long ones with numpy (whose per-call overhead only pays off
    there); both give the same lowest fit.
    """

    NUMPY_FROM = 48

    def __init__(self, sizes: np.ndarray, neighbours: list[np.ndarray], alignment: int):
        self.sizes, self.alignment = sizes, alignment
        self.size_list = [int(x) for x in sizes]
        self.arrays = neighbours
        self.lists = [n.tolist() for n in neighbours]
        self.offsets = np.zeros(len(sizes), dtype=np.int64)
        self.offset_list = [0] * len(sizes)
        self.dirty_from = 0

    def touched(self, slot: int) -> None:
        self.dirty_from = min(self.dirty_from, slot)

    def run(self, order: list[int], position: list[int], slots: np.ndarray) -> np.ndarray:
        sizes, alignment = self.size_list, self.alignment
        offsets, offset_array = self.offset_list, self.offsets
        for slot in range(self.dirty_from, len(order)):
            buffer = order[slot]
            others = self.lists[buffer]
            if len(others) >= self.NUMPY_FROM:
                near = self.arrays[buffer]
                placed = near[slots[near] < slot]
                begins = offset_array[placed]
                candidate = lowest_fit(begins, begins + self.sizes[placed], sizes[buffer],
                                       alignment)
            else:
                chunks = sorted((offsets[other], offsets[other] + sizes[other])
                                for other in others if position[other] < slot)
                size, candidate = sizes[buffer], 0
                for start, end in chunks:
                    if candidate + size <= start:
                        break
                    if end > candidate:
                        candidate = -(-end // alignment) * alignment
            offsets[buffer] = candidate
            offset_array[buffer] = candidate
        self.dirty_from = len(order)
        return offset_array.copy()


def hill_climb(sizes: np.ndarray, names: Sequence[str], neighbours: list[np.ndarray],
               alignment: int, memory_pressure: int, *, seed: int = 0,
               max_attempts: int = HILL_CLIMB_MAX_ATTEMPTS) -> np.ndarray:
    """``HillClimbAllocator::PlanMemory`` on explicit conflict lists; returns the offsets.

    Each attempt costs one greedy pass, O(n·d log d) for conflict lists of length d (re-run
    from the first swapped slot), plus O(d^2) vectorised work for the chosen buffer's
    neighbour lists.
    """
    count = len(sizes)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    random = GlibcRandR(seed)
    size_list = [int(x) for x in sizes]
    conflicts = [n.tolist() for n in neighbours]
    order = usmp_order(size_list, [len(n) for n in conflicts], names, "size")
    position = [0] * count
    for slot, buffer in enumerate(order):
        position[buffer] = slot
    greedy = _FirstFitPasses(sizes, neighbours, alignment)
    slots = np.asarray(position, dtype=np.int64)       # the same positions, for numpy
    degrees = np.array([len(n) for n in conflicts], dtype=np.int64)
    pointers = np.concatenate(([0], np.cumsum(degrees)))
    flat = (np.concatenate(neighbours).astype(np.int64) if pointers[-1]
            else np.zeros(0, dtype=np.int64))

    def swap(slot_a: int, slot_b: int) -> None:
        if slot_a == slot_b:
            return
        a, b = order[slot_a], order[slot_b]
        order[slot_a], order[slot_b] = b, a
        position[a], position[b] = slot_b, slot_a
        slots[a], slots[b] = slot_b, slot_a
        greedy.touched(min(slot_a, slot_b))

    def neighbour_lists(node: int) -> tuple[np.ndarray, np.ndarray]:
        """``collect_neighbor_lists``: the node's conflicts placed before it, and every
        conflict's conflicts placed before that conflict (with repeats), both by position."""
        near = flat[pointers[node]:pointers[node + 1]]
        first = near[slots[near] < slots[node]]
        lengths = degrees[near]
        owners = np.repeat(near, lengths)
        steps = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        further = flat[np.repeat(pointers[near], lengths) + steps]
        second = further[slots[further] < slots[owners]]
        return (first[np.argsort(slots[first], kind="stable")],
                second[np.argsort(slots[second], kind="stable")])

    total_size = 0
    swap_a = swap_b = -1
    allocation = result = None
    for attempt in range(max_attempts):
        rollback = allocation
        allocation = greedy.run(order, position, slots)
        ends = allocation + sizes
        total = int(ends.max())
        if (total_size == 0 or total_size > total
                or random() % 100 < (50 * (total - total_size) // total) // attempt):
            result = allocation
            total_size = total
            if total_size <= memory_pressure:
                break
        else:
            swap(swap_b, swap_a)
            allocation = rollback
            ends = allocation + sizes
        top = int(ends.max())
        at_top = sorted(np.flatnonzero(ends == top).tolist(), key=position.__getitem__)
        node = at_top[random() % len(at_top)]
        first_level, second_level = neighbour_lists(node)
        if not len(first_level):
            continue
        pick_a = int(first_level[random() % len(first_level)])
        pick_b = pick_a
        while pick_b == pick_a:
            if len(second_level) and random() % 100 > 25:
                pick_b = int(second_level[random() % len(second_level)])
            else:
                pick_b = int(first_level[random() % len(first_level)])
            if len(second_level) < 2 and len(first_level) < 2:
                break
        if pick_a == pick_b:
            continue
        swap_a, swap_b = position[pick_a], position[pick_b]
        swap(swap_a, swap_b)
    return result


def _greedy(instance: Instance, by: str) -> OffsetsSolution:
    alignment = effective_alignment(instance, None)
    index = IntervalIndex(instance)
    order = usmp_order(instance.sizes.tolist(), conflict_degrees(instance).tolist(),
                       [r.id for r in instance.records], by)
    offsets = greedy_above_conflicts(order, instance.sizes, index.overlapping, alignment)
    return offsets_solution(instance, offsets)


@register("usmp_greedy_by_size", Problem.OFFSETS, kind="heuristic", input="records",
          reference="apache/tvm src/tir/usmp/algo/greedy.cc (GreedySize)")
def usmp_greedy_by_size(instance: Instance) -> OffsetsSolution:
    """TVM USMP ``greedy_by_size``: largest first, each above its placed conflicts.

    Complexity O(n log n + E), E the conflicting pairs (numpy work per buffer).
    """
    return _greedy(instance, "size")


@register("usmp_greedy_by_conflicts", Problem.OFFSETS, kind="heuristic", input="records",
          reference="apache/tvm src/tir/usmp/algo/greedy.cc (GreedyConflicts)")
def usmp_greedy_by_conflicts(instance: Instance) -> OffsetsSolution:
    """TVM USMP ``greedy_by_conflicts``: most conflicts first, each above its placed conflicts.

    Complexity O(n log n + E).
    """
    return _greedy(instance, "conflicts")


@register("usmp_hill_climb", Problem.OFFSETS, kind="heuristic", input="records",
          reference="apache/tvm src/tir/usmp/algo/hill_climb.cc")
def usmp_hill_climb(instance: Instance, *, seed: int | None = None,
                    max_attempts: int = HILL_CLIMB_MAX_ATTEMPTS) -> OffsetsSolution:
    """TVM USMP ``hill_climb``: first-fit greedy passes over randomly perturbed by-size orders.

    Parameters
    ----------
    instance : Instance
    seed : int, optional
        Seed of the ``rand_r`` stream; ``None`` is TVM's 0.
    max_attempts : int
        Greedy passes (TVM: 500).

    Complexity O(max_attempts · (n + E)) numpy work, E the conflicting pairs (the conflict
    lists are materialised, so memory is O(E)).
    """
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise InputError(f"must be a positive integer, got {max_attempts!r}",
                         field="max_attempts")
    alignment = effective_alignment(instance, None)
    index = IntervalIndex(instance)
    neighbours = [index.overlapping(i) for i in range(len(instance))]
    offsets = hill_climb(instance.sizes, [r.id for r in instance.records], neighbours,
                         alignment, max_breadth(instance), seed=0 if seed is None else seed,
                         max_attempts=max_attempts)
    return offsets_solution(instance, offsets)
