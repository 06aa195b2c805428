"""One exact method call, for every exact method of every problem: budget, flags, anytime curve,
warm start, incumbent, proven bound and the honest outcome.

Every exact method makes an :class:`ExactRun`, takes its warm start (:meth:`ExactRun.start`),
offers what its solvers find (:meth:`ExactRun.offer`, :meth:`ExactRun.raise_bound`), asks
:meth:`ExactRun.out_of_time` before each stage, and returns :meth:`ExactRun.outcome`. The
incumbent only ever improves, so a method never returns worse than its warm start; the status
is OPTIMAL only when a solver proved it exactly or the incumbent meets a proven bound.
"""

from __future__ import annotations

from typing import Any, Callable

from optplan.errors import InputError
from optplan.exact.budget import STOPPED, Budget, Trajectory, solver_options, status_for
from optplan.problems import Problem, get_problem
from optplan.result import SolverOutcome, Status
from optplan.warm_start import Candidate, warm_start

__all__ = ["ExactRun"]


class ExactRun:
    """The state of one exact method call on ``instance`` for ``problem``.

    ``info`` starts with the effective solver flags (``time_limit``, ``workers``, ``seed``);
    ``bound`` is the best proven lower bound so far (``None``: none yet).
    """

    def __init__(self, instance, problem: Problem | str, *, solver: str, version: str,
                 time_limit, workers, seed, default_workers: int):
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"must be > 0, got {time_limit!r}", field="time_limit")
        self.instance = instance
        self.spec = get_problem(problem)
        self.solver = solver
        self.version = version
        self.budget = Budget(time_limit)
        self.flags = solver_options(time_limit, workers, seed, default_workers)
        self.trajectory = Trajectory(self.budget, f"{solver} {self.spec.name}", self.spec.unit)
        self.info: dict = dict(self.flags)
        self.solution: Any = None
        self.objective: int | None = None
        self.bound: int | None = None

    @property
    def workers(self) -> int:
        return self.flags["workers"]

    @property
    def seed(self) -> int:
        return self.flags["seed"]

    def start(self, warm_start_arg=True, initial_solution=None, *,
              construction: Callable | None = None, fallback: Callable | None = None):
        """Evaluate the warm start (see :func:`optplan.warm_start.warm_start`); its best
        candidate becomes the incumbent. ``fallback`` (a cheap construction, run whatever the
        time) gives the incumbent when no candidate does. Returns the candidate kept
        (``None``: none)."""
        found = warm_start(self.instance, self.spec.name, warm_start_arg, initial_solution,
                           budget=self.budget, construction=construction)
        self.info |= found.info()
        best = found.best
        if best is None and fallback is not None:
            solution = fallback(self.instance)
            best = Candidate(solution, self.spec.objective(self.instance, solution),
                             fallback.__name__)
            self.info |= {"warm_start": best.source, "warm_start_objective": best.objective}
        if best is not None:
            self.offer(best.solution, best.objective)
        return best

    def offer(self, solution, objective: int | None = None) -> bool:
        """Keep ``solution`` when it beats the incumbent (``objective``: recomputed when not
        given); the caller has validated it. Returns whether it was kept."""
        if solution is None:
            return False
        if objective is None:
            objective = self.spec.objective(self.instance, solution)
        if self.objective is not None and objective >= self.objective:
            return False
        self.solution, self.objective = solution, objective
        self.trajectory.record(objective, self.bound)
        return True

    def raise_bound(self, bound: int | None) -> None:
        """A proven lower bound (kept when it is higher than the one known)."""
        if bound is not None and (self.bound is None or bound > self.bound):
            self.bound = bound
            self.trajectory.record(self.objective, bound)

    def meets_bound(self) -> bool:
        return (self.objective is not None and self.bound is not None
                and self.objective <= self.bound)

    def out_of_time(self) -> bool:
        """Whether the budget is spent (then ``info["stopped"]`` says so)."""
        if self.budget.exhausted():
            self.info["stopped"] = STOPPED
            return True
        return False

    def outcome(self, *, proven: bool = False, infeasible: bool = False) -> SolverOutcome:
        """The outcome: the incumbent, OPTIMAL when ``proven`` (a solver's exact proof that it
        is optimal) or when it meets the bound; INFEASIBLE when ``infeasible`` was proven."""
        if infeasible and self.solution is None:
            return SolverOutcome(Status.INFEASIBLE, None, None, self.solver, self.version,
                                 self.trajectory.as_tuple(), self.info)
        status = status_for(self.objective, self.bound, proven)
        best_bound = self.objective if status is Status.OPTIMAL else self.bound
        if status is Status.OPTIMAL:
            self.info.pop("stopped", None)
        self.trajectory.record(self.objective, best_bound)
        return SolverOutcome(status, self.solution, best_bound, self.solver, self.version,
                             self.trajectory.as_tuple(), self.info)

    def finished(self, proof: str) -> SolverOutcome:
        """The outcome when the incumbent meets the bound before any model ran."""
        self.info["proof"] = proof
        return self.outcome()
