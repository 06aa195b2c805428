"""NNTrainer's in-place mode as a graph transformation: keep only the pairs NNTrainer would use.

NNTrainer (``nntrainer/graph/network_graph.cpp``: ``NetworkGraph::inPlaceOptimize`` and
``canExecuteInPlace``, the ``InPlace::{NONE, NON_RESTRICTING, RESTRICTING}`` version; the
NNTrainer docs on memory optimisation) runs three kinds of layers in place, deciding layer by
layer in execution order from the modes of the layers that feed it:

* **no-op layers** (flatten, and here every reshape-like view: ``VIEW_OP_TYPES``) are always in
  place; they are ``RESTRICTING`` when an input layer is, else ``NON_RESTRICTING``;
* **batch normalisation** is in place, ``NON_RESTRICTING`` (its backward pass needs neither its
  input nor its output), unless an input layer is ``RESTRICTING``, then not in place;
* **activations** (:data:`ACTIVATION_TYPES`) are in place, ``RESTRICTING`` (their backward
  pass needs their output), unless an input layer is ``RESTRICTING``, then not in place;
* every other layer is not in place (``NONE``).

So two consecutive activations are not both in place, nor is a batch-norm after an in-place
activation. A tensor read by several layers reaches them through NNTrainer's ``MultiOut``
layer, which is ``RESTRICTING``: here a tensor with more than one reader counts as coming from
a restricting layer. NNTrainer applies these rules in inference too (it plans one graph for
both modes), so this is its in-place inference mode.

An in-place layer computes its first output over its first input: the pair
``(inputs[0], outputs[0])`` when the output is no larger. :func:`nntrainer_inplace` replaces
every op's declared pairs by these; :func:`nntrainer_inplace_instance` builds the instance
(lifetime analysis drops pairs whose input is still read later), so any planner can run on it
with ``solve(..., inplace=True)``.

>>> from optplan.graph import Graph, Op, Tensor
>>> t = {n: Tensor(n, (4,), "float32", 16) for n in "xabc"}
>>> g = Graph("g", [Op("conv", "CONV_2D", ["x"], ["a"]),
...                 Op("relu1", "RELU", ["a"], ["b"], inplace=[("a", "b")]),
...                 Op("relu2", "RELU", ["b"], ["c"], inplace=[("b", "c")])], t, ["x"], ["c"])
>>> [op.inplace for op in nntrainer_inplace(g).ops]
[(), (('a', 'b'),), ()]
"""

from __future__ import annotations

import enum
from dataclasses import replace

from optplan.errors import InputError
from optplan.graph.lifetimes import lifetimes
from optplan.graph.model import VIEW_OP_TYPES, Graph, graph_of_instance, graph_to_dict
from optplan.model import Instance

__all__ = ["InPlaceMode", "ACTIVATION_TYPES", "BATCH_NORM_TYPES", "NO_OP_TYPES",
           "inplace_modes", "nntrainer_inplace", "nntrainer_inplace_instance"]

ACTIVATION_TYPES = frozenset({
    "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "ELU", "SELU", "LOGISTIC", "SIGMOID",
    "TANH", "HARD_SWISH", "SWISH", "GELU", "MISH", "SOFTPLUS", "SOFTMAX"})
"""Op types that NNTrainer's ``ActivationLayer`` computes (``acti_func``)."""

BATCH_NORM_TYPES = frozenset({"BATCH_NORM"})
NO_OP_TYPES = VIEW_OP_TYPES
"""Flatten and the other reshape-like views: no data moves."""


class InPlaceMode(str, enum.Enum):
    """NNTrainer's ``InPlace``: whether a layer runs in place and restricts its successors."""

    NONE = "none"
    NON_RESTRICTING = "non_restricting"
    RESTRICTING = "restricting"


