"""Properties over every registered records method: valid, and never below the lower bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from optplan import InputError, Problem, Status, lower_bound, methods, solve

from factories import NAMED, instances, named

# Tiny instances and a short limit keep exact methods quick here; their optimality is
# cross-checked in the exact-solver tests.
TIME_LIMIT = 5


def _records_methods(problem: Problem):
    return [name for name, info in methods(builtin_only=True).items()
            if info.input == "records" and problem in info.implementations]


CASES = [(problem, name) for problem in (Problem.SHARED_OBJECTS, Problem.OFFSETS)
         for name in _records_methods(problem)]


def _check(instance, problem, method, inplace=False):
    try:
        result = solve(instance, method, problem, inplace=inplace, time_limit=TIME_LIMIT,
                       workers=1, seed=0)
    except InputError as error:  # a method may refuse in-place pairs, clearly
        assert inplace and instance.inplace_pairs and error.field == "inplace", error
        return None
    assert result.lower_bound == lower_bound(instance if inplace else instance.without_inplace(),
                                             problem)
    assert result.lower_bound <= lower_bound(instance.without_inplace(), problem)
    if result.solution is None:
        assert result.status is not Status.FEASIBLE and result.status is not Status.OPTIMAL
        return result
    assert result.valid, result.violations
    assert result.objective >= result.lower_bound  # in place: the trimmed-profile bound
    if result.status is Status.OPTIMAL:
        assert result.gap == 0.0
    return result


@pytest.mark.parametrize("problem, method", CASES)
@pytest.mark.parametrize("case", sorted(NAMED))
def test_named_cases(problem, method, case):
    _check(named(case), problem, method)


@pytest.mark.parametrize("problem, method", CASES)
@settings(max_examples=25, deadline=None)
@given(instance=instances(max_tensors=7, alignment=True))
def test_random_instances(problem, method, instance):
    _check(instance, problem, method)


@pytest.mark.parametrize("problem, method", CASES)
@settings(max_examples=10, deadline=None)
@given(instance=instances(max_tensors=6, inplace=True))
def test_inplace_instances_stay_valid(problem, method, instance):
    _check(instance, problem, method, inplace=True)


@pytest.mark.parametrize("problem, method", CASES)
def test_empty_instance(problem, method):
    from optplan import Instance

    result = _check(Instance(()), problem, method)
    if result.solution is not None:
        assert result.objective == 0
