"""Skyline repacking: lower an offsets packing by re-packing its upper part with the beam.

Band repacking (:mod:`optplan.exact.bands`) moves a few hundred buffers at a time with
CP-SAT and gets stuck a few granules above the bound: on MiniMalloc's J it took the beam's
975 KiB packing to 971 KiB and no lower. Skyline repacking moves more at once, with the
search's beam (:mod:`optplan.exact.beam`) instead of CP-SAT. Aiming at a target one granule
below the packing's arena, a step

* keeps every buffer whose top is at most a *level*, where it is; in each section they
  leave a *skyline*, the highest top kept there;
* re-packs all the other buffers from scratch, by a beam that starts from that skyline (its
  section floors) instead of from zero, at the target.

Every buffer above the level lies above the skyline in all of its sections (a kept buffer
that meets it in time lies below it), so the packing itself is one way to do it, one
granule too high. The level is drawn below the *highest useful level*, the highest at which
each section's skyline plus the sizes freed in it still fits the target (above it the beam
would be refuted in its first section; see :func:`highest_level`), by up to a sixth of the
target: lower levels free more and let the beam move more. From J's 971 KiB packing
(``paper/results/search/J.994304.offsets.csv``) the levels free 150-217 of its 409 buffers,
which a beam 250-2000 states wide re-packs in up to a minute; a run of these steps took that
packing to J's max breadth, 966 KiB, in 62 steps and 241 s (``bench/search_bands.py --repack
skyline``; ``paper/results/search/bands.jsonl``). A beam that packs lowers the arena; one
that empties says nothing, and the next step draws another level, width and seed.

It proves nothing by itself, but a packing at the max breadth is optimal.
"""

from __future__ import annotations

import random
import time

from optplan.exact._search_core import Prepared
from optplan.exact.bands import BandsResult, arena, lower_arena
from optplan.exact.beam import BeamResult, beam

__all__ = ["repack_skyline", "skyline_step", "beam_above", "highest_level", "subset", "WIDTHS"]

WIDTHS = (250, 500, 1000, 2000)
"""Beam widths a step draws from, by default (the widths that packed on J)."""


def subset(prep: Prepared, chosen: list[int]) -> Prepared:
    """The buffers ``chosen`` of ``prep`` as a :class:`Prepared` of their own that keeps
    ``prep``'s sections (so a skyline given per section of ``prep`` applies to it)."""
    index = {buffer: k for k, buffer in enumerate(chosen)}
    members: list[list[int]] = [[] for _ in range(prep.num_sections)]
    for k, buffer in enumerate(chosen):
        for section in range(prep.section_start[buffer], prep.section_end[buffer]):
            members[section].append(k)
    return Prepared(
        sizes=tuple(prep.sizes[b] for b in chosen), alignment=prep.alignment, scale=prep.scale,
        section_start=tuple(prep.section_start[b] for b in chosen),
        section_end=tuple(prep.section_end[b] for b in chosen),
        neighbours=tuple(tuple(index[j] for j in prep.neighbours[b] if j in index)
                         for b in chosen),
        section_members=tuple(tuple(m) for m in members),
        width=tuple(prep.width[b] for b in chosen))


def _split(prep: Prepared, offsets, level: int) -> tuple[list[int], list[int], list[int]]:
    """Per section, the highest top at most ``level`` (the skyline) and the sizes of the
    buffers whose tops pass it (freed); and the freed buffers."""
    skyline, freed, free = [0] * prep.num_sections, [0] * prep.num_sections, []
    for b, (offset, size) in enumerate(zip(offsets, prep.sizes)):
        top = offset + size
        if top > level:
            free.append(b)
        for section in range(prep.section_start[b], prep.section_end[b]):
            if top > level:
                freed[section] += size
            elif top > skyline[section]:
                skyline[section] = top
    return skyline, freed, free


