"""ONNX models → :class:`~optplan.graph.model.Graph` (the ``onnx`` extra).

Shapes come from ONNX's own shape inference (``onnx.shape_inference.infer_shapes``); symbolic
dimensions (a free batch size) are taken as 1. Initializers, ``Constant`` nodes and every node
whose inputs are all constant (the ONNX-zoo "light" models build their weights with
``ConstantOfShape``) are constant-folded, as ONNX Runtime's constant folding does: their outputs
become *weights* of the ops that read them, not tensors. Op types are translated to TFLite's
builtin names (:data:`OP_TYPES`); others become their ONNX name in upper snake case.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from optplan.errors import InputError
from optplan.graph.model import Graph, Op, Tensor, Weight, dtype_bytes
from optplan.importers import declared_inplace, file_sha256, require

__all__ = ["import_onnx", "OP_TYPES"]

OP_TYPES = {
    "Conv": "CONV_2D", "ConvTranspose": "TRANSPOSE_CONV", "BatchNormalization": "BATCH_NORM",
    "Relu": "RELU", "LeakyRelu": "LEAKY_RELU", "PRelu": "PRELU", "Sigmoid": "LOGISTIC",
    "Tanh": "TANH", "HardSwish": "HARD_SWISH", "Elu": "ELU", "Gelu": "GELU",
    "Gemm": "FULLY_CONNECTED", "MatMul": "BATCH_MATMUL",
    "Add": "ADD", "Sum": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV",
    "Max": "MAXIMUM", "Min": "MINIMUM",
    "MaxPool": "MAX_POOL_2D", "AveragePool": "AVERAGE_POOL_2D", "GlobalAveragePool": "MEAN",
    "GlobalMaxPool": "REDUCE_MAX", "ReduceMean": "MEAN",
    "Concat": "CONCATENATION", "Reshape": "RESHAPE", "Flatten": "RESHAPE",
    "Squeeze": "SQUEEZE", "Unsqueeze": "EXPAND_DIMS", "Transpose": "TRANSPOSE",
    "Softmax": "SOFTMAX", "LogSoftmax": "LOG_SOFTMAX", "LRN": "LOCAL_RESPONSE_NORMALIZATION",
    "Dropout": "DROPOUT", "Identity": "IDENTITY", "Pad": "PAD", "Resize": "RESIZE_BILINEAR",
    "Split": "SPLIT", "Slice": "STRIDED_SLICE", "Gather": "GATHER", "Cast": "CAST",
}
_FOLDED_ALWAYS = frozenset({"Constant", "Shape", "Size", "ConstantOfShape"})


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _shape_of(type_proto, name: str, file: str) -> tuple[tuple[int, ...], str]:
    import onnx

    tensor_type = type_proto.tensor_type
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type).name
    if not tensor_type.HasField("shape"):
        raise InputError(f"shape inference left tensor {name!r} without a shape", file=file,
                         field="shape")
    shape = tuple(dim.dim_value if dim.HasField("dim_value") else 1
                  for dim in tensor_type.shape.dim)
    return shape, dtype


def _attributes(node, weight_shapes: list[tuple[int, ...]]) -> dict:
    import onnx

    raw = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    attributes: dict = {}
    if node.op_type in ("Conv", "ConvTranspose", "MaxPool", "AveragePool"):
        kernel = raw.get("kernel_shape") or (list(weight_shapes[0][2:]) if weight_shapes else [])
        attributes["kernel"] = [int(k) for k in kernel]
        attributes["stride"] = [int(s) for s in raw.get("strides", [1] * len(kernel))]
        if "pads" in raw:
            attributes["padding"] = [int(p) for p in raw["pads"]]
        if "auto_pad" in raw and raw["auto_pad"] not in (b"NOTSET", "NOTSET"):
            value = raw["auto_pad"]
            attributes["auto_pad"] = value.decode() if isinstance(value, bytes) else value
        if raw.get("dilations") and any(d != 1 for d in raw["dilations"]):
            attributes["dilation"] = [int(d) for d in raw["dilations"]]
        attributes["layout"] = "NCHW"
    if node.op_type in ("Conv", "ConvTranspose"):
        attributes["groups"] = int(raw.get("group", 1))
    if node.op_type in ("Concat", "Softmax", "Flatten", "Split", "Gather"):
        if "axis" in raw:
            attributes["axis"] = int(raw["axis"])
    if node.op_type == "Gemm":
        attributes["transpose_b"] = bool(raw.get("transB", 0))
    if node.op_type == "LRN":
        attributes["size"] = int(raw.get("size", 1))
    return attributes


def import_onnx(path: str | Path, *, name: str | None = None) -> Graph:
    """Read an ONNX model file as a :class:`Graph` (unfused: one op per ONNX node).

    Parameters
    ----------
    path : str or Path
        The ``.onnx`` file.
    name : str, optional
        Graph name; defaults to the file's stem.

    Returns
    -------
    Graph
        Provenance holds the file's SHA-256, the onnx version and the opset.
    """
    onnx = require("onnx", "onnx")
    file = str(path)
    try:
        model = onnx.load(file)
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except (OSError, onnx.onnx_cpp2py_export.shape_inference.InferenceError,
            onnx.onnx_cpp2py_export.checker.ValidationError) as error:
        raise InputError(f"cannot read ONNX model: {error}", file=file) from None
    except Exception as error:  # protobuf's DecodeError has no stable import path
        raise InputError(f"cannot read ONNX model: {type(error).__name__}: {error}",
                         file=file) from None
    graph = model.graph

    value_types = {}
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        value_types[value.name] = value.type
    constants: dict[str, tuple[tuple[int, ...], str]] = {}
    for initializer in graph.initializer:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(initializer.data_type).name
        constants[initializer.name] = (tuple(initializer.dims), dtype)

    def shape_and_dtype(tensor_name: str):
        if tensor_name in constants:
            return constants[tensor_name]
        if tensor_name not in value_types:
            raise InputError(f"tensor {tensor_name!r} has no type after shape inference",
                             file=file, field="value_info")
        return _shape_of(value_types[tensor_name], tensor_name, file)

    tensors: dict[str, Tensor] = {}

    def tensor(tensor_name: str) -> Tensor:
        if tensor_name not in tensors:
            shape, dtype = shape_and_dtype(tensor_name)
            tensors[tensor_name] = Tensor(tensor_name, shape, dtype,
                                          math.prod(shape) * dtype_bytes(dtype))
        return tensors[tensor_name]

    inputs = tuple(v.name for v in graph.input if v.name not in constants)
    for input_name in inputs:
        tensor(input_name)

    read = {x for node in graph.node for x in node.input}
    graph_outputs = {v.name for v in graph.output}
    ops: list[Op] = []
    used_names: set[str] = set()
    for position, node in enumerate(graph.node):
        node_inputs = [x for x in node.input if x]
        if node.op_type in _FOLDED_ALWAYS or (node_inputs and all(x in constants
                                                                  for x in node_inputs)):
            for output in node.output:
                if output:
                    constants[output] = _shape_of(value_types[output], output, file) \
                        if output in value_types else ((), "float32")
            continue
        activations = tuple(x for x in node_inputs if x not in constants)
        weights = []
        for x in dict.fromkeys(node_inputs):
            if x in constants:
                shape, dtype = constants[x]
                weights.append(Weight(x, shape, dtype, math.prod(shape) * dtype_bytes(dtype)))
        # An optional output nobody reads and inference left untyped (Dropout's mask) is not
        # materialised by inference runtimes.
        outputs = tuple(x for x in node.output if x and (x in value_types or x in read
                                                         or x in graph_outputs))
        for x in activations + outputs:
            tensor(x)
        op_type = OP_TYPES.get(node.op_type, _upper_snake(node.op_type))
        attributes = _attributes(node, [w.shape for w in weights])
        if node.op_type == "Conv" and attributes["groups"] > 1 and \
                attributes["groups"] == tensors[activations[0]].shape[1]:
            op_type = "DEPTHWISE_CONV_2D"
        if node.op_type == "MatMul" and len(activations) == 1:
            op_type = "FULLY_CONNECTED"
        op_name = node.name or f"{node.op_type}_{position}"
        while op_name in used_names:
            op_name += "_"
        used_names.add(op_name)
        ops.append(Op(op_name, op_type, activations, outputs, tuple(weights), attributes,
                      declared_inplace(op_type, activations, outputs, tensors)))

    outputs = tuple(v.name for v in graph.output)
    for output in outputs:
        tensor(output)
    provenance = {"source": {"file": Path(file).name, "sha256": file_sha256(file)},
                  "importer": "onnx", "onnx_version": onnx.__version__,
                  "opset": max((o.version for o in model.opset_import if o.domain in ("",
                                "ai.onnx")), default=None)}
    return Graph(name or Path(file).stem, tuple(ops), tensors, inputs, outputs, provenance)
