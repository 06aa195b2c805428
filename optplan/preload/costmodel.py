"""The cost model: a network graph (:mod:`optplan.graph`) becomes a preload instance.

Every op is one layer. Its compute time is its FLOPs over the profile's throughput, its
weights (all of the op's constant tensors, loaded together) take ``bytes / bandwidth`` to load,
and its activations keep the lifetimes of :func:`optplan.graph.lifetimes` (``docs/problems.md``).
Times are rounded *up* to whole µs. The graph carries no scratch buffers, so the instances
made here have none (the problem and all solvers support them).

FLOPs per op (issue 8), with ``out`` the number of output elements:

* convolution (``CONV_2D``, ``DEPTHWISE_CONV_2D``, ``CONV_3D``, ``TRANSPOSE_CONV``):
  ``2·K_h·K_w·(C_in/groups)·H_out·W_out·C_out``, computed layout-free as
  ``2 · (kernel elements / C_out) · out`` (the kernel is the op's largest weight; ``C_out`` is
  the output's channel dimension, axis 1 for ``layout: NCHW``, else the last axis);
* fully connected: ``2·M·N·K`` = ``2 · (weight elements) · out / N`` with ``N`` the output's
  last dimension; a matmul of two activations (``BATCH_MATMUL``, ``MATMUL``): ``2 · out · K``
  with ``K`` the first input's last dimension;
* pooling (``MAX_POOL_2D``, ``AVERAGE_POOL_2D``, ``L2_POOL_2D``): ``out × window``; global
  reductions (``MEAN``, ``SUM``, ``REDUCE_MAX``): one per *input* element;
* views (``RESHAPE``, ``SQUEEZE``, ...): 0;
* every other op (elementwise arithmetic, activations, softmax, concatenation, copies):
  one per output element;
* a fused activation (``attributes["activation"]``) adds one per output element.

Profiles (effective throughput, not peak): ``phone`` 50 GFLOP/s and 1000 MB/s storage,
``embedded`` 5 GFLOP/s and 80 MB/s (1 MB = 10^6 bytes). A measured profile is a JSON file
``{"name": ..., "gflops": 40.0, "storage_mb_per_s": 900.0, "compute_us": {"op name": 123}}``
whose ``compute_us`` entries (optional) replace the FLOPs estimate of the named ops.

With ``kernels=True`` (FlexNN's kernel selection and layer slicing, issue 21) every layer also
carries its operator facts and is priced for its fastest kernel, with the kernel's scratch
buffer ``"<op name>/<kernel>"`` (:mod:`optplan.preload.kernels`), and the instance carries the
profile's slicing parameters (:mod:`optplan.preload.slicing`). Those are assumed, not measured:
``slice_overhead_us`` (dispatching one more sub-layer; ``phone`` 20 µs, ``embedded`` 50 µs),
``max_input_slices`` (the platform's input-slice threshold; 16 and 8) and
``winograd_speedup`` (Winograd F(6,3) over im2col + GEMM; 2.0 on both). A profile file may set
each of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from optplan.errors import InputError
from optplan.formats.json_file import read_json_file
from optplan.graph.model import VIEW_OP_TYPES, Graph, Op
from optplan.preload.kernels import price_layer
from optplan.preload.model import Layer, PreloadInstance, PreloadTensor, SliceCosts
from optplan.preload.slicing import DEFAULT_SLICE_COSTS

__all__ = ["Profile", "PROFILES", "load_profile", "op_flops", "preload_instance_from_graph",
           "preload_instance_from_network"]

CONVOLUTIONS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "CONV_3D", "TRANSPOSE_CONV"})
FULLY_CONNECTED = frozenset({"FULLY_CONNECTED"})
MATMULS = frozenset({"BATCH_MATMUL", "MATMUL"})
POOLING = frozenset({"MAX_POOL_2D", "AVERAGE_POOL_2D", "L2_POOL_2D"})
REDUCTIONS = frozenset({"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"})


@dataclass(frozen=True)
class Profile:
    """Effective compute throughput and storage bandwidth (and optional measured times)."""

    name: str
    gflops: float
    storage_mb_per_s: float
    compute_us: dict = field(default_factory=dict, compare=False)
    slice_overhead_us: int = DEFAULT_SLICE_COSTS.overhead_us
    max_input_slices: int = DEFAULT_SLICE_COSTS.max_input_slices
    winograd_speedup: float = 2.0

    def __post_init__(self):
        for key in ("gflops", "storage_mb_per_s", "winograd_speedup"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InputError(f"must be a positive number, got {value!r}", field=key)
        SliceCosts(self.slice_overhead_us, self.max_input_slices)   # checks both

    @property
    def slice_costs(self) -> SliceCosts:
        return SliceCosts(self.slice_overhead_us, self.max_input_slices)

    def compute_time(self, op: Op, flops: int) -> int:
        if op.name in self.compute_us:
            return int(self.compute_us[op.name])
        return math.ceil(flops / (self.gflops * 1e3))        # FLOP per µs

    def load_time(self, size: int) -> int:
        return math.ceil(size / self.storage_mb_per_s)       # bytes per µs = MB/s


PROFILES = {
    "phone": Profile("phone", 50.0, 1000.0),
    "embedded": Profile("embedded", 5.0, 80.0, slice_overhead_us=50, max_input_slices=8),
}


def load_profile(name_or_path: str | Profile) -> Profile:
    """A built-in profile by name, or a measured profile JSON file."""
    if isinstance(name_or_path, Profile):
        return name_or_path
    if name_or_path in PROFILES:
        return PROFILES[name_or_path]
    path = Path(name_or_path)
    if not path.is_file():
        raise InputError(f"unknown profile {name_or_path!r}; valid: {', '.join(PROFILES)} "
                         "or a profile JSON file", field="profile")
    data = read_json_file(path, field="profile")
    if not isinstance(data, dict):
        raise InputError("must be a JSON object", file=str(path), field="profile")
    measured = data.get("compute_us", {})
    if not isinstance(measured, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in measured.values()):
        raise InputError("must map op names to non-negative integers", file=str(path),
                         field="compute_us")
    slicing = {key: data[key] for key in ("slice_overhead_us", "max_input_slices",
                                          "winograd_speedup") if key in data}
    try:
        return Profile(str(data.get("name", path.stem)), data.get("gflops"),
                       data.get("storage_mb_per_s"), dict(measured), **slicing)
    except InputError as error:
        raise error.located(str(path)) from None


def _channel_count(graph: Graph, op: Op) -> int:
    shape = graph.tensors[op.outputs[0]].shape
    if not shape:
        return 1
    axis = 1 if op.attributes.get("layout") == "NCHW" and len(shape) > 1 else -1
    return max(1, shape[axis])


def op_flops(graph: Graph, op: Op) -> int:
    """The FLOPs of ``op`` by the rules of the module docstring."""
    out = sum(graph.tensors[name].elements for name in op.outputs)
    activation = out if op.attributes.get("activation") else 0
    kernel = max((w for w in op.weights if len(w.shape) >= 2),
                 key=lambda w: math.prod(w.shape), default=None)
    if op.type in CONVOLUTIONS and kernel is not None:
        per_output = math.prod(kernel.shape) / _channel_count(graph, op)
        return round(2 * per_output * out) + activation
    if op.type in FULLY_CONNECTED and kernel is not None:
        features = graph.tensors[op.outputs[0]].shape[-1] or 1
        return round(2 * math.prod(kernel.shape) * out / features) + activation
    if op.type in MATMULS and op.inputs:
        depth = graph.tensors[op.inputs[0]].shape[-1] if graph.tensors[op.inputs[0]].shape \
            else 1
        return 2 * out * depth + activation
    if op.type in POOLING:
        window = math.prod(op.attributes.get("kernel", [1]))
        return out * window + activation
    if op.type in REDUCTIONS and op.inputs:
        return graph.tensors[op.inputs[0]].elements + activation
    if op.type in VIEW_OP_TYPES:
        return 0
    return out + activation


def preload_instance_from_graph(graph: Graph, profile: str | Profile = "phone", *,
                                window: int | None = None, name: str | None = None,
                                provenance: dict | None = None,
                                kernels: bool = False) -> PreloadInstance:
    """The preload instance of ``graph`` under ``profile`` (see the module docstring).

    Activation ids are the tensor names; the weights of op ``k`` form one tensor
    ``"<op name>/weights"`` of layer ``k``. ``kernels=True`` adds the operator facts, prices
    every layer for its fastest kernel (with its scratch buffer) and records the profile's
    slicing parameters.
    """
    from optplan.graph.lifetimes import lifetimes

    profile = load_profile(profile)
    records = lifetimes(graph, keep_graph=False)
    tensors = [PreloadTensor(r.id, "activation", r.size, r.first_op, r.last_op)
               for r in records.records]
    activations = {r.id for r in records.records}
    layers = []
    for index, op in enumerate(graph.ops):
        flops = op_flops(graph, op)
        if not kernels:
            layers.append(Layer(op.name, profile.compute_time(op, flops)))
            if op.weight_bytes > 0:
                tensors.append(PreloadTensor(f"{op.name}/weights", "weight", op.weight_bytes,
                                             index, index, profile.load_time(op.weight_bytes)))
            continue
        pricing = price_layer(graph, op, profile, flops, activations)
        layers.append(Layer(op.name, pricing.compute_us, pricing.op))
        if pricing.weight_bytes > 0:
            tensors.append(PreloadTensor(f"{op.name}/weights", "weight", pricing.weight_bytes,
                                         index, index, pricing.load_us))
        if pricing.scratch_bytes > 0:
            tensors.append(PreloadTensor(f"{op.name}/{pricing.op.kernel}", "scratch",
                                         pricing.scratch_bytes, index, index))
    stamp = dict(provenance or {})
    stamp["cost_model"] = {"profile": profile.name, "gflops": profile.gflops,
                           "storage_mb_per_s": profile.storage_mb_per_s,
                           "measured_ops": len(profile.compute_us),
                           "module": "optplan.preload.costmodel"}
    if kernels:
        stamp["cost_model"] |= {"kernels": True, "winograd_speedup": profile.winograd_speedup,
                                "kernel_module": "optplan.preload.kernels"}
    suffix = "_kernels" if kernels else ""
    return PreloadInstance(tuple(layers), tuple(tensors),
                           name or f"{graph.name}_{profile.name}{suffix}", window, None, stamp,
                           profile.slice_costs if kernels else None)


def preload_instance_from_network(path, profile: str | Profile = "phone", *,
                                  window: int | None = None,
                                  kernels: bool = False) -> PreloadInstance:
    """The preload instance of a committed network file (``data/networks/*.json``); with
    ``kernels=True`` (named ``<network>_<profile>_kernels``) ready for slicing."""
    from optplan.formats import load_instance
    from optplan.graph import graph_of_instance

    instance = load_instance(str(path))
    graph = graph_of_instance(instance)
    if graph is None:
        raise InputError("the instance has no graph (provenance.graph)", file=str(path),
                         field="graph")
    profile = load_profile(profile)
    window_flag = "" if window is None else f" --window {window}"
    script, suffix = ("slicing", "_kernels") if kernels else ("preload", "")
    provenance = {"network": Path(path).name,
                  "regenerate": f"python bench/{script}.py --make-instances --networks "
                                f"{Path(path).stem} --profile {profile.name}{window_flag}"}
    return preload_instance_from_graph(graph, profile, window=window,
                                       name=f"{instance.name}_{profile.name}{suffix}",
                                       provenance=provenance, kernels=kernels)
