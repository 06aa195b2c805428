"""The ``search`` exact method (MiniMalloc-style DFS) against a brute-force oracle.

The oracle shares no code with the search: it tries every order of the tensors and puts each
on top of the placed tensors it conflicts with (rounded up to the alignment). That is complete
for the offsets problem: a packing of least total offset lists, by offset, as such an order.
"""

from __future__ import annotations

import csv
import functools
import itertools
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan import Instance, InputError, Status, solve, validate
from optplan.analysis.load import read_jsonl
from optplan.bounds import max_breadth
from optplan.cli import main
from optplan.exact import _search_core
from optplan.exact import search as search_module
from optplan.exact._search_core import ENGINES, decide, jittered, prepare
from optplan.exact.budget import SPLIT
from optplan.exact.chains import chained
from optplan.exact.offsets_bound import CapacityBound, capacity_bound
from optplan.exact.search import (BOUND_ROUND, REPACKS, TIMEOUT, SearchParams, luby, pack,
                                  replay_order, replay_probe, search)
from optplan.formats.minimalloc_csv import read_minimalloc_csv
from optplan.formats.solution_csv import write_solution_csv
from optplan.model import OffsetsSolution, round_up
from optplan.registry import methods


# -- the oracle ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def brute_force_arena(instance: Instance) -> int:
    """The least arena over every order of the tensors."""
    records, alignment = instance.records, instance.alignment
    best = None
    for order in itertools.permutations(range(len(records))):
        offsets = {}
        for i in order:
            below = [offsets[j] + records[j].size for j in offsets
                     if records[i].first_op <= records[j].last_op
                     and records[j].first_op <= records[i].last_op]
            offsets[i] = round_up(max(below, default=0), alignment)
        arena = max((offsets[i] + records[i].size for i in offsets), default=0)
        if best is None or arena < best:
            best = arena
    return best


def optimum(instance: Instance) -> int:
    return round_up(brute_force_arena(instance), instance.alignment)


def random_instance(rng: random.Random, *, max_tensors: int = 6) -> Instance:
    count = rng.randint(1, max_tensors)
    unit = rng.choice([1, 1, 2, 3, 64])
    triples = []
    for _ in range(count):
        first = rng.randint(0, 5)
        triples.append((first, first + rng.randint(0, 3), unit * rng.randint(1, 6)))
    return Instance.from_tuples(triples, alignment=rng.choice([1, 1, 1, 2, 4, 128]))


def assert_valid_packing(instance: Instance, offsets, capacity: int) -> None:
    solution = OffsetsSolution.from_offsets(instance, offsets)
    assert not validate(instance, "offsets", solution), validate(instance, "offsets", solution)
    assert solution.arena_size <= capacity


# -- named cases a reader can draw --------------------------------------------------------
TETRIS = Instance.from_tuples([(0, 1, 2), (1, 2, 1), (2, 3, 2)], name="tetris")
STAIRS = Instance.from_tuples([(0, 2, 1), (1, 3, 1), (2, 4, 1), (3, 5, 1)], name="stairs")
# Two tall blocks that must sit side by side in time, with a long tensor across both.
BRIDGE = Instance.from_tuples([(0, 1, 3), (2, 3, 3), (0, 3, 2), (1, 2, 1)], name="bridge")
# Alignment 4 opens gaps: the breadth bound is 16 (13 rounded up), the optimum is 20.
GAP = Instance.from_tuples([(0, 1, 6), (0, 2, 5), (0, 0, 2)], name="aligned_gap", alignment=4)
NAMED = [TETRIS, STAIRS, BRIDGE, GAP]


