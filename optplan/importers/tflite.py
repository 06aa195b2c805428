"""TFLite flatbuffers → :class:`~optplan.graph.model.Graph` (the ``tflite`` extra).

Follows what TFLite's interpreter plans (``tensorflow/lite/core/subgraph.cc`` and
``arena_planner.cc``): the operators of subgraph 0 run in their stored order; a tensor with a
non-empty buffer is constant (a *weight*, metadata only); everything else the ops touch is an
arena tensor. Constant-input ``DEQUANTIZE`` and ``DENSIFY`` ops (fp16 or sparse weights) are
evaluated once at load time and their outputs kept as persistent tensors, so here they vanish:
their outputs become weights at their runtime (expanded) size. Custom ops keep their custom
code as type (``CUSTOM:name``). Shapes use ``shape`` (``shape_signature``'s ``-1`` is the batch
of the stored shape).
"""

from __future__ import annotations

import math
from pathlib import Path

from optplan.errors import InputError
from optplan.graph.model import Graph, Op, Tensor, Weight, dtype_bytes
from optplan.importers import declared_inplace, file_sha256, require

__all__ = ["import_tflite", "import_tflite_bytes"]

_FOLDED_AT_LOAD = frozenset({"DEQUANTIZE", "DENSIFY"})
_PADDING = {0: "SAME", 1: "VALID"}


def _enum_names(enum_class) -> dict[int, str]:
    return {getattr(enum_class, key): key for key in dir(enum_class) if not key.startswith("_")}


def _options(tflite, op, option_names: dict[int, str]) -> dict:
    """The FLOPs-relevant builtin options of ``op`` (strides, kernel, activation...)."""
    kind = option_names.get(op.BuiltinOptionsType())
    table = op.BuiltinOptions()
    if kind is None or table is None or not hasattr(tflite, kind):
        return {}
    options = getattr(tflite, kind)()
    options.Init(table.Bytes, table.Pos)
    attributes: dict = {}
    if hasattr(options, "StrideH"):
        attributes["stride"] = [options.StrideH(), options.StrideW()]
    if hasattr(options, "FilterHeight"):
        attributes["kernel"] = [options.FilterHeight(), options.FilterWidth()]
    if hasattr(options, "Padding"):
        attributes["padding"] = _PADDING.get(options.Padding(), str(options.Padding()))
    if hasattr(options, "DilationHFactor") and (options.DilationHFactor(),
                                                options.DilationWFactor()) != (1, 1):
        attributes["dilation"] = [options.DilationHFactor(), options.DilationWFactor()]
    if hasattr(options, "DepthMultiplier"):
        attributes["depth_multiplier"] = options.DepthMultiplier()
    if hasattr(options, "Axis") and kind in ("ConcatenationOptions", "SoftmaxOptions",
                                             "GatherOptions", "SplitOptions"):
        attributes["axis"] = options.Axis()
    if hasattr(options, "FusedActivationFunction"):
        activation = _enum_names(tflite.ActivationFunctionType).get(
            options.FusedActivationFunction(), "NONE")
        if activation != "NONE":
            attributes["activation"] = activation
    return attributes


