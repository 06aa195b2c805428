"""PyTorch programs → :class:`~optplan.graph.model.Graph` (the ``torch`` extra, ``torch==2.13``).

A model is captured with ``torch.export.export(..., strict=False)`` and lowered to the core ATen
op set (``ExportedProgram.run_decompositions()``), or, for a training step, with AOTAutograd's
joint forward + backward graph (:mod:`optplan.torch.training`). Either way the result is
an FX graph of ATen ops, which :func:`graph_from_fx` turns into our graph model:

* every ``call_function`` node is an op, in FX order (a valid topological order, the order
  ``torch.fx.Interpreter`` runs); its tensor arguments are the op's inputs, its tensor results
  its outputs. Tensor names are FX node names, so a plan can be mapped back onto the program
  (:mod:`optplan.torch.replay`).
* parameters, buffers and lifted constants are **weights**, attached to the first op that reads
  them: a weight shared between layers (GPT-2's tied embedding/head) counts once. Views of
  weights (``t``, ``view`` of a parameter) are the weight itself, not an op.
* ops whose result aliases an input in their schema (``view``, ``permute``, ``expand``,
  ``slice``, ``detach``, ... — ``Tensor(a)`` return annotations) are **views**: their op types
  are in :data:`~optplan.graph.model.VIEW_OP_TYPES`, so ``lifetimes(graph, views="alias")``
  makes them alias their base (PyTorch semantics: a view shares its base's storage).
  ``expand`` broadcasts to more elements than its base and is kept as an op of its own
  (``BROADCAST_TO``) that materialises its output.
* multi-output ops list only the results someone reads (``operator.getitem`` users): unused
  extra outputs (batch-norm's saved statistics at inference, max-pool indices) are dropped.
* op types use TFLite's builtin names where one exists (:data:`ATEN_OP_TYPES`) so
  :func:`optplan.graph.fuse` folds batch-norm and activations exactly as for the other importers;
  other ATen ops keep their name in upper case (``NATIVE_LAYER_NORM``, ``CONVOLUTION_BACKWARD``).
  Each op records its ATen overload in ``attributes["aten"]``.

``torch`` is imported lazily; without it every entry point raises
:class:`~optplan.importers.MissingExtraError`. :func:`timm_module` imports timm (installed with
``--no-deps``) against a tiny torchvision stand-in that lives in ``sys.modules`` only while
timm is being imported (torchvision has no CPU build here).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from optplan.graph.model import Graph, Op, Tensor, Weight
from optplan.importers import declared_inplace, require

__all__ = ["TorchProgram", "graph_from_fx", "export_program", "ATEN_OP_TYPES", "torch_module",
           "is_view_op", "aten_name", "timm_module"]

ATEN_OP_TYPES = {
    "convolution": "CONV_2D", "conv2d": "CONV_2D",
    "addmm": "FULLY_CONNECTED", "linear": "FULLY_CONNECTED",
    "mm": "BATCH_MATMUL", "bmm": "BATCH_MATMUL", "matmul": "BATCH_MATMUL",
    "_native_batch_norm_legit_no_training": "BATCH_NORM", "batch_norm": "BATCH_NORM",
    "native_batch_norm": "BATCH_NORM", "_native_batch_norm_legit_functional": "BATCH_NORM",
    "_native_batch_norm_legit": "BATCH_NORM",
    "relu": "RELU", "sigmoid": "LOGISTIC", "tanh": "TANH", "gelu": "GELU",
    "hardswish": "HARD_SWISH", "elu": "ELU", "leaky_relu": "LEAKY_RELU",
    "add": "ADD", "sub": "SUB", "mul": "MUL", "div": "DIV", "maximum": "MAXIMUM",
    "minimum": "MINIMUM", "exp": "EXP", "sqrt": "SQRT", "rsqrt": "RSQRT", "neg": "NEG",
    "abs": "ABS", "pow": "POW",
    "mean": "MEAN", "_adaptive_avg_pool2d": "MEAN", "adaptive_avg_pool2d": "MEAN",
    "avg_pool2d": "AVERAGE_POOL_2D", "max_pool2d": "MAX_POOL_2D",
    "max_pool2d_with_indices": "MAX_POOL_2D", "sum": "SUM", "amax": "REDUCE_MAX",
    "cat": "CONCATENATION", "_softmax": "SOFTMAX", "softmax": "SOFTMAX",
    "_log_softmax": "LOG_SOFTMAX", "embedding": "GATHER", "index": "GATHER",
    "constant_pad_nd": "PAD", "pad": "PAD", "upsample_bilinear2d": "RESIZE_BILINEAR",
    "native_dropout": "DROPOUT", "dropout": "DROPOUT", "clone": "COPY", "_to_copy": "CAST",
    "where": "SELECT_V2", "expand": "BROADCAST_TO",
    "view": "RESHAPE", "_unsafe_view": "RESHAPE", "reshape": "RESHAPE", "squeeze": "SQUEEZE",
    "unsqueeze": "EXPAND_DIMS",
}
"""ATen op (overload packet name) → TFLite builtin name. ``hardtanh`` maps by its bounds:
(0, 6) is ``RELU6``, (-1, 1) ``RELU_N1_TO_1``."""

# Views that are not reshapes all become "VIEW" (an alias in lifetimes(views="alias")).
_RESHAPE_LIKE = {"view", "_unsafe_view", "reshape", "squeeze", "unsqueeze"}
# Ops that copy although they are not in the alias-returning set of schemas.
_MATERIALISING = {"expand"}


def torch_module():
    """The ``torch`` module, or :class:`~optplan.importers.MissingExtraError` (``pip install
    torch==2.13.0``)."""
    return require("torch", "torch")


def aten_name(target) -> str:
    """The overload packet name of an ATen op (``aten.add.Tensor`` → ``add``)."""
    packet = getattr(target, "overloadpacket", None)
    return getattr(packet, "__name__", None) or getattr(target, "__name__", str(target))


def is_view_op(target) -> bool:
    """True for ATen ops whose result aliases an input: their schema annotates the return with
    an alias set (``Tensor(a)``, or ``Tensor(a)[]`` for ``split``/``unbind``) and writes
    nothing; also ``_unsafe_view``."""
    name = aten_name(target)
    if name in _MATERIALISING:
        return False
    if name == "_unsafe_view":
        return True
    schema = getattr(target, "_schema", None)
    if schema is None or len(schema.returns) != 1:
        return False
    alias = schema.returns[0].alias_info
    return alias is not None and not alias.is_write


def _op_type(node) -> str:
    name = aten_name(node.target)
    if name == "hardtanh":
        low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val", -1.0)
        high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val", 1.0)
        return {(0.0, 6.0): "RELU6", (-1.0, 1.0): "RELU_N1_TO_1"}.get(
            (float(low), float(high)), "HARDTANH")
    if name in ("convolution", "conv2d"):
        weight = node.args[1].meta["val"]
        groups = node.args[-1] if name == "convolution" else (node.args[6] if len(node.args) > 6
                                                               else 1)
        if groups > 1 and groups == weight.shape[0] and weight.shape[1] == 1:
            return "DEPTHWISE_CONV_2D"
        return "CONV_2D"
    torch_fn = node.meta.get("torch_fn") or ("", "")
    if name == "clone" and "dropout" in str(torch_fn[1]):
        return "DROPOUT"             # inference dropout, decomposed to a copy
    if name in ATEN_OP_TYPES:
        return ATEN_OP_TYPES[name]
    if is_view_op(node.target):
        return "VIEW"
    return name.lstrip("_").upper()


def _attributes(node) -> dict:
    attributes = {"aten": str(node.target)}
    if aten_name(node.target) == "convolution":
        (_, weight, _, stride, padding, dilation, transposed, _, groups) = node.args
        attributes.update(kernel=list(weight.meta["val"].shape[2:]), stride=list(stride),
                          padding=list(padding), groups=int(groups), layout="NCHW")
        if any(d != 1 for d in dilation):
            attributes["dilation"] = list(dilation)
        if transposed:
            attributes["transposed"] = True
    return attributes


def _tensor_value(node):
    torch = torch_module()
    value = node.meta.get("val")
    return value if isinstance(value, torch.Tensor) else None


def _described(name: str, value, cls):
    dtype = str(value.dtype).removeprefix("torch.")
    return cls(name, tuple(int(d) for d in value.shape), dtype,
               int(value.numel()) * value.element_size())


def _flat_nodes(argument) -> list:
    """FX nodes inside an argument (nested lists/tuples/dicts), in order."""
    torch = torch_module()
    found: list = []
    torch.fx.node.map_arg(argument, found.append)
    return found


@dataclass
class TorchProgram:
    """A captured PyTorch program: the FX graph of ATen ops and everything needed to run it.

    ``graph`` is our model of it (:func:`graph_from_fx`); ``constants`` maps placeholder names
    to parameter/buffer/constant tensors; ``inputs`` maps the user-input placeholder names to
    example values; ``weight_names`` maps constant placeholders to their module path.
    """

    graph: Graph
    module: object                      # torch.fx.GraphModule
    constants: dict
    inputs: dict
    weight_names: dict = field(default_factory=dict)

    def placeholder_values(self) -> dict:
        """Every placeholder's value (constants and example inputs), by node name."""
        return {**self.constants, **self.inputs}


