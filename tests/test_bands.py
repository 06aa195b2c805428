"""Band repacking (optplan.exact.bands): every packing it returns is valid, never above the
one it started from nor below the brute-force optimum, and it reaches the optimum on small
instances."""

from __future__ import annotations

import doctest
import random
from pathlib import Path

import pytest

from optplan import lower_bound, solve
from optplan.analysis.load import read_jsonl
from optplan.exact import bands
from optplan.exact._search_core import prepare
from optplan.exact.bands import arena, band_step, overflow, repack_bands
from optplan.exact.offsets_bound import breadth_capacity
from optplan.formats.minimalloc_csv import read_minimalloc_csv
from optplan.formats.solution_csv import read_solution_csv
from optplan.heuristics.constructions import stacked_offsets
from optplan.model import Instance, OffsetsSolution
from optplan.validate import validate_offsets


def random_instance(seed: int, n: int = 8, alignment: int = 1) -> Instance:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        first = rng.randrange(10)
        rows.append((first, first + rng.randrange(6), 16 * rng.randint(1, 9)))
    return Instance.from_tuples(rows, alignment=alignment)


def stacked(instance: Instance, prep) -> list[int]:
    """Every buffer above all the ones before it (a valid packing, usually far from the
    best), in ``prep``'s scaled units."""
    return [offset // prep.scale for offset in stacked_offsets(instance).offsets]


def valid_bytes(instance: Instance, prep, offsets) -> int:
    """The arena of the scaled ``offsets`` after the independent validator passed them."""
    solution = OffsetsSolution.from_offsets(instance, [o * prep.scale for o in offsets])
    assert validate_offsets(instance, solution) == []
    return solution.arena_size


def brute_force_case(seed: int, alignment: int):
    """A random instance of eight buffers, its prepared form, the stacked start packing
    (scaled) and the brute-force optimum (bytes)."""
    instance = random_instance(seed, alignment=alignment)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    return (instance, prep, stacked(instance, prep),
            solve(instance, "brute_force", "offsets").objective)


def check_lowered(instance: Instance, prep, start, optimum: int, found) -> list[dict]:
    """A repacking's result (``found``, from the packing ``start``) is valid and between the
    brute-force ``optimum`` and the start, its targets reached go down, the last of them its
    arena; returns their records."""
    got = rounded(instance, valid_bytes(instance, prep, found.offsets))
    assert optimum <= got <= rounded(instance, valid_bytes(instance, prep, start))
    assert [p["capacity"] for p in found.packings] == sorted(
        {p["capacity"] for p in found.packings}, reverse=True)
    assert found.packings[-1:] == [] or found.packings[-1]["capacity"] == found.capacity
    return found.packings


def optima_reached(repack) -> int:
    """On how many of 24 small random instances ``repack(prep, start, seed)`` (from the
    stacked packing) reaches the brute-force optimum."""
    reached = 0
    for seed in range(24):
        instance = random_instance(seed)
        prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, 1)
        optimum = solve(instance, "brute_force", "offsets").objective
        found = repack(prep, stacked(instance, prep), seed)
        reached += valid_bytes(instance, prep, found.offsets) == optimum
    return reached


