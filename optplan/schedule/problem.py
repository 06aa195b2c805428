"""The free-order problems on the problem table: ``schedule`` (peak live bytes over the
topological orders of a graph) and ``schedule-offsets`` (arena over orders and placements),
see ``docs/schedule.md``.

The instance is a :class:`~optplan.schedule.model.ScheduleInstance` (a network graph, read by
:func:`~optplan.schedule.formats.load_instance`), the solution a
:class:`~optplan.schedule.model.ScheduleSolution` (a plan JSON file ``{"order": [...],
"offsets": {...}}``); ``--inplace`` honours the graph's declared in-place pairs and
``--alignment`` applies to the offsets.
"""

from __future__ import annotations

from optplan.problems import ProblemSpec, register_problem
from optplan.schedule.bounds import lower_bound, offsets_lower_bound
from optplan.schedule.formats import load_instance, read_solution, write_solution
from optplan.schedule.model import ScheduleInstance, ScheduleSolution, prepare
from optplan.schedule.validate import (arena_of, peak_objective, validate_schedule,
                                       validate_schedule_offsets)

__all__ = ["SCHEDULE", "SCHEDULE_OFFSETS"]

_COMMON = dict(instance_type=ScheduleInstance, solution_type=ScheduleSolution,
               load_instance=load_instance, read_solution=read_solution,
               write_solution=write_solution, unit="bytes",
               options=("alignment", "inplace"), prepare=prepare, solution_suffix=".json",
               warm_start=("best_list_scheduling", "original_order"),
               packages=("optplan.schedule",))

SCHEDULE = register_problem(ProblemSpec(
    name="schedule", title="free execution order (peak)", validate=validate_schedule,
    lower_bound=lower_bound, objective=peak_objective, objective_name="peak live bytes",
    **_COMMON))

SCHEDULE_OFFSETS = register_problem(ProblemSpec(
    name="schedule-offsets", title="free execution order and offsets (arena)",
    validate=validate_schedule_offsets, lower_bound=offsets_lower_bound, objective=arena_of,
    objective_name="arena size", **_COMMON))