def _mode(op_type: str, restricted: bool) -> InPlaceMode:
    """``canExecuteInPlace`` for one layer; ``restricted``: some input layer is restricting."""
    if op_type in NO_OP_TYPES:
        return InPlaceMode.RESTRICTING if restricted else InPlaceMode.NON_RESTRICTING
    if op_type in BATCH_NORM_TYPES:
        return InPlaceMode.NONE if restricted else InPlaceMode.NON_RESTRICTING
    if op_type in ACTIVATION_TYPES:
        return InPlaceMode.NONE if restricted else InPlaceMode.RESTRICTING
    return InPlaceMode.NONE


def inplace_modes(graph: Graph) -> list[InPlaceMode]:
    """Every op's NNTrainer in-place mode, decided in execution order (see the module
    docstring). A graph input, or a tensor with several readers (NNTrainer's ``MultiOut``),
    counts as a restricting producer only in the second case. O(ops + edges)."""
    producer = graph.producer_index()
    readers = {name: len(ops) for name, ops in graph.consumer_indices().items()}
    modes: list[InPlaceMode] = []
    for op in graph.ops:
        restricted = any(readers[name] > 1 or (name in producer and
                                               modes[producer[name]] is InPlaceMode.RESTRICTING)
                         for name in op.inputs)
        mode = _mode(op.type, restricted)
        if mode is not InPlaceMode.NONE and not _inplace_pair(graph, op):
            mode = InPlaceMode.NONE  # nothing to compute in place (no input, or it grows)
        modes.append(mode)
    return modes


def _inplace_pair(graph: Graph, op) -> tuple[tuple[str, str], ...]:
    if not op.inputs or not op.outputs:
        return ()
    source, output = op.inputs[0], op.outputs[0]
    if graph.tensors[output].bytes > graph.tensors[source].bytes:
        return ()
    return ((source, output),)


def nntrainer_inplace(graph: Graph) -> Graph:
    """``graph`` with each op's in-place pairs replaced by the one NNTrainer would use: the
    first input and output of every op whose mode is not ``NONE``; no pair elsewhere."""
    modes = inplace_modes(graph)
    ops = tuple(replace(op, inplace=_inplace_pair(graph, op) if mode is not InPlaceMode.NONE
                        else ()) for op, mode in zip(graph.ops, modes))
    return Graph(graph.name, ops, graph.tensors, graph.inputs, graph.outputs,
                 dict(graph.provenance, inplace_policy="nntrainer"))


def nntrainer_inplace_instance(source: Graph | Instance, *, views: str = "copy") -> Instance:
    """The instance of NNTrainer's in-place mode, for ``solve(..., inplace=True)``.

    Parameters
    ----------
    source : Graph or Instance
        A graph (its lifetimes with ``views``), or an instance that carries its graph: its
        records, name and alignment are kept, its pairs replaced by NNTrainer's (those that
        are valid for the records) and its graph by the transformed one.
    views : {"copy", "alias"}
        How view ops are counted, for a graph (an instance keeps its own setting).

    Returns
    -------
    Instance
    """
    if isinstance(source, Graph):
        return lifetimes(nntrainer_inplace(source), views=views)
    graph = graph_of_instance(source)
    if graph is None:
        raise InputError("NNTrainer's in-place mode needs the network graph", field="graph")
    transformed = nntrainer_inplace(graph)
    planned = lifetimes(transformed, views=source.provenance.get("views", "copy"),
                        keep_graph=False)
    index_of = source.index_of
    pairs = []
    for a, b in planned.inplace_pairs:
        a_id, b_id = planned.records[a].id, planned.records[b].id
        if a_id not in index_of or b_id not in index_of:
            continue
        ra, rb = source.records[index_of[a_id]], source.records[index_of[b_id]]
        if ra.last_op == rb.first_op and rb.size <= ra.size:
            pairs.append((index_of[a_id], index_of[b_id]))
    provenance = dict(source.provenance, graph=graph_to_dict(transformed),
                      inplace_policy="nntrainer")
    return Instance(source.records, source.name, source.alignment, tuple(pairs), provenance)
