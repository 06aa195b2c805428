"""What the exact preload models share: decision options, horizons, pre-checks, packings.

Decision options of weight ``w`` (layer ``l_w``): a preload step ``p`` in
``P_w = [max(0, l_w - window), l_w]``, or pinned. Both exact models use one binary per option
(:math:`y_{w,p}`, :math:`b_w`) with exactly one chosen, so that "layer ``p_w - 1`` has ended"
becomes ``LS_w >= E_{p-1}`` enforced by :math:`y_{w,p}`.
"""

from __future__ import annotations

from optplan.exact.run import ExactRun
from optplan.preload.bounds import budget_lower_bound, latency_lower_bound
from optplan.preload.flexnn import pin_all, plan_from_decisions
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import memory_intervals, plan_decisions
from optplan.preload.slicing import sliced_budget_lower_bound
from optplan.result import SolverOutcome

__all__ = ["preload_options", "horizon", "compacted_offsets", "pinned_on_top",
           "trivial_outcome", "start_latency"]


def preload_options(instance: PreloadInstance, index: int) -> range:
    """The preload steps weight ``index`` may take."""
    return range(instance.earliest_preload(index), instance.tensors[index].layer + 1)


def horizon(instance: PreloadInstance) -> int:
    """An upper bound on every time of every plan: all compute plus all loads."""
    return sum(instance.compute_us) + sum(t.load_us for t in instance.tensors if t.is_weight)


def trivial_outcome(run: ExactRun, *, menu=None) -> SolverOutcome | None:
    """The outcomes of objective ``latency`` that need no search: an unlimited budget (pin
    everything: the latency bound is met), a budget below what must be resident at once
    (proven infeasible; with a slicing ``menu``, under every layer slicing from it,
    :func:`~optplan.preload.slicing.sliced_budget_lower_bound`)."""
    instance = run.instance
    if instance.budget is None:
        run.raise_bound(latency_lower_bound(instance))
        run.offer(pin_all(instance))
        return run.finished("unlimited memory: every weight pinned meets the latency bound")
    needed = (budget_lower_bound(instance) if menu is None
              else sliced_budget_lower_bound(instance, menu))
    if instance.budget < needed:
        run.info["proof"] = (f"budget {instance.budget} below the must-live bound {needed}"
                             + ("" if menu is None else " under every layer slicing"))
        return run.outcome(infeasible=True)
    return None


def start_latency(run: ExactRun, warm_start, initial_solution,
                  check_range) -> SolverOutcome | None:
    """The start every exact method of objective ``latency`` without slicing shares: the
    outcomes that need no search (:func:`trivial_outcome`), ``check_range(instance,
    budget)``, the latency bound, the warm start. Returns the outcome when no search is
    needed. (:func:`~optplan.preload.sliced_grid.start_sliced` is the same with slicing.)"""
    run.info["objective"] = "latency"
    done = trivial_outcome(run)
    if done is not None:
        return done
    check_range(run.instance, run.instance.budget)
    run.raise_bound(latency_lower_bound(run.instance))
    run.start(warm_start, initial_solution)
    return None


def compacted_offsets(instance: PreloadInstance, decisions: dict[int, int | None],
                      offsets: dict[int, float]) -> dict[int, int]:
    """Offsets pushed down in order of the given ones: each tensor lands right above the
    highest tensor placed before it that shares a step with it.

    The result is a valid packing whose offsets are sums of sizes, and no tensor moves up
    (by induction, when the given offsets are a valid packing)."""
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
