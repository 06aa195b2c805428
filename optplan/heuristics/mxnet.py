"""MXNet/NNVM's graph memory planner (``mxnet``): a reference-count simulation over the graph.

Follows ``src/nnvm/plan_memory.cc`` (``PlanMemory``, ``AllocMemory``, ``GraphAllocator``) and
``src/nnvm/graph_algorithm.h`` (``ColorNodeGroup``, ``FindBestPath``) of apache/mxnet, read for
their semantics; the memory-optimisation doc and Chen et al. 2016 ("Training deep nets with
sublinear memory cost", §3) describe the same two ideas: in-place reuse and a free pool.

1. Every tensor counts its readers: one per (op, input slot), plus one per graph output.
2. Graph inputs are allocated first (at op 0, largest first; MXNet keeps them external).
3. Walking the ops in order, op ``k``

   * lets an output take an input's storage *in place* when the op declares the pair (and
     the instance does: :meth:`Instance.inplace_pairs`, which ``solve`` strips unless
     ``inplace=True``), the storage has exactly one reader left (this op: the count is 1),
     the output is read by someone, and no other output of the op took that input already;
   * requests storage for every other output, largest first (equal sizes: the later output
     first, as MXNet's ``std::multimap`` iterated backwards), from the free pool:
     the first free block, in order of size, with size in ``[size, size * match_range]``,
     else the largest free block with size in ``[size // match_range, size)``, which grows
     to ``size``; else a new block;
   * decrements the storage count of every input read; storage whose count reaches 0 goes back
     to the pool (keyed by its current size), as does the storage of an output nobody reads.

4. ``match_range=None`` sweeps 1, 2, 4, 8, 16 (``NNVM_AUTO_SEARCH_MATCH_RANGE``) and keeps
   the plan with the least total memory, the first on a tie. ``match_range=0`` never reuses.
5. ``colors=k > 1`` (``NNVM_EXEC_NUM_TEMP``): the ops are coloured by repeatedly taking the
   longest path of uncoloured ops (colours 0..k-2; the rest share the last colour), and a free
   block is only reused by an op of the colour of the op that released it, so that ops which
   may run in parallel never share memory.

Each storage block is a shared object; for offsets the blocks are stacked in block order
(:func:`~optplan.heuristics.tflite_offsets.objects_to_offsets`, aligned).

View outputs of an instance built with ``views="alias"`` have no record: they share their
base's storage unconditionally (MXNet's ``FInplaceIdentity``) and add their readers to its
count. The instance's records must be the graph's lifetimes (:func:`optplan.graph.lifetimes`);
sizes may differ (retyped or aligned sizes are used as given).
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

from optplan.errors import InputError
from optplan.graph.lifetimes import lifetimes, view_bases
from optplan.graph.model import Graph, graph_of_instance
from optplan.heuristics.tflite_offsets import objects_to_offsets
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register

__all__ = ["mxnet_shared_objects", "mxnet_offsets", "mxnet_storage", "plan_storage", "StoragePlan",
           "op_colors", "reference_counts", "MATCH_RANGE_SWEEP"]

MATCH_RANGE_SWEEP = (1, 2, 4, 8, 16)
_REFERENCE = ("MXNet src/nnvm/plan_memory.cc; Chen et al. 2016 'Training deep nets with "
              "sublinear memory cost' / the MXNet memory-optimisation doc")


@dataclass(frozen=True)
class StoragePlan:
    """Storage block of every planned tensor (by name) and each block's size in bytes."""

    storage: dict[str, int]
    block_sizes: tuple[int, ...]
    match_range: int

    @property
    def total_bytes(self) -> int:
        """MXNet's ``TotalAllocBytes``: the sum of the block sizes."""
        return sum(self.block_sizes)


# --- colouring (graph_algorithm.h) -------------------------------------------------------------

