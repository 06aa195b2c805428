"""Test vectors carried over from the reference implementations' own test suites.

Each case cites the file it comes from; the inputs are translated to usage records (or, for
TVM, fed to the core on TVM's explicit conflict lists) and the expected results are the
references' own.
"""

from __future__ import annotations

import numpy as np
import pytest

from optplan import Instance
from optplan.heuristics.arena import tflite_arena
from optplan.heuristics.nntrainer import nntrainer_basic, nntrainer_v1, nntrainer_v3
from optplan.heuristics.usmp import (GlibcRandR, greedy_above_conflicts, hill_climb,
                                     usmp_greedy_by_conflicts, usmp_greedy_by_size,
                                     usmp_hill_climb, usmp_order)
from optplan.heuristics.xla import xla_best_fit
from optplan.problems import Problem
from optplan.validate import validate


def _valid(instance, solution):
    assert not validate(instance, Problem.OFFSETS, solution)
    return solution


# --- TFLite: tensorflow/lite/arena_planner_test.cc -------------------------------------------
# TestGraph: tensor i has (i + 1) * 3 bytes, kTensorAlignment = 4. SimpleGraph: inputs {0, 1},
# ops {0,1}->{2}, {2,0}->{4,5}, {4,5}->{3}, output {3}. Lifetimes from PlanAllocations
# (allocated at the producing op, freed at the last consumer; outputs never freed).

def test_tflite_simple_graph():
    # ArenaPlannerTest.SimpleGraph (TF 2.x, inputs not preserved): "+0 +1 +2 -1 +4 +5 -2 -0 +3
    # -4 -5"; EXPECT offset(5) == 0, 4 after 5, 3 after 4, 2 after 4, 0 after 2, 1 == 0.
    instance = Instance.from_tuples([(0, 1, 3), (0, 0, 6), (0, 1, 9), (2, 2, 12), (1, 2, 15),
                                     (1, 2, 18)], alignment=4)
    offsets = _valid(instance, tflite_arena(instance)).offsets

    def after(t):
        return -(-(offsets[t] + instance.records[t].size) // 4) * 4

    assert offsets[5] == 0
    assert offsets[4] == after(5) and offsets[3] == after(4) and offsets[2] == after(4)
    assert offsets[0] == after(2) and offsets[1] == 0


def test_tflite_simple_graph_inputs_preserved():
    # ArenaPlannerTest.SimpleGraph (current TF, graph inputs live for the whole run): the
    # whole-run tensors 0 and 1 go first; EXPECT offset(5) == 12, 4 after 5, 3 after 4,
    # 2 after 4, offset(1) == 4.
    instance = Instance.from_tuples([(0, 2, 3), (0, 2, 6), (0, 1, 9), (2, 2, 12), (1, 2, 15),
                                     (1, 2, 18)], alignment=4)
    offsets = _valid(instance, tflite_arena(instance)).offsets
    assert offsets[5] == 12 and offsets[4] == 32 and offsets[3] == 48 and offsets[2] == 48
    assert offsets[1] == 4 and offsets[0] == 0


# --- XLA: xla/service/heap_simulator/heap_simulator_test.cc ----------------------------------
# GlobalDecreasingSizeBestFitHeapTest: every Alloc/Free advances time by one, so a buffer
# allocated at event s and freed at event e is the record [s, e].

def test_xla_decreasing_size():
    instance = Instance.from_tuples([(0, 4, 10), (1, 5, 30), (2, 6, 20), (3, 7, 40)])
    solution = _valid(instance, xla_best_fit(instance, order="spatial"))
    assert solution.offsets == (90, 40, 70, 0) and solution.arena_size == 100


def test_xla_decreasing_size_with_alignment():
    instance = Instance.from_tuples([(0, 3, 10), (1, 5, 20), (2, 6, 50), (4, 7, 40)],
                                    alignment=20)
    solution = _valid(instance, xla_best_fit(instance, order="spatial"))
    assert solution.offsets == (60, 100, 0, 60) and solution.arena_size == 120


def test_xla_best_fit():
    instance = Instance.from_tuples([(0, 3, 10), (1, 6, 20), (2, 7, 40), (4, 8, 30),
                                     (5, 9, 50)])
    solution = _valid(instance, xla_best_fit(instance, order="spatial"))
    assert solution.offsets == (90, 120, 50, 90, 0) and solution.arena_size == 140


def test_xla_keeps_the_better_order():
    instance = Instance.from_tuples([(0, 3, 10), (1, 6, 20), (2, 7, 40), (4, 8, 30),
                                     (5, 9, 50)])
    sizes = [xla_best_fit(instance, order=o).arena_size for o in ("spatial", "temporal")]
    assert xla_best_fit(instance).arena_size == min(sizes)


# --- TVM: tests/python/unittest/test_tir_usmp_algo.py ----------------------------------------
# BufferInfo with explicit (possibly asymmetric) conflict lists, one unbounded pool.

def _tvm(sizes, conflicts):
    names = sorted(conflicts)
    position = {name: i for i, name in enumerate(names)}
    neighbours = [np.array([position[c] for c in conflicts[name]], dtype=np.int64)
                  for name in names]
    sizes = np.array([sizes[name] for name in names], dtype=np.int64)
    counts = [len(n) for n in neighbours]
    results = {}
    for by in ("size", "conflicts"):
        order = usmp_order(sizes.tolist(), counts, names, by)
        results[f"greedy_by_{by}"] = greedy_above_conflicts(order, sizes, neighbours.__getitem__, 1)
    results["hill_climb"] = hill_climb(sizes, names, neighbours, 1, memory_pressure=0)
    return {k: (dict(zip(names, v.tolist())), int((v + sizes).max())) for k, v in results.items()}


def test_tvm_name_based_ordering():
    results = _tvm({"bi_a": 10, "bi_b": 10, "bi_c": 10},
                   {"bi_a": ["bi_b", "bi_c"], "bi_b": ["bi_c", "bi_a"], "bi_c": ["bi_a", "bi_b"]})
    for offsets, _ in results.values():
        assert offsets == {"bi_a": 20, "bi_b": 10, "bi_c": 0}


def test_tvm_linear():
    results = _tvm({"bi_a": 10, "bi_b": 20, "bi_c": 100, "bi_d": 40, "bi_e": 50, "bi_f": 50},
                   {"bi_a": ["bi_b"], "bi_b": ["bi_a", "bi_c"], "bi_c": ["bi_b", "bi_d"],
                    "bi_d": ["bi_c", "bi_e"], "bi_e": ["bi_d", "bi_f"], "bi_f": ["bi_e"]})
    assert {k: size for k, (_, size) in results.items()} == {
        "greedy_by_size": 140, "greedy_by_conflicts": 140, "hill_climb": 140}


def test_tvm_fanout():
    results = _tvm({"bi_a": 10, "bi_b": 20, "bi_c": 100, "bi_d": 40, "bi_e": 50, "bi_f": 60,
                    "bi_g": 70},
                   {"bi_a": ["bi_b", "bi_c"], "bi_b": ["bi_a", "bi_c", "bi_e"],
                    "bi_c": ["bi_e", "bi_a", "bi_b", "bi_d"],
                    "bi_d": ["bi_b", "bi_f", "bi_c", "bi_e"],
                    "bi_e": ["bi_c", "bi_f", "bi_b", "bi_d"], "bi_f": ["bi_d", "bi_e", "bi_f"],
                    "bi_g": ["bi_f"]})
    assert {k: size for k, (_, size) in results.items()} == {
        "greedy_by_size": 190, "greedy_by_conflicts": 320, "hill_climb": 190}


def test_tvm_linear_as_records():
    # The linear chain as records [i, i+1]: the same conflicts, the same 140 bytes.
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 20), (2, 3, 100), (3, 4, 40),
                                     (4, 5, 50), (5, 6, 50)])
    for planner in (usmp_greedy_by_size, usmp_greedy_by_conflicts, usmp_hill_climb):
        assert _valid(instance, planner(instance)).arena_size == 140


