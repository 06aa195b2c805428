"""What the exact preload models share: decision options, horizons, warm starts, pre-checks.

Decision options of weight ``w`` (layer ``l_w``): a preload step ``p`` in
``P_w = [max(0, l_w - window), l_w]``, or pinned. Both exact models use one binary per option
(:math:`y_{w,p}`, :math:`b_w`) with exactly one chosen, so that "layer ``p_w - 1`` has ended"
becomes ``LS_w >= E_{p-1}`` enforced by :math:`y_{w,p}`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from optplan.errors import InputError
from optplan.preload.bounds import budget_lower_bound, latency_lower_bound
from optplan.preload.flexnn import flexnn, no_preload, pin_all
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_decisions
from optplan.result import SolverOutcome, Status

__all__ = ["preload_options", "horizon", "warm_start", "compacted_offsets", "pinned_on_top",
           "Clock", "Trajectory", "trivial_outcome"]


def preload_options(instance: PreloadInstance, index: int) -> range:
    """The preload steps weight ``index`` may take."""
    return range(instance.earliest_preload(index), instance.tensors[index].layer + 1)


def horizon(instance: PreloadInstance) -> int:
    """An upper bound on every time of every plan: all compute plus all loads."""
    return sum(instance.compute_us) + sum(t.load_us for t in instance.tensors if t.is_weight)




def warm_start(instance: PreloadInstance) -> PreloadPlan | None:
    """The better (lower latency) of FlexNN and the no-preload baseline, or ``None``."""
    plans = [plan for plan in (flexnn(instance), no_preload(instance)) if plan is not None]
    return min(plans, key=lambda plan: plan.latency_us, default=None)




class Clock:
    def __init__(self, time_limit: float | None):
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"must be > 0, got {time_limit!r}", field="time_limit")
        self.time_limit = time_limit
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        if self.time_limit is None:
            return None
        return max(0.05, self.time_limit - self.elapsed())


@dataclass
class Trajectory:
    """``(seconds, incumbent, bound)`` samples, kept monotone."""

    clock: Clock
    samples: list = field(default_factory=list)

    def record(self, incumbent: int | None, bound: int | None) -> None:
        if self.samples:
            _, last_incumbent, last_bound = self.samples[-1]
            if last_incumbent is not None and incumbent is not None:
                incumbent = min(incumbent, last_incumbent)
            elif incumbent is None:
                incumbent = last_incumbent
            if last_bound is not None and bound is not None:
                bound = max(bound, last_bound)
            elif bound is None:
                bound = last_bound
            if (incumbent, bound) == (last_incumbent, last_bound):
                return
        self.samples.append((round(self.clock.elapsed(), 6), incumbent, bound))


def trivial_outcome(instance: PreloadInstance, solver: str, version: str,
                    info: dict) -> SolverOutcome | None:
    """The outcomes of objective ``latency`` that need no search: an unlimited budget (pin
    everything: the latency bound is met), a budget below the must-live bound (proven
    infeasible)."""
    bound = latency_lower_bound(instance)
    if instance.budget is None:
        plan = pin_all(instance)
        info = info | {"proof": "unlimited memory: every weight pinned meets the latency bound"}
        return SolverOutcome(Status.OPTIMAL, plan, bound, solver, version,
                             ((0.0, plan.latency_us, bound),), info)
    if instance.budget < budget_lower_bound(instance):
        info = info | {"proof": f"budget {instance.budget} below the must-live bound "
                                f"{budget_lower_bound(instance)}"}
        return SolverOutcome(Status.INFEASIBLE, None, None, solver, version, (), info)
    return None


def compacted_offsets(instance: PreloadInstance, decisions: dict[int, int | None],
                      offsets: dict[int, float]) -> dict[int, int]:
    """Offsets pushed down in order of the given ones: each tensor lands right above the
    highest tensor placed before it that shares a step with it.

    The result is a valid packing whose offsets are sums of sizes, and no tensor moves up
    (by induction, when the given offsets are a valid packing)."""
    from optplan.preload.simulate import memory_intervals

    tensors = instance.tensors
    intervals = memory_intervals(instance, decisions)
    order = sorted(range(len(tensors)), key=lambda i: (offsets[i], i))
    result: dict[int, int] = {}
    for index in order:
        first, last = intervals[index]
        result[index] = max((result[j] + tensors[j].size for j in result
                             if intervals[j][0] <= last and first <= intervals[j][1]),
                            default=0)
    return result


def pinned_on_top(instance: PreloadInstance, plan: PreloadPlan) -> PreloadPlan:
    """The same plan with its pinned weights stacked above everything else.

    A pinned weight is resident at every step, so its address range is free of every other
    tensor at every step: removing it and lowering everything above it by its size keeps the
    packing valid. Every plan therefore has an equivalent one (same decisions, same or lower
    peak) with the pinned weights on top, which is what the exact CP-SAT model assumes.
    """
    from optplan.preload.flexnn import plan_from_decisions

    decisions = plan_decisions(instance, plan)
    pinned = [i for i, step in decisions.items() if step is None]
    offsets = {}
    for index, tensor in enumerate(instance.tensors):
        offset = plan.by_id[tensor.id].offset
        if index not in pinned:
            offsets[index] = offset - sum(instance.tensors[j].size for j in pinned
                                          if plan.by_id[instance.tensors[j].id].offset < offset)
    top = max((offsets[i] + instance.tensors[i].size for i in offsets), default=0)
    for index in sorted(pinned, key=lambda i: instance.tensors[i].id):
        offsets[index] = top
        top += instance.tensors[index].size
    return plan_from_decisions(instance, offsets, decisions)
