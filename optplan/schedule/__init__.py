"""Free execution order: ``schedule`` (least peak live bytes over the topological orders of a
graph) and ``schedule-offsets`` (least arena over the orders and the placements).

The fixed-order problems are the special case of one order; these ask what the best order
saves over the engine's (OLLA/MODeL, Steiner et al. 2023; ROAM, Shu et al. 2023). Modules:

* :mod:`~optplan.schedule.model`: the instance (a graph and its lifetime settings) and the
  solution (an order, and offsets);
* :mod:`~optplan.schedule.formats`: loading instances, reading and writing plan files;
* :mod:`~optplan.schedule.validate`: the independent validator, peak and arena;
* :mod:`~optplan.schedule.bounds`: the must-live lower bound;
* :mod:`~optplan.schedule.heuristics`: the engine's order, memory-aware list scheduling,
  the best offsets heuristic on an order;
* :mod:`~optplan.schedule.dag`, :mod:`~optplan.schedule.decompose`: the index form and the
  segments between cut ops;
* exact methods: :mod:`~optplan.schedule.dp` (dynamic program over downsets),
  :mod:`~optplan.schedule.cpsat`, :mod:`~optplan.schedule.milp`,
  :mod:`~optplan.schedule.brute_force`; their shared steps in :mod:`~optplan.schedule.driver`
  (on :class:`optplan.exact.run.ExactRun`);
* :mod:`~optplan.schedule.problem`: both problems on the problem table.
"""

from optplan.schedule.bounds import lower_bound, offsets_lower_bound
from optplan.schedule.formats import load_instance, read_solution, write_solution
from optplan.schedule.model import ScheduleInstance, ScheduleSolution, prepare, schedule_instance
from optplan.schedule.validate import (arena_of, peak_objective, peak_of, validate_schedule,
                                       validate_schedule_offsets)

__all__ = ["ScheduleInstance", "ScheduleSolution", "schedule_instance", "prepare",
           "load_instance", "read_solution", "write_solution", "validate_schedule",
           "validate_schedule_offsets", "peak_of", "peak_objective", "arena_of", "lower_bound",
           "offsets_lower_bound"]