def _op_predecessors(graph: Graph) -> list[list[int]]:
    """For every op, the producing op of each input slot (graph inputs have none)."""
    producer = graph.producer_index()
    return [[producer[name] for name in op.inputs if name in producer] for op in graph.ops]


def _best_path(predecessors: list[list[int]], reward: list[int]) -> tuple[int, list[int]]:
    """MXNet ``FindBestPath``: the path of most total reward, found by a pass in reverse
    order; ties keep the first found (strict comparisons, as the reference). O(ops + edges)."""
    count = len(reward)
    best = [0] * count
    successor = [count] * count
    best_total, start = 0, 0
    for op in range(count - 1, -1, -1):
        best[op] += reward[op]
        if best[op] > best_total:
            best_total, start = best[op], op
        for previous in predecessors[op]:
            if best[op] > best[previous]:
                best[previous] = best[op]
                successor[previous] = op
    path = []
    op = start
    while op < count and best_total:
        path.append(op)
        op = successor[op]
    return best_total, path


def op_colors(graph: Graph, colors: int) -> list[int]:
    """MXNet ``ColorNodeGroup``: colour ``c`` (``c < colors - 1``) goes to the ops of the
    longest path of still uncoloured ops; every op left takes the next colour.

    Ops of one colour lie on one dependency path, so they cannot run in parallel.
    O(colors · (ops + edges)).

    Examples
    --------
    >>> from optplan.graph import Graph, Op, Tensor
    >>> t = {n: Tensor(n, (1,), "float32", 4) for n in "xabd"}
    >>> g = Graph("g", [Op("0", "RELU", ["x"], ["a"]), Op("1", "RELU", ["a"], ["b"]),
    ...                 Op("2", "RELU", ["x"], ["d"])], t, ["x"], ["b", "d"])
    >>> op_colors(g, 2)
    [0, 0, 1]
    """
    predecessors = _op_predecessors(graph)
    importance = [1] * graph.num_ops
    color = [None] * graph.num_ops
    index = 0
    while index < colors - 1:
        total, path = _best_path(predecessors, importance)
        if total == 0:
            break
        for op in path:
            if importance[op]:
                color[op] = index
                importance[op] = 0
        index += 1
    return [index if c is None else c for c in color]


# --- the allocator (GraphAllocator) ------------------------------------------------------------