def graph_from_fx(graph_module, constants: dict, *, name: str, weight_names: dict | None = None,
                  provenance: dict | None = None) -> Graph:
    """Our graph of an FX graph of ATen ops (rules in the module docstring).

    Parameters
    ----------
    graph_module : torch.fx.GraphModule
        Nodes carry ``meta["val"]`` (fake tensors), as ``torch.export`` and AOTAutograd leave
        them.
    constants : dict
        Placeholder names that are parameters, buffers or constants (values are not read).
    name : str
        The graph's name.
    weight_names : dict, optional
        Placeholder name → module path (``features.0.0.weight``) used to name weights.
    """
    weight_names = weight_names or {}
    tensors: dict[str, Tensor] = {}
    inputs: list[str] = []
    weights: dict[str, Weight] = {}     # FX node name → the weight it is (or views)
    weight_root: dict[str, str] = {}    # FX node name → root weight placeholder
    read_weights: set[str] = set()
    ops: list[Op] = []
    outputs: list[str] = []
    graph = graph_module.graph
    returned = {n.name for n in _flat_nodes(graph.output_node().args)}

    for node in graph.nodes:
        if node.op == "placeholder":
            value = _tensor_value(node)
            if value is None:
                continue
            if node.name in constants:
                weights[node.name] = _described(weight_names.get(node.name, node.name), value,
                                                Weight)
                weight_root[node.name] = node.name
            else:
                tensors[node.name] = _described(node.name, value, Tensor)
                inputs.append(node.name)
            continue
        if node.op == "output":
            outputs = [n.name for n in _flat_nodes(node.args) if n.name in tensors]
            continue
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        arguments = _flat_nodes((node.args, node.kwargs))
        tensor_inputs = list(dict.fromkeys(n.name for n in arguments if n.name in tensors))
        weight_inputs = list(dict.fromkeys(weight_root[n.name] for n in arguments
                                           if n.name in weight_root))
        value = node.meta.get("val")
        if is_view_op(node.target) and not tensor_inputs and weight_inputs:
            weight_root[node.name] = weight_inputs[0]          # a view of a weight
            continue
        if is_view_op(node.target) and not node.users and node.name not in returned:
            continue                                           # an unread view (detach)
        op_outputs = _output_names(node, value)
        if not op_outputs:
            continue
        if is_view_op(node.target):
            # each result of split/unbind views the input: one VIEW op per result, so that
            # lifetimes(views="alias") aliases every one of them to the base
            for output_name, output_value in op_outputs:
                tensors[output_name] = _described(output_name, output_value, Tensor)
                op_type = _op_type(node)
                ops.append(Op(output_name if len(op_outputs) > 1 else node.name, op_type,
                              tuple(tensor_inputs), (output_name,), (), _attributes(node),
                              declared_inplace(op_type, tensor_inputs, (output_name,),
                                               tensors)))
            continue
        for output_name, output_value in op_outputs:
            tensors[output_name] = _described(output_name, output_value, Tensor)
        new_weights = [weights[w] for w in weight_inputs if w not in read_weights]
        read_weights.update(weight_inputs)
        op_type = _op_type(node)
        output_names = tuple(n for n, _ in op_outputs)
        ops.append(Op(node.name, op_type, tuple(tensor_inputs), output_names,
                      tuple(new_weights), _attributes(node),
                      declared_inplace(op_type, tensor_inputs, output_names, tensors)))
    return Graph(name, tuple(ops), tensors, tuple(inputs), tuple(outputs),
                 dict(provenance or {}))