def highest_level(prep: Prepared, offsets, target: int) -> int:
    """The highest level (a top of ``offsets``, or 0) at which, in every section, the skyline
    of the buffers kept plus the sizes of those freed is at most ``target``.

    Lowering the level frees the buffer that made some skyline, whose section then loses at
    least the gap below it; so the sum never grows as the level drops, and at level 0
    (everything freed) it is the section's breadth.

    Buffer 0 lives in the first section, 2 in the second, 1 in both, all of size 1; packed
    on top of each other they reach 3. At 2, buffer 1's top (2) would leave the second
    section 2 + 1; at 1 it is freed as well, and each section has 1 + 1 or 0 + 2:

    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 0, 1], [0, 1, 1], [1, 1, 1])
    >>> highest_level(prep, [0, 1, 2], 2), skyline_step(prep, [0, 1, 2], 2, 1, width=4)
    (1, [0, 1, 0])
    """
    for level in sorted({offset + size for offset, size in zip(offsets, prep.sizes)},
                        reverse=True):
        skyline, freed, _ = _split(prep, offsets, level)
        if all(high + size <= target for high, size in zip(skyline, freed)):
            return level
    return 0


def skyline_step(prep: Prepared, offsets, target: int, level: int, width: int, *,
                 seed: int = 0, deadline: float | None = None,
                 stop: bytearray | None = None) -> list[int] | None:
    """Keep the buffers of ``offsets`` whose top is at most ``level`` and re-pack the others by
    a beam (``width``, ``seed``) from their skyline, every top at most ``target``. Returns the
    new offsets (all buffers), or None when the beam emptied or ran out of time."""
    skyline, _, free = _split(prep, offsets, level)
    if not free:
        return list(offsets) if arena(prep, offsets) <= target else None
    found = beam_above(prep, offsets, free, skyline, target, width, seed=seed,
                       deadline=deadline, stop=stop)
    return found.offsets if isinstance(found.offsets, list) else None


def beam_above(prep: Prepared, offsets, free: list[int], floors, capacity: int, width: int, *,
               seed: int = 0, deadline: float | None = None,
               stop: bytearray | None = None) -> BeamResult:
    """The buffers ``free`` packed by a beam (``width``, ``seed``) from the section ``floors``,
    every top at most ``capacity``, the others kept at ``offsets``. Returns the beam's
    :class:`~optplan.exact.beam.BeamResult`, its ``offsets`` those of every buffer when it
    packed."""
    found = beam(subset(prep, free), capacity, width, seed=seed, deadline=deadline, stop=stop,
                 floors=floors)
    if not isinstance(found.offsets, list):
        return found
    moved = list(offsets)
    for k, b in enumerate(free):
        moved[b] = found.offsets[k]
    return BeamResult(moved, found.children, found.seconds, found.depth)


def repack_skyline(prep: Prepared, offsets, *, floor: int, deadline: float | None = None,
                   max_steps: int | None = None, widths=WIDTHS, beam_seconds: float = 60.0,
                   seed: int = 0, on_packing=None, stop=None) -> BandsResult:
    """Lower the arena of the packing ``offsets`` (scaled) by skyline steps (module docstring)
    until it reaches ``floor`` (the bound), ``deadline`` (a :func:`time.perf_counter` value)
    passes or ``max_steps`` steps ran. Each step's level, width (one of ``widths``) and beam
    seed come from ``seed``; a beam gets at most ``beam_seconds``. ``on_packing(result)`` is
    called after each target reached; ``stop()``, asked before each step, ends the run when
    true. One thread.

    Examples
    --------
    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 1, 2], [1, 2, 3], [2, 1, 2])
    >>> found = repack_skyline(prep, [1, 3, 0], floor=3, widths=(4,))
    >>> found.capacity, [packing["capacity"] for packing in found.packings]
    (3, [3])
    """
    rng = random.Random(seed)

    def step(best, target):
        top_level = highest_level(prep, best, target)
        level = rng.randint(max(0, top_level - target // 6), top_level)
        width, beam_seed = rng.choice(list(widths)), rng.randrange(1 << 30)
        limit = time.perf_counter() + beam_seconds
        moved = skyline_step(prep, best, target, level, width, seed=beam_seed,
                             deadline=limit if deadline is None else min(limit, deadline))
        return moved, {"width": width, "level": level}

    return lower_arena(prep, offsets, step, floor=floor, deadline=deadline,
                       max_steps=max_steps, on_packing=on_packing, stop=stop)
