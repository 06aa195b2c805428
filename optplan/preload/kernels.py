"""Kernel pricing for the cost model: the kernels a layer may run with, and their compute
time, weights and scratch (FlexNN, MobiCom'24: §2 "kernel selection", §3.2; NCNN's kernels).

* ``gemm``: FC layers, and 1×1 stride-1 dense convolutions (the input already is the GEMM
  operand). No scratch. Weight-sliceable by rows (output features / output channels).
* ``im2col``: every other dense (``groups`` 1) 2-D convolution. Its scratch is the flattened
  input, ``(C_in·K_h·K_w) × (H_out·W_out)`` elements of the input's dtype: ``C_in·K_h·K_w``
  flattened channels (``op.channels``), by which it is input-sliceable; weight-sliceable too.
  Time: the FLOPs estimate at the profile's throughput (the copy into the flattened input is
  not priced).
* ``winograd``: 3×3, stride-1, dilation-1 dense convolutions, as F(6×6, 3×3) (NCNN's
  ``winograd63``). The weights are transformed offline (FlexNN's weight pre-transformation) to
  8×8 per (output, input) channel pair, ``64/9`` of the 3×3 kernel (biases unchanged), and
  loaded in that form; the scratch holds the transformed input and output tiles,
  ``(C_in + C_out)·64·⌈H_out/6⌉·⌈W_out/6⌉`` elements. Time: the im2col time over the
  profile's ``winograd_speedup`` (an effective factor, not the 5.06× arithmetic reduction).
  Weight-sliceable (by output channels).
* ``direct``: everything else (depthwise and grouped convolutions, pooling, elementwise ops,
  ...). No scratch, not sliceable.

A layer runs with its fastest kernel (``winograd`` where it applies); the other one is listed
in ``op.kernels`` for kernel selection. A measured compute time (a profile's ``compute_us``)
is taken as the fastest kernel's; the other keeps its estimate, raised to the measured time
when below. ``merge_us`` (input slicing: adding one partial output into the output) is one
addition per output element at the profile's throughput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optplan.graph.model import Graph, Op
from optplan.preload.model import KernelCost, LayerOp

__all__ = ["Pricing", "price_layer", "WINOGRAD_TILE"]

WINOGRAD_TILE = 6
"""Output tile of F(6×6, 3×3): 6×6 outputs from 8×8 transformed inputs."""

_TRANSFORMED = (WINOGRAD_TILE + 2) ** 2   # elements per transformed 3x3 kernel or input tile


@dataclass(frozen=True)
class Pricing:
    """A layer under its fastest kernel: its op facts, compute time, weight bytes and load
    time (all of the op's weights, loaded together), scratch bytes (0: none)."""

    op: LayerOp
    compute_us: int
    weight_bytes: int
    load_us: int
    scratch_bytes: int


def _pair(value, default: int) -> tuple[int, int]:
    if value is None:
        return default, default
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return (int(values[0]), int(values[-1])) if values else (default, default)


def _output_layout(graph: Graph, op: Op) -> tuple[int, int, int] | None:
    """``(C_out, H_out, W_out)`` of a 4-D output (``None`` otherwise)."""
    shape = graph.tensors[op.outputs[0]].shape
    if len(shape) != 4:
        return None
    if op.attributes.get("layout") == "NCHW":
        return shape[1], shape[2], shape[3]
    return shape[3], shape[1], shape[2]


def price_layer(graph: Graph, op: Op, profile, flops: int, activations: set[str]) -> Pricing:
    """The pricing of ``op`` (see the module docstring). ``activations`` are the ids of the
    instance's activations (the layer's ``output`` must be one of them)."""
    throughput = profile.gflops * 1e3                           # FLOP per µs
    compute = profile.compute_time(op, flops)
    weights = op.weight_bytes
    load = profile.load_time(weights) if weights else 0
    output = op.outputs[0] if op.outputs and op.outputs[0] in activations else None
    kernel = max((w for w in op.weights if len(w.shape) >= 2),
                 key=lambda w: math.prod(w.shape), default=None)
    direct = Pricing(LayerOp(op.type, "direct", output=output), compute, weights, load, 0)
    if kernel is None or not op.outputs:
        return direct
    out_elements = graph.tensors[op.outputs[0]].elements
    if op.type == "FULLY_CONNECTED":
        features = graph.tensors[op.outputs[0]].shape[-1] if out_elements else 0
        return Pricing(LayerOp(op.type, "gemm", rows=features or None, output=output),
                       compute, weights, load, 0)
    layout = _output_layout(graph, op)
    if op.type != "CONV_2D" or op.attributes.get("groups", 1) != 1 or layout is None:
        return direct
    out_channels, height, width = layout
    kernel_h, kernel_w = _pair(op.attributes.get("kernel"), 0)
    stride = _pair(op.attributes.get("stride"), 1)
    dilation = _pair(op.attributes.get("dilation"), 1)
    depth, remainder = divmod(math.prod(kernel.shape), out_channels)   # C_in·K_h·K_w
    if remainder or not kernel_h or not kernel_w or depth % (kernel_h * kernel_w):
        return direct
    if (kernel_h, kernel_w, stride) == (1, 1, (1, 1)):
        return Pricing(LayerOp(op.type, "gemm", rows=out_channels, output=output),
                       compute, weights, load, 0)
    source = graph.tensors[op.inputs[0]]
    element = source.bytes // source.elements if source.elements else 4
    im2col_scratch = depth * height * width * element
    merge = math.ceil(out_elements / throughput)
    im2col = LayerOp(op.type, "im2col", out_channels, depth, output, merge)
    if (kernel_h, kernel_w, stride, dilation) != (3, 3, (1, 1), (1, 1)):
        return Pricing(im2col, compute, weights, load, im2col_scratch)
    # Winograd is the fast kernel; im2col becomes the alternative.
    estimate = math.ceil(flops / throughput)
    fast = compute if op.name in profile.compute_us else math.ceil(
        flops / (throughput * profile.winograd_speedup))
    transformed = kernel.bytes * _TRANSFORMED // 9 + weights - kernel.bytes
    tiles = math.ceil(height / WINOGRAD_TILE) * math.ceil(width / WINOGRAD_TILE)
    scratch = (depth // 9 + out_channels) * _TRANSFORMED * tiles * element
    alternative = KernelCost("im2col", max(estimate, fast), weights, load, im2col_scratch)
    winograd = LayerOp(op.type, "winograd", out_channels, depth, output, merge,
                       (alternative,))
    return Pricing(winograd, fast, transformed, profile.load_time(transformed), scratch)
