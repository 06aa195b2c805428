"""``solve(instance, method, problem=..., **params) -> Result``: the one entry point.

It dispatches through the registry, times the method, puts the solution through the
independent validator and fills in the objective, the combinatorial lower bound and the gap.
"""

from __future__ import annotations

import time
from typing import Callable

from optplan.bounds import lower_bound
from optplan.errors import InputError
from optplan.model import Instance, Problem, Solution, round_up
from optplan.params import check_parameter
from optplan.registry import get_method
from optplan.result import Result, SolverOutcome, Status, relative_gap
from optplan.validate import validate

__all__ = ["solve", "objective_value", "SOLVER_FLAGS"]

SOLVER_FLAGS = ("time_limit", "workers", "seed")


def objective_value(instance: Instance, problem: Problem, solution: Solution) -> int:
    """Shared objects: the sum of object sizes. Offsets: the arena size, rounded up to the
    alignment. Preload: the latency in µs (``optplan.preload.plan_latency``)."""
    if problem is Problem.PRELOAD:
        from optplan.preload import plan_latency

        return plan_latency(instance, solution)
    if problem is Problem.SHARED_OBJECTS:
        return solution.total_size
    return round_up(solution.arena_size, instance.alignment)


def _call_arguments(accepted: set[str] | None, method: str, params: dict) -> dict:
    if accepted is None:
        return dict(params)
    unknown = sorted(k for k, v in params.items() if k not in accepted and k not in SOLVER_FLAGS)
    if unknown:
        raise InputError(f"method {method!r} takes no parameter {unknown[0]!r} (it takes: "
                         f"{', '.join(sorted(accepted - {'instance'})) or 'none'})",
                         field=unknown[0])
    return {k: v for k, v in params.items() if k in accepted}


def solve(instance: Instance, method: str, problem: Problem | str | None = None, *,
          inplace: bool = False, time_limit: float | None = None, workers: int | None = None,
          seed: int | None = None, **params) -> Result:
    """Run ``method`` on ``instance`` and return a validated :class:`Result`.

    ``problem`` may be omitted when the method solves exactly one problem. In-place pairs are
    used only with ``inplace=True`` (otherwise every pair conflicts as usual).

    >>> from optplan import Instance, solve
    >>> result = solve(Instance.from_tuples([(0, 1, 32), (1, 2, 8), (2, 3, 32)]),
    ...                "greedy_by_size", "offsets")
    >>> result.objective, result.lower_bound, result.valid
    (40, 40, True)
    """
    if problem is None:
        info = get_method(method)
        if len(info.implementations) != 1:
            raise InputError(f"method {method!r} solves "
                             f"{', '.join(p.cli_name for p in info.problems)}; name the problem",
                             field="problem")
        problem = info.problems[0]
    problem = Problem.parse(problem)
    info = get_method(method, problem)
    recorded = dict(params)
    if problem is Problem.PRELOAD:
        if "budget" in params:  # the budget is part of the preload instance
            instance = instance.with_budget(params.pop("budget"))
    elif not inplace:
        instance = instance.without_inplace()
    flags = {"time_limit": time_limit, "workers": workers, "seed": seed}
    given = {k: v for k, v in flags.items() if v is not None} | params
    func: Callable = info.implementations[problem]
    arguments = _call_arguments(info.accepts(problem), method, given)
    for key, value in arguments.items():
        check_parameter(func, key, value)

    bound = lower_bound(instance, problem)
    start = time.perf_counter()
    output = func(instance, **arguments)
    wall = time.perf_counter() - start

    outcome = output if isinstance(output, SolverOutcome) else _heuristic_outcome(output)
    solution = outcome.solution
    objective = violations = valid = None
    if solution is not None:
        objective = objective_value(instance, problem, solution)
        violations = tuple(str(v) for v in validate(instance, problem, solution))
        valid = not violations
    best_bound = bound if outcome.best_bound is None else max(bound, outcome.best_bound)
    if outcome.status is Status.OPTIMAL and objective is not None:
        best_bound = objective
    return Result(
        instance=instance.name, problem=problem, method=info.name, status=outcome.status,
        objective=objective, lower_bound=bound,
        best_bound=None if outcome.status is Status.INFEASIBLE else best_bound,
        gap=relative_gap(objective, best_bound), wall_time_s=wall, valid=valid,
        violations=violations or (), solution=solution, params=recorded,
        solver=outcome.solver or info.name, solver_version=outcome.solver_version,
        time_limit=time_limit, workers=workers, seed=seed, inplace=inplace,
        trajectory=outcome.trajectory, info=dict(outcome.info))


def _heuristic_outcome(solution) -> SolverOutcome:
    if solution is None:
        return SolverOutcome(Status.INFEASIBLE, None)
    return SolverOutcome(Status.FEASIBLE, solution)
