"""Schedule heuristics: the engine's order and memory-aware list scheduling, each followed,
for ``schedule-offsets``, by the best offsets heuristic on the records the order induces.

List scheduling (after the memory-aware list schedulers surveyed by ROAM, Shu et al. 2023,
and the greedy baselines of OLLA, Steiner et al. 2023) runs the ops one at a time; at every
step it picks, among the ready ops (all producers of their inputs done), the best by a
``priority`` and breaks ties by a named ``tie_break``:

priorities (smaller is better)
    ``net``: bytes the op leaves allocated after its step minus the bytes it frees;
    ``frees_most``: minus the bytes it frees (inputs it reads last);
    ``allocates_least``: the bytes of its outputs;
    ``step_peak``: the live bytes at its own step, then ``net``;
    ``outputs_last``: ops that keep more than they free and write a graph output (weight
    gradients, which live to the end once written) only when no other op is ready, then
    ``net``.
tie-breaks
    ``engine``: earliest in the engine order;
    ``depth_first``: the op that became ready last (stays on the current branch);
    ``breadth_first``: the op that became ready first.
"""

from __future__ import annotations

import itertools

from optplan.errors import InputError
from optplan.model import OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register
from optplan.schedule.dag import Dag, dag_of, order_names, peak
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import induced_instance, inplace_saving
from optplan.validate import validate_offsets

__all__ = ["PRIORITIES", "TIE_BREAKS", "OFFSETS_HEURISTICS", "original_order",
           "list_scheduling", "best_list_scheduling", "list_order", "best_offsets",
           "original_order_offsets", "list_scheduling_offsets", "best_list_scheduling_offsets",
           "heuristic_orders"]

_LIST_REFERENCE = "memory-aware list scheduling (ROAM, Shu et al. 2023; OLLA, Steiner et al. 2023)"

PRIORITIES = ("net", "frees_most", "allocates_least", "step_peak", "outputs_last")
TIE_BREAKS = ("engine", "depth_first", "breadth_first")
OFFSETS_HEURISTICS = ("greedy_by_size", "strip_packing_best_fit", "xla_best_fit",
                      "tflite_arena", "greedy_by_breadth", "nntrainer_v3", "best_fit",
                      "first_fit")
"""The fixed-order offsets heuristics tried on an order's records (the best valid one wins)."""


@register("original_order", "schedule", kind="heuristic", reference="the engine's order")
def original_order(instance: ScheduleInstance) -> ScheduleSolution:
    """The engine's order: the graph's ops as they are listed."""
    return ScheduleSolution(instance.op_names)


def list_order(dag: Dag, *, priority: str = "net", tie_break: str = "engine") -> list[int]:
    """Memory-aware list scheduling on ``dag`` (see the module docstring); op indices."""
    if priority not in PRIORITIES:
        raise InputError(f"unknown priority {priority!r}; valid: {', '.join(PRIORITIES)}",
                         field="priority")
    if tie_break not in TIE_BREAKS:
        raise InputError(f"unknown tie-break {tie_break!r}; valid: {', '.join(TIE_BREAKS)}",
                         field="tie_break")
    n = dag.num_ops
    remaining = [len(c) for c in dag.consumers]
    kept = [bool(dag.consumers[b]) or dag.output[b] for b in range(dag.num_buffers)]
    resident = sum(size for b, size in enumerate(dag.sizes) if dag.producer[b] < 0 and kept[b])
    first_step_only = sum(size for b, size in enumerate(dag.sizes)
                          if dag.producer[b] < 0 and not kept[b])
    waiting = [len(p) for p in dag.preds]
    counter = itertools.count()
    ready = {v: next(counter) for v in range(n) if not waiting[v]}
    order: list[int] = []
    while ready:
        step = len(order)

        def score(v: int):
            freed = sum(dag.sizes[b] for b in dag.read[v]
                        if remaining[b] == 1 and not dag.output[b])
            allocated = sum(dag.sizes[b] for b in dag.produced[v])
            left = sum(dag.sizes[b] for b in dag.produced[v] if kept[b])
            net = left - freed
            if priority == "net":
                key = (net,)
            elif priority == "frees_most":
                key = (-freed,)
            elif priority == "allocates_least":
                key = (allocated,)
            elif priority == "outputs_last":
                key = (net > 0 and any(dag.output[b] for b in dag.produced[v]), net)
            else:
                last = step == n - 1
                saving = inplace_saving((a, b, dag.sizes[b]) for a, b in dag.pairs_of[v]
                                        if remaining[a] == 1 and (last or not dag.output[a]))
                live = (resident + allocated + (first_step_only if step == 0 else 0)
                        - saving)
                key = (live, net)
            if tie_break == "engine":
                return key + (v,)
            since = ready[v]
            return key + ((-since if tie_break == "depth_first" else since), v)

        v = min(ready, key=score)
        del ready[v]
        order.append(v)
        resident += sum(dag.sizes[b] for b in dag.produced[v] if kept[b])
        for b in dag.read[v]:
            remaining[b] -= 1
            if not remaining[b] and not dag.output[b]:
                resident -= dag.sizes[b]
        for w in dag.succs[v]:
            waiting[w] -= 1
            if not waiting[w]:
                ready[w] = next(counter)
    return order


