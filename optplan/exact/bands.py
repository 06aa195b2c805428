"""Band repacking: a large-neighbourhood search that lowers an offsets packing's arena.

The search's beams and depth-first probes build a packing from nothing, bottom up; once they
have one a little above the bound, nothing there improves it: MiniMalloc's J packs at 975
KiB by a beam 1 % above its max breadth (966 KiB), and no beam, probe or local move of one
buffer at a time got lower. Band repacking improves a packing it is given instead. Aiming at
a target one granule below the packing's arena, each step frees

* every buffer whose top passes the target, and
* every buffer that meets a random band of offsets ``[lo, lo + height)`` (over all time;
  ``height`` is uniform between half of :data:`BAND` and all of it, and ``lo`` between three
  heights and one height below the target: the upper part of the packing, around the
  buffers that overflow),

keeps the other buffers where they are, and lets CP-SAT place the freed ones (within the
current arena, clear of each other and of the kept ones, hinted at their current offsets)
so as to minimise their *overflow*: the sum over them of how far each top passes the target.
A step whose answer overflows no more than the packing does replaces it, so moves that keep
the overflow let the packing drift; when the overflow reaches zero the packing fits the
target, and the target steps down a granule. Bands of a few hundred units free about a
hundred buffers, which CP-SAT places in seconds, yet reach across all of time: a thin buffer
that lives for most of the instance needs a free corridor of its height across its whole
life, which a move of one buffer, or a window of sections, cannot open. Narrow bands (30-60
units on J, 11-29 buffers) are solved to optimality at once: 11,000 of them, aimed at 974
KiB from the 975 KiB packing, never lowered its overflow of 1 KiB.

On J from the beam's 975 KiB packing (``paper/results/search/J.998400.offsets.csv``), bands
up to 300 KiB took it to 971 KiB (994,304 bytes) in the first 187 s of a 25-minute run on two
workers, and no lower in the rest of it, nor in 15 more minutes from there with another seed
(``bench/search_bands.py``; ``paper/results/search/bands.jsonl``). Skyline repacking
(:mod:`optplan.exact.skyline`) took it from there to J's max breadth. Band repacking proves
nothing: a step that finds no better placement says nothing about the target. Everything is
in the search's scaled integers.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from optplan.exact._search_core import Prepared
from optplan.exact.budget import Budget
from optplan.exact.cpsat_solve import cp_model, solve_model
from optplan.exact.offsets_bound import granule

__all__ = ["BandsResult", "repack_bands", "band_step", "overflow", "lower_arena"]

BAND = 300
"""The tallest band by default, in scaled units; each step's is uniform between half of it
and all of it."""


@dataclass
class BandsResult:
    """What a run of :func:`repack_bands` (or of :func:`~optplan.exact.skyline.repack_skyline`)
    found: the lowest packing (``offsets``, scaled, and its arena ``capacity``), how many
    ``steps`` ran, and one record per target it reached (``capacity``, ``seconds`` since the
    start, ``step``; a skyline step's beam ``width`` and ``level`` too)."""

    offsets: list[int]
    capacity: int
    steps: int = 0
    packings: list[dict] = field(default_factory=list)


def arena(prep: Prepared, offsets) -> int:
    """The highest top of ``offsets`` (scaled)."""
    return max((offset + size for offset, size in zip(offsets, prep.sizes)), default=0)


def overflow(prep: Prepared, offsets, target: int) -> int:
    """The sum over buffers of how far each top passes ``target`` (scaled units).

    >>> from optplan.exact._search_core import prepare
    >>> overflow(prepare([0, 1], [1, 2], [2, 3]), [0, 2], 4)
    1
    """
    return sum(max(0, offset + size - target) for offset, size in zip(offsets, prep.sizes))


def band_step(prep: Prepared, offsets: list[int], target: int, free: list[int], *,
              seconds: float, seed: int, workers: int) -> list[int] | None:
    """CP-SAT's placement of the buffers ``free`` with every other buffer kept at its offset
    in ``offsets`` (a packing), minimising their total overflow above ``target``, within the
    packing's arena; offsets stay multiples of the alignment. Returns the new offsets (all
    buffers), or None when CP-SAT had none within ``seconds``."""
    model = cp_model().CpModel()
    top, align, free_set = arena(prep, offsets), prep.alignment, set(free)
    times, spans, placed, excess = [], [], {}, []
    for i, size in enumerate(prep.sizes):
        times.append(model.new_fixed_size_interval_var(
            prep.section_start[i], prep.section_end[i] - prep.section_start[i], ""))
        if i in free_set:
            slot = placed[i] = model.new_int_var(0, (top - size) // align, "")
            model.add_hint(slot, offsets[i] // align)
            over = model.new_int_var(0, max(0, top - target), "")
            model.add(over >= align * slot + size - target)
            excess.append(over)
            spans.append(model.new_fixed_size_interval_var(align * slot, size, ""))
        else:
            spans.append(model.new_fixed_size_interval_var(offsets[i], size, ""))
    model.add_no_overlap_2d(times, spans)
    model.minimize(sum(excess))
    run = solve_model(model, placed, budget=Budget(seconds), workers=workers, seed=seed,
                      solver_params=None)
    if not run.has_solution:
        return None
    return [align * run.values[i] if i in placed else offset
            for i, offset in enumerate(offsets)]


def repack_bands(prep: Prepared, offsets, *, floor: int, deadline: float | None = None,
                 max_steps: int | None = None, band: int = BAND, step_seconds: float = 15.0,
                 seed: int = 0, workers: int = 2, on_packing=None, stop=None) -> BandsResult:
    """Lower the arena of the packing ``offsets`` (scaled) by band steps (module docstring)
    until it reaches ``floor`` (the bound: nothing lower exists), ``deadline`` (a
    :func:`time.perf_counter` value) passes or ``max_steps`` steps ran. Targets are multiples
    of the granule. ``on_packing(result)`` is called after each target reached; ``stop()``,
    asked before each step, ends the run when true. Each step's
    band and CP-SAT seed come from ``seed``; CP-SAT runs with ``workers`` for at most
    ``step_seconds`` per step (so with a time limit, and with more than one worker, a run
    depends on speed).

    Examples
    --------
    >>> from optplan.exact._search_core import prepare
    >>> prep = prepare([0, 1, 2], [1, 2, 3], [2, 1, 2])
    >>> found = repack_bands(prep, [1, 3, 0], floor=3, band=4, workers=1)
    >>> found.capacity, [packing["capacity"] for packing in found.packings]
    (3, [3])
    """
    rng = random.Random(seed)

    def step(best, target):
        height = rng.randint(max(1, band // 2), max(1, band))
        low = rng.randint(max(0, target - 3 * height), max(0, target - height))
        free = [i for i, (offset, size) in enumerate(zip(best, prep.sizes))
                if (offset < low + height and offset + size > low) or offset + size > target]
        seconds = step_seconds if deadline is None else min(
            step_seconds, max(0.0, deadline - time.perf_counter()))
        moved = band_step(prep, best, target, free, seconds=seconds,
                          seed=rng.randrange(1 << 30), workers=workers)
        if moved is None or overflow(prep, moved, target) > overflow(prep, best, target):
            return None, {}
        return moved, {}

    return lower_arena(prep, offsets, step, floor=floor, deadline=deadline,
                       max_steps=max_steps, on_packing=on_packing, stop=stop)


def lower_arena(prep: Prepared, offsets, step, *, floor: int, deadline: float | None = None,
                max_steps: int | None = None, on_packing=None, stop=None,
                granules_below=None) -> BandsResult:
    """The loop the repackings run: aim at one granule below the arena of the packing
    ``offsets`` (scaled; ``granules_below(arena)`` granules below, when given, but never below
    ``floor``) and ask ``step(best, target)`` for a move, ``(offsets, record)`` or
    ``(None, {})`` when it has none; a move replaces the packing, and one whose arena fits the
    target is a packing reached (booked with ``record`` added, ``on_packing(result)`` called)
    and the target steps down. Runs until the target passes ``floor``, ``deadline`` (a
    :func:`time.perf_counter` value) passes, ``max_steps`` steps ran or ``stop()``, asked
    before each step, is true."""
    began, granules = time.perf_counter(), granule(prep)

    def aim(capacity: int) -> int:
        below = (capacity - 1) // granules * granules
        if granules_below is None:
            return below
        return max(min(floor, below), below - (granules_below(capacity) - 1) * granules)

    best = list(offsets)
    result = BandsResult(list(best), arena(prep, best))
    target = aim(result.capacity)
    while target >= floor and (deadline is None or time.perf_counter() < deadline) and (
            max_steps is None or result.steps < max_steps) and not (stop and stop()):
        moved, record = step(best, target)
        result.steps += 1
        if moved is None:
            continue
        best = moved
        if arena(prep, best) <= target:
            result.offsets, result.capacity = list(best), arena(prep, best)
            result.packings.append({"capacity": result.capacity, "step": result.steps,
                                    "seconds": round(time.perf_counter() - began, 3)} | record)
            if on_packing is not None:
                on_packing(result)
            target = aim(result.capacity)
    return result
