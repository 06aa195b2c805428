"""FlexNN's preload-aware planner and the trivial baselines (methods ``flexnn``, ``no_preload``).

FlexNN (Li et al., MobiCom'24, "FlexNN: Efficient and Adaptive DNN Inference on Memory-
Constrained Edge Devices", §3.3.2 and Algorithm 1) plans one memory buffer of the budget's size
(step 2, pinning, is not in the paper; optplan adds it):

1. activations first, alternately at the bottom and at the top end of the buffer (a layer's
   input and output end up at opposite ends, the middle stays free for weights);
2. pinned weights (resident for the whole run) where loading dominates, stacked at the top of
   the buffer (a range resident at every step can always move there), the rest below them;
3. per layer in execution order, its weights, each with the *earliest* preload step within the
   window at which it fits, then the layer's scratch buffers; if the layer's scratch no longer
   fits, the layer falls back to loading its weights at the layer itself (no preload);
   a layer that does not fit even then makes the planner report ``INFEASIBLE`` (it is a
   heuristic: a smarter placement may exist).

"Loading dominates" where a layer waits for its weights' loads. The planner then tries to pin,
among the weights loaded up to the first such wait, the one with the longest load; it re-plans
and keeps the pin when the latency does not grow (a pin never slows the loader, it only takes
memory), else it never tries that weight again. It stops when no layer waits or every
candidate was tried: at most two plans per weight.
Every placement is lowest-fit (highest-fit at the top end), so the planner is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optplan.preload.model import PlanEntry, PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_decisions, schedule
from optplan.registry import register

__all__ = ["flexnn", "no_preload", "pin_all", "plan_from_decisions", "Memory", "stalled_prefix"]

FLEXNN_REFERENCE = "Li et al., MobiCom'24 (FlexNN), preload-aware planning"


@dataclass
class Memory:
    """Placed blocks ``(first_step, last_step, low, high)`` inside ``[0, budget)``."""

    budget: int | None
    blocks: list = field(default_factory=list)

    def _gaps(self, first: int, last: int) -> list[tuple[int, int]]:
        """Free address ranges over the steps ``[first, last]``, bottom up."""
        busy = sorted((low, high) for f, l, low, high in self.blocks
                      if f <= last and first <= l)
        gaps, cursor = [], 0
        for low, high in busy:
            if low > cursor:
                gaps.append((cursor, low))
            cursor = max(cursor, high)
        gaps.append((cursor, self.budget if self.budget is not None else float("inf")))
        return gaps

    def lowest_fit(self, first: int, last: int, size: int) -> int | None:
        for low, high in self._gaps(first, last):
            if high - low >= size:
                return low
        return None

    def highest_fit(self, first: int, last: int, size: int) -> int | None:
        for low, high in reversed(self._gaps(first, last)):
            if high - low >= size:
                return int(high - size)
        return None

    def place(self, first: int, last: int, offset: int, size: int) -> None:
        self.blocks.append((first, last, offset, offset + size))


def _earliest_fitting_step(memory: Memory, earliest: int, layer: int, size: int) -> int | None:
    """The earliest step ``p`` in ``[earliest, layer]`` with room on ``[p, layer]``.

    Room on ``[p, layer]`` implies room on every shorter ``[p', layer]``, so a binary search
    finds it."""
    if memory.lowest_fit(layer, layer, size) is None:
        return None
    low, high = earliest, layer
    while low < high:
        middle = (low + high) // 2
        if memory.lowest_fit(middle, layer, size) is None:
            low = middle + 1
        else:
            high = middle
    return low


def plan_from_decisions(instance: PreloadInstance, offsets: dict[int, int],
                        decisions: dict[int, int | None]) -> PreloadPlan:
    """A :class:`PreloadPlan` with its latency and peak computed by the simulator's timing."""
    entries = []
    for index, tensor in enumerate(instance.tensors):
        if tensor.is_weight:
            step = decisions[index]
            entries.append(PlanEntry(tensor.id, offsets[index], step, pinned=step is None))
        else:
            entries.append(PlanEntry(tensor.id, offsets[index]))
    latency = schedule(instance, decisions).latency_us
    peak = max((offsets[i] + t.size for i, t in enumerate(instance.tensors)), default=0)
    return PreloadPlan(tuple(entries), latency, peak)


def _place_activations(instance: PreloadInstance, memory: Memory, offsets: dict) -> bool:
    """Activations by first step, alternately at the bottom and the top end (lowest fit only
    when the budget is unlimited)."""
    activations = sorted((i for i, t in enumerate(instance.tensors) if t.kind == "activation"),
                         key=lambda i: (instance.tensors[i].first_op, instance.tensors[i].id))
    for position, index in enumerate(activations):
        tensor = instance.tensors[index]
        ends = [memory.lowest_fit, memory.highest_fit]
        if memory.budget is None:
            ends = ends[:1]
        elif position % 2:
            ends.reverse()
        for fit in ends:
            offset = fit(tensor.first_op, tensor.last_op, tensor.size)
            if offset is not None:
                break
        else:
            return False
        memory.place(tensor.first_op, tensor.last_op, offset, tensor.size)
        offsets[index] = offset
    return True


def _plan(instance: PreloadInstance, pinned: list[int], *, preload: bool) -> PreloadPlan | None:
    """One pass of the planner with the given pinned weights (``None``: it found no room)."""
    tensors = instance.tensors
    offsets: dict[int, int] = {}
    decisions: dict[int, int | None] = {}
    pinned_bytes = sum(tensors[i].size for i in pinned)
    if instance.budget is not None and pinned_bytes > instance.budget:
        return None
    # Pinned weights are stacked at the top of the buffer, everything else plans below them.
    below = None if instance.budget is None else instance.budget - pinned_bytes
    memory = Memory(below)
    if not _place_activations(instance, memory, offsets):
        return None
    pinned_set = set(pinned)
    weights_of: dict[int, list[int]] = {}
    scratch_of: dict[int, list[int]] = {}
    for index, tensor in enumerate(tensors):
        if tensor.is_weight and index not in pinned_set:
            weights_of.setdefault(tensor.layer, []).append(index)
        elif tensor.kind == "scratch":
            scratch_of.setdefault(tensor.first_op, []).append(index)
    for layer in range(instance.num_layers):
        weights = sorted(weights_of.get(layer, []), key=lambda i: tensors[i].id)
        scratch = sorted(scratch_of.get(layer, []), key=lambda i: tensors[i].id)
        attempts = (True, False) if preload else (False,)
        for with_preload in attempts:
            saved = len(memory.blocks)
            if _place_layer(instance, memory, weights, scratch, offsets, decisions,
                            with_preload):
                break
            del memory.blocks[saved:]
        else:
            return None
    top = below if below is not None else max(
        (offsets[i] + tensors[i].size for i in offsets), default=0)
    for index in pinned:
        offsets[index], decisions[index] = top, None
        top += tensors[index].size
    return plan_from_decisions(instance, offsets, decisions)


def _place_layer(instance, memory, weights, scratch, offsets, decisions, with_preload) -> bool:
    tensors = instance.tensors
    for index in weights:
        tensor = tensors[index]
        step = tensor.layer
        if with_preload:
            step = _earliest_fitting_step(memory, instance.earliest_preload(index), tensor.layer,
                                          tensor.size)
            if step is None:
                return False
        offset = memory.lowest_fit(step, tensor.layer, tensor.size)
        if offset is None:
            return False
        memory.place(step, tensor.layer, offset, tensor.size)
        offsets[index], decisions[index] = offset, step
    for index in scratch:
        tensor = tensors[index]
        offset = memory.lowest_fit(tensor.first_op, tensor.last_op, tensor.size)
        if offset is None:
            return False
        memory.place(tensor.first_op, tensor.last_op, offset, tensor.size)
        offsets[index] = offset
    return True


def stalled_prefix(instance: PreloadInstance, plan: PreloadPlan) -> list[int]:
    """The loaded weights up to the first one whose layer waits for it (empty: no stall)."""
    decisions = plan_decisions(instance, plan)
    timing = schedule(instance, decisions)
    loaded = []
    for index in instance.load_order:
        if decisions[index] is None:
            continue
        loaded.append(index)
        layer = instance.tensors[index].layer
        previous_end = timing.layer_end[layer - 1] if layer else 0
        if timing.loads[index][1] > previous_end:
            return loaded
    return []


def pin_all(instance: PreloadInstance) -> PreloadPlan | None:
    """The unlimited-memory baseline: every weight pinned, lowest-fit placement. Its latency is
    the latency lower bound; ``None`` when it does not fit the budget."""
    weights = [i for i, t in enumerate(instance.tensors) if t.is_weight]
    return _plan(instance, weights, preload=False)


@register("flexnn", "preload", kind="heuristic", input="records",
          reference=FLEXNN_REFERENCE)
def flexnn(instance: PreloadInstance, *, pinning: bool = True) -> PreloadPlan | None:
    """FlexNN's planner at ``instance.budget`` (see the module docstring).

    Parameters
    ----------
    instance : PreloadInstance
        With ``budget`` (``None``: unlimited memory, every weight is pinned).
    pinning : bool
        Try pinning the weights whose loading dominates (default); ``False`` never pins.

    Returns
    -------
    PreloadPlan or None
        ``None`` when the planner cannot place some layer (reported as ``INFEASIBLE``).
    """
    if instance.budget is None:
        return pin_all(instance)
    best = _plan(instance, [], preload=True)
    if best is None or not pinning:
        return best
    pinned: list[int] = []
    rejected: set[int] = set()
    while True:
        candidates = [i for i in stalled_prefix(instance, best) if i not in rejected]
        if not candidates:
            return best
        choice = max(candidates, key=lambda i: (instance.tensors[i].load_us,
                                                instance.tensors[i].size, instance.tensors[i].id))
        plan = _plan(instance, pinned + [choice], preload=True)
        if plan is not None and plan.latency_us <= best.latency_us:
            best, pinned = plan, pinned + [choice]
        else:
            rejected.add(choice)


@register("no_preload", "preload", kind="heuristic", input="records",
          reference="baseline: every weight loaded at its own layer, nothing pinned")
def no_preload(instance: PreloadInstance) -> PreloadPlan | None:
    """The no-preload baseline: every weight loads at its own layer, activations as FlexNN
    places them; ``None`` when that does not fit the budget."""
    return _plan(instance, [], preload=False)