class _FreePool:
    """Free blocks ordered by (size, release order): MXNet's ``std::multimap`` free list."""

    def __init__(self, match_range: int, colors: list[int] | None):
        self.match_range = match_range
        self.colors = colors
        self.sizes: list[int] = []            # block id -> current size (max_bytes)
        self.released_by: list[int] = []      # block id -> op that released it last
        self.free: list[tuple[int, int, int]] = []  # sorted (size, release number, block)
        self.is_free: list[bool] = []         # block id -> in the free list
        self._release_number = itertools.count()

    def _usable(self, block: int, op: int) -> bool:
        return self.colors is None or self.colors[self.released_by[block]] == self.colors[op]

    def _take(self, position: int, size: int) -> int:
        _, _, block = self.free.pop(position)
        self.is_free[block] = False
        self.sizes[block] = max(self.sizes[block], size)
        return block

    def request(self, size: int, op: int) -> int:
        """A block for ``size`` bytes requested by ``op`` (``GraphAllocator::Request``)."""
        if self.match_range > 0:
            middle = bisect.bisect_left(self.free, (size, -1, -1))
            end = bisect.bisect_left(self.free, (size * self.match_range + 1, -1, -1))
            begin = bisect.bisect_left(self.free, (size // self.match_range, -1, -1))
            for position in range(middle, end):  # blocks at least as large, smallest first
                if self._usable(self.free[position][2], op):
                    return self._take(position, size)
            for position in range(middle - 1, begin - 1, -1):  # smaller ones, largest first
                if self._usable(self.free[position][2], op):
                    return self._take(position, size)
        self.sizes.append(size)
        self.released_by.append(0)
        self.is_free.append(False)
        return len(self.sizes) - 1

    def release(self, block: int, op: int) -> None:
        """Return ``block`` to the pool (``GraphAllocator::Release``); a free block stays."""
        if self.is_free[block]:
            return
        self.is_free[block] = True
        self.released_by[block] = op
        bisect.insort(self.free, (self.sizes[block], next(self._release_number), block))


# --- the simulation (AllocMemory) --------------------------------------------------------------

def reference_counts(graph: Graph) -> dict[str, int]:
    """Readers of every tensor: one per op input slot, one per graph output slot."""
    counts = dict.fromkeys(graph.tensors, 0)
    for op in graph.ops:
        for name in op.inputs:
            counts[name] += 1
    for name in graph.outputs:
        counts[name] += 1
    return counts


def _largest_first(names, sizes: dict[str, int]) -> list[str]:
    """MXNet's output order: size descending; equal sizes, the later one first."""
    return [name for _, _, name in sorted(((sizes[n], i, n) for i, n in enumerate(names)),
                                          reverse=True)]


def plan_storage(graph: Graph, sizes: dict[str, int], *, inplace_pairs=(),
                 aliases: dict[str, str] | None = None, match_range: int = 16,
                 colors: int = 1) -> StoragePlan:
    """One run of MXNet's ``AllocMemory`` on ``graph`` (see the module docstring).

    Parameters
    ----------
    graph : Graph
        The network, ops in execution order.
    sizes : dict
        Bytes of every tensor to plan; tensors missing here (zero-byte tensors, aliases) get
        no storage of their own.
    inplace_pairs : collection of (str, str)
        The (input, output) tensor pairs that may share storage in place, in addition to the
        op having to declare them; the reference count decides whether a pair is used.
    aliases : dict, optional
        View output → base tensor (``views="alias"``): the output shares the base's storage.
    match_range : int
        The free-pool search range (0: never reuse a block).
    colors : int
        The number of colours of the parallel-safe path colouring (1: off).

    Returns
    -------
    StoragePlan
        Storage block of every planned tensor, block sizes.
    """
    aliases = aliases or {}
    allowed = set(inplace_pairs)
    readers = reference_counts(graph)
    pool = _FreePool(match_range, op_colors(graph, colors) if colors > 1 else None)
    storage: dict[str, int] = {}
    count: list[int] = []  # block -> readers left of the tensors it holds

    def allocate(names, op: int) -> None:
        wanted = [n for n in dict.fromkeys(names) if n in sizes and n not in storage]
        for name in _largest_first(wanted, sizes):
            block = pool.request(sizes[name], op)
            storage[name] = block
            if block == len(count):
                count.append(0)
            count[block] = readers[name]

    allocate(graph.inputs, 0)
    for op_index, op in enumerate(graph.ops):
        for output in op.outputs:  # a view's output shares its input's storage (identity)
            if output in aliases and op.inputs and op.inputs[0] in storage:
                storage[output] = storage[op.inputs[0]]
                count[storage[output]] += readers[output]
        taken: set[str] = set()
        for source, output in op.inplace:
            if ((aliases.get(source, source), output) not in allowed or source in taken
                    or output in storage):
                continue
            block = storage.get(source)
            if block is None or count[block] != 1 or readers[output] == 0:
                continue
            if output not in sizes or sizes[output] > pool.sizes[block]:
                continue
            taken.add(source)
            storage[output] = block
            count[block] += readers[output]
        allocate(op.outputs, op_index)
        for name in op.inputs:
            block = storage.get(name)
            if block is None:
                continue
            count[block] -= 1
            if count[block] == 0:
                pool.release(block, op_index)
        unread = op.outputs + (graph.inputs if op_index == 0 else ())
        for name in unread:  # outputs (and graph inputs) nobody reads die where they appear
            block = storage.get(name)
            if block is not None and count[block] == 0:
                pool.release(block, op_index)
    return StoragePlan(storage, tuple(pool.sizes), match_range)


# --- the registered methods --------------------------------------------------------------------

def _check_parameters(match_range, colors) -> tuple[int, ...]:
    if colors is None or isinstance(colors, bool) or not isinstance(colors, int) or colors < 1:
        raise InputError(f"must be an integer >= 1, got {colors!r}", field="colors")
    if match_range is None:
        return MATCH_RANGE_SWEEP
    if isinstance(match_range, bool) or not isinstance(match_range, int) or match_range < 0:
        raise InputError(f"must be an integer >= 0 or None (sweep), got {match_range!r}",
                         field="match_range")
    return (match_range,)


def _graph_for(instance: Instance) -> Graph:
    graph = graph_of_instance(instance)
    if graph is None:
        raise InputError("mxnet needs the network graph", field="graph")
    views = instance.provenance.get("views", "copy")
    expected = {r.id: (r.first_op, r.last_op)
                for r in lifetimes(graph, views=views, keep_graph=False).records}
    for record in instance.records:
        if expected.get(record.id) != (record.first_op, record.last_op):
            raise InputError(f"record {record.id!r} [{record.first_op}, {record.last_op}] is "
                             "not a tensor lifetime of the instance's graph", field="graph")
    return graph


def mxnet_storage(instance: Instance, *, match_range: int | None = None, colors: int = 1,
                  alignment: int = 1) -> SharedObjectsSolution:
    """MXNet's plan for ``instance``'s graph as shared objects (one per storage block).

    With a sweep, the plan of least total memory (block sizes rounded up to ``alignment``,
    as they are when stacked into offsets) is kept, the smallest match range on a tie.
    """
    ranges = _check_parameters(match_range, colors)
    graph = _graph_for(instance)
    views = instance.provenance.get("views", "copy")
    sizes = {record.id: record.size for record in instance.records}
    aliases = {}
    if views == "alias":
        aliases = {name: base for name, base in view_bases(graph).items()
                   if base != name and name not in sizes}
    inplace = {(instance.records[a].id, instance.records[b].id)
               for a, b in instance.inplace_pairs}
    best, best_cost = None, None
    for candidate in ranges:
        plan = plan_storage(graph, sizes, inplace_pairs=inplace, aliases=aliases,
                            match_range=candidate, colors=colors)
        cost = sum(round_up(size, alignment) for size in plan.block_sizes)
        if best_cost is None or cost < best_cost:
            best, best_cost = plan, cost
    object_ids = [best.storage[record.id] for record in instance.records]
    return SharedObjectsSolution(object_ids, best.block_sizes)


@register("mxnet", Problem.SHARED_OBJECTS, kind="heuristic", input="graph",
          reference=_REFERENCE)
def mxnet_shared_objects(instance: Instance, *, match_range: int | None = None,
                         colors: int = 1) -> SharedObjectsSolution:
    """MXNet/NNVM ``PlanMemory``: each storage block is a shared object.

    Parameters
    ----------
    instance : Instance
        Must carry its graph (``instance.provenance["graph"]``).
    match_range : int or None
        Free-pool search range; ``None`` sweeps 1, 2, 4, 8, 16 and keeps the best.
    colors : int
        Parallel-safe path colouring with this many colours (1: off).

    Complexity O(ops · (inputs + outputs) + n · p) per match range, p the free blocks.
    """
    return mxnet_storage(instance, match_range=match_range, colors=colors)


@register("mxnet", Problem.OFFSETS, kind="heuristic", input="graph", reference=_REFERENCE)
def mxnet_offsets(instance: Instance, *, match_range: int | None = None,
                  colors: int = 1) -> OffsetsSolution:
    """MXNet/NNVM ``PlanMemory`` with its storage blocks stacked into one arena (block order,
    each block rounded up to the instance's alignment). Parameters as
    :func:`mxnet_shared_objects`."""
    return objects_to_offsets(instance, mxnet_storage(instance, match_range=match_range,
                                                      colors=colors,
                                                      alignment=instance.alignment))
