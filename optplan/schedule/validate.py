"""The independent validator of schedules, and the objectives it recomputes.

It shares no code with the schedulers: the order is checked against the graph, and the usage
records it induces come from the importers' lifetime analysis (:func:`optplan.graph.lifetimes`
of the graph with its ops in that order), so the peak and the placement are judged exactly as
for a fixed order. Every violation carries a reason.

Peak live bytes (``schedule``): the largest sum of the sizes of the records live at one op.
With in-place pairs honoured, a pair ``(a, b)`` that meets at op ``t`` (``a.last_op ==
b.first_op == t``) lets ``b`` take ``a``'s memory there, so ``b`` is not counted at ``t``;
one source lends its memory to at most one target and a target takes at most one source's
(:func:`inplace_saving`), as in the fixed-order offsets problem, where two targets on one
source's memory would overlap.
"""

from __future__ import annotations

import enum
from dataclasses import replace

from optplan.graph.lifetimes import lifetimes
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.validate import Violation, validate_offsets

__all__ = ["ScheduleViolationKind", "inplace_saving", "order_violations", "induced_instance",
           "peak_of", "peak_objective", "arena_of", "validate_schedule",
           "validate_schedule_offsets"]


class ScheduleViolationKind(str, enum.Enum):
    UNKNOWN_OP = "unknown_op"            # a name in the order that is no op of the graph
    DUPLICATE_OP = "duplicate_op"        # an op listed twice
    MISSING_OP = "missing_op"            # an op of the graph not in the order
    NOT_TOPOLOGICAL = "not_topological"  # an op before the op producing one of its inputs
    MISSING_OFFSET = "missing_offset"    # a tensor with memory but no offset
    UNKNOWN_TENSOR = "unknown_tensor"    # an offset for a name that has no memory of its own

    def __str__(self) -> str:
        return self.value


def inplace_saving(candidates) -> int:
    """The bytes in-place pairs save at one op: the largest total target size of a matching
    of ``candidates`` ``(source, target, target_size)`` (each source and each target used at
    most once)."""
    candidates = list(candidates)
    sources = {a for a, _, _ in candidates}
    targets = {b for _, b, _ in candidates}
    if len(sources) == len(targets) == len(candidates):
        return sum(size for _, _, size in candidates)
    import networkx as nx

    graph = nx.Graph()
    for a, b, size in candidates:
        graph.add_edge(("source", a), ("target", b), weight=size)
    matching = nx.max_weight_matching(graph)
    return sum(graph.edges[u, v]["weight"] for u, v in matching)


def order_violations(instance, order) -> list[Violation]:
    """Why ``order`` is not a topological order of the instance's ops (empty when it is)."""
    graph = instance.graph
    known = {op.name: op for op in graph.ops}
    violations: list[Violation] = []
    seen: set[str] = set()
    for step, name in enumerate(order):
        if name not in known:
            violations.append(Violation(ScheduleViolationKind.UNKNOWN_OP,
                                        f"step {step}: {name!r} is not an op of the graph"))
        elif name in seen:
            violations.append(Violation(ScheduleViolationKind.DUPLICATE_OP,
                                        f"step {step}: op {name} is already at an earlier step"))
        seen.add(name)
    for name in known:
        if name not in seen:
            violations.append(Violation(ScheduleViolationKind.MISSING_OP,
                                        f"op {name} is not in the order"))
    if violations:
        return violations
    producer = {tensor: op.name for op in graph.ops for tensor in op.outputs}
    step_of = {name: step for step, name in enumerate(order)}
    for step, name in enumerate(order):
        for tensor in dict.fromkeys(known[name].inputs):
            source = producer.get(tensor)
            if source is not None and step_of[source] > step:
                violations.append(Violation(
                    ScheduleViolationKind.NOT_TOPOLOGICAL,
                    f"op {name} at step {step} reads {tensor}, which op {source} produces "
                    f"later, at step {step_of[source]}"))
    return violations


def induced_instance(instance, order) -> Instance:
    """The usage records (and, when the instance honours them, the in-place pairs) that the
    importers' lifetime analysis gives the graph run in ``order`` (a topological order)."""
    graph = instance.graph
    by_name = {op.name: op for op in graph.ops}
    reordered = replace(graph, ops=tuple(by_name[name] for name in order))
    induced = lifetimes(reordered, views=instance.views, keep_graph=False, name=instance.name)
    induced = induced.with_alignment(instance.alignment)
    return induced if instance.inplace else induced.without_inplace()


def peak_of(instance, order) -> int:
    """The peak live bytes of ``order`` (a topological order), from the induced records."""
    records = induced_instance(instance, order)
    count = instance.num_ops
    if count == 0:
        return 0
    live = [0] * (count + 1)
    for record in records.records:
        live[record.first_op] += record.size
        live[record.last_op + 1] -= record.size
    for op in range(1, count):
        live[op] += live[op - 1]
    junctions: dict[int, list] = {}
    for a, b in records.inplace_pairs:
        junctions.setdefault(records.records[a].last_op, []).append(
            (a, b, records.records[b].size))
    for op, candidates in junctions.items():
        live[op] -= inplace_saving(candidates)
    return max(live[:count])


def peak_objective(instance, solution) -> int:
    """The ``schedule`` objective of ``solution``: :func:`peak_of` its order."""
    return peak_of(instance, solution.order)


def arena_of(instance, solution) -> int:
    """``max(offset + size)`` over the tensors with memory, rounded up to the alignment."""
    records = induced_instance(instance, solution.order)
    top = max((solution.offsets.get(r.id, 0) + r.size for r in records.records), default=0)
    return round_up(top, instance.alignment)


def validate_schedule(instance, solution) -> list[Violation]:
    """Violations of ``solution`` as a ``schedule`` plan (its offsets, if any, are ignored)."""
    return order_violations(instance, solution.order)


def validate_schedule_offsets(instance, solution) -> list[Violation]:
    """Violations of ``solution`` as a ``schedule-offsets`` plan: the order, then one offset
    per tensor with memory, placed validly under the lifetimes the order induces."""
    violations = order_violations(instance, solution.order)
    if violations:
        return violations
    if solution.offsets is None:
        return [Violation(ScheduleViolationKind.MISSING_OFFSET, "the plan has no offsets")]
    records = induced_instance(instance, solution.order)
    for record in records.records:
        if record.id not in solution.offsets:
            violations.append(Violation(ScheduleViolationKind.MISSING_OFFSET,
                                        f"tensor {record.id} ({record.size} bytes) has no "
                                        "offset"))
    for name in solution.offsets:
        if name not in records.index_of:
            violations.append(Violation(ScheduleViolationKind.UNKNOWN_TENSOR,
                                        f"{name!r} is not a tensor with memory of its own"))
    if violations:
        return violations
    placed = OffsetsSolution.from_offsets(records, [solution.offsets[r.id]
                                                    for r in records.records])
    return validate_offsets(records, placed)
