"""The search's last stage: after a minute of probing, a run's rounds take turns, one probing
the bound in random orders, the next repacking its incumbent by layer search, skyline and band
repacking in turn (``optplan.exact.search._Progress.repack``)."""

from __future__ import annotations

import random
import time

import pytest

from optplan import Instance, solve, validate
from optplan.exact import search as search_module
from optplan.exact._search_core import SearchParams, prepare
from optplan.exact.chains import chained
from optplan.exact.search import BOUND_ROUND, replay_probe
from optplan.exact.run import ExactRun
from optplan.formats.minimalloc_csv import read_minimalloc_csv
from optplan.heuristics.constructions import stacked_offsets
from optplan.problems import Problem

METHODS = list(search_module.REPACKS)


def spread_instance(seed: int) -> Instance:
    """25-35 tensors over a long horizon: stacking them wastes most of the arena."""
    rng = random.Random(seed)
    triples = []
    for _ in range(rng.randint(25, 35)):
        first = rng.randint(0, 30)
        triples.append((first, first + rng.randint(0, 8), 16 * rng.randint(1, 9)))
    return Instance.from_tuples(triples, alignment=16)


def stage_rounds(probes: list[dict]) -> list[dict]:
    """The records of the last stage's rounds among a run's probes."""
    return [probe for probe in probes if probe["loop"] in ("repack", BOUND_ROUND)]


