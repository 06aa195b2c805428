"""The network graph: ops in execution order, activation tensors, weights (plain frozen data).

A :class:`Graph` is what importers produce and what lifetime analysis, fusion and the
graph-level heuristics (MXNet refcount simulation, FlexNN preloading) consume. Op types use
TFLite's builtin operator names (``CONV_2D``, ``DEPTHWISE_CONV_2D``, ``FULLY_CONNECTED``,
``ADD``, ...) so that graphs from every importer speak one vocabulary.

*Tensors* are the non-constant values (graph inputs, op outputs); *weights* are constant data
attached to the op that reads them (name, shape, dtype, bytes — never their values).

JSON schema (the ``graph`` object of an optplan instance file, see data/README.md)::

    {"name": "mobilenet_v2", "inputs": ["input"], "outputs": ["logits"],
     "tensors": [{"name": "input", "shape": [1, 224, 224, 3], "dtype": "float32",
                  "bytes": 602112}, ...],
     "ops": [{"name": "conv1", "type": "CONV_2D", "inputs": ["input"], "outputs": ["c1"],
              "attributes": {"kernel": [3, 3], "stride": [2, 2], "groups": 1,
                             "fused": ["RELU6"]},
              "weights": [{"name": "conv1/w", "shape": [32, 3, 3, 3], "dtype": "float32",
                           "bytes": 3456}],
              "inplace": [["a", "b"]]}, ...]}

``attributes``, ``weights`` and ``inplace`` may be omitted when empty. ``inplace`` lists
(input, output) tensor pairs the op may compute in place (elementwise activations, batch-norm,
reshape), as MXNet's ``FInplaceOption`` and NNTrainer's in-place layers declare them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType

from optplan.errors import InputError

__all__ = ["DTYPE_BYTES", "Tensor", "Weight", "Op", "Graph", "graph_from_dict", "graph_to_dict",
           "dtype_bytes", "VIEW_OP_TYPES", "graph_of_instance"]

DTYPE_BYTES = MappingProxyType({
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4,
    "uint64": 8, "bool": 1, "int4": 1, "complex64": 8, "string": 1,
})
"""Bytes per element of every dtype name the importers produce (int4 is stored as bytes)."""

VIEW_OP_TYPES = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "FLATTEN", "IDENTITY",
                           "VIEW", "UNSQUEEZE"})
"""Op types whose single output is the input viewed with another shape (no data movement)."""


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of ``dtype``; an :class:`InputError` names unknown dtypes."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise InputError(f"unknown dtype {dtype!r}; valid: {', '.join(DTYPE_BYTES)}",
                         field="dtype") from None


def _shape(values, where: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"shape must be a list of integers, got {values!r}",
                         field=f"{where}.shape") from None
    if any(v < 0 for v in shape):
        raise InputError(f"negative dimension in {list(shape)}", field=f"{where}.shape")
    return shape


@dataclass(frozen=True)
class Tensor:
    """A non-constant value: a graph input or an op output. ``bytes`` is its buffer size."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    bytes: int

    def __post_init__(self):
        object.__setattr__(self, "shape", _shape(self.shape, f"tensor {self.name}"))

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Weight:
    """Constant data read by an op: metadata only (the values are never kept)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    bytes: int

    def __post_init__(self):
        object.__setattr__(self, "shape", _shape(self.shape, f"weight {self.name}"))


@dataclass(frozen=True)
class Op:
    """One operator, in execution order. ``inputs``/``outputs`` name tensors."""

    name: str
    type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    weights: tuple[Weight, ...] = ()
    attributes: dict = field(default_factory=dict, compare=False)
    inplace: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "weights", tuple(self.weights))
        object.__setattr__(self, "inplace", tuple((str(a), str(b)) for a, b in self.inplace))

    @property
    def weight_bytes(self) -> int:
        return sum(weight.bytes for weight in self.weights)


@dataclass(frozen=True)
class Graph:
    """Ops in execution order over named tensors. Construction checks the topology:

    every op input is a graph input or the output of an earlier op, every tensor is produced
    once, every name refers to a tensor in ``tensors``, in-place pairs name the op's own
    input and output.
    """

    name: str
    ops: tuple[Op, ...]
    tensors: dict[str, Tensor]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    provenance: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "ops", tuple(self.ops))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        self._check()

    def _check(self) -> None:
        for key, tensor in self.tensors.items():
            if key != tensor.name:
                raise InputError(f"key {key!r} names tensor {tensor.name!r}", field="tensors")
            if tensor.bytes < 0:
                raise InputError(f"negative size {tensor.bytes}", field=f"tensor {key}.bytes")
        available: set[str] = set()
        for name in self.inputs:
            self._known(name, "inputs")
            available.add(name)
        op_names: set[str] = set()
        for position, op in enumerate(self.ops):
            where = f"ops[{position}] ({op.name})"
            if op.name in op_names:
                raise InputError(f"duplicate op name {op.name!r}", field=where)
            op_names.add(op.name)
            for name in op.inputs:
                self._known(name, f"{where}.inputs")
                if name not in available:
                    raise InputError(f"input {name!r} is used before it is produced",
                                     field=f"{where}.inputs")
            for name in op.outputs:
                self._known(name, f"{where}.outputs")
                if name in available:
                    raise InputError(f"tensor {name!r} is produced twice",
                                     field=f"{where}.outputs")
                available.add(name)
            for a, b in op.inplace:
                if a not in op.inputs or b not in op.outputs:
                    raise InputError(f"in-place pair ({a}, {b}) is not (input, output) of "
                                     "this op", field=f"{where}.inplace")
        for name in self.outputs:
            self._known(name, "outputs")
            if name not in available:
                raise InputError(f"output {name!r} is never produced", field="outputs")

    def _known(self, name: str, where: str) -> None:
        if name not in self.tensors:
            raise InputError(f"unknown tensor {name!r}", field=where)

    # Cheap derived views.
    @property
    def num_ops(self) -> int:
        return len(self.ops)

    def producer_index(self) -> dict[str, int]:
        """Tensor name → index of the op that produces it (graph inputs are absent)."""
        return {name: index for index, op in enumerate(self.ops) for name in op.outputs}

    def consumer_indices(self) -> dict[str, list[int]]:
        """Tensor name → indices of the ops that read it, in order (each op once)."""
        consumers: dict[str, list[int]] = {name: [] for name in self.tensors}
        for index, op in enumerate(self.ops):
            for name in dict.fromkeys(op.inputs):
                consumers[name].append(index)
        return consumers

    def used_tensors(self) -> list[str]:
        """Names of the tensors that are graph inputs, op inputs or op outputs, in order of
        first appearance (tensors declared but never touched are left out)."""
        names = dict.fromkeys(self.inputs)
        for op in self.ops:
            names.update(dict.fromkeys(op.inputs))
            names.update(dict.fromkeys(op.outputs))
        return list(names)

    @property
    def weight_bytes(self) -> int:
        return sum(op.weight_bytes for op in self.ops)

    def op_type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.type] = counts.get(op.type, 0) + 1
        return counts

    def to_networkx(self):
        """A bipartite ``networkx.DiGraph``: op nodes ``("op", index)`` and tensor nodes
        ``("tensor", name)``, edges tensor → reading op and op → produced tensor.

        Node attributes: ops carry ``op`` (the :class:`Op`) and ``index``; tensors carry
        ``tensor`` (the :class:`Tensor`). ``networkx.topological_sort`` of the op nodes
        respects the execution order's dependencies.
        """
        import networkx as nx

        digraph = nx.DiGraph(name=self.name)
        for name in self.used_tensors():
            digraph.add_node(("tensor", name), kind="tensor", tensor=self.tensors[name])
        for index, op in enumerate(self.ops):
            node = ("op", index)
            digraph.add_node(node, kind="op", op=op, index=index)
            for name in op.inputs:
                digraph.add_edge(("tensor", name), node)
            for name in op.outputs:
                digraph.add_edge(node, ("tensor", name))
        return digraph

    def pruned(self) -> "Graph":
        """The same graph with tensors that no op or graph input touches dropped."""
        keep = self.used_tensors()
        return Graph(self.name, self.ops, {name: self.tensors[name] for name in keep},
                     self.inputs, self.outputs, self.provenance)


# --- JSON -------------------------------------------------------------------------------------

def _tensor_dict(tensor: Tensor | Weight) -> dict:
    return {"name": tensor.name, "shape": list(tensor.shape), "dtype": tensor.dtype,
            "bytes": tensor.bytes}


def graph_to_dict(graph: Graph) -> dict:
    """The graph as the JSON object documented in the module docstring."""
    ops = []
    for op in graph.ops:
        entry = {"name": op.name, "type": op.type, "inputs": list(op.inputs),
                 "outputs": list(op.outputs)}
        if op.attributes:
            entry["attributes"] = op.attributes
        if op.weights:
            entry["weights"] = [_tensor_dict(weight) for weight in op.weights]
        if op.inplace:
            entry["inplace"] = [list(pair) for pair in op.inplace]
        ops.append(entry)
    return {"name": graph.name, "inputs": list(graph.inputs), "outputs": list(graph.outputs),
            "tensors": [_tensor_dict(graph.tensors[name]) for name in graph.tensors],
            "ops": ops}


def _required(data: dict, key: str, kind: type, where: str):
    if key not in data:
        raise InputError("missing", field=f"{where}.{key}")
    value = data[key]
    if not isinstance(value, kind):
        raise InputError(f"must be a {kind.__name__}, got {type(value).__name__}",
                         field=f"{where}.{key}")
    return value


def _tensor_from(data, where: str, cls):
    if not isinstance(data, dict):
        raise InputError("must be an object", field=where)
    size = _required(data, "bytes", int, where)
    if isinstance(size, bool) or size < 0:
        raise InputError(f"must be a non-negative integer, got {size!r}", field=f"{where}.bytes")
    return cls(str(_required(data, "name", str, where)), _shape(_required(data, "shape", list,
               where), where), str(_required(data, "dtype", str, where)), size)


def graph_from_dict(data: dict, *, provenance: dict | None = None) -> Graph:
    """Parse the JSON object of :func:`graph_to_dict`; errors name the field."""
    if not isinstance(data, dict):
        raise InputError("must be an object", field="graph")
    tensors = {}
    for position, raw in enumerate(_required(data, "tensors", list, "graph")):
        tensor = _tensor_from(raw, f"graph.tensors[{position}]", Tensor)
        if tensor.name in tensors:
            raise InputError(f"duplicate tensor {tensor.name!r}",
                             field=f"graph.tensors[{position}]")
        tensors[tensor.name] = tensor
    ops = []
    for position, raw in enumerate(_required(data, "ops", list, "graph")):
        where = f"graph.ops[{position}]"
        if not isinstance(raw, dict):
            raise InputError("must be an object", field=where)
        weights = tuple(_tensor_from(w, f"{where}.weights[{i}]", Weight)
                        for i, w in enumerate(raw.get("weights", [])))
        inplace = raw.get("inplace", [])
        if not all(isinstance(p, list) and len(p) == 2 for p in inplace):
            raise InputError("must be a list of [input, output] pairs", field=f"{where}.inplace")
        ops.append(Op(str(_required(raw, "name", str, where)),
                      str(_required(raw, "type", str, where)),
                      tuple(_required(raw, "inputs", list, where)),
                      tuple(_required(raw, "outputs", list, where)),
                      weights, dict(raw.get("attributes", {})), tuple(map(tuple, inplace))))
    return Graph(str(data.get("name", "graph")), tuple(ops), tensors,
                 tuple(_required(data, "inputs", list, "graph")),
                 tuple(_required(data, "outputs", list, "graph")), dict(provenance or {}))


def graph_of_instance(instance) -> Graph | None:
    """The graph an instance was built from (its ``graph`` JSON object), or ``None``."""
    data = instance.provenance.get("graph")
    if data is None:
        return None
    return graph_from_dict(data, provenance={k: v for k, v in instance.provenance.items()
                                             if k != "graph"})