def rounded(instance: Instance, arena_bytes: int) -> int:
    """The objective of an arena: rounded up to the alignment, as every method reports it."""
    return -(-arena_bytes // instance.alignment) * instance.alignment


def test_docstring_examples_hold():
    result = doctest.testmod(bands)
    assert result.attempted == 6 and result.failed == 0  # overflow 3, repack_bands 3


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("alignment", [1, 48])
def test_repacking_stays_valid_and_reaches_the_brute_force_optimum(seed, alignment):
    instance, prep, start, optimum = brute_force_case(seed, alignment)
    found = repack_bands(prep, start, floor=breadth_capacity(instance, prep), max_steps=60,
                         band=max(prep.sizes) * 3, workers=1, seed=seed)
    arena_bytes = valid_bytes(instance, prep, found.offsets)
    assert arena_bytes == found.capacity * prep.scale
    assert optimum <= rounded(instance, arena_bytes) <= rounded(
        instance, valid_bytes(instance, prep, start))
    # Eight buffers: bands three sizes tall free most of them, and CP-SAT places them best.
    assert rounded(instance, arena_bytes) == optimum
    capacities = [row["capacity"] for row in found.packings]
    assert capacities == sorted(set(capacities), reverse=True)
    assert (capacities[-1] if capacities else arena(prep, start)) == found.capacity
    assert [row["step"] for row in found.packings] == sorted(row["step"] for row in
                                                             found.packings)
    assert all(offset % prep.alignment == 0 for offset in found.offsets)


def test_a_step_keeps_the_buffers_it_does_not_free_and_lowers_the_overflow():
    # Three buffers in one section stacked 0, 2, 5 (sizes 2, 3, 1; arena 6, breadth 6):
    # nothing can go lower, and a step aiming at 5 with every buffer free overflows 1.
    prep = prepare([0, 0, 0, 1], [0, 0, 0, 1], [2, 3, 1, 4])
    offsets = [0, 2, 5, 1]  # the fourth lives apart, above where it needs to be
    assert overflow(prep, offsets, 5) == 1 and overflow(prep, offsets, 4) == 4
    moved = band_step(prep, offsets, 4, [3], seconds=5, seed=0, workers=1)
    assert moved[:3] == offsets[:3] and moved[3] == 0  # the kept ones stay; 3 drops to 0
    assert band_step(prep, offsets, 4, [], seconds=5, seed=0, workers=1) == offsets
    everything = band_step(prep, offsets, 5, [0, 1, 2, 3], seconds=5, seed=0, workers=1)
    assert overflow(prep, everything, 5) == 1  # the section needs 6


def test_a_packing_at_the_floor_is_returned_as_it_is():
    prep = prepare([0, 1, 2], [1, 2, 3], [2, 1, 2])
    found = repack_bands(prep, [0, 2, 0], floor=3, workers=1)
    assert (found.offsets, found.capacity, found.steps, found.packings) == (
        [0, 2, 0], 3, 0, [])


def test_a_stop_ends_the_run_before_its_next_step():
    instance = random_instance(3)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    asked = []
    found = repack_bands(prep, stacked(instance, prep), floor=0, workers=1,
                         stop=lambda: asked.append(1) or len(asked) > 2)
    assert found.steps == 2

# the lowest packing of J that ``layers.jsonl``'s runs reached (the name J.<arena>.offsets.csv
# is ``bands.jsonl``'s packing at the same arena)
LAYERS_LOWEST = "J.989184.layers.offsets.csv"


@pytest.mark.peer
def test_the_committed_repackings_of_j_chain_down_to_its_optimum(minimalloc_dir):
    """Each run of ``bench/search_bands.py`` in ``bands.jsonl`` (band or skyline repacking)
    started from a committed packing of J (the beam's 998,400 bytes, or the best packing of
    the run before it); the lower packing it wrote is committed as ``J.<arena>.offsets.csv``
    and passes the independent validator at the arena the run recorded; a run that found
    nothing lower wrote nothing new. Besides those, the committed packings of J are the layer
    search's (``layers.jsonl``) and the certificates of the long runs that proved J
    (``long_runs.jsonl``, ``J.<arena>.seed<seed>.offsets.csv``). The last run's packing is the
    lowest of the repacking runs, and it is at J's max breadth: J's optimum, 989,184 bytes."""
    results = Path(__file__).resolve().parents[1] / "paper" / "results" / "search"
    rows = read_jsonl(results / "bands.jsonl")
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "J.1048576.csv")
    bound = lower_bound(instance, "offsets")
    committed = {}
    for path in results.glob("J.*.offsets.csv"):
        solution = read_solution_csv(instance, "offsets", path)
        assert validate_offsets(instance, solution) == []
        committed[path.name] = solution.arena_size
    layered = read_jsonl(results / "layers.jsonl")  # its own chain, from its own start
    layers = {row["start"] for row in layered} | {LAYERS_LOWEST}
    proofs = {f"J.{row['objective']}.seed{row['seed']}.offsets.csv"
              for row in read_jsonl(results / "long_runs.jsonl")
              if row["instance"] == "J" and row["status"] == "OPTIMAL"}
    assert set(committed) == {"J.998400.offsets.csv"} | layers | proofs | {
        f"J.{row['best_bytes']}.offsets.csv" for row in rows}
    assert rows[0]["start"] == "J.998400.offsets.csv"
    assert {row["repack"] for row in rows} == {"bands", "skyline"}
    for before, row in zip([None] + rows, rows):
        assert before is None or row["start"] == f"J.{before['best_bytes']}.offsets.csv"
        assert committed[row["start"]] == row["start_bytes"] >= row["best_bytes"]
        assert committed[f"J.{row['best_bytes']}.offsets.csv"] == row["best_bytes"]
        assert [p["capacity"] for p in row["packings"]][-1:] == (
            [row["best_bytes"]] if row["best_bytes"] < row["start_bytes"] else [])
        assert row["max_breadth"] == bound <= row["best_bytes"]
    assert min(committed.values()) == rows[-1]["best_bytes"] == bound == 989184
    assert committed["J.989184.offsets.csv"] == bound  # a packing at the bound is optimal


@pytest.mark.peer
def test_the_skyline_runs_with_other_seeds_start_from_the_committed_packing(minimalloc_dir):
    """``skyline_seeds.jsonl``: run 3 of ``bands.jsonl`` again from the same committed packing
    with other seeds; each ends at or above J's bound, its arenas going down to its best."""
    results = Path(__file__).resolve().parents[1] / "paper" / "results" / "search"
    [run3] = [row for row in read_jsonl(results / "bands.jsonl") if row["repack"] == "skyline"]
    rows = read_jsonl(results / "skyline_seeds.jsonl")
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "J.1048576.csv")
    assert sorted(row["seed"] for row in rows) == [1, 2] and run3["seed"] == 0
    for row in rows:
        assert (row["repack"], row["start"], row["start_bytes"], row["widths"]) == (
            "skyline", run3["start"], run3["start_bytes"], run3["widths"])
        capacities = [p["capacity"] for p in row["packings"]]
        assert capacities == sorted(set(capacities), reverse=True)
        assert capacities[-1] == row["best_bytes"] >= row["max_breadth"] == lower_bound(
            instance, "offsets")