@pytest.mark.parametrize("instance", NAMED, ids=lambda i: i.name)
def test_named_cases_reach_the_brute_force_optimum(instance):
    outcome = search(instance)
    assert outcome.status is Status.OPTIMAL
    assert round_up(outcome.solution.arena_size, instance.alignment) == optimum(instance)
    assert outcome.best_bound == optimum(instance)
    assert not validate(instance, "offsets", outcome.solution)
    assert outcome.solver == "optplan-search"
    assert outcome.trajectory and outcome.trajectory[-1][1:] == (optimum(instance),) * 2
    assert isinstance(outcome.info["nodes"], int)


def test_tetris_decision():
    assert pack(TETRIS, 3) == (0, 2, 0)
    assert pack(TETRIS, 2) is None


def test_aligned_gap_needs_more_than_the_breadth_bound():
    from optplan.bounds import lower_bound
    assert lower_bound(GAP, "offsets") == 16
    assert optimum(GAP) == 20
    assert brute_force_arena(GAP) == 17  # 2 at 0, 6 at 4, 5 at 12
    assert pack(GAP, 16) is None
    assert pack(GAP, 17) is not None


# -- agreement with brute force on random instances ---------------------------------------
def test_decision_agrees_with_brute_force_on_random_instances():
    rng = random.Random(20231)
    for _ in range(300):
        instance = random_instance(rng)
        best = brute_force_arena(instance)
        for capacity in (best - 1, best, best + 1):
            result = pack(instance, capacity)
            if capacity < best:
                assert result is None, (instance, capacity)
            else:
                assert result is not None, (instance, capacity)
                assert_valid_packing(instance, result, capacity)


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False))
def test_optimisation_agrees_with_brute_force(rng):
    instance = random_instance(rng)
    result = solve(instance, "search", "offsets")
    assert result.valid
    assert result.status is Status.OPTIMAL
    assert result.objective == optimum(instance) == result.best_bound


# -- every switch combination gives the same answer ---------------------------------------
SWITCH_CASES = [random_instance(random.Random(seed), max_tensors=6) for seed in range(6)] \
    + [BRIDGE, GAP]


DECISION_SWITCHES = tuple(name for name in SearchParams.switch_names()
                          if name not in ("beams", "repack", "chains"))
"""The switches of one decision (``beams``, ``repack`` and ``chains`` are a run's: tested on
``search`` below, in ``test_search_repack.py`` and in ``test_chains.py``)."""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("combination", list(itertools.product([False, True], repeat=len(
    DECISION_SWITCHES))), ids=lambda c: "".join("1" if v else "0" for v in c))
def test_every_switch_combination_gives_the_same_answer(combination, engine):
    params = SearchParams(**dict(zip(DECISION_SWITCHES, combination)))
    for instance in SWITCH_CASES:
        best = brute_force_arena(instance)
        assert pack(instance, best - 1, params, engine=engine) is None
        found = pack(instance, best, params, engine=engine)
        assert found is not None
        assert_valid_packing(instance, found, best)


def medium_instance(rng: random.Random) -> Instance:
    """20-30 tensors over a long horizon: the search splits it into independent parts."""
    triples = []
    for _ in range(rng.randint(20, 30)):
        first = rng.randint(0, 40)
        triples.append((first, first + rng.randint(0, 6), rng.randint(1, 8)))
    return Instance.from_tuples(triples)


def test_decomposition_agrees_with_the_undivided_search():
    # Too big for brute force: decomposing into parts must not change any answer.
    from optplan.bounds import max_breadth
    rng = random.Random(4242)
    undivided = SearchParams(dynamic_decomposition=False)
    for _ in range(40):
        instance = medium_instance(rng)
        for capacity in (max_breadth(instance), max_breadth(instance) + 1):
            ours, reference = pack(instance, capacity), pack(instance, capacity, undivided)
            assert (ours is None) == (reference is None), (instance, capacity)
            if ours is not None:
                assert_valid_packing(instance, ours, capacity)


# -- the compiled core searches the reference's tree --------------------------------------
def random_switches(rng: random.Random) -> SearchParams:
    return SearchParams(**{name: rng.random() < 0.7 for name in SearchParams.switch_names()})


