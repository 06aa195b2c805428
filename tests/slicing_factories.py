"""Preload instances for the slicing tests: named tiny cases a reader can draw, and a
hypothesis strategy of random sliceable instances."""

from __future__ import annotations

from hypothesis import strategies as st

from optplan.preload import Layer, PreloadInstance, PreloadTensor
from optplan.preload.model import KernelCost, LayerOp, SliceCosts

COSTS = SliceCosts(overhead_us=3, max_input_slices=4)


def activation(id, first, last, size):
    return PreloadTensor(id, "activation", size, first, last)


def conv_fc(budget=None) -> PreloadInstance:
    """Three layers, drawn on paper:

    * ``conv`` (im2col, 12 µs, 2 output channels, 4 flattened channels, merge 1 µs) reads
      ``x`` (4 bytes) and writes ``c`` (4 bytes); weight ``conv/w`` 8 bytes (4 µs), flattened
      input ``conv/im2col`` 16 bytes; a slower ``direct`` kernel without scratch;
    * ``fc`` (gemm, 8 µs, 4 rows) reads ``c``, writes ``y`` (2 bytes); weight ``fc/w`` 32 bytes
      (16 µs);
    * ``softmax`` (2 µs) reads ``y``, writes ``z`` (2 bytes).

    Must-live breadths 32, 38, 4; slicing costs: 3 µs per weight sub-layer, 4 input slices.
    """
    direct = KernelCost("direct", 30, 8, 4, 0)
    layers = (Layer("conv", 12, LayerOp("CONV_2D", "im2col", 2, 4, "c", 1, (direct,))),
              Layer("fc", 8, LayerOp("FULLY_CONNECTED", "gemm", rows=4, output="y")),
              Layer("softmax", 2, LayerOp("SOFTMAX", "direct", output="z")))
    tensors = (activation("x", 0, 0, 4), activation("c", 0, 1, 4),
               PreloadTensor("conv/w", "weight", 8, 0, 0, 4),
               PreloadTensor("conv/im2col", "scratch", 16, 0, 0),
               PreloadTensor("fc/w", "weight", 32, 1, 1, 16), activation("y", 1, 2, 2),
               activation("z", 2, 2, 2))
    return PreloadInstance(layers, tensors, "conv_fc", None, budget, {}, COSTS)


def tiny_fc(budget=None) -> PreloadInstance:
    """``fc`` (10 µs, 2 rows, weight 8 bytes, 12 µs to load) between ``x`` and ``y``, then
    ``out`` (3 µs): weight-sliced by 2, 5 tensors."""
    layers = (Layer("fc", 10, LayerOp("FULLY_CONNECTED", "gemm", rows=2, output="y")),
              Layer("out", 3))
    tensors = (activation("x", 0, 0, 2), activation("y", 0, 1, 2),
               PreloadTensor("fc/w", "weight", 8, 0, 0, 12), activation("z", 1, 1, 1))
    return PreloadInstance(layers, tensors, "tiny_fc", None, budget, {}, SliceCosts(2, 4))


def tiny_conv(budget=None) -> PreloadInstance:
    """``conv`` (9 µs, im2col, 2 flattened channels) reading ``x``, writing ``c``; weight 6
    bytes (8 µs), flattened input 8 bytes: input-sliced by 2, 7 tensors."""
    layers = (Layer("conv", 9, LayerOp("CONV_2D", "im2col", 1, 2, "c", 1)),)
    tensors = (activation("x", 0, 0, 3), activation("c", 0, 0, 2),
               PreloadTensor("conv/w", "weight", 6, 0, 0, 8),
               PreloadTensor("conv/im2col", "scratch", 8, 0, 0))
    return PreloadInstance(layers, tensors, "tiny_conv", None, budget, {}, SliceCosts(2, 4))


@st.composite
def sliceable_instances(draw, max_layers=4):
    """Layers of three sorts (an FC-like gemm, an im2col convolution with a slower direct
    kernel, a layer without weights), chained by activations, plus a random extra activation."""
    count = draw(st.integers(1, max_layers))
    layers, tensors = [], []
    previous = "input"
    tensors.append(activation("input", 0, 0, draw(st.integers(1, 8))))
    for index in range(count):
        sort = draw(st.sampled_from(["gemm", "im2col", "plain"]))
        compute = draw(st.integers(0, 30))
        output = f"a{index}"
        rows = draw(st.sampled_from([1, 2, 4, 8]))
        if sort == "gemm":
            op = LayerOp("FULLY_CONNECTED", "gemm", rows=rows, output=output)
        elif sort == "im2col":
            slower = KernelCost("direct", compute + draw(st.integers(0, 20)),
                                draw(st.integers(8, 64)), draw(st.integers(0, 20)))
            op = LayerOp("CONV_2D", "im2col", rows, draw(st.sampled_from([2, 4, 8, 16])),
                         output, draw(st.integers(0, 5)), (slower,))
            tensors.append(PreloadTensor(f"s{index}", "scratch", draw(st.integers(16, 64)),
                                         index, index))
        else:
            op = LayerOp("ADD", "direct", output=output)
        if sort != "plain":
            tensors.append(PreloadTensor(f"w{index}", "weight", draw(st.integers(8, 64)),
                                         index, index, draw(st.integers(0, 20))))
        layers.append(Layer(f"l{index}", compute, op))
        tensors = [replace_last(t, index) if t.id == previous else t for t in tensors]
        tensors.append(activation(output, index, index, draw(st.integers(1, 8))))
        previous = output
    if draw(st.booleans()):
        first = draw(st.integers(0, count - 1))
        tensors.append(activation("skip", first, draw(st.integers(first, count - 1)),
                                   draw(st.integers(1, 8))))
    costs = SliceCosts(draw(st.integers(0, 5)), draw(st.sampled_from([2, 4, 16])))
    window = draw(st.one_of(st.none(), st.integers(0, 2)))
    return PreloadInstance(tuple(layers), tuple(tensors), "random", window, None, {}, costs)


def replace_last(tensor: PreloadTensor, last: int) -> PreloadTensor:
    return PreloadTensor(tensor.id, tensor.kind, tensor.size, tensor.first_op, last)
