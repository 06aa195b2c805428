"""Lower bounds of preload-aware planning (``docs/problems.md``).

* Latency: with unlimited memory every weight can be pinned, so no layer ever waits for a load
  and the latency is the sum of the compute times. No plan does better, since ``E_l >= E_{l-1}
  + c_l``. This is also the latency of the "unlimited memory" baseline.
* Budget: at every step ``l`` the activations and scratch live at ``l`` and *all* weights of
  layer ``l`` (pinned or preloaded, a weight is resident at its own layer) must be in memory.
  The maximum of that breadth over the steps bounds every feasible budget; the minimum feasible
  budget itself is the optimal arena of the plan that preloads nothing (every other decision
  only lengthens residence intervals), see :func:`optplan.preload.pareto.minimum_budget`.
"""

from __future__ import annotations

from optplan.preload.model import PreloadInstance
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["latency_lower_bound", "budget_lower_bound", "must_live_breadths", "preload_bound"]


def latency_lower_bound(instance: PreloadInstance) -> int:
    """The unlimited-memory latency: the sum of the layers' compute times (µs)."""
    return sum(instance.compute_us)


def must_live_breadths(instance: PreloadInstance) -> list[int]:
    """Per step, the bytes that are resident at that step under every plan."""
    breadth = [0] * instance.num_layers
    for tensor in instance.tensors:
        for step in range(tensor.first_op, tensor.last_op + 1):
            breadth[step] += tensor.size
    return breadth


def budget_lower_bound(instance: PreloadInstance) -> int:
    """The largest must-live breadth: no budget below it admits a plan."""
    return max(must_live_breadths(instance), default=0)


@register("lower_bound", "preload", kind="bound",
          reference="unlimited-memory latency (sum of the compute times)")
def preload_bound(instance: PreloadInstance) -> SolverOutcome:
    """The latency lower bound as a method (no plan, status UNKNOWN; ``INFEASIBLE`` when the
    budget is below the must-live bound)."""
    if instance.budget is not None and instance.budget < budget_lower_bound(instance):
        return SolverOutcome(Status.INFEASIBLE, None, None, "combinatorial")
    return SolverOutcome(Status.UNKNOWN, None, latency_lower_bound(instance), "combinatorial")
