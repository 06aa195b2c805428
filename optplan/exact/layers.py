"""Layer search: lower an offsets packing by choosing which buffers lie at offset 0.

The beam (:mod:`optplan.exact.beam`) builds a canonical packing bottom up, so its first few
dozen placements are all at offset 0: one buffer per stretch of time, a *bottom layer*. Those
placements force no waste, so the beam ranks them all alike and takes them in the seeded
order of ties; yet they decide what can be packed above them. On MiniMalloc's J, beams 250
states wide (seeds 0-3) empty at every capacity from 1000 KiB down to its max breadth (966
KiB) after placing 63 to 227 of its 409 buffers; with the bottom layer of J's optimal packing
(its 33 buffers at offset 0) kept, the beam of seed 0 packs 1000 KiB in 15 s. Skyline
repacking (:mod:`optplan.exact.skyline`) keeps a packing's bottom, so it inherits a poor one:
J's optimum has the bottom layer of the beam's packing it was lowered from, one lucky beam of
four (``paper/results/search/beam.jsonl``).

Layer search changes the bottom layer itself. Aiming at a target an eighth of the way from
the packing's arena down to the bound (:data:`AIM`), a step

* puts a random buffer into the layer (at offset 0), drops the layer's buffers that meet it
  in time, and fills the stretches of time left free with other buffers, in a random order,
  each that fits;
* packs every other buffer by a beam started from the layer's tops (its section floors).

The layer is kept when that beam gets at least as deep (places at least as many buffers) as
the current layer's did at the same target, with the same seed of ties (one per target, so
that depths compare layers, not seeds); a beam that packs lowers the arena, and the next
target is drawn from it the same way. How deep a beam gets above a layer is a rough measure
of its worth, but one that a beam of a second or two takes.

It proves nothing by itself, but a packing at the max breadth is optimal. On J, layer search
from the narrowest beam's packing chose a bottom layer that skyline and then band repacking
kept down to J's max breadth: an optimum with another bottom layer than the lucky beam's
(``paper/results/search/layers.jsonl``).
"""

from __future__ import annotations

import random
import time

from optplan.exact._search_core import Prepared
from optplan.exact.bands import BandsResult, lower_arena
from optplan.exact.beam import BeamResult
from optplan.exact.offsets_bound import granule
from optplan.exact.skyline import beam_above

__all__ = ["repack_layers", "layer_beam", "bottom_layer", "move_into_layer", "WIDTHS"]

WIDTHS = (250,)
"""Beam widths a step draws from, by default (the width of the runs on J)."""

AIM = 8
"""Each target lies a ``1/AIM`` of the way from the packing's arena down to the bound (at
least one granule below the arena): a layer's worth shows at any target, so there is no
point in stepping down a granule at a time, as the repackings that move buffers must."""


def bottom_layer(prep: Prepared, offsets) -> frozenset[int]:
    """The buffers of the packing ``offsets`` at offset 0."""
    return frozenset(b for b, offset in enumerate(offsets) if offset == 0)


def move_into_layer(prep: Prepared, layer: frozenset[int], buffer: int,
                    rng: random.Random) -> frozenset[int]:
    """``layer`` with ``buffer`` put in it: the buffers that meet it in time leave, and the
    others, in an order drawn from ``rng``, join it when they meet none of its buffers.

    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 1, 2, 0], [0, 1, 2, 2], [1, 1, 1, 1])
    >>> sorted(move_into_layer(prep, frozenset({3}), 1, random.Random(0)))
    [0, 1, 2]
    """
    kept = (set(layer) - set(prep.neighbours[buffer])) | {buffer}
    others = [b for b in range(len(prep.sizes)) if b not in kept]
    rng.shuffle(others)
    for b in others:
        if kept.isdisjoint(prep.neighbours[b]):
            kept.add(b)
    return frozenset(kept)


def layer_beam(prep: Prepared, layer: frozenset[int], capacity: int, width: int, *,
               seed: int = 0, deadline: float | None = None,
               stop: bytearray | None = None) -> BeamResult:
    """The buffers of ``layer`` (none of which meet in time) at offset 0 and the others packed
    by a beam (``width``, ``seed``) from the layer's tops, every top at most ``capacity``.
    Returns the beam's :class:`~optplan.exact.beam.BeamResult`, ``offsets`` those of every
    buffer when it packed, ``depth`` the buffers it placed above the layer."""
    floors = [0] * prep.num_sections
    for b in layer:
        for section in range(prep.section_start[b], prep.section_end[b]):
            floors[section] = prep.sizes[b]
    if any(prep.sizes[b] > capacity for b in layer):
        return BeamResult(None, 0, 0.0, 0)
    free = [b for b in range(len(prep.sizes)) if b not in layer]
    return beam_above(prep, [0] * len(prep.sizes), free, floors, capacity, width, seed=seed,
                      deadline=deadline, stop=stop)


def repack_layers(prep: Prepared, offsets, *, floor: int, deadline: float | None = None,
                  max_steps: int | None = None, widths=WIDTHS, beam_seconds: float = 60.0,
                  seed: int = 0, on_packing=None, stop=None) -> BandsResult:
    """Lower the arena of the packing ``offsets`` (scaled) by layer steps (module docstring),
    starting from its own bottom layer, until it reaches ``floor`` (the bound), ``deadline``
    (a :func:`time.perf_counter` value) passes or ``max_steps`` steps ran. Each step's buffer,
    fill order and width (one of ``widths``), and each target's beam seed, come from ``seed``;
    a beam gets at most ``beam_seconds``. ``on_packing(result)`` is called after each target
    reached (its record holds the beam's ``width`` and the ``layer``'s size); ``stop()``,
    asked before each step, ends the run when true. One thread.

    Examples
    --------
    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 1, 2], [1, 2, 3], [2, 1, 2])
    >>> found = repack_layers(prep, [1, 3, 0], floor=3, widths=(4,))
    >>> found.capacity, found.offsets
    (3, [0, 2, 0])
    """
    rng = random.Random(seed)
    current = {"layer": bottom_layer(prep, offsets), "target": None, "depth": -1, "seed": 0}

    def run_beam(layer, target, width):
        limit = time.perf_counter() + beam_seconds
        return layer_beam(prep, layer, target, width, seed=current["seed"],
                          deadline=limit if deadline is None else min(limit, deadline))

    def step(best, target):
        width = rng.choice(list(widths))
        if current["target"] != target:  # a new target: how deep does the layer get now?
            current["target"], current["seed"] = target, rng.randrange(1 << 30)
            layer = current["layer"]
        else:
            outside = [b for b in range(len(prep.sizes)) if b not in current["layer"]]
            layer = move_into_layer(prep, current["layer"], rng.choice(outside), rng)
        found = run_beam(layer, target, width)
        if found.depth >= current["depth"] or layer is current["layer"]:
            current["layer"], current["depth"] = layer, found.depth
        if not isinstance(found.offsets, list):
            return None, {}
        return found.offsets, {"width": width, "layer": len(layer)}

    def granules_below(capacity: int) -> int:
        return max(1, (capacity - floor) // granule(prep) // AIM)

    return lower_arena(prep, offsets, step, floor=floor, deadline=deadline,
                       max_steps=max_steps, on_packing=on_packing, stop=stop,
                       granules_below=granules_below)
