"""The allocator zoo (issue 7, records-based planners): every planner × every instance factory
through the independent validator, named cases with known reference behaviour, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from optplan import Instance, solve
from optplan.formats import load_instance, read_minimalloc_csv
from optplan.problems import Problem
from optplan.registry import methods
from optplan.validate import validate
from tests.factories import NAMED, instances, named

OFFSETS, SHARED = Problem.OFFSETS, Problem.SHARED_OBJECTS
COLORING = ["largest_first", "smallest_last", "saturation_largest_first", "independent_set",
            "connected_sequential_bfs", "connected_sequential_dfs", "random_sequential",
            "size_weighted"]
OFFSET_PLANNERS = ["tflite_arena", "strip_packing_best_fit", "xla_best_fit",
                   "usmp_greedy_by_size", "usmp_greedy_by_conflicts", "usmp_hill_climb",
                   "nntrainer_basic", "nntrainer_v1", "nntrainer_v3", "first_fit", "best_fit"]
ZOO = ([(name, OFFSETS) for name in OFFSET_PLANNERS]
       + [(f"coloring_{s}", problem) for s in COLORING for problem in (SHARED, OFFSETS)])
SEEDED = {"usmp_hill_climb", "coloring_random_sequential"}


def _check(instance: Instance, method: str, problem: Problem, **params):
    result = solve(instance, method, problem, **params)
    assert result.valid, (method, problem, instance.name, result.violations)
    assert result.objective >= result.lower_bound, (method, instance.name)
    return result


def test_every_zoo_planner_is_registered():
    registry = methods(builtin_only=True)
    for name, problem in ZOO:
        info = registry[name]
        assert problem in info.implementations
        assert (info.kind, info.input) == ("heuristic", "records")
        assert info.references[problem]
        assert info.implementations[problem].__doc__


@pytest.mark.parametrize("case", sorted(NAMED))
@pytest.mark.parametrize(("method", "problem"), ZOO, ids=[f"{m}-{p.value}" for m, p in ZOO])
def test_named_cases(method, problem, case):
    _check(named(case), method, problem)
    _check(named(case, alignment=8), method, problem)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_tensors=9, max_ops=8, alignment=True))
def test_random_instances(instance):
    for method, problem in ZOO:
        _check(instance, method, problem)


@settings(max_examples=15, deadline=None)
@given(instances(max_tensors=8, max_ops=6, inplace=True))
def test_inplace_pairs_are_kept_apart(instance):
    # Records planners ignore in-place pairs: with --inplace their answers stay valid.
    for method, problem in ZOO:
        _check(instance, method, problem, inplace=True)


@pytest.mark.parametrize(("method", "problem"), ZOO, ids=[f"{m}-{p.value}" for m, p in ZOO])
def test_minimalloc_inputs(minimalloc_dir, method, problem):
    for path in (minimalloc_dir / "input.12.csv", minimalloc_dir / "challenging" / "A.1048576.csv"):
        if path.exists():
            _check(read_minimalloc_csv(path), method, problem)


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "data" / "examples").glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_committed_examples(path):
    instance = load_instance(path)
    for method, problem in ZOO:
        _check(instance, method, problem)


@pytest.mark.parametrize(("method", "problem"), ZOO, ids=[f"{m}-{p.value}" for m, p in ZOO])
def test_deterministic(method, problem):
    instance = named("paper_example", alignment=4)
    params = {"seed": 7} if method in SEEDED else {}
    first = solve(instance, method, problem, **params).solution
    assert solve(instance, method, problem, **params).solution == first


def test_seeds_change_the_random_strategies():
    from optplan.generators import generate
    instance = generate("random_dag", 300, seed=1)
    seen = {solve(instance, "coloring_random_sequential", SHARED, seed=s).solution.object_ids
            for s in range(4)}
    assert len(seen) > 1


def test_empty_instance():
    empty = Instance(())
    for method, problem in ZOO:
        result = solve(empty, method, problem)
        assert result.valid and result.objective == 0


# --- named behaviour of each planner ------------------------------------------------------------

def _offsets(method: str, triples, **kwargs):
    instance = Instance.from_tuples(triples, alignment=kwargs.pop("alignment", 1))
    solution = methods()[method].implementations[OFFSETS](instance, **kwargs)
    assert not validate(instance, OFFSETS, solution)
    return list(solution.offsets)


def test_tflite_whole_run_tensors_go_first_then_largest():
    # The whole-run tensor (3 bytes) sits at 0 although larger tensors exist.
    offsets = _offsets("tflite_arena", [(0, 2, 3), (0, 1, 16), (1, 2, 8)])
    assert offsets == [0, 3, 19]


def test_tflite_own_alignment_combines_with_the_instance():
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 10)], alignment=8)
    assert solve(instance, "tflite_arena", OFFSETS, alignment=64).solution.offsets == (0, 64)
    assert solve(instance, "tflite_arena", OFFSETS).solution.offsets == (0, 16)


def test_usmp_greedy_never_fills_gaps_but_hill_climb_does():
    # b (50) first at 0, a (10) above it; d (9) conflicts only with a: the greedy puts it above
    # a (end 69), the hill climb's first fit under it, where b is not yet live (end 60).
    triples = [(1, 2, 50), (0, 1, 10), (0, 0, 9)]
    assert _offsets("usmp_greedy_by_size", triples) == [0, 50, 60]
    assert _offsets("usmp_hill_climb", triples) == [0, 50, 0]


def test_nntrainer_v1_reuses_only_equal_sizes():
    # Requests by (start, end): b@0, a@8, c reuses b's 8-byte slot, d (4 bytes) goes on top.
    offsets = _offsets("nntrainer_v1", [(0, 3, 16), (0, 0, 8), (1, 1, 8), (2, 2, 4)])
    assert offsets == [8, 0, 0, 24]


def test_nntrainer_v1_keeps_an_expired_slot_buried_under_a_live_one():
    # Slot of "b" (expired) lies under live "c"; "d" has another size and goes on top.
    offsets = _offsets("nntrainer_v1", [(0, 4, 4), (0, 0, 8), (0, 4, 2), (1, 1, 6)])
    assert offsets == [8, 0, 12, 14]


def test_nntrainer_v3_takes_the_lowest_vacant_gap():
    offsets = _offsets("nntrainer_v3", [(0, 4, 4), (0, 0, 8), (0, 4, 2), (1, 1, 6)])
    assert offsets == [8, 0, 12, 0]


def test_nntrainer_basic_never_shares():
    assert _offsets("nntrainer_basic", [(0, 0, 5), (1, 1, 3), (2, 2, 4)], alignment=4) == [0, 8, 12]


def test_first_fit_versus_best_fit():
    # Live at op 2: [0,8) and [12,14) and [20,24); holes of 4 at 8 and 6 at 14.
    triples = [(0, 3, 8), (0, 1, 4), (0, 3, 2), (0, 1, 6), (0, 3, 4), (2, 3, 4)]
    first = _offsets("first_fit", triples)
    best = _offsets("best_fit", triples)
    assert first[:5] == [0, 8, 12, 14, 20] and best[:5] == first[:5]
    assert first[5] == 8      # lowest hole that fits
    assert best[5] == 8       # the 4-byte hole is also the tightest
    triples[5] = (2, 3, 5)
    assert _offsets("first_fit", triples)[5] == 14 and _offsets("best_fit", triples)[5] == 14


def test_best_fit_skips_a_loose_low_gap():
    # Holes of 10 at 0 and of 4 at 14; a 4-byte tensor: first fit takes 0, best fit takes 14.
    triples = [(0, 1, 10), (0, 3, 4), (0, 1, 4), (0, 3, 4), (2, 3, 4)]
    assert _offsets("first_fit", triples)[4] == 0
    assert _offsets("best_fit", triples)[4] == 14


def test_strip_packing_fills_the_lowest_valley_with_the_longest_block():
    # After the long block at the bottom, the valley [0,1] takes the longest fitting block.
    triples = [(0, 3, 10), (0, 1, 5), (0, 0, 7), (2, 3, 6)]
    offsets = _offsets("strip_packing_best_fit", triples)
    assert offsets[0] == 0 and offsets[1] == 10 and offsets[3] == 10 and offsets[2] == 15


def test_coloring_stacks_objects_in_colour_order():
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 4), (2, 3, 6)], alignment=8)
    shared = solve(instance, "coloring_largest_first", SHARED).solution
    offsets = solve(instance, "coloring_largest_first", OFFSETS).solution
    starts = [0]
    for size in shared.object_sizes[:-1]:
        starts.append(-(-(starts[-1] + size) // 8) * 8)
    assert offsets.offsets == tuple(starts[c] for c in shared.object_ids)


def test_size_weighted_coloring_opens_objects_largest_first():
    instance = Instance.from_tuples([(0, 1, 4), (1, 2, 30), (2, 3, 8), (0, 0, 20)])
    shared = solve(instance, "coloring_size_weighted", SHARED).solution
    assert shared.object_ids[1] == 0 and shared.object_sizes[0] == 30


# --- the heap-based DSATUR and independent-set strategies against networkx's own -------------

@settings(max_examples=60, deadline=None)
@given(instances(max_tensors=14, max_ops=10))
def test_dsatur_orders_nodes_exactly_as_networkx(instance):
    import networkx as nx
    from optplan.heuristics.coloring import (interference_graph,
                                             strategy_saturation_largest_first)
    graph = interference_graph(instance)
    assert (nx.greedy_color(graph, strategy_saturation_largest_first)
            == nx.greedy_color(graph, "saturation_largest_first"))


@settings(max_examples=60, deadline=None)
@given(instances(max_tensors=8, max_ops=8))
def test_independent_set_strategy_matches_networkx_on_small_graphs(instance):
    # Up to 8 nodes networkx's set iteration is in node order, so the ties agree too.
    import networkx as nx
    from optplan.heuristics.coloring import interference_graph, strategy_independent_set
    graph = interference_graph(instance)
    assert nx.greedy_color(graph, strategy_independent_set) == nx.greedy_color(
        graph, "independent_set")


@pytest.mark.parametrize(("method", "params", "field"), [
    ("tflite_arena", {"alignment": 0}, "alignment"),
    ("xla_best_fit", {"order": "diagonal"}, "order"),
    ("usmp_hill_climb", {"max_attempts": 0}, "max_attempts"),
])
def test_bad_parameters_name_their_field(method, params, field):
    from optplan.errors import InputError
    with pytest.raises(InputError) as error:
        solve(named("stairs"), method, OFFSETS, **params)
    assert error.value.field == field


def test_tflite_takes_the_tightest_gap_not_the_lowest():
    # By size: h2 (25) @0, h1 (14) @0, z (10) above h2 @25, y (6) between h1 and z @14.
    # At op 1 the 5-byte x sees gaps [0, 14) and [20, 25): TFLite takes the tighter one.
    triples = [(2, 2, 25), (0, 0, 14), (1, 2, 10), (0, 1, 6), (1, 1, 5)]
    assert _offsets("tflite_arena", triples) == [0, 0, 25, 14, 20]
