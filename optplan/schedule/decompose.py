"""Where the graph splits: segments between the ops that every order runs at a fixed step.

An op that is an ancestor or a descendant of every other op (an articulation point of the
series composition: the stem convolutions, the concatenations closing Inception blocks, the
adds closing residual blocks) runs at the same step in every topological order — after all
its ancestors, before all its descendants. Between two such *cut ops* lies a segment whose
ops occupy a fixed range of steps, in any order among themselves.

The peak splits exactly along segments: what is live at a step of segment ``j`` depends only
on the order inside ``j``. A buffer produced before the segment and read in it is live from
the segment's first step to its last reader there (an input of the segment), one produced in
the segment and read after it (or a graph output) lives to the segment's end (an output), one
that only passes through is live throughout. So a segment is a :class:`Dag` of its own, the
peak of an order is the largest peak of its segments' sub-orders, and the optimum is the
largest segment optimum (the series decomposition of Kayaaslan et al. 2018).

Before that, *trailing* ops are set aside: an op that nothing depends on and that reads and
writes only graph outputs (the counter updates of batch normalisation in training graphs) can
run last in some optimal order — later, it keeps its outputs for fewer steps, and the last
steps hold every graph output in any order. And *free* ops are set aside: an op that writes
no memory and reads only buffers that an op depending on it (and writing memory) reads
later (a view of a weight used in the backward pass) changes no lifetime wherever it runs,
and just before its first such dependant it holds nothing more than the step before. Without
them, training graphs split too.
"""

from __future__ import annotations

from dataclasses import dataclass

from optplan.schedule.dag import Dag

__all__ = ["Segment", "Reduction", "cut_ops", "segments", "trailing_ops", "free_ops",
           "reduce_dag", "expand"]


@dataclass(frozen=True)
class Segment:
    """``ops``: the parent's op indices (engine order), which are ``dag``'s ops ``0..``."""

    ops: tuple[int, ...]
    dag: Dag


def cut_ops(dag: Dag) -> list[int]:
    """The ops comparable with every other op, in step order."""
    n = dag.num_ops
    cuts = [v for v in range(n)
            if dag.ancestors[v].bit_count() + dag.descendants[v].bit_count() == n - 1]
    return sorted(cuts, key=lambda v: dag.ancestors[v].bit_count())


def segments(dag: Dag) -> list[Segment]:
    """The segments of ``dag`` in step order: the ops between consecutive cut ops, and every
    cut op alone (see the module docstring)."""
    cuts = cut_ops(dag)
    cut_rank = {v: rank for rank, v in enumerate(cuts)}
    cut_mask = sum(1 << v for v in cuts)
    groups: dict[int, list[int]] = {}
    for v in range(dag.num_ops):
        if v in cut_rank:
            key = 2 * cut_rank[v] + 1
        else:
            key = 2 * (dag.ancestors[v] & cut_mask).bit_count()
        groups.setdefault(key, []).append(v)
    members = [groups[key] for key in sorted(groups)]
    segment_of = {v: j for j, ops in enumerate(members) for v in ops}
    last = len(members) - 1
    buffer_segments = []
    for b in range(dag.num_buffers):
        produced = segment_of[dag.producer[b]] if dag.producer[b] >= 0 else -1
        if dag.output[b]:
            needed = last + 1
        else:
            needed = max((segment_of[c] for c in dag.consumers[b]), default=max(produced, 0))
        buffer_segments.append((produced, needed))
    return [_segment(dag, ops, j, j == last, buffer_segments) for j, ops in enumerate(members)]


def _segment(dag: Dag, ops: list[int], j: int, is_last: bool, buffer_segments) -> Segment:
    local = {v: k for k, v in enumerate(ops)}
    buffers = [b for b, (produced, needed) in enumerate(buffer_segments)
               if produced <= j <= needed]
    number = {b: k for k, b in enumerate(buffers)}
    output = tuple(buffer_segments[b][1] > j for b in buffers)
    pairs = tuple((local[v], number[a], number[b]) for v, a, b in dag.pairs
                  if v in local and (is_last or not output[number[a]]))
    sub = Dag(op_names=tuple(dag.op_names[v] for v in ops),
              preds=tuple(tuple(local[u] for u in dag.preds[v] if u in local) for v in ops),
              buffer_names=tuple(dag.buffer_names[b] for b in buffers),
              sizes=tuple(dag.sizes[b] for b in buffers),
              producer=tuple(local[dag.producer[b]] if buffer_segments[b][0] == j else -1
                             for b in buffers),
              consumers=tuple(tuple(local[c] for c in dag.consumers[b] if c in local)
                              for b in buffers),
              output=output, pairs=pairs)
    return Segment(tuple(ops), sub)


