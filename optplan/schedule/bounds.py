"""Lower bounds of the free-order problems that hold for every topological order.

*Must-live bytes* of op ``v``: the buffers live at ``v``'s step in every order — those ``v``
reads or produces, and those produced before ``v`` in every order (by an ancestor of ``v``,
or graph inputs) and still needed after it in every order (read by a descendant of ``v``, or
graph outputs) — minus the most that ``v``'s in-place pairs could save (pairs whose source no
descendant of ``v`` reads). Every order runs ``v`` once, so its peak is at least the largest
must-live bytes of any op (the schedule counterpart of OLLA's per-node memory lower bound,
Steiner et al. 2023). And the last step of every order holds every graph output (training
graphs: every weight gradient). A relaxation bound (the LP of the time-indexed model) is
:func:`optplan.schedule.milp.relaxation_bound`.
"""

from __future__ import annotations

from optplan.model import round_up
from optplan.registry import register
from optplan.result import SolverOutcome, Status
from optplan.schedule.dag import Dag, dag_of
from optplan.schedule.model import ScheduleInstance
from optplan.schedule.validate import inplace_saving

__all__ = ["must_live_bytes", "last_step_bytes", "must_live_bound", "lower_bound",
           "offsets_lower_bound"]


def must_live_bytes(dag: Dag) -> list[int]:
    """Per op, the bytes live at its step in every topological order (see the module
    docstring). O(ops x buffers) bit operations."""
    n = dag.num_ops
    consumer_masks = [sum(1 << c for c in consumers) for consumers in dag.consumers]
    result = []
    for v in range(n):
        ancestors, descendants = dag.ancestors[v], dag.descendants[v]
        later = descendants | (1 << v)
        live = 0
        for b, size in enumerate(dag.sizes):
            p = dag.producer[b]
            if p == v or (consumer_masks[b] >> v) & 1:
                live += size
            elif ((p < 0 or (ancestors >> p) & 1)
                  and (dag.output[b] or consumer_masks[b] & later)):
                live += size
        possible = [(a, b, dag.sizes[b]) for a, b in dag.pairs_of[v]
                    if not consumer_masks[a] & descendants
                    and (not dag.output[a] or not descendants)]
        result.append(live - inplace_saving(possible))
    return result


def last_step_bytes(dag: Dag) -> int:
    """The bytes live at the last step of every order: every graph output, less the most an
    op that may run last (one without descendants) saves by writing over graph outputs."""
    outputs = sum(size for b, size in enumerate(dag.sizes) if dag.output[b])
    saving = max((inplace_saving((a, b, dag.sizes[b]) for a, b in dag.pairs_of[v]
                                 if dag.output[a])
                  for v in range(dag.num_ops) if not dag.descendants[v]), default=0)
    return outputs - saving if dag.num_ops else 0


def must_live_bound(dag: Dag) -> int:
    """A lower bound on every order's peak: the largest must-live bytes of any op, or the
    bytes of the last step when larger."""
    return max(max(must_live_bytes(dag), default=0), last_step_bytes(dag))


def lower_bound(instance: ScheduleInstance) -> int:
    """Lower bound of ``schedule`` (peak live bytes): :func:`must_live_bound`."""
    return must_live_bound(dag_of(instance))


def offsets_lower_bound(instance: ScheduleInstance) -> int:
    """Lower bound of ``schedule-offsets`` (arena): the peak bound rounded up to the
    alignment (an arena holds every order's live bytes at every step)."""
    return round_up(lower_bound(instance), instance.alignment)


@register("lower_bound", "schedule", kind="bound",
          reference="must-live bytes of every op and of the last step")
def schedule_bound_method(instance: ScheduleInstance) -> SolverOutcome:
    """The must-live bound as a method (no solution, status UNKNOWN)."""
    return SolverOutcome(Status.UNKNOWN, None, best_bound=lower_bound(instance),
                         solver="combinatorial")


@register("lower_bound", "schedule-offsets", kind="bound",
          reference="must-live bytes, rounded up to the alignment")
def schedule_offsets_bound_method(instance: ScheduleInstance) -> SolverOutcome:
    """The arena bound as a method (no solution, status UNKNOWN)."""
    return SolverOutcome(Status.UNKNOWN, None, best_bound=offsets_lower_bound(instance),
                         solver="combinatorial")