def traced_stats(prep) -> dict:
    """A ``stats`` dict of :func:`decide` that counts failed section checks per section and
    keeps the path to the deepest node."""
    return {"failures": np.zeros(prep.num_sections, dtype=np.int64), "deepest": []}


def assert_same_trace(ours: dict, reference: dict, context, packed: int | None = None) -> None:
    """Both engines counted the same failures and kept the same deepest path; when the first
    preorder's search packed ``packed`` buffers, that path places each of them once."""
    assert (ours["failures"] == reference["failures"]).all(), context
    assert ours["deepest"] == reference["deepest"], context
    if packed is not None:
        assert sorted(ours["deepest"]) == list(range(packed)), context


def test_compiled_core_searches_the_reference_tree_node_for_node():
    # Same answer, same offsets, same node count, the same failed checks in the same
    # sections, the same deepest path: the C extension is the Python search.
    rng = random.Random(2718)
    compared = failed = deep = 0
    for trial in range(100):
        instance = random_instance(rng, max_tensors=9) if trial % 2 else medium_instance(rng)
        prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
        breadth = max_breadth(instance) // prep.scale
        for capacity in (breadth - 1, breadth, breadth + 1, breadth + 3):
            params = random_switches(rng)
            reference, ours = traced_stats(prep), traced_stats(prep)
            expected = decide(prep, capacity, params, time.perf_counter() + 0.2, reference,
                              engine="python")
            if expected is TIMEOUT:  # (a few switch-poor searches run long in Python)
                continue
            assert decide(prep, capacity, params, None, ours) == expected, (instance, params)
            assert ours["nodes"] == reference["nodes"], (instance, capacity, params)
            alone = isinstance(expected, list) and not params.round_robin
            assert_same_trace(ours, reference, (instance, params),
                              len(prep.sizes) if alone else None)
            failed += int(ours["failures"].sum() > 0)
            deep += 0 < len(ours["deepest"]) < len(prep.sizes)
            compared += 1
    assert compared >= 300 and failed >= 50 and deep >= 50


@pytest.mark.parametrize("name, index", [("failures", -2), ("deepest", -1)])
def test_the_compiled_core_refuses_output_arrays_too_short(name, index):
    # failures needs a value per section, deepest the length and a buffer per placement.
    from optplan.exact import _search_ext

    prep = prepare([0, 1], [1, 2], [2, 3])
    args = [2, prep.num_sections, 1, *prep.compiled_arrays, 5, (True,) * 7, ("WAT",), 1024,
            -1.0, None, 256, 8, None, None]
    args[index] = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match=f"^{name}: expected at least"):
        _search_ext.decide(*args)


def tight_instance(rng: random.Random) -> Instance:
    """60-100 tensors with sizes from a few values: packing them at the max breadth takes
    some backtracking, with failed subtrees that the ``transposition`` table remembers."""
    span = rng.randint(10, 40)
    triples = []
    for _ in range(rng.randint(60, 100)):
        first = rng.randint(0, span)
        triples.append((first, first + rng.randint(0, span // 2),
                        rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 24])))
    return Instance.from_tuples(triples)


@pytest.mark.parametrize("entries", [None, 4], ids=["table", "tiny-table"])
def test_the_failed_node_table_keeps_the_engines_node_for_node(entries, monkeypatch):
    # With a tiny table it is emptied again and again; both engines must do so alike.
    if entries:
        monkeypatch.setattr(_search_core, "table_entries", lambda n: entries)
    rng = random.Random(1)
    remembered, goal = 0, 3 if entries is None else 1
    for _ in range(800):
        if remembered >= goal:
            break
        instance = tight_instance(rng)
        prep = prepare(instance.first_ops, instance.last_ops, instance.sizes)
        capacity = max_breadth(instance)
        runs = {engine: {} for engine in ENGINES}
        found = {engine: decide(prep, capacity, SearchParams(), time.perf_counter() + 2,
                                runs[engine], engine=engine) for engine in ENGINES}
        if TIMEOUT in found.values():
            continue
        assert found["compiled"] == found["python"], instance
        assert runs["compiled"]["nodes"] == runs["python"]["nodes"], instance
        without = {}
        decide(prep, capacity, SearchParams(transposition=False), None, without)
        remembered += without["nodes"] != runs["compiled"]["nodes"]
    assert remembered >= goal  # the table did cut some searches short


