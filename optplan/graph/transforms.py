"""Re-typing graphs (fp32 → fp16/int8 sizes) and aligning instance sizes.

Pisarchyk & Lee (2020) plan fp32 networks; mobile GPUs run fp16 and quantized CPU kernels int8,
which scales every buffer. :func:`retype` changes the element type of floating-point tensors
(and, optionally, weights) and recomputes their bytes; :func:`align_sizes` rounds record sizes
up to an alignment, as TFLite's arena (64 bytes) and GPU allocators do.
"""

from __future__ import annotations

import math
from dataclasses import replace

from optplan.errors import InputError
from optplan.graph.model import Graph, Tensor, Weight, dtype_bytes
from optplan.model import Instance, UsageRecord, round_up

__all__ = ["retype", "align_sizes", "FLOAT_DTYPES"]

FLOAT_DTYPES = frozenset({"float64", "float32", "float16", "bfloat16"})


def _retyped(item: Tensor | Weight, dtype: str, size: int):
    if item.dtype not in FLOAT_DTYPES:
        return item
    return replace(item, dtype=dtype, bytes=math.prod(item.shape) * size)


def retype(graph: Graph, dtype: str, *, weights: bool = True) -> Graph:
    """``graph`` with every floating-point tensor (and weight) stored as ``dtype``.

    Bytes become ``elements × bytes per element``; integer tensors (indices, shapes) keep their
    type. Example: ``retype(graph, "float16")`` halves every fp32 activation.
    """
    size = dtype_bytes(dtype)
    tensors = {name: _retyped(tensor, dtype, size) for name, tensor in graph.tensors.items()}
    ops = graph.ops
    if weights:
        ops = tuple(replace(op, weights=tuple(_retyped(w, dtype, size) for w in op.weights))
                    for op in graph.ops)
    return Graph(graph.name, ops, tensors, graph.inputs, graph.outputs,
                 dict(graph.provenance, dtype=dtype))


def align_sizes(instance: Instance, alignment: int) -> Instance:
    """Every record's size rounded up to a multiple of ``alignment``; the instance's own
    offset alignment is set to ``alignment`` too. In-place pairs stay valid (rounding is
    monotone)."""
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
        raise InputError(f"must be an integer >= 1, got {alignment!r}", field="alignment")
    records = tuple(UsageRecord(r.id, r.first_op, r.last_op, round_up(r.size, alignment))
                    for r in instance.records)
    return Instance(records, instance.name, alignment, instance.inplace_pairs,
                    dict(instance.provenance, size_alignment=alignment))
