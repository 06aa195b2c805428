"""Exact solvers (cpsat, milp_highs, milp_cbc, brute_force): named cases a reader can draw,
in-place semantics, conformance optima, honest statuses, parameters, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from factories import named
from optplan import Instance, Problem, Status, load_instance, solve
from optplan.errors import InputError, SolverRangeError
from optplan.bounds import (maximal_profiles, offsets_bound, shared_objects_bound,
                            trimmed_lifetimes)
from optplan.exact.geometry import conflict_pairs, explicit_conflicts, time_components
from optplan.exact.brute_force import MAX_RECORDS
from optplan.exact.scaling import scaling

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "data" / "examples"
SOLVERS = ["cpsat", "milp_highs", "milp_cbc"]
EXACT = SOLVERS + ["brute_force"]
PROBLEMS = [Problem.SHARED_OBJECTS, Problem.OFFSETS]
# Exercise the models themselves: no shortcut when a heuristic meets the bound.
MODEL_ONLY = {"stop_at_bound": False, "warm_start": False}


def run(instance, method, problem, **params):
    params = (MODEL_ONLY | params) if method != "brute_force" else params
    if method == "cpsat":
        params.setdefault("workers", 2)
    elif method.startswith("milp"):
        params.setdefault("workers", 1)
    result = solve(instance, method, problem, inplace=bool(instance.inplace_pairs), **params)
    assert result.valid, result.violations
    return result


# --- named in-place cases (draw them: time to the right, memory up) ---------------------------

INPLACE_CASES = {
    # a -> b: b may reuse a's memory at op 1.  SO 10 / OC 10 (without the pair: 20 / 20).
    "handover": ([(0, 1, 10), (1, 2, 10)], [(0, 1)], 10, 10),
    # b is smaller: it fits in a's memory; c is live with both and stacks.  SO 14, OC 14.
    "shrink": ([(0, 1, 10), (1, 2, 6), (0, 2, 4)], [(0, 1)], 14, 14),
    # Fan-out a -> b, a -> c where b and c are live together: only one can reuse a. 16 / 16.
    "fan_out": ([(0, 1, 8), (1, 1, 8), (1, 3, 8)], [(0, 1), (0, 2)], 16, 16),
    # A chain through a single-op tensor: a -> b -> c, but a and c are live together at op 1
    # and are not a pair, so not all three can share.  16 / 16.
    "chain_through_single_op": ([(0, 1, 8), (1, 1, 8), (1, 2, 8)], [(0, 1), (1, 2)], 16, 16),
    # A real chain: a -> b -> c, b lives two ops, a and c never meet.  SO 8, OC 8.
    "chain": ([(0, 1, 8), (1, 2, 8), (2, 3, 8)], [(0, 1), (1, 2)], 8, 8),
    # A bystander c is live at the junction op: a and b share, c stacks on them.  9 / 9.
    "with_bystander": ([(0, 1, 5), (1, 2, 5), (1, 1, 4)], [(0, 1)], 9, 9),
}


@pytest.mark.parametrize("method", EXACT)
@pytest.mark.parametrize("case", sorted(INPLACE_CASES))
def test_inplace_named_cases(case, method):
    triples, pairs, so_optimum, oc_optimum = INPLACE_CASES[case]
    instance = Instance.from_tuples(triples, name=case, inplace_pairs=pairs)
    assert run(instance, method, Problem.SHARED_OBJECTS).objective == so_optimum
    assert run(instance, method, Problem.OFFSETS).objective == oc_optimum


@pytest.mark.parametrize("method", ["cpsat", "milp_highs"])
def test_pairs_are_ignored_without_inplace(method):
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 10)], inplace_pairs=[(0, 1)])
    for problem in PROBLEMS:
        result = solve(instance, method, problem, **MODEL_ONLY)
        assert result.objective == 20 and result.status is Status.OPTIMAL


def test_solve_reports_a_valid_bound_with_inplace_pairs():
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 10)], inplace_pairs=[(0, 1)])
    result = solve(instance, "brute_force", "shared_objects", inplace=True)
    assert result.objective == 10 and result.lower_bound == 10


def test_trimmed_geometry_of_a_chain_through_a_single_op():
    instance = Instance.from_tuples([(0, 1, 8), (1, 1, 8), (1, 2, 8)],
                                    inplace_pairs=[(0, 1), (1, 2)])
    assert trimmed_lifetimes(instance) == [(0, 1), None, (2, 2)]
    assert trimmed_lifetimes(instance, "sources") == [(0, 0), None, (1, 2)]
    # Every conflict lives on the junction op 1 only, so all three are explicit.
    assert explicit_conflicts(instance) == conflict_pairs(instance) == [(0, 1), (0, 2), (1, 2)]
    assert shared_objects_bound(instance) == 8 and offsets_bound(instance) == 8


def test_maximal_profiles_are_the_maximal_cliques_of_an_interval_graph():
    assert maximal_profiles([(0, 1), (1, 4), (2, 5), (3, 5), (4, 5), None]) == [[0, 1],
                                                                                 [1, 2, 3, 4],
                                                                                 ]
    assert maximal_profiles([(0, 0), (2, 2)]) == [[0], [1]]


# --- named cases without in-place pairs ------------------------------------------------------

@pytest.mark.parametrize("method", EXACT)
@pytest.mark.parametrize("name, so_optimum, oc_optimum", [
    ("stairs", 90, 90), ("tetris", 28, 28), ("clique", 16, 16), ("disjoint", 9, 9),
    ("sparse", 80, 80)])
def test_named_cases(name, so_optimum, oc_optimum, method):
    instance = named(name)
    assert run(instance, method, Problem.SHARED_OBJECTS).objective == so_optimum
    assert run(instance, method, Problem.OFFSETS).objective == oc_optimum


@pytest.mark.parametrize("method", EXACT)
def test_alignment_rounds_offsets_and_objective(method):
    # Two 3-byte tensors live together, alignment 4: offsets 0 and 4, arena 7 -> objective 8.
    instance = Instance.from_tuples([(0, 1, 3), (1, 2, 3)], alignment=4)
    result = run(instance, method, Problem.OFFSETS)
    assert result.objective == 8
    assert all(offset % 4 == 0 for offset in result.solution.offsets)
    assert run(instance, method, Problem.SHARED_OBJECTS).objective == 6


@pytest.mark.parametrize("method", SOLVERS)
def test_identical_tensors_and_gcd_scaling(method):
    # Three identical tensors (symmetry breaking orders them) of 4096 bytes (gcd scaling).
    instance = Instance.from_tuples([(0, 2, 4096)] * 3 + [(3, 4, 8192)], alignment=64)
    assert run(instance, method, Problem.OFFSETS).objective == 3 * 4096
    assert run(instance, method, Problem.SHARED_OBJECTS).objective == 8192 + 2 * 4096


def test_unaligned_offsets_are_scaled_by_the_sizes_gcd():
    # Without an alignment, offsets in multiples of the sizes' gcd lose nothing (a packing
    # whose tensors all rest on another or on 0 has sums of sizes for offsets); an alignment
    # above one byte joins the gcd.
    sizes = [(0, 0, 3072), (1, 1, 2048), (0, 1, 1024)]
    for alignment, unit, steps in ((1, 1024, 1), (4096, 1024, 4), (512, 512, 1)):
        scale = scaling(Instance.from_tuples(sizes, alignment=alignment), with_alignment=True)
        assert (scale.unit, scale.alignment) == (unit, steps)
    assert scaling(Instance.from_tuples([(0, 1, 6), (0, 1, 9)]), with_alignment=True).unit == 3
    # Solved in 1024-byte units: 3072 and 1024 bytes live at op 0, 2048 and 1024 at op 1.
    instance = Instance.from_tuples(sizes)
    for method in EXACT:
        assert run(instance, method, Problem.OFFSETS).objective == 4096


@pytest.mark.peer
@pytest.mark.parametrize("name, arena, workers", [("A", 1048576, 2), ("F", 1048576, 2),
                                                 ("A", 1048576, 1)])
def test_cpsat_packs_minimalloc_instances_bottom_up_at_their_bound(name, arena, workers,
                                                                  minimalloc_dir):
    # The feasibility model at the max breadth, with the bottom-up search strategy: CP-SAT's
    # fixed-search worker (with two workers; the fixed search itself with one) packs A and F
    # in about a second (without the strategy A is not packed in 60 s; F is, by the gcd
    # units alone).
    instance = load_instance(minimalloc_dir / "challenging" / f"{name}.1048576.csv")
    result = solve(instance, "cpsat", "offsets", time_limit=60, workers=workers, seed=0,
                   warm_start=False, search_bound=0.0)
    assert result.valid and result.status is Status.OPTIMAL and result.objective == arena
    assert result.info["part_info"][0]["feasibility_status"] == "OPTIMAL"


@pytest.mark.parametrize("method", SOLVERS)
def test_offsets_decompose_along_time(method):
    # Two parts with no tensor across the cut: arena = max of the parts' optima.
    instance = Instance.from_tuples([(0, 1, 5), (1, 2, 7), (0, 2, 3), (3, 4, 20), (4, 5, 1)])
    assert [len(part) for part in time_components(instance)] == [3, 2]
    result = run(instance, method, Problem.OFFSETS)
    assert result.objective == 21 and result.info["parts"] == 2
    whole = run(instance, method, Problem.OFFSETS, decompose=False)
    assert whole.objective == 21 and whole.info["parts"] == 1


# --- conformance instances -------------------------------------------------------------------

# Optima found by brute force (and equal to the combinatorial bounds on these instances).
CONFORMANCE = {"paper_example": (128, 124), "tflite_complex": (112, 96),
               "tflite_chain": (96, 96)}


@pytest.mark.parametrize("name", sorted(CONFORMANCE))
def test_conformance_optima(name):
    instance = load_instance(EXAMPLES / f"{name}.json")
    so_optimum, oc_optimum = CONFORMANCE[name]
    brute = {problem: solve(instance, "brute_force", problem, max_records=len(instance))
             for problem in PROBLEMS}
    assert brute[Problem.SHARED_OBJECTS].objective == so_optimum
    assert brute[Problem.OFFSETS].objective == oc_optimum
    for method in SOLVERS:
        for problem in PROBLEMS:
            for params in ({}, MODEL_ONLY):
                result = solve(instance, method, problem, **params)
                assert result.status is Status.OPTIMAL and result.valid
                assert result.objective == brute[problem].objective


# --- outcome fields, parameters, export ------------------------------------------------------

@pytest.mark.parametrize("method", SOLVERS)
def test_outcome_records_solver_flags_version_and_trajectory(method):
    instance = named("paper_example")
    result = solve(instance, method, "offsets", time_limit=30, seed=3, **MODEL_ONLY)
    assert result.info["time_limit"] == 30 and result.info["seed"] == 3
    assert result.info["workers"] == (2 if method == "cpsat" else 1)
    assert result.solver == method and result.solver_version
    assert result.status is Status.OPTIMAL and result.best_bound == result.objective
    incumbents = [sample[1] for sample in result.trajectory if sample[1] is not None]
    bounds = [sample[2] for sample in result.trajectory if sample[2] is not None]
    assert incumbents == sorted(incumbents, reverse=True) and incumbents[-1] == result.objective
    assert bounds == sorted(bounds) and bounds[-1] == result.objective


def test_shortcut_when_the_warm_start_meets_the_bound():
    result = solve(named("paper_example"), "cpsat", "shared_objects")
    assert result.status is Status.OPTIMAL
    assert result.info["proof"] == "warm start meets the combinatorial bound"


@pytest.mark.parametrize("method, params, suffix", [
    ("cpsat", {"log_search_progress": False, "cp_model_presolve": False}, ".pb.txt"),
    ("milp_highs", {"presolve": "off"}, ".mps"),
    ("milp_cbc", {"cuts": "off"}, ".lp"),
])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_solver_params_pass_through_and_model_export(method, params, suffix, problem, tmp_path):
    path = tmp_path / f"model{suffix}"
    result = solve(named("tetris"), method, problem, export_path=path, **MODEL_ONLY, **params)
    assert result.status is Status.OPTIMAL and result.valid
    assert path.stat().st_size > 0


@pytest.mark.parametrize("method", ["cpsat", "milp_highs"])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_unknown_solver_parameter_is_a_clear_error(method, problem):
    with pytest.raises(InputError, match="^no_such_parameter: "):
        solve(named("tetris"), method, problem, no_such_parameter=1, **MODEL_ONLY)


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method, size", [("cpsat", 2 ** 61), ("milp_highs", 10 ** 16),
                                          ("milp_cbc", 10 ** 16)])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_values_too_large_for_the_solver(method, size, problem):
    # gcd 1, so scaling cannot help.
    instance = Instance.from_tuples([(0, 1, size + 1), (1, 2, 2)])
    with pytest.raises(SolverRangeError, match="^size: sizes too large"):
        solve(instance, method, problem)


def test_brute_force_refuses_large_instances():
    instance = Instance.from_tuples([(i, i + 1, 1) for i in range(MAX_RECORDS + 1)])
    with pytest.raises(InputError, match="at most 8 tensors"):
        solve(instance, "brute_force", "offsets")


@pytest.mark.parametrize("method", EXACT)
@pytest.mark.parametrize("problem", PROBLEMS)
def test_empty_instance(method, problem):
    result = solve(Instance(()), method, problem)
    assert result.status is Status.OPTIMAL and result.objective == 0


# --- honest statuses under a time limit ------------------------------------------------------

@pytest.mark.peer
@pytest.mark.slow
@pytest.mark.parametrize("method", ["cpsat", "milp_highs"])
def test_time_limited_run_does_not_claim_optimality(method, minimalloc_dir):
    instance = load_instance(minimalloc_dir / "challenging" / "K.1048576.csv")
    result = solve(instance, method, "offsets", time_limit=2.0, warm_start=False)
    assert result.valid
    assert result.best_bound is not None and result.best_bound <= result.objective
    if result.objective > result.best_bound:
        assert result.status is Status.FEASIBLE
    assert result.info["time_limit"] == 2.0


@pytest.mark.parametrize("method, conflicts", [("milp_highs", "no_overlap"),
                                                ("cpsat", "triangles")])
def test_bad_conflict_encoding_is_a_clear_error(method, conflicts):
    with pytest.raises(InputError, match="^conflicts: "):
        solve(named("tetris"), method, "shared_objects", conflicts=conflicts, **MODEL_ONLY)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_milp_too_large_to_build_returns_the_warm_start(problem, monkeypatch):
    from optplan.exact import milp
    monkeypatch.setattr(milp, "MODEL_TERMS_LIMIT", 0)
    result = solve(named("tetris"), "milp_highs", problem, **MODEL_ONLY)
    assert result.valid
    # Honest either way: unproven, unless the warm start meets the combinatorial bound.
    assert (result.status is Status.FEASIBLE
            or (result.status is Status.OPTIMAL and result.objective == result.lower_bound))
    info = result.info if problem is Problem.SHARED_OBJECTS else result.info["part_info"][0]
    assert info["model"].startswith("not built")


def test_time_left_by_an_unsolved_part_goes_to_the_later_parts():
    """Two time parts that both need work: the first gets half the time left, the second
    all of what is left then (not half again, which ended MiniMalloc E's runs at 35 s)."""
    from optplan.exact.parts import PartOutcome, solve_offsets_by_parts
    from optplan.exact.run import ExactRun

    # Two parts (ops 0-1 and 2-3); the warm start stacks each part's pair, above the bound.
    instance = Instance.from_tuples([(0, 1, 4), (0, 0, 3), (1, 1, 3), (2, 3, 4), (2, 2, 3),
                                     (3, 3, 3)], name="two_parts")
    limits = []

    def slow_part(part, start_offsets, target, limit, on_progress):
        limits.append((limit, budget.remaining()))
        return PartOutcome(list(start_offsets), max(o + r.size for o, r in
                                                    zip(start_offsets, part.records)),
                           target, False)

    run = ExactRun(instance, "offsets", solver="stub", version="", time_limit=100.0,
                   workers=None, seed=None, default_workers=1)
    budget = run.budget
    solve_offsets_by_parts(run, slow_part, warm_start=False, initial_solution=None,
                           decompose=True, stop_at_bound=False)
    # two passes (the stub never proves its part, and returns at once)
    assert len(limits) == 4
    (first, left_then), (second, left_later) = limits[:2]
    assert first == pytest.approx(left_then / 2, rel=0.01)
    assert second == pytest.approx(left_later, rel=0.01)


def test_a_part_left_open_gets_the_time_a_quick_part_left():
    """MiniMalloc E: the harder part gets half the time and stays open, the other closes at
    once; the open part is then solved again with the rest (E's run ended at 32 s of 60)."""
    from optplan.exact.parts import PartOutcome, solve_offsets_by_parts
    from optplan.exact.run import ExactRun

    instance = Instance.from_tuples([(0, 1, 4), (0, 0, 3), (1, 1, 3), (2, 3, 4), (2, 2, 3),
                                     (3, 3, 3)], name="two_parts")
    calls = []

    def one_open_part(part, start_offsets, target, limit, on_progress):
        calls.append((part.name, limit))
        arena = max(o + r.size for o, r in zip(start_offsets, part.records))
        return PartOutcome(list(start_offsets), arena, target, part.name.endswith("#1"))

    run = ExactRun(instance, "offsets", solver="stub", version="", time_limit=100.0,
                   workers=None, seed=None, default_workers=1)
    solve_offsets_by_parts(run, one_open_part, warm_start=False, initial_solution=None,
                           decompose=True, stop_at_bound=False)
    names = [name for name, _ in calls]
    open_part = next(name for name in names if not name.endswith("#1"))
    assert names.count(open_part) == 2 and len(calls) == 3
    assert calls[-1][1] > 90          # the second pass has (nearly) all the time