def _output_names(node, value) -> list[tuple[str, object]]:
    """(name, value) of the results of ``node`` that exist as tensors: the node itself for a
    single tensor, else its ``getitem`` users that are read or returned."""
    torch = torch_module()
    if isinstance(value, torch.Tensor):
        return [(node.name, value)]
    if not isinstance(value, (tuple, list)):
        return []
    results = []
    for user in node.users:
        if user.target is operator.getitem and isinstance(user.meta.get("val"), torch.Tensor):
            if user.users:
                results.append((user.args[1], user.name, user.meta["val"]))
    return [(name, val) for _, name, val in sorted(results, key=lambda item: item[0])]


def export_program(module, args: tuple, *, name: str, provenance: dict | None = None
                   ) -> TorchProgram:
    """Capture ``module(*args)`` for inference with ``torch.export.export(strict=False)``,
    lower it to core ATen (``run_decompositions()``), and build its graph."""
    torch = torch_module()
    module = module.eval()
    with torch.no_grad():
        exported = torch.export.export(module, tuple(args), strict=False)
    exported = exported.run_decompositions()
    constants, weight_names, inputs = {}, {}, {}
    user_values = iter(args)
    kinds = torch.export.graph_signature.InputKind
    for spec in exported.graph_signature.input_specs:
        if spec.kind == kinds.USER_INPUT:
            inputs[spec.arg.name] = next(user_values)
            continue
        if spec.kind in (kinds.PARAMETER, kinds.BUFFER):
            value = exported.state_dict.get(spec.target)
            if value is None:       # non-persistent buffers live in constants
                value = exported.constants[spec.target]
        else:
            value = exported.constants[spec.target]
        constants[spec.arg.name] = value.detach()
        weight_names[spec.arg.name] = spec.target
    provenance = dict(provenance or {})
    provenance.setdefault("torch_version", torch.__version__)
    provenance.setdefault("capture", "torch.export.export(strict=False).run_decompositions()")
    graph = graph_from_fx(exported.graph_module, constants, name=name,
                          weight_names=weight_names, provenance=provenance)
    return TorchProgram(graph, exported.graph_module, constants, inputs, weight_names)


