"""TFLite GPU delegate strategies for the shared-objects problem.

Reference: ``tensorflow/lite/delegates/gpu/common/memory_management/`` (naive, equality,
greedy in order, greedy by breadth, greedy by size with distance priority, best greedy,
min-cost flow) and Pisarchyk & Lee 2020, §4. Semantics and tie-breaking follow the reference;
where it uses an unstable ``std::sort`` we sort stably (ties by record index), which is what
the reference tests expect.
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque

import numpy as np

from optplan.bounds import positional_maximums
from optplan.model import Instance, SharedObjectsSolution
from optplan.problems import Problem
from optplan.profiles import breadths, operator_profiles
from optplan.registry import register

__all__ = ["naive", "equality", "greedy_in_order", "greedy_by_breadth", "greedy_by_size",
           "greedy_best", "min_cost_flow", "breadth_order"]

_SO = Problem.SHARED_OBJECTS
_DIR = "tensorflow/lite/delegates/gpu/common/memory_management"


@register("naive", _SO, reference=f"TFLite {_DIR}/naive_assignment.h")
def naive(instance: Instance) -> SharedObjectsSolution:
    """Every tensor gets an object of its own. O(n)."""
    return SharedObjectsSolution(tuple(range(len(instance))), tuple(r.size for r in instance.records))


def _in_first_use_order(instance: Instance) -> list[int]:
    """Record indices by first op, ties by index: the order TFLite builds its records in
    (its in-order strategies rely on it; an unsorted input would free objects too early)."""
    return sorted(range(len(instance)), key=lambda i: (instance.records[i].first_op, i))


def _released(in_use: list, first_op: int):
    """Pop the objects whose last use is before ``first_op`` (smallest last use, then id)."""
    while in_use and in_use[0][0] < first_op:
        yield heapq.heappop(in_use)[1]


@register("equality", _SO, reference=f"TFLite {_DIR}/equality_assignment.h")
def equality(instance: Instance) -> SharedObjectsSolution:
    """Reuse a free object only when its size equals the tensor's (last freed first).

    Tensors are taken in order of first use. O(n log n).
    """
    object_ids, object_sizes = [-1] * len(instance), []
    free_by_size: dict[int, list[int]] = {}
    in_use: list[tuple[int, int]] = []
    for index in _in_first_use_order(instance):
        record = instance.records[index]
        for obj in _released(in_use, record.first_op):
            free_by_size.setdefault(object_sizes[obj], []).append(obj)
        free = free_by_size.get(record.size)
        if free:
            obj = free.pop()
        else:
            obj = len(object_sizes)
            object_sizes.append(record.size)
        object_ids[index] = obj
        heapq.heappush(in_use, (record.last_op, obj))
    return SharedObjectsSolution(tuple(object_ids), tuple(object_sizes))


@register("greedy_in_order", _SO, reference=f"TFLite {_DIR}/greedy_in_order_assignment.h")
def greedy_in_order(instance: Instance) -> SharedObjectsSolution:
    """Tensors in order of first use; reuse the free object that wastes least memory.

    The candidates are the smallest free object at least as large as the tensor and the
    largest smaller one (which then grows); the smaller wins only if it wastes strictly less.
    Ties between equal sizes go to the lower object id. O(n·k) with k objects.
    """
    object_ids, object_sizes = [-1] * len(instance), []
    pool: list[tuple[int, int]] = []  # sorted (size, object id)
    in_use: list[tuple[int, int]] = []
    for index in _in_first_use_order(instance):
        record = instance.records[index]
        for obj in _released(in_use, record.first_op):
            bisect.insort(pool, (object_sizes[obj], obj))
        size = record.size
        best = None
        if pool:
            at = bisect.bisect_left(pool, (size, 0))
            waste = 0
            if at < len(pool):
                best, waste = at, pool[at][0] - size
            if at > 0 and (best is None or size - pool[at - 1][0] < waste):
                best = at - 1
        if best is None:
            obj = len(object_sizes)
            object_sizes.append(size)
        else:
            obj = pool.pop(best)[1]
            object_sizes[obj] = max(object_sizes[obj], size)
        object_ids[index] = obj
        heapq.heappush(in_use, (record.last_op, obj))
    return SharedObjectsSolution(tuple(object_ids), tuple(object_sizes))


def breadth_order(instance: Instance) -> list[list[int]]:
    """Operator profiles in non-increasing breadth (ties: earlier op first), each profile's
    records in non-increasing size (ties: lower index first) — the order greedy by breadth
    visits tensors in (Pisarchyk & Lee 2020, Algorithm 1)."""
    profiles = operator_profiles(instance)
    widths = breadths(instance).tolist()
    sizes = instance.sizes.tolist()
    order = sorted(range(len(profiles)), key=lambda op: -widths[op])
    return [sorted(profiles[op], key=lambda i: -sizes[i]) for op in order]


def _schedule_free(schedule: list[tuple[int, int]], first: int, last: int) -> bool:
    """Whether ``[first, last]`` overlaps none of the disjoint intervals in ``schedule``."""
    at = bisect.bisect_left(schedule, (first, -1))
    if at < len(schedule) and schedule[at][0] <= last:
        return False
    return not (at > 0 and schedule[at - 1][1] >= first)


@register("greedy_by_breadth", _SO, reference=f"TFLite {_DIR}/greedy_by_breadth_assignment.cc;"
          " Pisarchyk & Lee 2020 §4.2")
def greedy_by_breadth(instance: Instance) -> SharedObjectsSolution:
    """Visit ops by breadth, then their unassigned tensors by size; put each tensor into the
    suitable object closest in size (the smallest one at least as large, else the largest,
    which grows), or a new object. O(n·k log n)."""
    records = instance.records
    object_ids = [-1] * len(records)
    object_sizes: list[int] = []
    schedules: list[list[tuple[int, int]]] = []
    for profile in breadth_order(instance):
        for index in profile:
            if object_ids[index] >= 0:
                continue
            record = records[index]
            best = None
            for obj, schedule in enumerate(schedules):
                if best is not None:
                    best_size, size = object_sizes[best], object_sizes[obj]
                    if best_size < record.size:
                        if size <= best_size:
                            continue
                    elif size < record.size or size >= best_size:
                        continue
                if _schedule_free(schedule, record.first_op, record.last_op):
                    best = obj
            if best is None:
                best = len(schedules)
                schedules.append([])
                object_sizes.append(record.size)
            bisect.insort(schedules[best], (record.first_op, record.last_op))
            object_sizes[best] = max(object_sizes[best], record.size)
            object_ids[index] = best
    return SharedObjectsSolution(tuple(object_ids), tuple(object_sizes))


_FAR = np.int64(2**62)


@register("greedy_by_size", _SO, reference=f"TFLite {_DIR}/greedy_by_size_assignment.cc "
          "(GreedyBySizeDistPriorityAssignment); Pisarchyk & Lee 2020 §4.4")
def greedy_by_size(instance: Instance) -> SharedObjectsSolution:
    """Greedy by size, improved: tensors in stages of the positional maximums, within a stage
    the (tensor, object) pair with the smallest positive time distance first.

    Priority of an unassigned tensor: its position (the last positional maximum >= its size),
    then the smallest distance from its lifetime to an object it fits in time, then larger size,
    then lower index. The chosen tensor joins that object (which may grow) or a new one.
    O(n²) like the reference (numpy-vectorised over tensors).
    """
    n = len(instance)
    if n == 0:
        return SharedObjectsSolution((), ())
    first, last, sizes = instance.first_ops, instance.last_ops, instance.sizes
    maxima = np.asarray(positional_maximums(instance), dtype=np.int64)
    # maxima is non-increasing: the position is the count of maxima >= size, minus one.
    position = np.searchsorted(-maxima, -sizes, side="right") - 1
    distance = np.full((n, 8), _FAR, dtype=np.int64)  # tensor × object, grown on demand
    best_distance = np.full(n, _FAR, dtype=np.int64)
    best_object = np.full(n, -1, dtype=np.int64)
    unassigned = np.ones(n, dtype=bool)
    object_ids = np.full(n, -1, dtype=np.int64)
    object_sizes: list[int] = []
    for _ in range(n):
        chosen = _highest_priority(unassigned, position, best_distance, sizes)
        new_object = best_distance[chosen] == _FAR
        if new_object:
            obj = len(object_sizes)
            object_sizes.append(int(sizes[chosen]))
            if obj == distance.shape[1]:
                distance = np.concatenate([distance, np.full_like(distance, _FAR)], axis=1)
        else:
            obj = int(best_object[chosen])
            object_sizes[obj] = max(object_sizes[obj], int(sizes[chosen]))
        object_ids[chosen] = obj
        unassigned[chosen] = False

        gap = np.where(last < first[chosen], first[chosen] - last,
                       np.where(last[chosen] < first, first - last[chosen], _FAR))
        rows = unassigned if new_object else unassigned & (distance[:, obj] != _FAR)
        if new_object:
            distance[rows, obj] = gap[rows]
        else:
            blocked = rows & (gap == _FAR)
            distance[blocked, obj] = _FAR
            recalc = np.flatnonzero(blocked & (best_object == obj))
            if len(recalc):
                row_min = distance[recalc, :len(object_sizes)].min(axis=1)
                reachable = row_min != _FAR
                best_distance[recalc] = row_min
                best_object[recalc[reachable]] = distance[recalc[reachable],
                                                          :len(object_sizes)].argmin(axis=1)
            open_rows = rows & (gap != _FAR)
            distance[open_rows, obj] = np.minimum(distance[open_rows, obj], gap[open_rows])
        improve = rows & (gap < best_distance)
        best_distance[improve] = gap[improve]
        best_object[improve] = obj
    return SharedObjectsSolution(tuple(object_ids.tolist()), tuple(object_sizes))


def _highest_priority(unassigned, position, best_distance, sizes) -> int:
    candidates = np.flatnonzero(unassigned)
    for key in (position, best_distance, -sizes):
        values = key[candidates]
        candidates = candidates[values == values.min()]
    return int(candidates[0])


@register("greedy_best", _SO, reference="TFLite tensorflow/lite/delegates/gpu/common/memory_management.cc (BestGreedy)")
def greedy_best(instance: Instance) -> SharedObjectsSolution:
    """Greedy by size, replaced by greedy by breadth when that is strictly smaller."""
    by_size = greedy_by_size(instance)
    by_breadth = greedy_by_breadth(instance)
    return by_breadth if by_breadth.total_size < by_size.total_size else by_size


@register("min_cost_flow", _SO, reference=f"TFLite {_DIR}/min_cost_flow_assignment.cc")
def min_cost_flow(instance: Instance) -> SharedObjectsSolution:
    """Reuse chains as a min-cost flow (TFLite MINCOSTFLOW), solved by successive shortest
    paths with the reference's queue-based Bellman-Ford (SPFA) so ties resolve identically.

    Left vertex i = tensor i handing its object on; right vertex i' = tensor i receiving one.
    Edges: source→i (0), i'→sink (0), source→i' (size_i: a new object), and j→i' for every
    tensor j released before i starts (cost max(0, size_i − size_j)). Objects are the chains
    of saturated edges; tensors are numbered in order of first use. O(n²) edges.
    """
    n = len(instance)
    order = _in_first_use_order(instance)
    records = [instance.records[i] for i in order]
    graph = _FlowGraph(2 * n + 2)
    source, sink = 2 * n, 2 * n + 1
    released: list[int] = []
    in_use: list[tuple[int, int]] = []
    for i, record in enumerate(records):
        released.extend(_released(in_use, record.first_op))
        heapq.heappush(in_use, (record.last_op, i))
        graph.add_edge(source, i, 0)
        graph.add_edge(n + i, sink, 0)
        graph.add_edge(source, n + i, record.size)
        for j in released:
            graph.add_edge(j, n + i, max(0, record.size - records[j].size))
    graph.saturate(source, sink)

    object_ids = [-1] * n
    object_sizes: list[int] = []
    for edge in graph.out_edges[source]:
        target = graph.target[edge]
        if graph.capacity[edge] == 0 and n <= target < 2 * n:
            obj = len(object_sizes)
            object_sizes.append(_follow_chain(graph, target - n, n, obj, object_ids, records))
    by_record = [-1] * n
    for position, index in enumerate(order):
        by_record[index] = object_ids[position]
    return SharedObjectsSolution(tuple(by_record), tuple(object_sizes))


def _follow_chain(graph, start, n, obj, object_ids, records) -> int:
    """Assign ``start`` and every tensor reached through saturated j→i' edges to ``obj``
    (depth first, in edge order, as the reference's recursion); return the largest size."""
    largest = 0
    stack = [start]
    while stack:
        tensor = stack.pop()
        if object_ids[tensor] >= 0:
            continue
        object_ids[tensor] = obj
        largest = max(largest, records[tensor].size)
        successors = [graph.target[e] - n for e in graph.out_edges[tensor]
                      if graph.capacity[e] == 0 and n <= graph.target[e] < 2 * n]
        stack.extend(reversed([s for s in successors if object_ids[s] < 0]))
    return largest


class _FlowGraph:
    """Residual graph; edge e and its reverse are e and e ^ 1."""

    def __init__(self, vertices: int):
        self.out_edges: list[list[int]] = [[] for _ in range(vertices)]
        self.target: list[int] = []
        self.capacity: list[int] = []
        self.cost: list[int] = []

    def add_edge(self, source: int, target: int, cost: int) -> None:
        self.out_edges[source].append(len(self.target))
        self.target.append(target)
        self.capacity.append(1)
        self.cost.append(cost)
        self.out_edges[target].append(len(self.target))
        self.target.append(source)
        self.capacity.append(0)
        self.cost.append(-cost)

    def saturate(self, source: int, sink: int) -> None:
        """Augment along shortest paths (level-by-level SPFA) until the sink is unreachable."""
        vertices = len(self.out_edges)
        out_edges, target, capacity, cost = self.out_edges, self.target, self.capacity, self.cost
        while True:
            distance = [None] * vertices
            previous_edge = [-1] * vertices
            queued_in_round = [0] * vertices
            distance[source] = 0
            current, round_number = deque([source]), 1
            queued_in_round[source] = round_number
            while current:
                round_number += 1
                following: deque[int] = deque()
                while current:
                    vertex = current.popleft()
                    base = distance[vertex]
                    for edge in out_edges[vertex]:
                        if capacity[edge] > 0:
                            head = target[edge]
                            candidate = base + cost[edge]
                            if distance[head] is None or candidate < distance[head]:
                                distance[head] = candidate
                                previous_edge[head] = edge
                                if queued_in_round[head] != round_number:
                                    following.append(head)
                                    queued_in_round[head] = round_number
                current = following
            if distance[sink] is None:
                return
            vertex = sink
            while vertex != source:
                edge = previous_edge[vertex]
                capacity[edge] -= 1
                capacity[edge ^ 1] += 1
                vertex = target[edge ^ 1]
