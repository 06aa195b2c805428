"""Cross-check: CP-SAT = MILP(HiGHS) = MILP(CBC) = brute force on random tiny instances, and
lower bound <= exact optimum <= every registered heuristic (``docs/problems.md``).

The instances are small enough (at most 7 tensors) that brute force is instant; the solver
runs skip the heuristic warm start and the stop-at-bound shortcut so that the models
themselves are checked, with their variants (feasibility first, decomposition, symmetry
breaking, conflict encodings, positional cuts) drawn at random too.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optplan import Problem, Status, lower_bound, methods, solve
from optplan.bounds import offsets_bound, shared_objects_bound

from factories import tiny_instances

PROBLEMS = [Problem.SHARED_OBJECTS, Problem.OFFSETS]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def model_variant(draw, method: str, problem: Problem) -> dict:
    params = {"stop_at_bound": False, "warm_start": False}
    params["workers"] = 2 if method == "cpsat" else 1
    if problem is Problem.SHARED_OBJECTS:
        encodings = ["cliques", "pairs"] + (["no_overlap"] if method == "cpsat" else [])
        params["conflicts"] = draw(st.sampled_from(encodings))
        params["positional_cuts"] = draw(st.booleans())
        if method == "cpsat":
            params["model"] = draw(st.sampled_from(["colour", "representative"]))
            params["column_generation"] = draw(st.sampled_from([0.0, 0.5]))
    else:
        params["decompose"] = draw(st.booleans())
        params["symmetry_breaking"] = draw(st.booleans())
        params["feasibility_first"] = draw(st.sampled_from([0.0, 0.3]))
        if method == "cpsat":
            params["cumulative"] = draw(st.booleans())
            params["bottom_up"] = draw(st.booleans())
    return params


@settings(max_examples=150, **SETTINGS)
@given(instance=tiny_instances(), data=st.data())
def test_all_exact_methods_agree_with_brute_force(instance, data):
    inplace = bool(instance.inplace_pairs)
    for problem in PROBLEMS:
        reference = solve(instance, "brute_force", problem, inplace=inplace)
        assert reference.status is Status.OPTIMAL and reference.valid
        for method in ("cpsat", "milp_highs", "milp_cbc"):
            params = model_variant(data.draw, method, problem)
            result = solve(instance, method, problem, inplace=inplace, time_limit=20, **params)
            assert result.valid, (method, result.violations)
            assert result.status is Status.OPTIMAL, (method, result.status)
            assert result.objective == reference.objective, (method, params)
            assert result.best_bound == result.objective


def heuristics(problem: Problem) -> list[str]:
    """Every registered records heuristic for ``problem`` (looked up at test time)."""
    return [name for name, info in methods(builtin_only=True).items()
            if info.kind == "heuristic" and info.input == "records"
            and problem in info.implementations]


@settings(max_examples=60, **SETTINGS)
@given(instance=tiny_instances())
def test_bounds_exact_and_heuristics_are_ordered(instance):
    for inplace in (False, True):
        case = instance if inplace else instance.without_inplace()
        for problem in PROBLEMS:
            exact = solve(case, "cpsat", problem, inplace=inplace, time_limit=20)
            assert exact.status is Status.OPTIMAL and exact.valid
            bound = (shared_objects_bound(case) if problem is Problem.SHARED_OBJECTS
                     else offsets_bound(case))
            assert bound <= exact.objective
            if not case.inplace_pairs:  # the core bound ignores in-place sharing
                assert lower_bound(case, problem) == bound
            for name in heuristics(problem):
                heuristic = solve(case, name, problem, inplace=inplace)
                if heuristic.valid:  # an invalid answer is the heuristic's own test's business
                    assert exact.objective <= heuristic.objective, name
