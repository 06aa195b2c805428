"""The minimum feasible budget with layer slicing allowed: a heuristic search, and brute-force
oracles over slicings for tiny instances (issue 21).

For a fixed slicing the minimum feasible budget is the tightest packing of the plan that
preloads nothing (every preload or pin only lengthens residence intervals, see
:mod:`optplan.preload.bounds`): an offsets problem on the sliced instance's records.

:func:`minimum_budget_sliced` (heuristic) brackets the minimum over every slicing from the menu:

* lower bound: :func:`~optplan.preload.slicing.sliced_budget_lower_bound` (exact: a layer's
  choice changes the breadth at its own sub-layers only, so each layer's least peak is needed);
* upper bound: the *frugal* slicing (each layer's option of least peak; among equals the one
  with fewer sub-layers, then the faster kernel), packed by the offsets heuristics
  ``best_fit``, ``greedy_by_size`` and ``xla_best_fit``; the best packing is a valid plan
  (nothing preloaded) at that budget. When both meet, the minimum is proven.

:func:`brute_force_sliced` and :func:`brute_force_sliced_minimum_budget` try every slicing of
:func:`~optplan.preload.slicing.all_slicings` and hand each sliced instance to the preload
brute force (:mod:`optplan.preload.brute_force`, at most 8 tensors after slicing): the oracles
of the exact slicing tests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from optplan.heuristics.fit import best_fit
from optplan.heuristics.tflite_offsets import greedy_by_size_offsets
from optplan.heuristics.xla import xla_best_fit
from optplan.model import Instance
from optplan.preload.brute_force import brute_force_minimum_budget, brute_force_preload
from optplan.preload.flexnn import plan_from_decisions
from optplan.preload.model import LayerSlicing, PreloadInstance, PreloadPlan
from optplan.preload.slicing import (SLICE_MENU, all_slicings, apply_slicing, is_identity,
                                     layer_peak, resident_activations, sliced_budget_lower_bound,
                                     slicing_options)
from optplan.result import SolverOutcome, Status

__all__ = ["SlicedBudget", "frugal_slicing", "packed_plan", "minimum_budget_sliced",
           "brute_force_sliced", "brute_force_sliced_minimum_budget"]

_PACKERS = (best_fit, greedy_by_size_offsets, xla_best_fit)


@dataclass(frozen=True)
class SlicedBudget:
    """A bracket of the minimum feasible budget: ``lower_bound <= minimum <= budget``, and a
    plan (nothing preloaded, with its slicing) that fits ``budget``."""

    lower_bound: int
    budget: int
    plan: PreloadPlan

    @property
    def proven(self) -> bool:
        return self.lower_bound == self.budget


def frugal_slicing(instance: PreloadInstance, menu=SLICE_MENU) -> tuple[LayerSlicing, ...]:
    """Per layer the option of least peak (ties: fewer sub-layers, then the faster kernel, as
    :func:`~optplan.preload.slicing.slicing_options` orders them); only those that change
    their layer."""
    activations = resident_activations(instance)
    choices = []
    for layer in range(instance.num_layers):
        options = slicing_options(instance, layer, menu)
        best = min(options, key=lambda o: (layer_peak(instance, o, activations), o.slices))
        if not is_identity(instance, best):
            choices.append(best)
    return tuple(choices)


def packed_plan(instance: PreloadInstance, slicing=()) -> PreloadPlan:
    """The plan that preloads nothing, its offsets the best of the offsets heuristics on the
    sliced instance's records; its ``peak`` is a feasible budget."""
    sliced = apply_slicing(instance, slicing)
    records = Instance.from_tuples([(t.first_op, t.last_op, t.size) for t in sliced.tensors])
    best = min((packer(records) for packer in _PACKERS), key=lambda s: s.arena_size)
    decisions = {i: t.layer for i, t in enumerate(sliced.tensors) if t.is_weight}
    plan = plan_from_decisions(sliced, dict(enumerate(best.offsets)), decisions)
    return replace(plan, slicing=tuple(slicing))


def minimum_budget_sliced(instance: PreloadInstance, menu=SLICE_MENU) -> SlicedBudget:
    """The bracket of the module docstring (``menu=(1,)``: without slicing)."""
    plan = packed_plan(instance, frugal_slicing(instance, menu))
    return SlicedBudget(sliced_budget_lower_bound(instance, menu), plan.peak, plan)


def brute_force_sliced(instance: PreloadInstance, menu=SLICE_MENU) -> SolverOutcome:
    """The minimum latency at ``instance.budget`` over every slicing from ``menu`` and every
    plan (exhaustive; the first optimum in the order of :func:`all_slicings`)."""
    best = None
    for slicing in all_slicings(instance, menu):
        outcome = brute_force_preload(apply_slicing(instance, slicing))
        if outcome.status is Status.OPTIMAL and (best is None or
                                                 outcome.best_bound < best.best_bound):
            best = replace(outcome, solution=replace(outcome.solution, slicing=slicing))
    if best is None:
        return SolverOutcome(Status.INFEASIBLE, None, None, "brute_force")
    return best


def brute_force_sliced_minimum_budget(instance: PreloadInstance,
                                      latency_target: int | None = None,
                                      menu=SLICE_MENU) -> int | None:
    """The smallest budget at which latency <= ``latency_target`` (``None``: any latency)
    with any slicing from ``menu``, by exhaustive search."""
    budgets = (brute_force_minimum_budget(apply_slicing(instance, slicing), latency_target)
               for slicing in all_slicings(instance, menu))
    return min((b for b in budgets if b is not None), default=None)
