"""Graph colouring of the interference graph (``coloring_<strategy>``).

Two records interfere when their intervals intersect; the interference graph (networkx) is
coloured greedily with each of networkx's strategies
(``networkx/algorithms/coloring/greedy_coloring.py``: ``largest_first``, ``smallest_last``,
``saturation_largest_first`` (DSATUR), ``independent_set``, ``connected_sequential_bfs``,
``connected_sequential_dfs``, ``random_sequential`` (seeded)) and with ``size_weighted``, the
greedy colouring that visits records by size, largest first, so every colour's size is fixed
by its first member (the natural greedy for max-colouring, the shared-objects problem's graph
form: Pemmaraju, Raman & Varadarajan, "Buffer minimization using max-coloring", SODA 2004).

A colour is a shared object whose size is its largest member. For offsets the objects are
stacked: colour c starts at the sum of the sizes of colours 0..c-1, each start aligned.

Building the graph costs O(n log n + E), so these methods are bounded by the conflict graph
(E conflicting pairs), not by n·k. networkx's own ``saturation_largest_first`` rescans every
node at every step (O(n·E)) and its ``independent_set`` rebuilds subgraph views for every
choice; both would take hours at 10^5 tensors, so :func:`strategy_saturation_largest_first`
and :func:`strategy_independent_set` below are heap-based versions of the same selection
rules: DSATUR yields exactly networkx's order (same keys, ties by node order), O(E log n);
the independent-set strategy removes the same min-degree maximal independent sets, ties by
node order (networkx breaks them by set iteration order), O(χ·(n + E) log n) for χ colours.
"""

from __future__ import annotations

import heapq
from functools import partial
from typing import TYPE_CHECKING, Callable

import numpy as np

from optplan.heuristics._placement import (align_up, conflict_edges, effective_alignment,
                                           offsets_solution)
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution
from optplan.problems import Problem
from optplan.registry import register

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["interference_graph", "coloring", "STRATEGIES", "objects_from_colors",
           "stacked_offsets", "strategy_saturation_largest_first", "strategy_independent_set"]

_NETWORKX = "networkx/algorithms/coloring/greedy_coloring.py"
STRATEGIES = ("largest_first", "smallest_last", "saturation_largest_first", "independent_set",
              "connected_sequential_bfs", "connected_sequential_dfs", "random_sequential",
              "size_weighted")
"""The colouring strategies; each is registered as ``coloring_<strategy>`` for both problems."""


def strategy_saturation_largest_first(graph: nx.Graph, colors: dict):
    """DSATUR: the uncoloured node with the most distinct neighbour colours, then the highest
    degree, then the first in node order — networkx's keys, kept in a lazy heap.
    O((n + E) log n)."""
    rank = {node: i for i, node in enumerate(graph)}
    degree = dict(graph.degree)
    seen: dict = {node: set() for node in graph}
    heap = [(0, -degree[node], rank[node], node) for node in graph]
    heapq.heapify(heap)
    while heap:
        saturation, _, _, node = heapq.heappop(heap)
        if node in colors or -saturation != len(seen[node]):
            continue
        yield node
        color = colors[node]
        for neighbour in graph[node]:
            if neighbour not in colors and color not in seen[neighbour]:
                seen[neighbour].add(color)
                heapq.heappush(heap, (-len(seen[neighbour]), -degree[neighbour],
                                      rank[neighbour], neighbour))


def strategy_independent_set(graph: nx.Graph, colors: dict):
    """Repeatedly remove a maximal independent set built by taking the node of minimum degree
    among the remaining candidates (ties: node order); each set becomes one colour.
    O(χ·(n + E) log n)."""
    rank = {node: i for i, node in enumerate(graph)}
    uncoloured = set(graph)
    while uncoloured:
        candidate = set(uncoloured)
        degree = {node: sum(1 for n in graph[node] if n in candidate) for node in candidate}
        heap = [(degree[node], rank[node], node) for node in candidate]
        heapq.heapify(heap)
        chosen = []
        while heap:
            value, _, node = heapq.heappop(heap)
            if node not in candidate or value != degree[node]:
                continue
            chosen.append(node)
            removed = [node] + [n for n in graph[node] if n in candidate]
            candidate.difference_update(removed)
            for gone in removed:
                for neighbour in graph[gone]:
                    if neighbour in candidate:
                        degree[neighbour] -= 1
                        heapq.heappush(heap, (degree[neighbour], rank[neighbour], neighbour))
        uncoloured.difference_update(chosen)
        yield from sorted(chosen, key=rank.__getitem__)


