"""Lifetime analysis: a :class:`~optplan.graph.model.Graph` becomes an :class:`Instance`.

Semantics (Pisarchyk & Lee 2020, §2; TFLite's ``ArenaPlanner`` and MXNet's ``PlanMemory``
agree on them):

* op ``k`` is time step ``k``; a tensor produced by op ``k`` is live from ``k`` to the last op
  that reads it (both included). A tensor nobody reads is still written: it lives on ``[k, k]``.
* graph inputs are live from op 0; graph outputs until the last op (the caller reads them).
* views (``RESHAPE``, ``SQUEEZE``, ``EXPAND_DIMS``, ``FLATTEN``, ``IDENTITY``, ...) follow the
  ``views`` setting:

  ``"copy"`` (default, what TFLite's arena planner allocates): the view's output is a tensor of
  its own; the op's declared in-place pair (input, output) lets the in-place variants share
  the memory when the base dies at the view.
  ``"alias"`` (MXNet/PyTorch views): the output *is* its base tensor. It gets no record; the
  base lives until the last reader of any of its aliases.

* declared in-place pairs ``(a, b)`` become instance pairs when they satisfy the in-place rule of ``docs/problems.md``
  (``a.last_op == b.first_op`` and ``b.size <= a.size``); pairs that do not (the input is read
  again later) are dropped, exactly as a runtime would refuse them.
* zero-byte tensors (an empty shape dimension) get no record.
"""

from __future__ import annotations

from optplan.errors import InputError
from optplan.graph.model import VIEW_OP_TYPES, Graph, graph_to_dict
from optplan.model import Instance, UsageRecord

__all__ = ["VIEW_SETTINGS", "lifetimes", "view_bases"]

VIEW_SETTINGS = ("copy", "alias")


def view_bases(graph: Graph) -> dict[str, str]:
    """Every tensor's base under ``views="alias"``: a view's output maps to the root tensor it
    views (through chains of views); every other tensor maps to itself."""
    base = {name: name for name in graph.tensors}
    for op in graph.ops:
        if op.type in VIEW_OP_TYPES and len(op.inputs) == 1 and op.outputs:
            source = base[op.inputs[0]]
            output = op.outputs[0]
            if graph.tensors[output].bytes <= graph.tensors[source].bytes:
                base[output] = source
    return base


def lifetimes(graph: Graph, *, views: str = "copy", keep_graph: bool = True,
              name: str | None = None) -> Instance:
    """Usage records and in-place pairs of ``graph`` (see the module docstring).

    Parameters
    ----------
    graph : Graph
        The network, ops in execution order.
    views : {"copy", "alias"}
        How view ops (reshape & co.) are counted.
    keep_graph : bool
        Keep the graph's JSON object in the instance's provenance (``instance.provenance
        ["graph"]``), so that graph-level methods and the JSON writer see it.
    name : str, optional
        Instance name; defaults to the graph's name.

    Returns
    -------
    Instance
        Record ids are tensor names, in order of first appearance (graph inputs first).
    """
    if views not in VIEW_SETTINGS:
        raise InputError(f"unknown view setting {views!r}; valid: {', '.join(VIEW_SETTINGS)}",
                         field="views")
    base = view_bases(graph) if views == "alias" else {name: name for name in graph.tensors}
    last_op_index = max(graph.num_ops - 1, 0)
    first_op: dict[str, int] = {}
    last_op: dict[str, int] = {}
    for tensor in graph.inputs:  # not `name`: that is the instance name parameter
        first_op.setdefault(base[tensor], 0)
    for index, op in enumerate(graph.ops):
        for tensor in op.inputs:
            root = base[tensor]
            last_op[root] = max(last_op.get(root, index), index)
        for tensor in op.outputs:
            first_op.setdefault(base[tensor], index)
    for tensor in graph.outputs:
        last_op[base[tensor]] = last_op_index

    records = []
    for tensor_name, start in first_op.items():
        size = graph.tensors[tensor_name].bytes
        if size <= 0:
            continue
        records.append(UsageRecord(tensor_name, start, max(start, last_op.get(tensor_name,
                                                                              start)), size))
    index_of = {record.id: position for position, record in enumerate(records)}

    pairs: list[tuple[int, int]] = []
    for op in graph.ops:
        for a_name, b_name in op.inplace:
            a, b = index_of.get(base[a_name]), index_of.get(base[b_name])
            if a is None or b is None or a == b:
                continue
            ra, rb = records[a], records[b]
            if ra.last_op == rb.first_op and rb.size <= ra.size and (a, b) not in pairs:
                pairs.append((a, b))

    provenance = {key: value for key, value in graph.provenance.items() if key != "graph"}
    provenance["views"] = views
    if keep_graph:
        provenance["graph"] = graph_to_dict(graph)
    return Instance(tuple(records), name=name or graph.name, inplace_pairs=tuple(pairs),
                    provenance=provenance)
