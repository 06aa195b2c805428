"""The independent simulator and validator of preload plans (``docs/problems.md``).

It shares no code with any planner or solver: it reads the decisions of a plan, replays the
loader and the layers with the timing recurrences, rebuilds every tensor's memory interval and
reports a reason for every violation.

Timing (FlexNN, MobiCom'24, as fixed by the issue): one loader loads the non-pinned weights one
after another in the order ``(l_w, id)``. With ``E_{-1} = 0``::

    LS_w = max(LE_prev, E_{p_w - 1}),   LE_w = LS_w + d_w
    S_l  = max(E_{l-1}, max LE_w over the non-pinned weights of l),   E_l = S_l + c_l

and the latency is ``E_{L-1}``. A weight without a ``preload_op`` that is not pinned is loaded
at its own layer (``p_w = l_w``).

A plan with ``slicing`` decisions is checked on the instance they make
(:func:`optplan.preload.slicing.apply_slicing`, the problem's definition of slicing).
"""

from __future__ import annotations

from dataclasses import dataclass

from optplan.errors import InputError
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.slicing import apply_slicing
from optplan.validate import Violation, ViolationKind

__all__ = ["Schedule", "schedule", "plan_decisions", "plan_latency", "plan_peak",
           "memory_intervals", "validate_plan", "planned_instance"]


@dataclass(frozen=True)
class Schedule:
    """Layer start/end times and the loader's (start, end) per non-pinned weight, in µs."""

    layer_start: tuple[int, ...]
    layer_end: tuple[int, ...]
    loads: dict  # tensor index -> (load start, load end)

    @property
    def latency_us(self) -> int:
        return self.layer_end[-1]


def schedule(instance: PreloadInstance, preload_steps: dict[int, int | None]) -> Schedule:
    """Replay the timing recurrences.

    ``preload_steps`` maps every weight index to its preload step, or ``None`` when pinned
    (a weight that is absent is loaded at its own layer). O(L + W).
    """
    tensors = instance.tensors
    compute = instance.compute_us
    layer_start = [0] * instance.num_layers
    layer_end = [0] * instance.num_layers
    ready = [0] * instance.num_layers       # max LE over the weights of each layer
    loads: dict[int, tuple[int, int]] = {}
    pending = [i for i in instance.load_order if preload_steps.get(i, tensors[i].layer)
               is not None]
    # Loads waiting for layer p-1 to end: process layers in order and start each load as soon
    # as both the loader and its preload step allow; loads are strictly sequential.
    loader_free = 0
    next_load = 0
    for layer in range(instance.num_layers):
        # Every load preloaded at a step <= layer may have started by now; the weights of this
        # layer need their loads finished before the layer starts.
        while next_load < len(pending):
            index = pending[next_load]
            step = preload_steps.get(index, tensors[index].layer)
            if step > layer:
                break  # needs E_{step-1}, which is not known yet (step - 1 >= layer)
            previous_end = 0 if step == 0 else layer_end[step - 1]
            start = max(loader_free, previous_end)
            loader_free = start + tensors[index].load_us
            loads[index] = (start, loader_free)
            owner = tensors[index].layer
            ready[owner] = max(ready[owner], loader_free)
            next_load += 1
        previous = 0 if layer == 0 else layer_end[layer - 1]
        layer_start[layer] = max(previous, ready[layer])
        layer_end[layer] = layer_start[layer] + compute[layer]
    return Schedule(tuple(layer_start), tuple(layer_end), loads)


def plan_decisions(instance: PreloadInstance, plan: PreloadPlan) -> dict[int, int | None]:
    """Weight index -> preload step (``None`` when pinned), as the plan states them."""
    decisions: dict[int, int | None] = {}
    for index, tensor in enumerate(instance.tensors):
        if not tensor.is_weight:
            continue
        entry = plan.by_id.get(tensor.id)
        if entry is None:
            decisions[index] = tensor.layer
        elif entry.pinned:
            decisions[index] = None
        else:
            decisions[index] = tensor.layer if entry.preload_op is None else entry.preload_op
    return decisions


def _checked_plan(plan) -> PreloadPlan:
    if not isinstance(plan, PreloadPlan):
        raise InputError(f"expected a preload plan, got {type(plan).__name__}", field="plan")
    return plan


def planned_instance(instance: PreloadInstance, plan: PreloadPlan) -> PreloadInstance:
    """The instance the plan's entries are for: ``instance`` sliced as the plan decides (an
    :class:`InputError` naming the field when the slicing does not apply)."""
    return apply_slicing(instance, plan.slicing) if plan.slicing else instance


def plan_latency(instance: PreloadInstance, plan: PreloadPlan) -> int:
    """The latency ``E_{L-1}`` in µs, recomputed from the plan's decisions (the stated
    ``latency_us`` is not trusted). Preload steps outside ``[0, l_w]`` are clamped to it
    (the validator reports them)."""
    return _latency(planned_instance(instance, _checked_plan(plan)), plan)


def _latency(instance: PreloadInstance, plan: PreloadPlan) -> int:
    decisions = plan_decisions(instance, plan)
    for index, step in decisions.items():
        if step is not None:
            decisions[index] = min(max(step, 0), instance.tensors[index].layer)
    return schedule(instance, decisions).latency_us


def memory_intervals(instance: PreloadInstance,
                     decisions: dict[int, int | None]) -> list[tuple[int, int]]:
    """Every tensor's closed step interval of residence under ``decisions``."""
    last_layer = instance.num_layers - 1
    intervals = []
    for index, tensor in enumerate(instance.tensors):
        if not tensor.is_weight:
            intervals.append((tensor.first_op, tensor.last_op))
            continue
        step = decisions.get(index, tensor.layer)
        intervals.append((0, last_layer) if step is None else (step, tensor.layer))
    return intervals


