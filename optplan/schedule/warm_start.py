"""Warm starts of the exact schedule methods: candidate orders and plans, the best first.

``warm_start`` follows the exact methods' contract: ``True`` tries the built-in heuristics,
``False`` only the engine order, and a sequence gives the candidates explicitly — each a
:class:`~optplan.schedule.model.ScheduleSolution` or a heuristic ``f(instance) ->
ScheduleSolution``. ``initial_solution`` is one more candidate. The engine order is always
one, so there is always a start; candidates that do not validate are skipped.
"""

from __future__ import annotations

from optplan.schedule.dag import Dag, order_indices, order_names, peak
from optplan.schedule.heuristics import best_offsets, heuristic_orders
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import (arena_of, order_violations,
                                       validate_schedule_offsets)

__all__ = ["OFFSETS_ORDERS", "candidate_solutions", "start_order", "start_plan"]

OFFSETS_ORDERS = 3
"""For ``schedule-offsets``, the offsets heuristics place this many distinct orders of least
peak (and the engine order)."""


def candidate_solutions(instance: ScheduleInstance, warm_start, initial_solution
                        ) -> list[tuple[str, ScheduleSolution]]:
    """The caller's candidates as ``(name, solution)``: ``warm_start`` items (when it is a
    sequence) and ``initial_solution``."""
    found = []
    if warm_start not in (True, False, None):
        for number, item in enumerate(warm_start):
            if callable(item):
                found.append((getattr(item, "__name__", f"warm_start[{number}]"),
                              item(instance)))
            else:
                found.append((f"warm_start[{number}]", item))
    if initial_solution is not None:
        found.append(("initial_solution", initial_solution))
    return [(name, solution) for name, solution in found
            if solution is not None and not order_violations(instance, solution.order)]


def _heuristic_orders(dag: Dag, warm_start) -> list[tuple[str, list[int]]]:
    if warm_start is True:
        return heuristic_orders(dag)
    return [("original_order", list(dag.topological))]


def start_order(instance: ScheduleInstance, dag: Dag, warm_start=True, initial_solution=None
                ) -> tuple[str, list[int], int]:
    """The least-peak candidate order: ``(name, order, peak)``."""
    orders = _heuristic_orders(dag, warm_start) + [
        (name, order_indices(dag, solution.order))
        for name, solution in candidate_solutions(instance, warm_start, initial_solution)]
    peaks = [peak(dag, order) for _, order in orders]
    best = min(range(len(orders)), key=lambda k: peaks[k])
    return orders[best][0], orders[best][1], peaks[best]


def start_plan(instance: ScheduleInstance, dag: Dag, warm_start=True, initial_solution=None,
               orders=()) -> tuple[str, ScheduleSolution, int]:
    """The least-arena candidate plan: ``(name, solution, arena)``. The engine order and the
    :data:`OFFSETS_ORDERS` distinct least-peak candidate orders (the heuristics', ``orders``,
    the caller's plans without offsets) are placed by
    :func:`~optplan.schedule.heuristics.best_offsets`; the caller's plans with offsets are
    taken as they are."""
    candidates = _heuristic_orders(dag, warm_start) + list(orders)
    plans: list[tuple[str, ScheduleSolution]] = []
    for name, solution in candidate_solutions(instance, warm_start, initial_solution):
        if solution.offsets is None:
            candidates.append((name, order_indices(dag, solution.order)))
        elif not validate_schedule_offsets(instance, solution):
            plans.append((name, solution))
    chosen: dict[tuple, str] = {tuple(candidates[0][1]): candidates[0][0]}
    for name, order in sorted(candidates[1:], key=lambda item: peak(dag, item[1])):
        if len(chosen) > OFFSETS_ORDERS:
            break
        chosen.setdefault(tuple(order), name)
    for order, name in chosen.items():
        plans.append((name, best_offsets(instance, ScheduleSolution(order_names(dag, order)))))
    arenas = [arena_of(instance, solution) for _, solution in plans]
    best = min(range(len(plans)), key=lambda k: arenas[k])
    return plans[best][0], plans[best][1], arenas[best]
