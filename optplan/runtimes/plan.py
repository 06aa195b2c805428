"""One planning step shared by the runtime integrations: the runtime's usage records in, a
validated offsets plan out, never larger than the runtime's own plan.

:func:`plan_offsets` solves the instance with any registered offsets method
(:func:`optplan.solve`), checks the answer with optplan's independent validator, and compares it
with the runtime planner's plan on the same records. A plan that violates the instance is
refused (:class:`PlanRefusedError`, one line naming the first violation) before any runtime sees
it: neither ExecuTorch nor TFLite Micro checks overlaps, they would run it and compute wrong
outputs. A plan larger than the runtime's own (or no plan at all, e.g. a solver stopped before
its first solution) gives way to the runtime's plan, and the log says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from optplan.errors import InputError
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.result import Result
from optplan.solve import solve
from optplan.validate import validate

__all__ = ["PlanRefusedError", "PlannedOffsets", "checked_plan", "plan_offsets",
           "RuntimeComparison"]

log = logging.getLogger("optplan.runtimes")


class PlanRefusedError(InputError):
    """An offsets plan that violates its instance (overlap, misalignment...): never handed to a
    runtime."""


def checked_plan(instance: Instance, offsets, *, planner: str) -> OffsetsSolution:
    """``offsets`` as a solution of ``instance``, or :class:`PlanRefusedError` naming the first
    violation that optplan's validator finds."""
    solution = OffsetsSolution.from_offsets(instance, offsets)
    violations = validate(instance, Problem.OFFSETS, solution)
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise PlanRefusedError(f"{planner}'s plan is refused: {violations[0]}{more}",
                               field=instance.name)
    return solution


@dataclass(frozen=True)
class PlannedOffsets:
    """The plan handed to a runtime and how it was chosen.

    ``source`` is ``"optplan"`` or the runtime planner's name (its plan was kept: optplan's was
    not smaller, or there was none); ``result`` is optplan's solver run either way.
    """

    solution: OffsetsSolution
    runtime_solution: OffsetsSolution
    source: str
    result: Result

    @property
    def arena_size(self) -> int:
        return self.solution.arena_size


def plan_offsets(instance: Instance, runtime_offsets, *, method: str, runtime: str,
                 time_limit: float | None = None, **params) -> PlannedOffsets:
    """optplan's validated plan of ``instance``, or the runtime's when optplan's is not smaller.

    Parameters
    ----------
    instance : Instance
        The runtime's usage records (its lifetimes, its aligned sizes, its alignment).
    runtime_offsets : sequence of int
        The runtime planner's offsets for the same records. They are validated too: a violation
        means the records do not describe what the runtime plans (a lifetime bug).
    method : str
        Any registered offsets method (``optplan methods``).
    runtime : str
        The runtime planner's name, for messages and ``source``.
    time_limit, **params
        Passed to :func:`optplan.solve` (``workers``, ``seed``, solver parameters).
    """
    runtime_solution = checked_plan(instance, runtime_offsets, planner=runtime)
    result = solve(instance, method, Problem.OFFSETS, time_limit=time_limit, **params)
    if result.solution is None:
        log.warning("%s: %s found no plan (%s); keeping %s's %d bytes", instance.name, method,
                    result.status.value, runtime, runtime_solution.arena_size)
        return PlannedOffsets(runtime_solution, runtime_solution, runtime, result)
    solution = checked_plan(instance, result.solution.offsets, planner=method)
    if solution.arena_size > runtime_solution.arena_size:
        log.warning("%s: %s's plan (%d bytes) is larger than %s's (%d bytes); keeping %s's",
                    instance.name, method, solution.arena_size, runtime,
                    runtime_solution.arena_size, runtime)
        return PlannedOffsets(runtime_solution, runtime_solution, runtime, result)
    return PlannedOffsets(solution, runtime_solution, "optplan", result)


@dataclass(frozen=True)
class RuntimeComparison:
    """One network in one runtime: the runtime's planner against optplan's, both measured in
    the runtime. ``summary()`` gives the ``--json`` keys of ``optplan executorch``/``tflm``."""

    network: str
    runtime: str
    runtime_planner_bytes: int
    optplan_bytes: int
    lower_bound: int
    status: str
    outputs_equal: bool
    max_abs_diff: float
    source: str = "optplan"
    method: str = ""
    time_limit: float | None = None
    wall_time_s: float = 0.0
    inputs: int = 0

    def summary(self) -> dict:
        return {"network": self.network, "runtime": self.runtime,
                "runtime_planner_bytes": self.runtime_planner_bytes,
                "optplan_bytes": self.optplan_bytes, "lower_bound": self.lower_bound,
                "status": self.status, "outputs_equal": self.outputs_equal,
                "max_abs_diff": self.max_abs_diff}
