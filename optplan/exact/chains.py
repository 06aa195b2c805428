"""Chains: a restriction of an offsets instance that ``search``'s random probes search.

A *chain* is a run of buffers of one size, each live from the op right after the one before
it dies (an activation buffer handed on layer after layer, a loop's state). Built greedily:
buffers in order of their first op, each takes as its successor the first buffer not yet
taken, of its size, live from the op after its last. The *chained* instance has one buffer
per chain, of the chain's size, live over the chain's ops. Its max breadth is the
instance's (a chain occupies exactly what its members do, op by op), and every packing of
it is a packing of the instance, each member at its chain's offset (members never overlap
in time). Not the other way round: a packing may hand a chain from one offset to another,
so a probe of the chained instance that finds nothing proves nothing. Optima do: J's two
committed optimal packings keep 25 and 18 of its 81 links (``tests/test_chains.py``).

Why search it at all: it is a smaller instance whose packings come far more easily. On
MiniMalloc's J (409 buffers, 328 chains; its max breadth 989,184 bytes) 400 random orders of
0.1 s each pack the chained instance 1 time within 0.5 % of the max breadth, 13 times within
2 % and 45 within 3 %, where none packs J itself within 3 % (``bench/search_orders.py
--chains``; ``paper/results/search/orders.jsonl``); ``search``, whose random probes draw
their orders for the chained instance (switch ``chains``), ended J's 60-second runs 0.7-1.9 %
above its bound at seeds 0-4, against 2.7-4.0 % without, before its rounds at the bound
(which search the chained instance too) began within the minute and proved J at its bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from optplan.exact._search_core import Prepared, prepare

__all__ = ["Chains", "chain_groups", "chained"]


def chain_groups(prep: Prepared) -> list[list[int]]:
    """The chains of ``prep``, each a list of buffers in time order (a buffer in no chain is
    a chain of one), in order of their first buffer.

    >>> chain_groups(prepare([0, 2, 2, 4], [1, 3, 3, 5], [4, 4, 4, 4]))
    [[0, 1, 3], [2]]
    """
    start, end, sizes = prep.section_start, prep.section_end, prep.sizes
    waiting: dict[tuple[int, int], list[int]] = {}  # (first section, size) -> buffers
    for buffer in sorted(range(len(sizes)), key=lambda b: (start[b], b), reverse=True):
        waiting.setdefault((start[buffer], sizes[buffer]), []).append(buffer)
    successor: dict[int, int] = {}
    for buffer in sorted(range(len(sizes)), key=lambda b: (start[b], b)):
        candidates = waiting.get((end[buffer], sizes[buffer]))
        if candidates:
            successor[buffer] = candidates.pop()  # the lowest index (the list is reversed)
    taken = set(successor.values())
    groups = []
    for head in (b for b in range(len(sizes)) if b not in taken):
        group = [head]
        while group[-1] in successor:
            group.append(successor[group[-1]])
        groups.append(group)
    return groups


@dataclass(frozen=True)
class Chains:
    """The chained instance ``prep`` (in the instance's scaled units) and its ``groups``,
    one per buffer of ``prep``."""

    prep: Prepared
    groups: tuple[tuple[int, ...], ...]

    def expand(self, offsets) -> list[int]:
        """The instance's offsets of a packing of the chained instance."""
        expanded = [0] * sum(map(len, self.groups))
        for group, offset in zip(self.groups, offsets):
            for buffer in group:
                expanded[buffer] = offset
        return expanded


def chained(prep: Prepared) -> Chains | None:
    """The chained instance of ``prep``, or ``None`` when no two buffers chain."""
    groups = chain_groups(prep)
    if len(groups) == len(prep.sizes):
        return None
    start, end, sizes = prep.section_start, prep.section_end, prep.sizes
    # Sections stand in for ops: a chain's lifetime width (the preorders' key) is the number
    # of sections it spans. The sizes stay in the instance's scaled units.
    heads = tuple(sizes[g[0]] for g in groups)
    merged = prepare([start[g[0]] for g in groups], [end[g[-1]] - 1 for g in groups], heads)
    return Chains(replace(merged, sizes=heads, alignment=prep.alignment, scale=prep.scale),
                  tuple(map(tuple, groups)))
