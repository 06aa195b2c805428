"""Preload-aware planning (``docs/problems.md``; after FlexNN, MobiCom'24).

The problem's entry on the problem table is :mod:`optplan.preload.problem`; its methods
(``flexnn``, ``no_preload``, ``cpsat``, ``milp_highs``, ``brute_force``, ``lower_bound``)
register themselves from the modules of this package. The names below are its public API.
"""

from optplan.preload.bounds import budget_lower_bound, latency_lower_bound
from optplan.preload.formats import (instance_from_dict, instance_to_dict, plan_from_dict,
                                     plan_to_dict, read_plan, read_preload_instance,
                                     write_plan, write_preload_instance)
from optplan.preload.model import Layer, PlanEntry, PreloadInstance, PreloadPlan, PreloadTensor
from optplan.preload.simulate import plan_latency, plan_peak, schedule, validate_plan

__all__ = ["Layer", "PreloadTensor", "PreloadInstance", "PlanEntry", "PreloadPlan",
           "plan_latency", "plan_peak", "schedule", "validate_plan", "latency_lower_bound",
           "budget_lower_bound", "read_preload_instance", "write_preload_instance",
           "instance_from_dict", "instance_to_dict", "read_plan", "write_plan", "plan_to_dict",
           "plan_from_dict"]
