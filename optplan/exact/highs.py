"""HiGHS (highspy through PuLP) for every problem's MILP models: a MIP start, options passed
straight through, and a second run when HiGHS claims an optimum it has not reached.

HiGHS 1.12 can end with status "Optimal" on a solution that is not integral after its presolve
(a fractional binary, primal solution status "infeasible"), or on its MIP start although its
own dual bound is a whole unit lower (both seen on tiny preload models). Then the model is
solved once more with presolve off and no start, and that run's answer is used. What a MILP
answer proves is decided by the caller (:func:`optplan.exact.scaling.milp_proof_trusted`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from optplan.errors import InputError

__all__ = ["MilpRun", "run_highs", "check_highs_options", "apply_start", "highs_version"]


@dataclass
class MilpRun:
    """One MILP solve: the solver's own status word (for ``info``), whether a solution was
    found, the dual bound in model units (a float; ``None`` when unknown), and whether the
    solver claims optimality or infeasibility."""

    status: str
    has_solution: bool
    bound: float | None
    optimal: bool = False
    infeasible: bool = False


@functools.cache
def highs_version() -> str | None:
    """HiGHS's version as highspy reports it, e.g. ``1.12.0`` (``None``: no highspy). Every
    HiGHS result and the run manifest read it here."""
    try:
        import highspy
        return highspy.Highs().version()
    except (ImportError, AttributeError):
        return None


def apply_start(start: dict) -> None:
    """Set the variables' initial values (``{variable: value}``) for a MIP start."""
    for variable, value in start.items():
        variable.setInitialValue(value)


def check_highs_options(params: dict) -> None:
    """An InputError naming the first option HiGHS rejects."""
    import highspy

    probe = highspy.Highs()
    probe.setOptionValue("output_flag", False)
    for name, value in params.items():
        if probe.setOptionValue(name, value) != highspy.HighsStatus.kOk:
            raise InputError(f"HiGHS rejects option {name}={value!r}", field=name)


def _solver(*, seconds, workers, seed, params: dict, with_start: bool):
    import highspy
    import pulp

    class HiGHSWithStart(pulp.HiGHS):
        """PuLP's HiGHS API solver, passing the variables' initial values as a MIP start."""

        def callSolver(self, lp):
            if with_start:
                start = highspy.HighsSolution()
                start.col_value = [var.varValue if var.varValue is not None else 0.0
                                   for var in lp.variables()]
                start.value_valid = True
                lp.solverModel.setSolution(start)
            lp.solverModel.run()

    options = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.999, "random_seed": seed} | params
    return HiGHSWithStart(msg=False, timeLimit=seconds, threads=workers, **options)


def run_highs(problem, *, seconds, workers, seed, params: dict, start: dict,
              retry: bool = True) -> MilpRun:
    """Solve the PuLP ``problem`` with HiGHS for ``seconds`` (``None``: no limit), starting
    from ``start`` (``{variable: value}``; empty: no MIP start)."""
    check_highs_options(params)
    apply_start(start)
    problem.solve(_solver(seconds=seconds, workers=workers, seed=seed, params=params,
                          with_start=bool(start) and retry))
    highs = problem.solverModel
    status = highs.modelStatusToString(highs.getModelStatus())
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    bound = info.mip_dual_bound if abs(info.mip_dual_bound) < 1e300 else None
    suspicious = status == "Optimal" and (
        not has_solution or (bound is not None and info.objective_function_value
                             > math.ceil(bound - 1e-6) + 0.5))
    if suspicious and retry:
        return run_highs(problem, seconds=seconds, workers=workers, seed=seed,
                         params=params | {"presolve": "off"}, start={}, retry=False)
    return MilpRun(status, has_solution, bound, optimal=status == "Optimal" and not suspicious,
                   infeasible=status == "Infeasible")