# --- timm without torchvision ------------------------------------------------------------------

class _StandInType(type):
    """Metaclass of the stand-in's names: attribute access on the class gives a name string
    (``InterpolationMode.BILINEAR``), so timm's import-time tables build."""

    def __getattr__(cls, attribute: str) -> str:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return f"{cls.__qualname__}.{attribute}"


def _stand_in(name: str) -> type:
    """A class standing for the torchvision name ``name``: timm may subclass it at import
    time; instantiating it (timm's data pipeline, never used here) fails loudly."""
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(f"torchvision stand-in: {name} is not available "
                                  "(torchvision has no CPU build here)")

    return _StandInType(name.rpartition(".")[2], (), {"__init__": refuse, "__qualname__": name})


def _module_getattr(module_name: str):
    def getattr_(attribute: str):
        if attribute.startswith("__"):      # __file__, __path__...: a plain module's answer
            raise AttributeError(attribute)
        return _stand_in(f"{module_name}.{attribute}")

    return getattr_


def _stand_in_modules() -> dict:
    """The modules of the stand-in, by dotted name. Classes timm subclasses or checks with
    ``isinstance`` (``FrozenBatchNorm2d``) are empty classes."""
    import types

    names = ("torchvision", "torchvision.ops", "torchvision.ops.misc", "torchvision.transforms",
             "torchvision.transforms.functional", "torchvision.datasets", "torchvision.utils",
             "torchvision.models", "torchvision.models.feature_extraction")
    modules = {}
    for name in names:
        module = types.ModuleType(name, "optplan's torchvision stand-in (import-time names only)")
        module.__getattr__ = _module_getattr(name)
        modules[name] = module
    modules["torchvision.ops.misc"].FrozenBatchNorm2d = type("FrozenBatchNorm2d", (), {})
    for name, module in modules.items():        # parents expose their children
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(modules[parent], child, module)
    return modules


def timm_module():
    """``timm`` (installed with ``pip install timm --no-deps``), imported with a torchvision
    stand-in that sits in ``sys.modules`` only while timm is imported: afterwards
    ``import torchvision`` fails as before. Only timm's model code is usable this way."""
    import sys

    if "timm" in sys.modules:
        return sys.modules["timm"]
    torch_module()
    previous = {name: sys.modules.get(name) for name in _stand_in_modules()}
    if previous["torchvision"] is not None:      # a real torchvision: use it
        return require("timm", "torch")
    sys.modules.update(_stand_in_modules())
    try:
        return require("timm", "torch")
    finally:
        for name, module in previous.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
