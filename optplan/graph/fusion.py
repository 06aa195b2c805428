"""TFLite-style operator fusion: a raw graph (one op per framework layer) becomes the graph
TFLite's converter emits.

The converter's graph transformations (``tensorflow/compiler/mlir/lite/transforms/
optimize_patterns.td``: ``FuseBinaryOpToFollowingAffineOp``, ``FuseFullyConnectedAndAdd``,
``FuseConv2DAndMulWithConstant``, fused activation functions) come down to three rules, applied
to a producer ``P`` whose output ``t`` has exactly one reader ``C`` and is not a graph output:

1. **Folding into weights.** ``C`` is a batch-norm, or an ``ADD``/``SUB``/``MUL``/``DIV`` whose
   only non-constant operand is ``t`` (a bias add or a per-channel scale), and ``P`` is a
   weighted op (convolution or fully connected) with no fused activation yet. ``C`` disappears;
   ``P`` keeps its weights and gains a bias of ``C_out`` floats if it had none.
2. **Fused activations.** ``C`` is ``RELU``, ``RELU6``, ``RELU_N1_TO_1`` or ``TANH`` and ``P``
   is an op with a ``fused_activation_function`` field in TFLite's schema (convolutions, fully
   connected, elementwise add/sub/mul/div, pooling, concatenation) without one yet.
3. **No-ops.** ``IDENTITY`` and ``DROPOUT`` (inference) vanish; their readers read the input.

The fused producer keeps its name and type and lists what it absorbed in
``attributes["fused"]``; a fused activation is also recorded as ``attributes["activation"]``.
"""

from __future__ import annotations

from dataclasses import replace

from optplan.graph.model import Graph, Op, Weight

__all__ = ["fuse", "WEIGHTED_TYPES", "ACTIVATION_HOST_TYPES", "FUSED_ACTIVATIONS",
           "NO_OP_TYPES"]

WEIGHTED_TYPES = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV",
                            "CONV_3D"})
ACTIVATION_HOST_TYPES = WEIGHTED_TYPES | {"ADD", "SUB", "MUL", "DIV", "AVERAGE_POOL_2D",
                                          "MAX_POOL_2D", "CONCATENATION", "BATCH_NORM"}
FUSED_ACTIVATIONS = frozenset({"RELU", "RELU6", "RELU_N1_TO_1", "TANH"})
FOLDED_INTO_WEIGHTS = frozenset({"BATCH_NORM"})
CONSTANT_OPERAND_TYPES = frozenset({"ADD", "SUB", "MUL", "DIV"})
NO_OP_TYPES = frozenset({"IDENTITY", "DROPOUT"})


def _absorbed(op: Op) -> list[str]:
    return list(op.attributes.get("fused", []))


def _folds_into_weights(producer: Op, reader: Op) -> bool:
    if "activation" in producer.attributes:
        return False
    if producer.type == "BATCH_NORM":      # affine after affine stays one affine map
        return reader.type in FOLDED_INTO_WEIGHTS or (
            reader.type in CONSTANT_OPERAND_TYPES and len(reader.inputs) == 1)
    if producer.type not in WEIGHTED_TYPES:
        return False
    if reader.type in FOLDED_INTO_WEIGHTS:
        return True
    # A bias add or scale: the reader's only tensor operand is the producer's output.
    return reader.type in CONSTANT_OPERAND_TYPES and len(reader.inputs) == 1 and \
        bool(reader.weights)


def _folds_as_activation(producer: Op, reader: Op) -> bool:
    return (reader.type in FUSED_ACTIVATIONS and len(reader.inputs) == 1
            and producer.type in ACTIVATION_HOST_TYPES
            and "activation" not in producer.attributes)


def _with_bias(producer: Op, graph: Graph, output: str) -> tuple[Weight, ...]:
    if len(producer.weights) >= 2 or not producer.weights:
        return producer.weights
    shape = graph.tensors[output].shape
    channels = shape[-1] if producer.attributes.get("layout", "NHWC") == "NHWC" else shape[1]
    dtype = producer.weights[0].dtype
    size = producer.weights[0].bytes // max(1, _elements(producer.weights[0].shape))
    return producer.weights + (Weight(f"{producer.name}/bias", (channels,), dtype,
                                      channels * size),)


