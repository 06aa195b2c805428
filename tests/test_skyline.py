"""Skyline repacking (optplan.exact.skyline) and the beam's section floors it starts from:
every packing is valid, keeps what a step keeps and starts above the floors (tests/test_layers
checks it stays between the start and the brute-force optimum, with layer search)."""

from __future__ import annotations

import doctest
import random

import pytest

from optplan.exact import skyline
from optplan.exact._search_core import prepare
from optplan.exact.bands import arena
from optplan.exact.beam import beam
from optplan.exact.skyline import highest_level, repack_skyline, skyline_step, subset

from test_bands import optima_reached, random_instance, stacked, valid_bytes


def test_docstring_examples_hold():
    result = doctest.testmod(skyline)
    assert result.attempted == 7 and result.failed == 0  # highest_level 3, repack_skyline 4


@pytest.mark.parametrize("seed", range(10))
def test_zero_floors_are_the_plain_beam_and_floors_are_kept(seed):
    """A beam from floors of zero is the beam from nothing, state for state; from raised
    floors, every buffer it places sits at or above the floor of each of its sections."""
    instance = random_instance(seed, n=10)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    capacity = arena(prep, stacked(instance, prep))
    plain = beam(prep, capacity, 8, seed=seed)
    zeros = beam(prep, capacity, 8, seed=seed, floors=[0] * prep.num_sections)
    assert (zeros.offsets, zeros.children) == (plain.offsets, plain.children)
    assert plain.offsets is not None  # stacking them all fits
    rng = random.Random(seed)
    floors = [rng.randrange(3) for _ in range(prep.num_sections)]
    raised = beam(prep, capacity + 3, 8, seed=seed, floors=floors)
    assert raised.offsets is not None
    valid_bytes(instance, prep, raised.offsets)
    for b, offset in enumerate(raised.offsets):
        assert offset >= max(floors[prep.section_start[b]:prep.section_end[b]])
        assert offset + prep.sizes[b] <= capacity + 3


def test_floors_of_the_wrong_length_are_refused():
    prep = prepare([0, 1], [1, 2], [2, 3])
    with pytest.raises(ValueError, match="^floors: expected at least"):
        beam(prep, 5, 4, floors=[0])


@pytest.mark.parametrize("seed", range(10))
def test_a_step_keeps_every_buffer_up_to_its_level(seed):
    """Buffers whose tops are at most the level stay put; the others are re-packed above
    the skyline they leave, within the target; the subset keeps the instance's sections."""
    instance = random_instance(seed, n=9)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    start = stacked(instance, prep)
    target = arena(prep, start)
    level = highest_level(prep, start, target)
    assert level == target  # nothing needs freeing at the packing's own arena
    low = sorted(o + s for o, s in zip(start, prep.sizes))[len(start) // 2]
    free = [b for b, (o, s) in enumerate(zip(start, prep.sizes)) if o + s > low]
    part = subset(prep, free)
    assert part.num_sections == prep.num_sections
    assert [part.section_start[k] for k in range(len(free))] == [
        prep.section_start[b] for b in free]
    moved = skyline_step(prep, start, target, low, width=16, seed=seed)
    assert moved is not None  # the packing itself re-packs the freed buffers
    assert valid_bytes(instance, prep, moved) <= target * prep.scale
    assert all(moved[b] == o for b, o in enumerate(start) if o + prep.sizes[b] <= low)


def test_repacking_reaches_the_optimum_on_most_small_instances():
    """Thirty steps of narrow beams find the brute-force optimum on most of 24 small
    instances (a beam proves nothing, so not on all)."""
    assert optima_reached(lambda prep, start, seed: repack_skyline(
        prep, start, floor=0, max_steps=30, widths=(2, 8), seed=seed)) >= 22
