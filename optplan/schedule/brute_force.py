"""Brute-force oracles of the free-order problems for tiny graphs (the cross-check reference).

They share no model with the other methods: every topological order of the graph is
enumerated (networkx), its peak recomputed by the validator from the importers' lifetimes,
and for ``schedule-offsets`` every order's records are packed by the fixed-order brute-force
offsets oracle (:func:`optplan.exact.brute_force.brute_force_offsets`); the joint optimum
is the least of those optima. ``OPTIMAL`` is a proof by enumeration.
"""

from __future__ import annotations

from optplan.errors import InputError
from optplan.exact._common import solver_options
from optplan.result import SolverOutcome, Status
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import induced_instance, peak_of

__all__ = ["MAX_OPS", "MAX_ORDERS", "topological_orders", "brute_force_schedule",
           "brute_force_schedule_offsets"]

SOLVER = "brute_force"
MAX_OPS = 10
MAX_ORDERS = 50_000
"""Orders enumerated at most: more is an :class:`InputError` (not an oracle-sized graph)."""


def topological_orders(instance: ScheduleInstance, max_orders: int = MAX_ORDERS):
    """Every topological order of the instance's ops (names), by networkx."""
    import networkx as nx

    if instance.num_ops > MAX_OPS:
        raise InputError(f"brute force handles at most {MAX_OPS} ops, the graph has "
                         f"{instance.num_ops}", field="ops")
    digraph = nx.DiGraph()
    producer = {}
    for op in instance.graph.ops:
        digraph.add_node(op.name)
        producer.update(dict.fromkeys(op.outputs, op.name))
    for op in instance.graph.ops:
        for tensor in op.inputs:
            if tensor in producer:
                digraph.add_edge(producer[tensor], op.name)
    for count, order in enumerate(nx.all_topological_sorts(digraph)):
        if count == max_orders:
            raise InputError(f"more than {max_orders} topological orders", field="ops")
        yield tuple(order)


def _outcome(solution, objective, time_limit, workers, seed, orders) -> SolverOutcome:
    info = solver_options(time_limit, workers, seed, 1) | {"orders": orders}
    return SolverOutcome(Status.OPTIMAL, solution, objective, SOLVER, "",
                         ((0.0, objective, objective),), info)


def brute_force_schedule(instance: ScheduleInstance, *, time_limit=None, workers=None,
                         seed=None, max_orders: int = MAX_ORDERS) -> SolverOutcome:
    """The least peak over every topological order (at most :data:`MAX_OPS` ops)."""
    best, best_order, count = None, (), 0
    for count, order in enumerate(topological_orders(instance, max_orders), start=1):
        value = peak_of(instance, order)
        if best is None or value < best:
            best, best_order = value, order
    return _outcome(ScheduleSolution(best_order), best or 0, time_limit, workers, seed, count)


def brute_force_schedule_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                                 seed=None, max_orders: int = MAX_ORDERS) -> SolverOutcome:
    """The least arena over every topological order, each packed optimally by the
    fixed-order brute force (at most 8 tensors with memory)."""
    from optplan.exact.brute_force import brute_force_offsets

    best, best_solution, count = None, ScheduleSolution((), {}), 0
    for count, order in enumerate(topological_orders(instance, max_orders), start=1):
        records = induced_instance(instance, order)
        packed = brute_force_offsets(records)
        if best is None or packed.best_bound < best:
            best = packed.best_bound
            best_solution = ScheduleSolution(order, {record.id: offset for record, offset in
                                                     zip(records.records,
                                                         packed.solution.offsets)})
    return _outcome(best_solution, best or 0, time_limit, workers, seed, count)