def import_tflite_bytes(data: bytes, *, name: str, source: dict | None = None) -> Graph:
    """Parse a TFLite flatbuffer held in memory (see the module docstring)."""
    tflite = require("tflite", "tflite")
    file = (source or {}).get("file", name)
    try:
        model = tflite.Model.GetRootAsModel(data, 0)
        if model.SubgraphsLength() < 1:
            raise InputError("the model has no subgraph", file=file, field="subgraphs")
        subgraph = model.Subgraphs(0)
        option_names = _enum_names(tflite.BuiltinOptions)
        type_names = {code: key.lower() for code, key in _enum_names(tflite.TensorType).items()}

        def is_constant(index: int) -> bool:
            buffer = model.Buffers(subgraph.Tensors(index).Buffer())
            return buffer is not None and (buffer.DataLength() > 0 or buffer.Offset() > 1)

        def shape_and_dtype(index: int):
            tensor = subgraph.Tensors(index)
            shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) \
                if tensor.ShapeLength() else ()
            dtype = type_names.get(tensor.Type())
            if dtype is None:
                raise InputError(f"unknown tensor type {tensor.Type()}", file=file,
                                 field=f"tensors[{index}].type")
            return shape, dtype

        def tensor_name(index: int) -> str:
            raw = subgraph.Tensors(index).Name()
            return (raw.decode("utf-8", "replace") if raw else "") or f"tensor_{index}"

        # Names may repeat in converted models; index-suffix the duplicates.
        names: dict[int, str] = {}
        seen: dict[str, int] = {}
        for index in range(subgraph.TensorsLength()):
            base = tensor_name(index)
            names[index] = base if base not in seen else f"{base}#{index}"
            seen.setdefault(base, index)

        load_time_constants: set[int] = set()
        tensors: dict[str, Tensor] = {}

        def tensor(index: int) -> str:
            label = names[index]
            if label not in tensors:
                shape, dtype = shape_and_dtype(index)
                tensors[label] = Tensor(label, shape, dtype, math.prod(shape) * dtype_bytes(dtype))
            return label

        def weight(index: int) -> Weight:
            shape, dtype = shape_and_dtype(index)
            return Weight(names[index], shape, dtype, math.prod(shape) * dtype_bytes(dtype))

        ops: list[Op] = []
        op_names: set[str] = set()
        for position in range(subgraph.OperatorsLength()):
            operator = subgraph.Operators(position)
            code = model.OperatorCodes(operator.OpcodeIndex())
            builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            op_type = tflite.opcode2name(builtin)
            if op_type == "CUSTOM":
                op_type = f"CUSTOM:{(code.CustomCode() or b'').decode()}"
            inputs = [i for i in operator.InputsAsNumpy().tolist() if i >= 0] \
                if operator.InputsLength() else []
            outputs = [i for i in operator.OutputsAsNumpy().tolist() if i >= 0] \
                if operator.OutputsLength() else []
            constant = [i for i in inputs if is_constant(i) or i in load_time_constants]
            if op_type in _FOLDED_AT_LOAD and inputs and len(constant) == len(inputs):
                load_time_constants.update(outputs)
                continue
            activations = tuple(tensor(i) for i in inputs if i not in constant)
            output_names = tuple(tensor(i) for i in outputs)
            weights = tuple(weight(i) for i in dict.fromkeys(constant))
            attributes = _options(tflite, operator, option_names)
            if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D") and weights:
                attributes["kernel"] = list(weights[0].shape[1:3])
            op_name = output_names[0] if output_names else f"{op_type}_{position}"
            op_name = f"{position}:{op_name}"
            op_names.add(op_name)
            ops.append(Op(op_name, op_type, activations, output_names, weights, attributes,
                          declared_inplace(op_type, activations, output_names, tensors)))
        inputs = tuple(tensor(i) for i in subgraph.InputsAsNumpy().tolist()
                       if not is_constant(i))
        outputs = tuple(tensor(i) for i in subgraph.OutputsAsNumpy().tolist())
    except InputError:
        raise
    except Exception as error:  # a truncated or foreign file fails inside flatbuffers
        raise InputError(f"cannot parse TFLite flatbuffer: {type(error).__name__}: {error}",
                         file=file) from None
    version = getattr(tflite, "__version__", None)
    if version is None:
        from importlib.metadata import version as package_version
        version = package_version("tflite")
    provenance = {"source": dict(source or {}), "importer": "tflite", "tflite_version": version,
                  "schema_version": model.Version()}
    return Graph(name, tuple(ops), tensors, inputs, outputs, provenance)


def import_tflite(path: str | Path, *, name: str | None = None) -> Graph:
    """Read a ``.tflite`` file as a :class:`Graph` in the order TFLite runs it.

    Parameters
    ----------
    path : str or Path
        The flatbuffer file.
    name : str, optional
        Graph name; defaults to the file's stem.
    """
    file = str(path)
    try:
        data = Path(file).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", file=file) from None
    return import_tflite_bytes(data, name=name or Path(file).stem,
                               source={"file": Path(file).name, "sha256": file_sha256(file)})