_FAST = {"saturation_largest_first": strategy_saturation_largest_first,
         "independent_set": strategy_independent_set}


def interference_graph(instance: Instance) -> nx.Graph:
    """Nodes are record indices; an edge joins every two records whose intervals intersect."""
    import networkx as nx  # on first use: `optplan methods` lists this module without it

    graph = nx.Graph()
    graph.add_nodes_from(range(len(instance)))
    first, second = conflict_edges(instance)
    graph.add_edges_from(zip(first.tolist(), second.tolist()))
    return graph


def _size_order(instance: Instance) -> Callable:
    order = np.lexsort((np.arange(len(instance)), instance.first_ops, -instance.sizes)).tolist()
    return lambda graph, colors: iter(order)


def coloring(instance: Instance, strategy: str, *, seed: int | None = None) -> list[int]:
    """Colour of every record under ``strategy`` (one of :data:`STRATEGIES`)."""
    import networkx as nx

    graph = interference_graph(instance)
    if strategy == "size_weighted":
        chosen = _size_order(instance)
    elif strategy == "random_sequential":
        chosen = partial(nx.coloring.strategy_random_sequential,
                         seed=0 if seed is None else seed)
    else:
        chosen = _FAST.get(strategy, strategy)
    colors = nx.greedy_color(graph, strategy=chosen)
    return [colors[i] for i in range(len(instance))]


def objects_from_colors(instance: Instance, colors: list[int]) -> SharedObjectsSolution:
    """One shared object per colour, sized by its largest member."""
    return SharedObjectsSolution.from_object_ids(instance, colors)


def stacked_offsets(instance: Instance, colors: list[int]) -> OffsetsSolution:
    """Objects stacked in colour order, each start aligned to the instance's alignment."""
    objects = objects_from_colors(instance, colors)
    alignment = effective_alignment(instance, None)
    starts, top = [], 0
    for size in objects.object_sizes:
        start = int(align_up(top, alignment))
        starts.append(start)
        top = start + size
    return offsets_solution(instance, [starts[c] for c in colors])


def _register(strategy: str) -> None:
    name = f"coloring_{strategy}"
    if strategy == "size_weighted":
        reference = _NETWORKX + " + size-ordered greedy (Pemmaraju, Raman & Varadarajan, SODA 2004)"
    elif strategy in _FAST:
        reference = _NETWORKX + f" (strategy_{strategy} rules, heap-based)"
    else:
        reference = _NETWORKX + f" (strategy_{strategy})"
    summary = (f"Greedy colouring of the interference graph, strategy ``{strategy}``; "
               "colours are shared objects")

    if strategy == "random_sequential":
        def shared(instance: Instance, *, seed: int | None = None) -> SharedObjectsSolution:
            return objects_from_colors(instance, coloring(instance, strategy, seed=seed))

        def offsets(instance: Instance, *, seed: int | None = None) -> OffsetsSolution:
            return stacked_offsets(instance, coloring(instance, strategy, seed=seed))
    else:
        def shared(instance: Instance) -> SharedObjectsSolution:
            return objects_from_colors(instance, coloring(instance, strategy))

        def offsets(instance: Instance) -> OffsetsSolution:
            return stacked_offsets(instance, coloring(instance, strategy))

    shared.__doc__ = summary + " (object size = largest member)."
    offsets.__doc__ = summary + ", stacked in colour order for offsets."
    shared.__name__ = offsets.__name__ = name
    register(name, Problem.SHARED_OBJECTS, kind="heuristic", input="records",
             reference=reference)(shared)
    register(name, Problem.OFFSETS, kind="heuristic", input="records",
             reference=reference)(offsets)


for _strategy in STRATEGIES:
    _register(_strategy)