@pytest.mark.peer
@pytest.mark.parametrize("name, capacity", [("C", None), ("D", 1025024)])
def test_compiled_core_matches_the_reference_on_minimalloc_instances(minimalloc_dir, name,
                                                                      capacity):
    # C at its max breadth (1227 nodes); D at 1001 KiB, where the table cuts 33392 nodes to
    # 27512.
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / f"{name}.1048576.csv")
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes)
    capacity = max_breadth(instance) if capacity is None else capacity
    runs = {engine: traced_stats(prep) for engine in ENGINES}
    found = {engine: decide(prep, capacity // prep.scale, SearchParams(), None, runs[engine],
                            engine=engine) for engine in ENGINES}
    assert found["compiled"] == found["python"] is not None
    assert runs["compiled"]["nodes"] == runs["python"]["nodes"] > 1000
    assert_same_trace(runs["compiled"], runs["python"], name)


# -- random orders: the same question, searched in another order ------------------------
@settings(max_examples=80, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_jittered_order_decides_the_same_question(rng):
    # Every static rank is sound: a random order packs exactly the capacities the plain one
    # does (and both engines still search the same tree in it, node for node).
    instance = random_instance(rng, max_tensors=7)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    shuffled = jittered(prep, random.Random(rng.random()), spread=rng.choice([0.2, 1.0, 3.0]))
    assert (shuffled.sizes, shuffled.section_members) == (prep.sizes, prep.section_members)
    assert all(width >= 1 for width in shuffled.width)
    for capacity in range(max_breadth(instance) // prep.scale - 1,
                          optimum(instance) // prep.scale + 2):
        plain = decide(prep, capacity, SearchParams(), None, {})
        runs = {engine: {} for engine in ENGINES}
        found = {engine: decide(shuffled, capacity, random_switches(random.Random(capacity)),
                                None, runs[engine], engine=engine) for engine in ENGINES}
        assert found["compiled"] == found["python"]
        assert runs["compiled"]["nodes"] == runs["python"]["nodes"]
        assert (found["compiled"] is None) == (plain is None) == (
            capacity * prep.scale < brute_force_arena(instance)), capacity
        if found["compiled"] is not None:
            assert_valid_packing(instance, [o * prep.scale for o in found["compiled"]],
                                 capacity * prep.scale)


def test_jittered_orders_differ_and_follow_the_seed():
    prep = prepare(*zip(*[(i, i + 3, 1 + i % 4) for i in range(40)]))
    first, again = (jittered(prep, random.Random(5)) for _ in range(2))
    other = jittered(prep, random.Random(6))
    assert first.width == again.width != other.width != prep.width
    assert first.compiled_arrays[1].tolist() == list(first.width)
    assert all(a is b for a, b in zip(first.compiled_arrays[2:], prep.compiled_arrays[2:]))


@pytest.mark.peer
def test_the_improve_loop_turns_to_random_orders_after_its_first_sweep(minimalloc_dir,
                                                                        monkeypatch):
    # D is not proven in seconds: the improve loop's first sweep is in the plain orders, and
    # every probe after it in a random order drawn from the seed. Random probes double in
    # length by the time spent on them (here after 0.5 s, 1.5 s and 3.5 s of them). Beams at
    # the bound take half the loop's time; here narrow ones (1-16 states), which do not pack D
    # and stop the run early. Without the last stage (repack off), so that the prove loop's
    # round at the bound does not close D before the improve loop gets going.
    monkeypatch.setattr(search_module, "RANDOM_LEVEL_SECONDS", 0.5)
    monkeypatch.setattr(search_module, "BEAM_WIDTH", 1)
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    result = solve(instance, "search", "offsets", time_limit=10, workers=2, seed=3,
                   repack=False)
    assert result.valid and result.info["seed"] == 3
    improve = [probe for probe in result.info["probes"] if probe["loop"] == "improve"]
    kinds = [probe["jittered"] for probe in improve]
    assert kinds[0] is False and kinds[-1] is True
    assert kinds == sorted(kinds)  # plain first, then random only
    assert all(probe.get("chains") for probe in improve if probe["jittered"])  # D has chains
    lengths = [probe["seconds"] for probe in improve
               if probe["jittered"] and probe["result"] == "timeout"]
    assert lengths[0] < 0.35 <= max(lengths)  # 0.1 s at first, 0.4 s after 1.5 s of them
    assert not any(probe["jittered"] for probe in result.info["probes"]
                   if probe["loop"] == "prove")
    beams = [probe for probe in result.info["probes"] if probe["loop"] == "beam"]
    # every other beam aims at the bound, the rest inside the gap
    assert any(probe["capacity"] == result.best_bound for probe in beams)
    assert any(probe["capacity"] > result.best_bound for probe in beams)
    assert all(probe["capacity"] >= result.best_bound for probe in beams)
    # the k-th beam of the run (its seed is the run's seed << 20 plus k) is luby(k + 1) wide
    ks = sorted(probe["seed"] - (3 << 20) for probe in beams)
    assert ks == list(range(len(beams))) and len(beams) >= 7
    assert all(probe["width"] == luby(probe["seed"] - (3 << 20) + 1) for probe in beams)
    # the run's record replays each probe that ended in time (beams from their width and
    # seed, random-order probes, of the chained instance, from their draw): the same result
    # in the same nodes
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    probes = result.info["probes"]
    ended = [i for i, probe in enumerate(probes) if probe["result"] != "timeout"]
    assert {probes[i]["loop"] for i in ended} >= {"beam", "improve"}
    for index in ended:
        found, nodes = replay_probe(prep, result.seed, probes, index)
        assert nodes == probes[index]["nodes"]
        assert isinstance(found, list) == (probes[index]["result"] == "feasible")


@pytest.mark.peer
def test_beams_off_leaves_depth_first_probes_only(minimalloc_dir):
    # The run-level switch `beams` (the paper's search ablation): off, no probe is a beam and
    # the prove loop refutes D's bound to the deadline (on, it turns to beams after
    # SPLIT.first_probe of the time, as the test above shows).
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    limit = 6
    result = solve(instance, "search", "offsets", time_limit=limit, workers=2, beams=False)
    assert result.valid and result.info["switches"]["beams"] is False
    probes = result.info["probes"]
    assert {probe["loop"] for probe in probes} == {"prove", "improve"}
    assert sum(probe["jittered"] for probe in probes) > 0  # the improve loop got past a sweep
    prove_seconds = sum(probe["seconds"] for probe in probes if probe["loop"] == "prove")
    assert prove_seconds > limit * (SPLIT.first_probe + 1) / 2


def test_beams_switched_off_keeps_every_answer():
    for seed in range(12):
        instance = random_instance(random.Random(seed), max_tensors=7)
        for workers in (1, 2):
            result = solve(instance, "search", "offsets", workers=workers, beams=False)
            assert result.status is Status.OPTIMAL and result.valid
            assert result.objective == brute_force_arena(instance)


@pytest.mark.peer
@pytest.mark.parametrize("name, seed", [("D", 0), ("J", 0), ("J", 1), ("J", 2), ("J", 3)])
def test_a_committed_long_run_optimum_validates_and_replays_from_its_run_record(
        minimalloc_dir, capsys, name, seed):
    # The long runs in long_runs.jsonl packed D (seed 0, a beam) and J (seeds 0-3, each a
    # round at the bound in failure-directed orders) at their max breadths, and their
    # packings are committed: `optplan validate` accepts each with an arena equal to the
    # lower bound, so the instance is optimal. Every probe of the search is deterministic
    # given what its record keeps (a beam its width and seed, a random-order probe its draw
    # from the run's seed, a round at the bound its last draw from the round's seed and the
    # scores that draw was boosted by):
    # replayed without a time limit, the probe that closed the run packs the same capacity in
    # the same nodes, into the committed packing. A round of repacking is cut by time, so its
    # record names it but does not replay it.
    results = Path(__file__).resolve().parents[1] / "paper" / "results" / "search"
    runs = read_jsonl(results / "long_runs.jsonl")
    run = next(row for row in runs if (row["instance"], row["seed"]) == (name, seed))
    assert run["status"] == "OPTIMAL" and run["objective"] == run["best_bound"]
    probes = run["probes"]
    last = max(i for i, probe in enumerate(probes) if probe["result"] == "feasible")
    closing = probes[last]
    assert closing["capacity"] == run["objective"]

    path = minimalloc_dir / "challenging" / f"{name}.1048576.csv"
    certificate = results / f"{name}.{run['objective']}.seed{seed}.offsets.csv"
    assert main(["validate", str(path), str(certificate), "--problem", "offsets",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] and report["objective"] == report["lower_bound"] == run["objective"]
    if closing["loop"] == "repack":
        assert closing["method"] in REPACKS and closing["steps"] > 0
        return

    instance = read_minimalloc_csv(path)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    found, nodes = replay_probe(prep, run["seed"], probes, last)
    assert nodes == closing["last_nodes" if closing["loop"] == BOUND_ROUND else "nodes"]
    rows = list(csv.DictReader(certificate.open()))
    assert [int(row["offset"]) for row in rows] == [offset * prep.scale for offset in found]


@pytest.mark.peer
def test_one_random_order_of_the_depth_first_search_packs_j_at_its_max_breadth(
        minimalloc_dir, tmp_path, capsys):
    # orders.jsonl samples J's chained instance at its max breadth in 15,000 random orders of
    # 0.1 s (seed 1): the row says which order packed it and in how many nodes. Rebuilt from
    # its draw and searched again without a time limit, that order packs J in the same nodes,
    # and `optplan validate` accepts the packing with an arena equal to the lower bound: the
    # plain depth-first search, in one order, proves J optimal.
    results = Path(__file__).resolve().parents[1] / "paper" / "results" / "search"
    row = next(row for row in read_jsonl(results / "orders.jsonl")
               if row["instance"] == "J" and row.get("chains") and "window" not in row
               and row["capacities"][0].get("packing_draws"))
    [at_breadth] = [entry for entry in row["capacities"]
                    if entry["capacity"] == row["max_breadth"]]
    draw, nodes = at_breadth["packing_draws"][0], at_breadth["packing_nodes"][0]

    path = minimalloc_dir / "challenging" / "J.1048576.csv"
    instance = read_minimalloc_csv(path)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    chains = chained(prep)
    stats = {"nodes": 0}
    found = decide(replay_order(chains.prep, row["seed"], draw),
                   row["max_breadth"] // prep.scale, deadline=time.perf_counter() + 60,
                   stats=stats)  # a few thousand nodes; the deadline only stops a wrong order
    assert isinstance(found, list) and stats["nodes"] == nodes
    packing = tmp_path / "J.offsets.csv"
    write_solution_csv(instance, "offsets", OffsetsSolution.from_offsets(
        instance, [offset * prep.scale for offset in chains.expand(found)]), packing)
    assert main(["validate", str(path), str(packing), "--problem", "offsets", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] and report["objective"] == report["lower_bound"] == 989184


@pytest.mark.parametrize("engine", ENGINES)
def test_a_set_stop_flag_stops_the_search(engine):
    rng = random.Random(3)
    instance = medium_instance(rng)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes)
    assert decide(prep, max_breadth(instance), SearchParams(), None, {}, engine=engine,
                  stop=bytearray(b"\x01")) is TIMEOUT
    assert decide(prep, max_breadth(instance), SearchParams(), None, {}, engine=engine,
                  stop=bytearray(1)) is not TIMEOUT


def test_unknown_engine_fails_clearly():
    with pytest.raises(InputError, match="unknown engine 'fortran'"):
        search(BRIDGE, engine="fortran")


# -- two workers: proving and improving side by side --------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_two_workers_reach_the_brute_force_optimum(rng):
    instance = random_instance(rng)
    result = solve(instance, "search", "offsets", workers=2)
    assert result.valid and result.status is Status.OPTIMAL
    assert result.objective == optimum(instance) == result.best_bound
    assert result.info["workers"] == 2


def test_two_workers_agree_with_one_on_medium_instances():
    rng = random.Random(77)
    for _ in range(10):
        instance = medium_instance(rng)
        one = solve(instance, "search", "offsets", time_limit=20)
        two = solve(instance, "search", "offsets", time_limit=20, workers=2)
        assert one.status is two.status is Status.OPTIMAL
        assert one.objective == two.objective
        assert {probe["loop"] for probe in two.info["probes"]} <= {"prove", "improve"}


# -- the capacity bound: refutations above max breadth ------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False))
def test_capacity_bound_is_the_optimum_when_it_runs_to_the_end(rng):
    instance = random_instance(rng)
    proven = capacity_bound(instance)
    assert max_breadth(instance) <= proven.bound == optimum(instance)
    assert proven.optimal
    assert_valid_packing(instance, proven.offsets, proven.bound)


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.floats(0.0005, 0.01))
def test_a_capacity_bound_cut_short_is_still_a_lower_bound(rng, seconds):
    instance = medium_instance(rng)
    proven = capacity_bound(instance, seconds)
    assert proven.bound <= search(instance).solution.arena_size
    assert all(probe["result"] in ("infeasible", "feasible", "timeout")
               for probe in proven.probes)


def test_capacity_bound_closes_the_aligned_gap_and_ignores_inplace_pairs():
    assert capacity_bound(GAP).bound == 20
    assert [probe["result"] for probe in capacity_bound(GAP).probes] == ["infeasible",
                                                                          "feasible"]
    paired = Instance.from_tuples([(0, 1, 4), (1, 2, 4)], inplace_pairs=[(0, 1)])
    assert capacity_bound(paired) == CapacityBound(4, None, (), 0)  # the plain bound


def test_cpsat_takes_the_search_bound():
    outcome = solve(GAP, "cpsat", "offsets", time_limit=5, workers=2, feasibility_first=0,
                    warm_start=False)
    assert outcome.best_bound == 20
    assert [part["search_bound"] for part in outcome.info["part_info"]] == [20]


def test_switches_reach_the_method_and_unknown_ones_fail():
    outcome = search(BRIDGE, dominance=False, round_robin=False)
    assert outcome.info["switches"]["dominance"] is False
    assert outcome.status is Status.OPTIMAL
    with pytest.raises(InputError, match="unknown switch 'dominanse'"):
        search(BRIDGE, dominanse=False)
    with pytest.raises(InputError, match="must be true or false"):
        search(BRIDGE, dominance="no")


def test_inplace_pairs_are_refused_with_a_clear_error():
    instance = Instance.from_tuples([(0, 1, 4), (1, 2, 4)], inplace_pairs=[(0, 1)])
    with pytest.raises(InputError, match="in-place"):
        search(instance)


def test_empty_instance_is_optimal_at_zero():
    outcome = search(Instance.from_tuples([]))
    assert outcome.status is Status.OPTIMAL
    assert outcome.solution.arena_size == 0


def test_alignment_is_respected():
    instance = Instance.from_tuples([(0, 1, 3), (1, 2, 5), (0, 2, 6)], alignment=4)
    outcome = solve(instance, "search", "offsets")
    assert outcome.valid
    assert all(offset % 4 == 0 for offset in outcome.solution.offsets)
    assert outcome.objective == optimum(instance)


# -- honest statuses under a time limit ---------------------------------------------------
def test_a_past_deadline_proves_nothing():
    rng = random.Random(7)
    triples = [(t, t + rng.randint(0, 8), rng.randint(1, 40)) for t in range(60)]
    instance = Instance.from_tuples(triples)
    assert pack(instance, 10**9, deadline=time.perf_counter() - 1) is TIMEOUT


@pytest.mark.peer
def test_a_timed_out_run_is_never_optimal(minimalloc_dir):
    # D is open in the literature (ASPLOS'23 and the issue): no 0.5 s run can prove it.
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    result = solve(instance, "search", "offsets", time_limit=1.0)
    assert result.valid
    assert result.status is Status.FEASIBLE
    assert result.best_bound < result.objective
    assert result.info["time_limit"] == 1.0
    probes = result.info["probes"]
    if probes:  # the lower-bound probe comes first and cannot finish
        assert probes[0]["capacity"] == result.lower_bound
        assert probes[0]["result"] == "timeout"


# -- cross-check with CP-SAT when it is registered ----------------------------------------
def test_search_agrees_with_cpsat():
    if "cpsat" not in methods() or "offsets" not in [p.value for p in methods()["cpsat"].problems]:
        pytest.skip("the cpsat method is not registered for offsets")
    rng = random.Random(99)
    for _ in range(25):
        instance = random_instance(rng, max_tensors=7)
        ours = solve(instance, "search", "offsets")
        theirs = solve(instance, "cpsat", "offsets", time_limit=10, workers=2)
        assert theirs.status is Status.OPTIMAL
        assert ours.status is Status.OPTIMAL
        assert ours.objective == theirs.objective


def test_luby_gives_every_power_of_two_the_same_total():
    # Luby's sequence: 1, 1, 2, 1, 1, 2, 4, ...; over its first 2^k - 1 terms each power of two
    # up to 2^(k-1) sums to the same total, so beams of every width get about the same time.
    terms = [luby(i) for i in range(1, 2 ** 7)]
    assert terms[:15] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
    totals = {power: sum(term for term in terms if term == power) for power in set(terms)}
    assert sorted(totals) == [2 ** j for j in range(7)] and set(totals.values()) == {64}
    with pytest.raises(ValueError, match="starts at 1"):
        luby(0)


def test_a_random_order_probe_replays_from_its_draw():
    # The improve loop's n-th random probe searched the n-th order drawn from the run's seed:
    # replay_probe rebuilds that order and decides the probe's capacity in it again.
    prep = prepare(*zip(*[(i, i + 3, 1 + i % 4) for i in range(40)]))
    capacity = 12
    probes = [{"loop": "improve", "jittered": False, "capacity": capacity},
              {"loop": "improve", "jittered": True, "capacity": capacity},
              {"loop": "prove", "jittered": False, "capacity": capacity},
              {"loop": "improve", "jittered": True, "capacity": capacity}]
    stats = {"nodes": 0}
    expected = decide(replay_order(prep, 7, 2), capacity, SearchParams(), None, stats)
    assert replay_probe(prep, 7, probes, 3) == (expected, stats["nodes"])
    stats = {"nodes": 0}
    plain = decide(prep, capacity, SearchParams(), None, stats)
    assert replay_probe(prep, 7, probes, 2) == (plain, stats["nodes"])
    assert replay_order(prep, 7, 2).width != prep.width


def test_search_core_docstring_examples_hold():
    import doctest
    result = doctest.testmod(_search_core)
    assert result.attempted == 1 and result.failed == 0  # stack_height
