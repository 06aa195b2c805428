"""``solve(instance, method, problem=..., **params) -> Result``: the one entry point.

It looks the problem up on the problem table and the method up in the registry, times the
method, puts the solution through the problem's independent validator and fills in the
objective, the combinatorial lower bound and the gap.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from optplan.errors import InputError
from optplan.params import check_parameter
from optplan.problems import Problem, get_problem
from optplan.registry import get_method
from optplan.result import Result, SolverOutcome, Status, relative_gap
from optplan.validate import validate

__all__ = ["solve", "objective_value", "SOLVER_FLAGS"]

SOLVER_FLAGS = ("time_limit", "workers", "seed")


def objective_value(instance, problem: Problem | str, solution) -> int:
    """The objective of ``solution``, recomputed by the problem's spec (shared objects: the sum
    of object sizes; offsets: the arena rounded up to the alignment; preload: the latency)."""
    return get_problem(problem).objective(instance, solution)


def _call_arguments(accepted: set[str] | None, method: str, params: dict) -> dict:
    if accepted is None:
        return dict(params)
    unknown = sorted(k for k, v in params.items() if k not in accepted and k not in SOLVER_FLAGS)
    if unknown:
        raise InputError(f"method {method!r} takes no parameter {unknown[0]!r} (it takes: "
                         f"{', '.join(sorted(accepted - {'instance'})) or 'none'})",
                         field=unknown[0])
    return {k: v for k, v in params.items() if k in accepted}


def solve(instance, method: str, problem: Problem | str | None = None, *,
          inplace: bool = False, time_limit: float | None = None, workers: int | None = None,
          seed: int | None = None, **params) -> Result:
    """Run ``method`` on ``instance`` and return a validated :class:`Result`.

    ``problem`` may be omitted when the method solves exactly one problem. The instance options
    of the problem (``inplace``; ``budget`` for preload) shape the instance that is solved:
    in-place pairs are used only with ``inplace=True`` (otherwise every pair conflicts as
    usual). Exact methods also take ``warm_start`` and ``initial_solution`` (see
    :mod:`optplan.warm_start`; ``initial_solution`` may be a solution file, read by the
    problem's reader) and pass other parameters to their solver.

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
    spec = get_problem(problem)
    info = get_method(method, spec.name)
    recorded = dict(params)
    options = {"inplace": inplace} | {name: params.pop(name) for name in spec.solve_options
                                      if name in params and name != "inplace"}
    instance = spec.prepared(instance, **options)
    if isinstance(params.get("initial_solution"), (str, Path)):
        params["initial_solution"] = spec.read_solution(instance, params["initial_solution"])
    flags = {"time_limit": time_limit, "workers": workers, "seed": seed}
    given = {k: v for k, v in flags.items() if v is not None} | params
    func: Callable = info.implementations[spec.problem]
    arguments = _call_arguments(info.accepts(spec.name), method, given)
    for key, value in arguments.items():
        check_parameter(func, key, value)

    start = time.perf_counter()
    output = func(instance, **arguments)
    wall = time.perf_counter() - start

    bound = spec.lower_bound(instance)
    outcome = output if isinstance(output, SolverOutcome) else _heuristic_outcome(output)
    solution = outcome.solution
    objective = violations = valid = None
    if solution is not None:
        objective = spec.objective(instance, solution)
        violations = tuple(str(v) for v in validate(instance, spec.name, solution))
        valid = not violations
    best_bound = bound if outcome.best_bound is None else max(bound, outcome.best_bound)
    if outcome.status is Status.OPTIMAL and objective is not None:
        best_bound = objective
    return Result(
        instance=instance.name, problem=spec.problem, method=info.name, status=outcome.status,
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