def test_glibc_rand_r_stream():
    # Values printed by glibc's rand_r (gcc, x86-64 Linux) from seeds 0 (TVM's) and 12345.
    stream = GlibcRandR(0)
    assert [stream() for _ in range(5)] == [1012484, 1716955679, 1792309082, 229610924,
                                            1639479903]
    stream = GlibcRandR(12345)
    assert [stream() for _ in range(3)] == [1036784229, 1520991917, 1373464794]


# --- NNTrainer: test/unittest/memory/unittest_memory_planner.cpp -----------------------------
# Validity intervals are half-open [start, end): [s, e) is the record [s, e - 1]. The reference
# draws sizes from std::mt19937; the properties it checks are what carries over.

SIZES = [17, 3, 128, 64, 1, 99, 42, 42, 7, 120, 5, 64, 33, 2, 90, 11]


@pytest.mark.parametrize("planner", [nntrainer_basic, nntrainer_v1, nntrainer_v3])
def test_nntrainer_full_overlap(planner):
    # memory_validity all {1, 2}: pool == sum of sizes, no gaps.
    instance = Instance.from_tuples([(1, 1, s) for s in SIZES])
    solution = _valid(instance, planner(instance))
    assert solution.arena_size == sum(SIZES)


@pytest.mark.parametrize("planner", [nntrainer_basic, nntrainer_v1, nntrainer_v3])
def test_nntrainer_none_overlap(planner):
    # memory_validity {idx, idx + 1}: touching half-open intervals do not overlap, so the
    # optimised planners put everything at offset 0 and the pool is the largest size.
    instance = Instance.from_tuples([(i, i, s) for i, s in enumerate(SIZES)])
    solution = _valid(instance, planner(instance))
    if planner is nntrainer_basic:
        assert solution.arena_size == sum(SIZES)
    else:
        assert solution.arena_size == max(SIZES) and set(solution.offsets) == {0}


@pytest.mark.parametrize("planner", [nntrainer_v1, nntrainer_v3])
def test_nntrainer_partial_overlap(planner):
    # memory_validity {idx, idx + U(1, 5)}, shuffled: max size <= pool <= sum of sizes.
    rng = np.random.default_rng(0)
    triples = [(i, i + int(rng.integers(1, 6)) - 1, s) for i, s in enumerate(SIZES)]
    rng.shuffle(triples)
    instance = Instance.from_tuples(triples)
    solution = _valid(instance, planner(instance))
    assert max(SIZES) <= solution.arena_size <= sum(SIZES)
