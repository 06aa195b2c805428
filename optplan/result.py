"""Statuses, what an exact method hands back, and the complete :class:`Result` of a run."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field

from optplan.model import Solution
from optplan.problems import Problem

__all__ = ["Status", "SolverOutcome", "Result", "relative_gap"]


class Status(str, enum.Enum):
    OPTIMAL = "OPTIMAL"        # proven by the solver
    FEASIBLE = "FEASIBLE"      # a solution, optimality not proven
    INFEASIBLE = "INFEASIBLE"  # proven that no solution exists (or a heuristic found none)
    UNKNOWN = "UNKNOWN"        # no solution and no proof

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SolverOutcome:
    """What an exact method returns; heuristics return a bare solution (or ``None``).

    ``best_bound`` is the best *proven* lower bound on the objective, in the objective's units.
    ``trajectory`` holds ``(seconds, incumbent, bound)`` samples of the anytime curve.
    """

    status: Status
    solution: Solution | None
    best_bound: int | None = None
    solver: str = ""
    solver_version: str = ""
    trajectory: tuple[tuple[float, int | None, int | None], ...] = ()
    info: dict = field(default_factory=dict)


def relative_gap(objective: int | None, bound: int | None) -> float | None:
    """``(objective - bound) / bound``: how far above the bound; 0 when they meet.

    ``None`` when it is undefined: no objective, no bound, or a bound of 0 below a positive
    objective (never an infinity, which JSON cannot carry).
    """
    if objective is None or bound is None:
        return None
    if objective == bound:
        return 0.0
    if bound <= 0:
        return None
    return (objective - bound) / bound


@dataclass(frozen=True)
class Result:
    """One method run on one instance: everything needed to trust and re-create it."""

    instance: str
    problem: Problem
    method: str
    status: Status
    objective: int | None
    lower_bound: int
    best_bound: int | None
    gap: float | None
    wall_time_s: float
    valid: bool | None
    violations: tuple[str, ...] = ()
    solution: Solution | None = field(default=None, repr=False)
    params: dict = field(default_factory=dict)
    solver: str = ""
    solver_version: str = ""
    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    inplace: bool = False
    trajectory: tuple[tuple[float, int | None, int | None], ...] = field(default=(), repr=False)
    info: dict = field(default_factory=dict, repr=False)

    def summary(self) -> dict:
        """The CLI's ``--json`` keys, in their binding order."""
        return {"problem": self.problem.value, "method": self.method, "status": self.status.value,
                "objective": self.objective, "lower_bound": self.lower_bound,
                "best_bound": self.best_bound, "gap": self.gap,
                "wall_time_s": round(self.wall_time_s, 6), "valid": self.valid}

    def to_dict(self) -> dict:
        """Every field as JSON-ready data (the solution as plain lists)."""
        data = asdict(self)
        data["problem"] = self.problem.value
        data["status"] = self.status.value
        data["trajectory"] = [list(sample) for sample in self.trajectory]
        data["violations"] = list(self.violations)
        data["solution"] = None if self.solution is None else asdict(self.solution)
        return data