def _elements(shape) -> int:
    count = 1
    for dimension in shape:
        count *= dimension
    return count


def fuse(graph: Graph) -> Graph:
    """The TFLite-fused form of ``graph`` (see the module docstring). Idempotent. O(ops)."""
    ops: list[Op | None] = list(graph.ops)
    producer = graph.producer_index()
    readers = graph.consumer_indices()
    outputs = set(graph.outputs)
    renamed: dict[str, str] = {}           # a vanished no-op's output → its input

    def resolve(name: str) -> str:
        while name in renamed:
            name = renamed[name]
        return name

    graph_outputs = list(graph.outputs)
    for index, reader in enumerate(graph.ops):
        if reader.type in NO_OP_TYPES and len(reader.inputs) == 1:
            source = resolve(reader.inputs[0])
            if reader.outputs[0] in outputs:
                graph_outputs = [source if o == reader.outputs[0] else o for o in graph_outputs]
            renamed[reader.outputs[0]] = source
            readers[source] = [r for r in readers[source] if r != index] + \
                readers[reader.outputs[0]]
            ops[index] = None
            continue
        if len(reader.inputs) != 1:
            continue
        tensor = resolve(reader.inputs[0])
        if tensor not in producer or tensor in outputs or len(set(readers[tensor])) != 1:
            continue
        host_index = producer[tensor]
        host = ops[host_index]
        if host is None or len(host.outputs) != 1:
            continue
        if _folds_into_weights(host, reader):
            attributes = dict(host.attributes, fused=_absorbed(host) + [reader.type])
            weights = host.weights if host.type == "BATCH_NORM" else \
                _with_bias(host, graph, reader.outputs[0])
        elif _folds_as_activation(host, reader):
            attributes = dict(host.attributes, fused=_absorbed(host) + [reader.type],
                              activation=reader.type)
            weights = host.weights
        else:
            continue
        output = reader.outputs[0]
        ops[host_index] = replace(host, outputs=(output,), weights=weights,
                                  attributes=attributes,
                                  inplace=tuple((a, output) for a, b in host.inplace
                                                if graph.tensors[a].bytes >=
                                                graph.tensors[output].bytes))
        producer[output] = host_index
        ops[index] = None

    kept = []
    tensors = dict(graph.tensors)
    for op in ops:
        if op is None:
            continue
        inputs = tuple(resolve(name) for name in op.inputs)
        inplace = tuple((resolve(a), b) for a, b in op.inplace if resolve(a) != b)
        op = replace(op, inputs=inputs, inplace=inplace) if inputs != op.inputs or \
            inplace != op.inplace else op
        kept.extend(_lowered_batch_norm(op, tensors) if op.type == "BATCH_NORM" else [op])
    fused = Graph(graph.name, tuple(kept), tensors, graph.inputs, tuple(graph_outputs),
                  dict(graph.provenance, fused=True))
    return fused.pruned()


def _lowered_batch_norm(op: Op, tensors: dict) -> list[Op]:
    """A batch-norm with no producer to fold into, as TFLite emits it: ``MUL`` by the scale,
    then ``ADD`` of the offset carrying any fused activation (rule 1's leftovers)."""
    output = op.outputs[0]
    scaled = f"{output}/scaled"
    tensors[scaled] = replace(tensors[output], name=scaled)
    half = (len(op.weights) + 1) // 2
    attributes = {k: v for k, v in op.attributes.items() if k != "activation"}
    multiply = Op(f"{op.name}/mul", "MUL", op.inputs, (scaled,), op.weights[:half],
                  dict(attributes, lowered_from="BATCH_NORM"),
                  tuple((a, scaled) for a, _ in op.inplace))
    add = Op(f"{op.name}/add", "ADD", (scaled,), (output,), op.weights[half:],
             dict(op.attributes, lowered_from="BATCH_NORM"), ((scaled, output),))
    return [multiply, add]