def _first_step_only(dag: Dag) -> bool:
    """Whether a graph input is neither read nor an output (it is live at step 0 only)."""
    return any(dag.producer[b] < 0 and not dag.consumers[b] and not dag.output[b]
               for b in range(dag.num_buffers))


def trailing_ops(dag: Dag) -> list[int]:
    """The ops that may run last (see the module docstring): no successors, and every buffer
    they read or write is a graph output. None when which ops run first or last matters
    otherwise: a graph input that is neither read nor an output (live at the first step
    only), or an in-place pair on a graph output (usable at the last step only)."""
    if _first_step_only(dag) or any(dag.output[a] for _, a, _ in dag.pairs):
        return []
    return [v for v in range(dag.num_ops)
            if not dag.succs[v]
            and all(dag.output[b] for b in dag.read[v])
            and all(dag.output[b] for b in dag.produced[v])]


def free_ops(dag: Dag) -> list[int]:
    """The ops whose step does not matter (see the module docstring): they write no memory,
    some descendant writes memory (and is no trailing op), and every buffer they read is
    read later by such a descendant. None when a graph input is neither read nor an output
    (live at the first step only, so which op runs first matters)."""
    if _first_step_only(dag):
        return []
    trailing = set(trailing_ops(dag))
    writers = sum(1 << v for v in range(dag.num_ops) if dag.produced[v] and v not in trailing)
    return [v for v in range(dag.num_ops)
            if not dag.produced[v] and v not in trailing and dag.descendants[v] & writers
            and all(any((writers & dag.descendants[v]) >> c & 1 for c in dag.consumers[b])
                    for b in dag.read[v])]


@dataclass(frozen=True)
class Reduction:
    """``dag`` without its free and trailing ops: ``kept`` (the other ops, renumbered, with
    the dependencies that ran through free ops), ``free`` and ``trailing`` (parent
    indices); :func:`expand` puts them back into an order of the kept ops."""

    kept: Segment
    free: tuple[int, ...]
    trailing: tuple[int, ...]


def reduce_dag(dag: Dag) -> Reduction:
    """Set the free and the trailing ops aside. The buffers only trailing ops write are
    dropped; free ops read buffers that kept ops read later and write none."""
    trailing = trailing_ops(dag)
    free = free_ops(dag)
    if not trailing and not free:
        return Reduction(Segment(tuple(range(dag.num_ops)), dag), (), ())
    skip = set(trailing) | set(free)
    ops = [v for v in range(dag.num_ops) if v not in skip]
    local = {v: k for k, v in enumerate(ops)}
    through: dict[int, set[int]] = {}   # free op -> the kept ops it depends on

    def kept_preds(v: int) -> set[int]:
        found: set[int] = set()
        for u in dag.preds[v]:
            if u in local:
                found.add(local[u])
            else:
                if u not in through:
                    through[u] = kept_preds(u)
                found |= through[u]
        return found

    buffers = [b for b in range(dag.num_buffers) if dag.producer[b] not in skip]
    number = {b: k for k, b in enumerate(buffers)}
    sub = Dag(op_names=tuple(dag.op_names[v] for v in ops),
              preds=tuple(tuple(sorted(kept_preds(v))) for v in ops),
              buffer_names=tuple(dag.buffer_names[b] for b in buffers),
              sizes=tuple(dag.sizes[b] for b in buffers),
              producer=tuple(local.get(dag.producer[b], -1) for b in buffers),
              consumers=tuple(tuple(local[c] for c in dag.consumers[b] if c in local)
                              for b in buffers),
              output=tuple(dag.output[b] for b in buffers),
              pairs=tuple((local[v], number[a], number[b]) for v, a, b in dag.pairs))
    return Reduction(Segment(tuple(ops), sub), tuple(free), tuple(trailing))


def expand(dag: Dag, reduction: Reduction, kept_order) -> list[int]:
    """An order of ``dag`` from an order of the kept ops (kept indices): every free op just
    before the first kept op that depends on it, the trailing ops last. Its peak is the kept
    order's (with the trailing ops' last steps)."""
    free_mask = sum(1 << v for v in reduction.free)
    order: list[int] = []
    for k in kept_order:
        v = reduction.kept.ops[k]
        waiting = dag.ancestors[v] & free_mask
        while waiting:
            bit = waiting & -waiting
            waiting ^= bit
            order.append(bit.bit_length() - 1)
        free_mask &= ~dag.ancestors[v]
        order.append(v)
    return order + list(reduction.trailing)