def assert_rounds_in_turn(rounds: list[dict]) -> None:
    """Round k (its seed, from 0) probes the bound when k is even and runs the (k-1)/2-th
    repacking in turn when k is odd, and every round is booked."""
    seeds = sorted({probe["seed"] for probe in rounds})
    assert seeds == list(range(len(seeds)))
    for probe in rounds:
        if probe["seed"] % 2 == 0:
            assert probe["loop"] == BOUND_ROUND and probe["draws"] >= 1
            assert probe["result"] in ("feasible", "infeasible", "timeout")
            continue
        assert probe["loop"] == "repack"
        assert probe["method"] == METHODS[probe["seed"] // 2 % len(METHODS)]
        assert probe["result"] in ("feasible", "unchanged") and probe["nodes"] == 0
        assert probe["steps"] >= 1


def started(instance: Instance, bound: int) -> search_module._Progress:
    """The probes of a run of ``instance`` from its stacked packing, with ``bound`` (scaled
    units) proven."""
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    run = ExactRun(instance, Problem.OFFSETS, solver="test", version="0", time_limit=None,
                   workers=1, seed=0, default_workers=1)
    run.start(False, None, fallback=stacked_offsets)
    return search_module._Progress(run, prep, bound)


def test_rounds_take_the_repackings_in_turn_and_only_lower_the_incumbent(monkeypatch):
    # A bound of one unit (valid, and far below the optimum) keeps the gap open, so the
    # rounds go on to the deadline: each stalls after 0.2 s without a lower arena.
    monkeypatch.setattr(search_module, "REPACK_STALL", 0.2)
    instance = spread_instance(7)
    progress = started(instance, 1)
    run, stacked = progress.run, progress.run.objective
    progress.repack(time.perf_counter() + 4.0)

    rounds = stage_rounds(progress.probes)
    assert len({probe["seed"] for probe in rounds}) >= 2 * len(METHODS) + 1
    assert_rounds_in_turn(rounds)
    reached = [probe["capacity"] for probe in rounds
               if probe["result"] == "feasible" and probe["loop"] == "repack"]
    assert reached and reached == sorted(set(reached), reverse=True)
    assert run.objective == reached[-1] < stacked
    assert validate(instance, "offsets", run.solution) == []
    assert run.solution.arena_size == run.objective


def test_no_round_starts_without_a_packing_in_the_search_units():
    # An incumbent whose offsets are not multiples of the search's unit (here 32 bytes, the
    # sizes' gcd) gives the rounds nothing to start from: the stage books nothing and leaves
    # the incumbent alone.
    instance = Instance.from_tuples([(0, 1, 32), (1, 2, 32)])
    progress = started(instance, 1)
    run = progress.run
    run.solution = type(run.solution)((0, 48), 80)  # valid (they overlap in time at op 1)
    assert progress.packing() is None
    progress.repack(time.perf_counter() + 1.0)
    assert progress.probes == [] and run.solution.offsets == (0, 48)


@pytest.mark.peer
@pytest.mark.parametrize("repack", [True, False])
def test_a_run_repacks_after_its_first_probing_stretch_unless_switched_off(
        minimalloc_dir, monkeypatch, repack):
    # With the stage one second in (not a minute), a short run on MiniMalloc's D repacks in
    # both loops (the improve loop after its first second of probing, the prove loop after
    # its refuting share), a round a second; switched off, no round runs.
    monkeypatch.setattr(search_module, "REPACK_AFTER", 1.0)
    monkeypatch.setattr(search_module, "REPACK_STALL", 1.0)
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    result = solve(instance, "search", "offsets", time_limit=5, workers=2, repack=repack)
    assert result.valid and result.info["switches"]["repack"] is repack
    rounds = stage_rounds(result.info["probes"])
    if not repack:
        assert rounds == []
        return
    assert_rounds_in_turn(rounds)
    assert len({probe["seed"] for probe in rounds}) >= 2


def test_a_round_at_the_bound_packs_it_and_replays_from_its_seed():
    # Chains of equal buffers handed on op after op, under long-lived ones: the max breadth
    # (14) is the optimum, so a round at the bound closes the gap, in orders of the chained
    # instance. Its record names the round's seed and the orders it drew; the last replays.
    triples = [(op, op, 4) for op in range(12)] + [(op, op + 1, 2) for op in range(0, 12, 2)]
    instance = Instance.from_tuples(triples + [(0, 11, 3), (0, 5, 5), (6, 11, 5)])
    progress = started(instance, 14)
    assert chained(progress.prep) is not None and progress.run.objective > 14
    progress.bound_round(SearchParams(), 5, None)
    [record] = progress.probes
    assert (record["loop"], record["result"], record["capacity"]) == (BOUND_ROUND, "feasible",
                                                                      14)
    assert record["seed"] == 5 and record["draws"] >= 1 and record["chains"]
    assert progress.run.objective == 14 and progress.stop[0] == 1
    assert validate(instance, "offsets", progress.run.solution) == []
    found, nodes = replay_probe(progress.prep, 0, progress.probes, 0)
    assert tuple(found) == progress.run.solution.offsets and nodes == record["last_nodes"]


def test_a_round_at_a_bound_below_the_optimum_refutes_it_when_it_searches_the_instance():
    # An instance without chains: the round searches the instance itself, so a bound below
    # the optimum is refuted in its first order and rises a granule. Alignment 4 opens gaps:
    # the max breadth is 16 bytes, the optimum 20 (tests/test_search.py's aligned gap).
    instance = Instance.from_tuples([(0, 1, 6), (0, 2, 5), (0, 0, 2)], alignment=4)
    progress = started(instance, 16)
    assert chained(progress.prep) is None
    progress.bound_round(SearchParams(), 0, None)
    [record] = progress.probes
    assert (record["result"], record["draws"], progress.bound) == ("infeasible", 1, 20)
    assert "chains" not in record and progress.run.bound == 20


@pytest.mark.peer
def test_with_two_workers_the_prove_loop_turns_to_the_bound_after_its_refuting_share(
        minimalloc_dir):
    # MiniMalloc's D at 4 s: the prove loop refutes D's bound (its optimum) for
    # SPLIT.search_refute of the time, then its first round probes the bound in
    # failure-directed orders, each keeping a prefix of the deepest path so far or none.
    from optplan.exact.budget import SPLIT

    limit = 4.0
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    result = solve(instance, "search", "offsets", time_limit=limit, workers=2, seed=0)
    probes = result.info["probes"]
    [prove] = [probe for probe in probes if probe["loop"] == "prove"]
    assert prove["result"] == "timeout" and prove["seconds"] < limit * SPLIT.search_refute + 0.5
    [round_] = [probe for probe in probes if probe["loop"] == BOUND_ROUND]
    assert round_["seed"] == 0 and round_["draws"] >= 5 and round_["chains"]
    assert round_["seconds"] > limit * (1 - SPLIT.search_refute) - 1.5 or (
        round_["result"] == "feasible")
    assert all(0 <= buffer < len(chained(prepare(
        instance.first_ops, instance.last_ops, instance.sizes)).groups)
        for buffer in round_["prefix"])
