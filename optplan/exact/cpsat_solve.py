"""Solving a CP-SAT model (OR-Tools), for every problem's CP-SAT formulations: the solver with
the run's flags, parameters passed straight to ``solver.parameters``, an anytime callback, and
the answer read back exactly (integers; bounds through
:func:`~optplan.exact.scaling.proven_bound`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from optplan.errors import InputError, SolverRangeError
from optplan.exact.budget import Budget
from optplan.exact.scaling import proven_bound

__all__ = ["CpsatRun", "cpsat_solver", "solve_model", "cpsat_version", "cp_model"]


def cp_model():
    """The ``ortools.sat.python.cp_model`` module (imported on first use)."""
    from ortools.sat.python import cp_model as module
    return module


def cpsat_version() -> str:
    """OR-Tools' version, e.g. ``9.15.6755``: every CP-SAT result and the run manifest read it
    here."""
    import ortools
    return ortools.__version__


def cpsat_solver(*, time_limit, workers, seed, solver_params):
    """A CP-SAT solver with the run's time limit, workers and seed; ``solver_params`` pass
    straight through to ``solver.parameters`` (an unknown name is an InputError)."""
    solver = cp_model().CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    for name, value in (solver_params or {}).items():
        if not hasattr(solver.parameters, name):
            raise InputError(f"CP-SAT has no parameter {name!r}", field=name)
        try:
            if isinstance(value, (list, tuple)):  # a repeated field (empty here), e.g.
                getattr(solver.parameters, name).extend(value)  # ``subsolvers``
            else:
                setattr(solver.parameters, name, value)
        except (TypeError, ValueError, AttributeError):
            raise InputError(f"CP-SAT rejects the value {value!r}", field=name) from None
    return solver


def fixed_search_params(workers: int) -> dict:
    """Solver parameters under which a worker follows the model's search strategy: with two
    workers or more, the ``fixed`` worker beside the default one (the portfolio of two
    workers otherwise leaves the strategy to the default worker, which mixes it with its
    own); with one, the fixed search itself."""
    if workers >= 2:
        return {"subsolvers": ["fixed", "default_lp"]}
    from ortools.sat.python.cp_model_helper import SatParameters
    return {"search_branching": SatParameters.FIXED_SEARCH}


@dataclass
class CpsatRun:
    """What one CP-SAT solve produced, in model units; ``solver`` holds the solution for
    extraction (when ``status`` is OPTIMAL or FEASIBLE)."""

    status: str
    objective: int | None
    bound: int | None
    values: dict = field(default_factory=dict)
    wall_time: float = 0.0
    solver: object = None

    @property
    def has_solution(self) -> bool:
        return self.status in ("OPTIMAL", "FEASIBLE")


def solve_model(model, variables: dict, *, budget: Budget, workers, seed, solver_params,
                seconds: float | None = None, objective=None, on_progress=None,
                on_solution=None) -> CpsatRun:
    """Solve ``model`` for ``seconds`` (``None``: what is left of ``budget``; never more, see
    :meth:`~optplan.exact.budget.Budget.solver_seconds`) and read back ``variables``
    (name -> var). ``objective`` (the minimised expression) is read exactly from the
    solution; ``on_progress(incumbent, bound)`` sees every improvement, ``on_solution(value)``
    every solution (``value(var)`` reads it)."""
    limit = budget.solver_seconds(seconds)
    if limit is not None and limit <= 0:
        return CpsatRun("NOT_STARTED", None, None)
    solver = cpsat_solver(time_limit=limit, workers=workers, seed=seed,
                          solver_params=solver_params)

    class Progress(cp_model().CpSolverSolutionCallback):
        def on_solution_callback(self):
            if on_solution is not None:
                on_solution(self.value)
            if on_progress is not None and model.has_objective():
                value = (self.value(objective) if objective is not None
                         else round(self.objective_value))
                on_progress(value, proven_bound(self.best_objective_bound))

    started = time.perf_counter()
    status = solver.solve(model, Progress())
    budget.solver_ran(limit, time.perf_counter() - started)
    name = solver.status_name(status)
    if name == "MODEL_INVALID":
        reason = model.validate()
        if "int64" in reason:   # numbers the range checks admit, summed over many variables
            raise SolverRangeError(f"memory sizes too large for CP-SAT: {reason.strip()}",
                                   field="size")
        raise RuntimeError(f"CP-SAT rejected the model: {reason}")
    run = CpsatRun(name, None, None, wall_time=solver.wall_time, solver=solver)
    if run.has_solution:
        run.values = {key: solver.value(var) for key, var in variables.items()}
        if model.has_objective():
            run.objective = (solver.value(objective) if objective is not None
                             else round(solver.objective_value))
    if model.has_objective() and name in ("OPTIMAL", "FEASIBLE", "UNKNOWN"):
        run.bound = proven_bound(solver.best_objective_bound)
    return run
