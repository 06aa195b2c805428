"""Preload-aware planning (MISSION.md §1.4, issue 8; after FlexNN, MobiCom'24).

The names below are the interface :mod:`optplan.solve`, :mod:`optplan.validate`,
:mod:`optplan.bounds` and the CLI use for ``--problem preload``.
"""

import optplan.preload.flexnn_sliced  # noqa: F401  (registers the method flexnn_sliced)
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
