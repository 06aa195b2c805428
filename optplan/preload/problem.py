"""Preload-aware planning on the problem table (``--problem preload``, ``docs/problems.md``).

The instance is a :class:`~optplan.preload.model.PreloadInstance` (its JSON in
:mod:`optplan.preload.formats`), the solution a :class:`~optplan.preload.model.PreloadPlan`
(a plan JSON file), the validator the simulator's :func:`~optplan.preload.simulate.validate_plan`
and the objective the latency in µs. ``budget`` (bytes) is the one instance option.
"""

from __future__ import annotations

from optplan.preload.bounds import latency_lower_bound
from optplan.preload.formats import read_plan, read_preload_instance, write_plan
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_latency, validate_plan
from optplan.problems import ProblemSpec, register_problem

__all__ = ["PRELOAD"]


def _at_budget(instance: PreloadInstance, **options) -> PreloadInstance:
    """The instance at the given ``budget`` (when one is given; else the file's own)."""
    return instance.with_budget(options["budget"]) if "budget" in options else instance


PRELOAD = register_problem(ProblemSpec(
    name="preload", title="preload-aware planning",
    instance_type=PreloadInstance, solution_type=PreloadPlan,
    load_instance=read_preload_instance,
    read_solution=lambda instance, path: read_plan(path), write_solution=write_plan,
    validate=validate_plan, lower_bound=latency_lower_bound, objective=plan_latency,
    objective_name="latency", unit="µs", options=("budget",), prepare=_at_budget,
    solution_suffix=".json", warm_start=("flexnn", "no_preload"),
    packages=("optplan.preload",)))
