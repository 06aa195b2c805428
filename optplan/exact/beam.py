"""A beam search over the canonical packings of ``search``: packings the depth-first search
finds only by luck.

The depth-first search (:mod:`optplan.exact._search_core`) dives down one path of placements
and backtracks from its bottom; at a tight capacity nearly every dive dies after a few dozen
placements, and whether one gets through depends on the static order (on MiniMalloc's D, 2
of 15,000 random orders pack the max breadth). The beam keeps many partial packings side by
side instead: level d holds up to ``width`` states with d buffers placed, each a canonical
partial packing (placements non-decreasing in offset, every buffer at its lowest offset,
the section floors lifted to the last offset). A child places one more buffer; the search's
rules (dominance, section inference, the unplaced floor) drop children that cannot lead to
a packing. The rest are ranked by the waste they force: in each section, the gap between
its effective floor (its floor, raised to the least lowest offset of its unplaced buffers)
and the sizes placed in it, weighted by 1 / (slack + 1) so that waste in a tight section
counts most, per unit of placed area. That rank takes building the child, so only the best
``10 * width`` children by a first, cheaper rank (the waste added along the path) are built.
The ``width`` best distinct states, at most ``per_parent`` children of any one state
(diversity), make the next level.

A full level n is a packing; it goes through the validator like every other. A beam that
empties proves nothing: it dropped states on the way. Which beams pack is a matter of width
and luck (the seeded order of ties): at MiniMalloc's D's max breadth (986,112 bytes, so the
optimum), 5 of the seeds 0-5 pack at width 2000 (building 5 children per kept state instead
of 10, 1 of them), 8 of 150 seeds at width 200 and none of 100 at width 50; J packs 1 %
above its max breadth at width 2000 for 1 of 4 seeds and at widths 20-500 for none of 440
(``bench/search_beam.py``; ``paper/results/search/beam.jsonl``). The search therefore runs
many beams of mixed widths (:func:`optplan.exact.search.luby`).

A child's effective floors come from the least lowest offset of each section's unplaced
members. A child lifts every lowest offset to at least its offset, and its neighbours' to its
top, so a section's least changes beyond that lift only when every member holding it moved;
the parent's count of holders and next larger offset then give the new least, and only
sections whose next offset may have moved too are scanned again. Built so, the beams search
the same states as with a full scan of every section, faster: J's beam 1 % above its max
breadth (width 2000, seed 1) in 56.3 s instead of 106.1 s, D's at width 700 in 1.9 and
4.0 s instead of 3.7 and 6.2 s. Everything is in the search's scaled integers.
"""

from __future__ import annotations

import time
from array import array
from dataclasses import dataclass

from optplan.exact._search_core import TIMEOUT, Prepared

__all__ = ["BeamResult", "beam", "PER_PARENT"]

PER_PARENT = 3
"""Children of one state kept at most, by default: a single promising state would otherwise
fill the level with near copies of itself (with 1, D's beam empties at once; 2 and 3 pack)."""


@dataclass(frozen=True)
class BeamResult:
    """What one beam found: ``offsets`` (scaled) of a packing, ``None`` when the beam
    emptied (nothing proven), or :data:`~optplan.exact._search_core.TIMEOUT`; ``children``
    counts the states it built, ``depth`` the buffers placed in its last full level (all of
    them when it packed; how far it got when it emptied)."""

    offsets: list | None | object
    children: int
    seconds: float
    depth: int = 0


def beam(prep: Prepared, capacity: int, width: int, *, per_parent: int = PER_PARENT,
         seed: int = 0, deadline: float | None = None,
         stop: bytearray | None = None, floors=None) -> BeamResult:
    """Beam-search ``prep`` for a packing with every top <= ``capacity`` (scaled units).

    Keeps ``width`` states per level, at most ``per_parent`` children of one state; states of
    equal rank are taken in an order drawn from ``seed`` (the beam is deterministic given
    its arguments; another seed is another beam). ``floors`` (one per section, default 0)
    are the sections' floors before the first placement: every buffer then lies at or above
    the floor of each of its sections, as if the space below were taken (skyline repacking,
    :mod:`optplan.exact.skyline`, starts beams from the buffers it keeps). Stops at
    ``deadline`` (a :func:`time.perf_counter` value) or once ``stop[0]`` is set, checked
    once per level.

    Examples
    --------
    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 1, 2], [1, 2, 3], [2, 1, 2])
    >>> beam(prep, 3, width=8).offsets, beam(prep, 2, width=8).offsets
    ([0, 2, 0], None)
    """
    from optplan.exact import _beam_ext

    if width < 1 or per_parent < 1:
        raise ValueError(f"width and per_parent must be positive, got {width}, {per_parent}")
    began = time.perf_counter()
    n = len(prep.sizes)
    if n == 0:
        return BeamResult([], 0, 0.0, 0)
    if max(prep.sizes) > capacity:
        return BeamResult(None, 0, 0.0)
    seconds = -1.0 if deadline is None else max(0.0, deadline - began)
    (sizes, _width, starts, ends, neighbour_rows, neighbours, member_rows, members,
     totals, _cuts) = prep.compiled_arrays
    code, offsets, children, depth = _beam_ext.beam(
        n, prep.num_sections, prep.alignment, sizes, starts, ends, neighbour_rows,
        neighbours, member_rows, members, totals, capacity, width, per_parent, seed, seconds, stop,
        None if floors is None else array("q", floors))
    found = offsets if code == 1 else None if code == 0 else TIMEOUT
    return BeamResult(found, children, time.perf_counter() - began, depth)