@register("list_scheduling", "schedule", kind="heuristic", reference=_LIST_REFERENCE)
def list_scheduling(instance: ScheduleInstance, *, priority: str = "net",
                    tie_break: str = "engine") -> ScheduleSolution:
    """Memory-aware list scheduling (see the module docstring)."""
    dag = dag_of(instance)
    return ScheduleSolution(order_names(dag, list_order(dag, priority=priority,
                                                        tie_break=tie_break)))


def best_offsets(instance: ScheduleInstance, solution: ScheduleSolution,
                 methods=OFFSETS_HEURISTICS) -> ScheduleSolution:
    """``solution``'s order with the best valid placement that the fixed-order offsets
    heuristics ``methods`` (registered names) find for the records it induces."""
    from optplan.registry import get_method

    records = induced_instance(instance, solution.order)
    problem = Problem.parse("offsets")
    best: OffsetsSolution | None = None
    for name in methods:
        placement = get_method(name, problem).implementations[problem](records)
        if placement is None or validate_offsets(records, placement):
            continue
        if best is None or placement.arena_size < best.arena_size:
            best = placement
    if best is None:
        raise RuntimeError(f"no offsets heuristic of {', '.join(methods)} placed "
                           f"{instance.name}")
    return ScheduleSolution(solution.order, {record.id: offset for record, offset
                                             in zip(records.records, best.offsets)})


@register("original_order", "schedule-offsets", kind="heuristic",
          reference="the engine's order, then the best offsets heuristic")
def original_order_offsets(instance: ScheduleInstance) -> ScheduleSolution:
    """The engine's order, placed by the best offsets heuristic."""
    return best_offsets(instance, original_order(instance))


@register("list_scheduling", "schedule-offsets", kind="heuristic", reference=_LIST_REFERENCE)
def list_scheduling_offsets(instance: ScheduleInstance, *, priority: str = "net",
                            tie_break: str = "engine") -> ScheduleSolution:
    """Memory-aware list scheduling, placed by the best offsets heuristic."""
    return best_offsets(instance, list_scheduling(instance, priority=priority,
                                                  tie_break=tie_break))


def heuristic_orders(dag: Dag) -> list[tuple[str, list[int]]]:
    """Every heuristic order of ``dag`` by name, the engine order first, best peak first
    after it (``list_scheduling(priority, tie_break)`` for every combination)."""
    found = [("original_order", list(dag.topological))]
    for priority, tie_break in itertools.product(PRIORITIES, TIE_BREAKS):
        found.append((f"list_scheduling(priority={priority}, tie_break={tie_break})",
                      list_order(dag, priority=priority, tie_break=tie_break)))
    return found[:1] + sorted(found[1:], key=lambda item: peak(dag, item[1]))


@register("best_list_scheduling", "schedule", kind="heuristic", reference=_LIST_REFERENCE)
def best_list_scheduling(instance: ScheduleInstance) -> ScheduleSolution:
    """The least-peak order of list scheduling over every priority and tie-break (the
    engine order when none is better)."""
    dag = dag_of(instance)
    orders = heuristic_orders(dag)
    best = min(orders, key=lambda item: peak(dag, item[1]))
    return ScheduleSolution(order_names(dag, best[1]))


@register("best_list_scheduling", "schedule-offsets", kind="heuristic",
          reference=_LIST_REFERENCE)
def best_list_scheduling_offsets(instance: ScheduleInstance) -> ScheduleSolution:
    """:func:`best_list_scheduling`'s order, placed by the best offsets heuristic."""
    return best_offsets(instance, best_list_scheduling(instance))