def plan_peak(instance: PreloadInstance, plan: PreloadPlan) -> int:
    """``max(offset + size)`` over the plan's entries for the instance's tensors (0 if none)."""
    return _peak(planned_instance(instance, _checked_plan(plan)), plan)


def _peak(instance: PreloadInstance, plan: PreloadPlan) -> int:
    by_id = plan.by_id
    return max((by_id[t.id].offset + t.size for t in instance.tensors if t.id in by_id),
               default=0)


def validate_plan(instance: PreloadInstance, plan) -> list[Violation]:
    """Every violation of ``plan`` on ``instance`` (empty when valid).

    Checks: a slicing that applies to the instance (``BAD_PRELOAD``; the rest is checked on
    the sliced instance), one entry per tensor (``MISSING_TENSOR``), decisions only on weights
    and preload steps in ``[max(0, l_w - window), l_w]`` (``BAD_PRELOAD``), offsets ``>= 0``
    (``NEGATIVE_OFFSET``), ``offset + size <= budget`` (``OVER_BUDGET``), no memory overlap of
    tensors whose residence intervals intersect (``OVERLAP``), and the stated latency and peak
    against the recomputed ones.
    """
    if not isinstance(plan, PreloadPlan):
        return [Violation(ViolationKind.WRONG_TYPE,
                          f"expected a preload plan, got {type(plan).__name__}")]
    try:
        instance = planned_instance(instance, plan)
    except InputError as error:
        return [Violation(ViolationKind.BAD_PRELOAD, f"the plan's slicing does not apply: "
                                                     f"{error}")]
    violations: list[Violation] = []
    tensors = instance.tensors
    known = instance.index_of
    counts: dict[str, int] = {}
    for entry in plan.entries:
        counts[entry.id] = counts.get(entry.id, 0) + 1
        if entry.id not in known:
            violations.append(Violation(ViolationKind.MISSING_TENSOR,
                                        f"entry for unknown tensor {entry.id!r}"))
    for tensor in tensors:
        if counts.get(tensor.id, 0) != 1:
            violations.append(Violation(ViolationKind.MISSING_TENSOR,
                                        f"tensor {tensor.id} has {counts.get(tensor.id, 0)} "
                                        "entries, expected 1"))
    by_id = plan.by_id
    for index, tensor in enumerate(tensors):
        entry = by_id.get(tensor.id)
        if entry is None:
            continue
        if not tensor.is_weight:
            if entry.pinned or entry.preload_op is not None:
                violations.append(Violation(ViolationKind.BAD_PRELOAD,
                                            f"{tensor.kind} {tensor.id} is not a weight but has "
                                            "a preload decision"))
            continue
        if entry.pinned and entry.preload_op is not None:
            violations.append(Violation(ViolationKind.BAD_PRELOAD,
                                        f"weight {tensor.id} is pinned and has preload_op "
                                        f"{entry.preload_op}"))
        elif not entry.pinned and entry.preload_op is not None:
            earliest = instance.earliest_preload(index)
            if not earliest <= entry.preload_op <= tensor.layer:
                violations.append(Violation(
                    ViolationKind.BAD_PRELOAD,
                    f"weight {tensor.id} of layer {tensor.layer} preloaded at step "
                    f"{entry.preload_op}, outside [{earliest}, {tensor.layer}]"))
    for tensor in tensors:
        entry = by_id.get(tensor.id)
        if entry is None:
            continue
        if entry.offset < 0:
            violations.append(Violation(ViolationKind.NEGATIVE_OFFSET,
                                        f"tensor {tensor.id} at offset {entry.offset}"))
        if instance.budget is not None and entry.offset + tensor.size > instance.budget:
            violations.append(Violation(ViolationKind.OVER_BUDGET,
                                        f"tensor {tensor.id} at [{entry.offset}, "
                                        f"{entry.offset + tensor.size}) exceeds the budget "
                                        f"{instance.budget}"))
    decisions = plan_decisions(instance, plan)
    intervals = memory_intervals(instance, decisions)
    present = [i for i, t in enumerate(tensors) if t.id in by_id]
    order = sorted(present, key=lambda i: (intervals[i][0], i))
    active: list[int] = []
    for index in order:
        first, last = intervals[index]
        active = [j for j in active if intervals[j][1] >= first]
        low = by_id[tensors[index].id].offset
        high = low + tensors[index].size
        for j in active:
            other_low = by_id[tensors[j].id].offset
            other_high = other_low + tensors[j].size
            if low < other_high and other_low < high:
                violations.append(Violation(
                    ViolationKind.OVERLAP,
                    f"tensors {tensors[j].id} steps {list(intervals[j])} at [{other_low}, "
                    f"{other_high}) and {tensors[index].id} steps [{first}, {last}] at "
                    f"[{low}, {high}) overlap"))
        active.append(index)
    latency = _latency(instance, plan)   # the sliced instance: slice once
    if plan.latency_us != latency:
        violations.append(Violation(ViolationKind.LATENCY_MISSTATED,
                                    f"stated latency {plan.latency_us} µs but the simulator "
                                    f"gives {latency} µs"))
    peak = _peak(instance, plan)
    if plan.peak != peak:
        violations.append(Violation(ViolationKind.PEAK_MISSTATED,
                                    f"stated peak {plan.peak} but max(offset + size) is {peak}"))
    return violations
