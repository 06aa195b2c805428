"""Brute-force oracles of the free-order problems for tiny graphs (the cross-check reference).

They share no model with the other methods: every topological order of the graph is
enumerated (networkx), its peak recomputed by the validator from the importers' lifetimes,
and for ``schedule-offsets`` every order's records are packed by the fixed-order brute-force
offsets oracle (:func:`optplan.exact.brute_force.brute_force_offsets`); the joint optimum
is the least of those optima. ``OPTIMAL`` is a proof by enumeration.
"""

from __future__ import annotations

from optplan import __version__
from optplan.errors import InputError
from optplan.exact.run import ExactRun
from optplan.registry import register
from optplan.result import SolverOutcome
from optplan.schedule.driver import no_solver_params
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


def _run(instance, problem: str, *, time_limit, workers, seed, warm_start, initial_solution,
         solver_params: dict) -> ExactRun:
    no_solver_params(SOLVER, solver_params)
    run = ExactRun(instance, problem, solver=SOLVER, version=__version__,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    run.start(warm_start, initial_solution)
    return run


def _finished(run: ExactRun, count: int) -> SolverOutcome:
    run.info["orders"] = count
    run.raise_bound(run.objective)   # every order was tried
    return run.finished("enumeration of every topological order")


@register("brute_force", "schedule", kind="exact",
          reference="enumeration of every topological order")
def brute_force_schedule(instance: ScheduleInstance, *, time_limit=None, workers=None,
                         seed=None, warm_start=False, initial_solution=None,
                         max_orders: int = MAX_ORDERS, **solver_params) -> SolverOutcome:
    """The least peak over every topological order (at most :data:`MAX_OPS` ops)."""
    run = _run(instance, "schedule", time_limit=time_limit, workers=workers, seed=seed,
               warm_start=warm_start, initial_solution=initial_solution,
               solver_params=solver_params)
    count = 0
    for count, order in enumerate(topological_orders(instance, max_orders), start=1):
        run.offer(ScheduleSolution(order), peak_of(instance, order))
    return _finished(run, count)


@register("brute_force", "schedule-offsets", kind="exact",
          reference="enumeration of every topological order, each packed by the fixed-order "
                    "brute force")
def brute_force_schedule_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                                 seed=None, warm_start=False, initial_solution=None,
                                 max_orders: int = MAX_ORDERS,
                                 **solver_params) -> SolverOutcome:
    """The least arena over every topological order, each packed optimally by the
    fixed-order brute force (at most 8 tensors with memory)."""
    from optplan.exact.brute_force import brute_force_offsets

    run = _run(instance, "schedule-offsets", time_limit=time_limit, workers=workers,
               seed=seed, warm_start=warm_start, initial_solution=initial_solution,
               solver_params=solver_params)
    count = 0
    for count, order in enumerate(topological_orders(instance, max_orders), start=1):
        records = induced_instance(instance, order)
        packed = brute_force_offsets(records)
        run.offer(ScheduleSolution(order, {record.id: offset for record, offset in
                                           zip(records.records, packed.solution.offsets)}))
    return _finished(run, count)
