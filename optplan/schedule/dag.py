"""The index form of a schedule instance that the algorithms work on: ops, dependencies and
memory buffers, with the lifetimes and live bytes that an execution order induces.

A *buffer* is what :func:`optplan.graph.lifetimes` makes a usage record of: a tensor with a
nonzero size (under ``views="alias"`` a view's root, read through all its views). Buffer
``b`` is produced by op ``producer[b]`` (``-1``: a graph input, live from the first step), read
by ``consumers[b]`` and, when ``output[b]``, live to the last step. Under an order with op
``v`` at step ``pos[v]``, ``b`` lives on ``[first, last]`` with ``first = pos[producer]`` (0
for inputs) and ``last`` the step of its last reader (the last step for outputs; ``first`` when
nobody reads it) — exactly the importers' lifetimes.

In-place pairs ``(op, source, target)`` (kept only when the instance honours them and the
target is no larger than the source) save the target's bytes at the op's step when the op is
the source's last reader; see :func:`optplan.schedule.validate.inplace_saving`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from optplan.graph.lifetimes import view_bases
from optplan.schedule.model import ScheduleInstance
from optplan.schedule.validate import inplace_saving

__all__ = ["Dag", "dag_of", "lifetimes_of", "step_breadths", "peak", "order_names",
           "order_indices"]


@dataclass(frozen=True)
class Dag:
    """Ops ``0..n-1`` (engine order), their direct predecessors, buffers and in-place pairs."""

    op_names: tuple[str, ...]
    preds: tuple[tuple[int, ...], ...]
    buffer_names: tuple[str, ...]
    sizes: tuple[int, ...]
    producer: tuple[int, ...]
    consumers: tuple[tuple[int, ...], ...]
    output: tuple[bool, ...]
    pairs: tuple[tuple[int, int, int], ...] = ()

    @property
    def num_ops(self) -> int:
        return len(self.op_names)

    @property
    def num_buffers(self) -> int:
        return len(self.buffer_names)

    @cached_property
    def succs(self) -> tuple[tuple[int, ...], ...]:
        """Per op, its direct successors."""
        return _per_op(self.num_ops, ((u, v) for v, preds in enumerate(self.preds)
                                      for u in preds))

    @cached_property
    def topological(self) -> tuple[int, ...]:
        """A topological order (Kahn's, smallest index first; the engine order when it is
        topological in the index numbering)."""
        import heapq

        indegree = [len(p) for p in self.preds]
        ready = [v for v in range(self.num_ops) if not indegree[v]]
        heapq.heapify(ready)
        order = []
        while ready:
            v = heapq.heappop(ready)
            order.append(v)
            for w in self.succs[v]:
                indegree[w] -= 1
                if not indegree[w]:
                    heapq.heappush(ready, w)
        return tuple(order)

    @cached_property
    def ancestors(self) -> tuple[int, ...]:
        """Per op, the bitmask of its (transitive) predecessors."""
        masks = [0] * self.num_ops
        for v in self.topological:
            for u in self.preds[v]:
                masks[v] |= masks[u] | (1 << u)
        return tuple(masks)

    @cached_property
    def descendants(self) -> tuple[int, ...]:
        """Per op, the bitmask of its (transitive) successors."""
        masks = [0] * self.num_ops
        for v in reversed(self.topological):
            for w in self.succs[v]:
                masks[v] |= masks[w] | (1 << w)
        return tuple(masks)

    @cached_property
    def windows(self) -> tuple[tuple[int, int], ...]:
        """Per op, the steps it can take in some topological order: ``[#ancestors,
        n - 1 - #descendants]``."""
        n = self.num_ops
        return tuple((a.bit_count(), n - 1 - d.bit_count())
                     for a, d in zip(self.ancestors, self.descendants))

    @property
    def has_one_order(self) -> bool:
        """Whether the ops have a single topological order (every window is one step)."""
        return all(low == high for low, high in self.windows)

    @cached_property
    def produced(self) -> tuple[tuple[int, ...], ...]:
        """Per op, the buffers it produces."""
        return _per_op(self.num_ops, ((p, b) for b, p in enumerate(self.producer) if p >= 0))

    @cached_property
    def read(self) -> tuple[tuple[int, ...], ...]:
        """Per op, the buffers it reads."""
        return _per_op(self.num_ops, ((c, b) for b, consumers in enumerate(self.consumers)
                                      for c in consumers))

    @cached_property
    def pairs_of(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Per op, its in-place pairs ``(source, target)``."""
        return _per_op(self.num_ops, ((op, (a, b)) for op, a, b in self.pairs))


def _per_op(count: int, items) -> tuple[tuple, ...]:
    """``(op, value)`` items grouped by op, in item order."""
    grouped: list[list] = [[] for _ in range(count)]
    for op, value in items:
        grouped[op].append(value)
    return tuple(tuple(values) for values in grouped)


def dag_of(instance: ScheduleInstance) -> Dag:
    """The :class:`Dag` of ``instance`` (buffers in order of first appearance, graph inputs
    first, as the records of :func:`optplan.graph.lifetimes`)."""
    graph = instance.graph
    base = (view_bases(graph) if instance.views == "alias"
            else {name: name for name in graph.tensors})
    producer_of = graph.producer_index()
    roots: dict[str, int] = {}   # root name -> producer (-1: graph input)
    for name in graph.inputs:
        roots.setdefault(base[name], -1)
    for index, op in enumerate(graph.ops):
        for name in op.outputs:
            roots.setdefault(base[name], index)
    names = [name for name in roots if graph.tensors[name].bytes > 0]
    number = {name: b for b, name in enumerate(names)}
    consumers: list[set[int]] = [set() for _ in names]
    preds: list[tuple[int, ...]] = []
    for index, op in enumerate(graph.ops):
        preds.append(tuple(sorted({producer_of[t] for t in op.inputs if t in producer_of})))
        for name in op.inputs:
            b = number.get(base[name])
            if b is not None:
                consumers[b].add(index)
    outputs = {base[name] for name in graph.outputs}
    pairs: list[tuple[int, int, int]] = []
    if instance.inplace:
        for index, op in enumerate(graph.ops):
            for a_name, b_name in op.inplace:
                a, b = number.get(base[a_name]), number.get(base[b_name])
                if (a is None or b is None or a == b
                        or graph.tensors[names[b]].bytes > graph.tensors[names[a]].bytes):
                    continue
                if (index, a, b) not in pairs:
                    pairs.append((index, a, b))
    return Dag(tuple(op.name for op in graph.ops), tuple(preds), tuple(names),
               tuple(graph.tensors[name].bytes for name in names),
               tuple(roots[name] for name in names),
               tuple(tuple(sorted(c)) for c in consumers),
               tuple(name in outputs for name in names), tuple(pairs))


def lifetimes_of(dag: Dag, order) -> tuple[list[int], list[int]]:
    """``(first, last)`` step of every buffer under ``order`` (op indices in execution
    order, a topological order of ``dag``)."""
    position = [0] * dag.num_ops
    for step, v in enumerate(order):
        position[v] = step
    end = max(dag.num_ops - 1, 0)
    first, last = [], []
    for b in range(dag.num_buffers):
        start = position[dag.producer[b]] if dag.producer[b] >= 0 else 0
        if dag.output[b]:
            stop = end
        else:
            stop = max((position[c] for c in dag.consumers[b]), default=start)
        first.append(start)
        last.append(max(start, stop))
    return first, last


def step_breadths(dag: Dag, order) -> list[int]:
    """Live bytes at every step of ``order`` (in-place savings deducted)."""
    n = dag.num_ops
    if n == 0:
        return []
    first, last = lifetimes_of(dag, order)
    delta = [0] * (n + 1)
    for b, size in enumerate(dag.sizes):
        delta[first[b]] += size
        delta[last[b] + 1] -= size
    breadths, running = [], 0
    for step in range(n):
        running += delta[step]
        breadths.append(running)
    if dag.pairs:
        for step, v in enumerate(order):
            candidates = [(a, b, dag.sizes[b]) for a, b in dag.pairs_of[v] if last[a] == step]
            breadths[step] -= inplace_saving(candidates)
    return breadths


def peak(dag: Dag, order) -> int:
    """The peak live bytes of ``order`` (0 for a graph without ops)."""
    return max(step_breadths(dag, order), default=0)


def order_names(dag: Dag, order) -> tuple[str, ...]:
    return tuple(dag.op_names[v] for v in order)


def order_indices(dag: Dag, names) -> list[int]:
    index = {name: v for v, name in enumerate(dag.op_names)}
    return [index[name] for name in names]
