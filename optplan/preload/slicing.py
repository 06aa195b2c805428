"""FlexNN's layer slicing and kernel selection as transformations of preload instances.

FlexNN (Li et al., MobiCom'24, §3.2, "bottleneck-aware layer slicing") lowers a layer's
footprint by running it as ``k`` sub-layers. The result is an ordinary
:class:`~optplan.preload.model.PreloadInstance`: every preload method, the validator and the
simulator run on it unchanged. A layer needs its :class:`~optplan.preload.model.LayerOp` (made
by :func:`optplan.preload.costmodel.preload_instance_from_graph` with ``kernels=True``). Our
model of the seed:

**Kernel selection.** A layer runs with its own kernel (the cost model gives every layer its
fastest one) or with one of ``op.kernels``, which swaps the layer's compute time, the size and
load time of its (single) weight tensor, and its scratch: one buffer ``"<layer>/<kernel>"`` of
the kernel's ``scratch_bytes`` (none when 0).

**Weight slicing** (``kind="weight"``; FC layers and Winograd convolutions, the
weight-dominated ones) splits the weights by rows (output features, output channels; ``k`` must
divide ``op.rows``). Sub-layer ``j`` carries weight slice ``"<weight>[j+1/k]"`` and computes
output rows ``j``: a contiguous part of the output (row-major FC output, channel-major
convolution output), so the merge is free and needs no buffer. Every sub-layer reads the whole
input and the kernel's scratch (the im2col or Winograd-transformed input is made once): that
scratch becomes an activation over the sub-layers.

**Input slicing** (``kind="input"``; im2col + GEMM convolutions, the intermediate-dominated
ones) splits the flattened input (the im2col scratch) by its channels (``C_in·K_h·K_w``;
``k`` must divide ``op.channels`` and not exceed the platform's ``max_input_slices``).
Sub-layer ``j`` builds slice ``"<scratch>[j+1/k]"`` and multiplies it by the weight columns
of its channels. The seed
keeps the weights whole, but a preload weight belongs to one layer, so sub-layer ``j`` carries
the columns of its channels (``"<weight>[j+1/k]"``, the same bytes and load time in total).
Without a preload window this relaxes the seed: every schedule of the whole weight is one of
the column slices (all preloaded at the whole weight's step, resident no longer), and used
columns may go early.
Sub-layer 0 writes the output; every later one writes a partial output into a merge buffer
``"<layer>/partial[j+1/k]"`` (a scratch of the output's size: a GEMM writes its result, it
does not accumulate) and adds it into the output.

**Times.** Bytes, load times and compute times split as evenly as integers allow (shares sum
to the whole). Sub-layer ``j >= 1`` also pays ``overhead_us`` under weight slicing (one more
layer to dispatch: FlexNN makes weight slices sub-layers of the graph, so their number is kept
minimal) or ``op.merge_us`` under input slicing (adding its partial output; input slices are
made inside the kernel, so their number is maximised within the threshold). Neither is
negative, so no slicing beats the instance's latency bound.

**Steps.** Steps after the layer shift by ``k - 1``; a tensor live at the layer is live on all
its sub-layers (an output from the first, an input up to the last). The preload ``window``
counts steps of the sliced instance. Sub-layers carry no ``op``: they are not sliced again.

Platform parameters come from ``instance.slice_costs``, else :data:`DEFAULT_SLICE_COSTS`.
:data:`SLICE_MENU` is the menu of slice counts the planners choose from.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from optplan.errors import InputError
from optplan.preload.model import (SLICE_KINDS, Layer, LayerSlicing, PreloadInstance,
                                   PreloadTensor, SliceCosts)

__all__ = ["SLICE_MENU", "DEFAULT_SLICE_COSTS", "FLATTENED_INPUT_KERNEL", "SlicedLayer",
           "slice_costs", "slice_layer", "apply_slicing", "sliced_layer", "is_identity",
           "slicing_options", "all_slicings", "resident_activations", "layer_peak",
           "sliced_budget_lower_bound"]

SLICE_MENU = (1, 2, 4, 8, 16)
"""The slice counts the planners choose from (those a layer admits, see the module docstring)."""

DEFAULT_SLICE_COSTS = SliceCosts(overhead_us=20, max_input_slices=16)
"""For instances without ``slice_costs``: the ``phone`` profile's values (assumed, not measured:
a layer dispatch of tens of µs on a phone CPU; 16 input slices)."""

FLATTENED_INPUT_KERNEL = "im2col"
"""The kernel whose scratch is the flattened input that input slicing splits."""


@dataclass(frozen=True)
class SlicedLayer:
    """What one layer becomes: its sub-layers, and the tensors that replace its weights and
    scratch, their steps counted from the first sub-layer (``0..len(layers)-1``)."""

    layers: tuple[Layer, ...]
    tensors: tuple[PreloadTensor, ...]


def slice_costs(instance: PreloadInstance) -> SliceCosts:
    """The instance's slicing parameters, else :data:`DEFAULT_SLICE_COSTS`."""
    return instance.slice_costs or DEFAULT_SLICE_COSTS


def _share(total: int, parts: int, index: int) -> int:
    """Part ``index`` of ``total`` split into ``parts`` as evenly as integers allow."""
    return total * (index + 1) // parts - total * index // parts


def _refuse(instance: PreloadInstance, layer: int, message: str, field: str) -> InputError:
    name = instance.layers[layer].name
    return InputError(f"layer {layer} ({name}): {message}", field=f"slicing.{field}")


def is_identity(instance: PreloadInstance, choice: LayerSlicing) -> bool:
    """``True`` when ``choice`` leaves its layer as it is (one slice, the layer's own kernel)."""
    op = instance.layers[choice.layer].op if choice.layer < instance.num_layers else None
    return choice.slices == 1 and (choice.kernel is None or
                                   (op is not None and choice.kernel == op.kernel))


def _with_kernel(instance: PreloadInstance, layer: int, kernel: str | None):
    """The layer (with its op), weights and scratch under ``kernel`` (``None``: its own)."""
    base = instance.layers[layer]
    weights = [t for t in instance.tensors if t.is_weight and t.layer == layer]
    scratch = [t for t in instance.tensors if t.kind == "scratch" and t.first_op == layer]
    op = base.op
    if kernel is None or (op is not None and kernel == op.kernel):
        return base, weights, scratch
    if op is None:
        raise _refuse(instance, layer, "carries no operator facts (op), which kernel selection "
                      "and slicing need", "kernel")
    alternative = op.alternative(kernel)
    if alternative is None:
        valid = ", ".join([op.kernel] + [k.name for k in op.kernels])
        raise _refuse(instance, layer, f"has no kernel {kernel!r} (its kernels: {valid})",
                      "kernel")
    if len(weights) != (1 if alternative.weight_bytes else 0):
        raise _refuse(instance, layer, f"kernel selection needs one weight tensor of "
                      f"{alternative.weight_bytes} bytes, the layer has {len(weights)}", "kernel")
    weights = [replace(w, size=alternative.weight_bytes, load_us=alternative.load_us)
               for w in weights]
    scratch = [PreloadTensor(f"{base.name}/{kernel}", "scratch", alternative.scratch_bytes,
                             layer, layer)] if alternative.scratch_bytes else []
    layer_after = Layer(base.name, alternative.compute_us, replace(op, kernel=kernel, kernels=()))
    return layer_after, weights, scratch


def _split(tensor: PreloadTensor, parts: int, index: int) -> PreloadTensor:
    return PreloadTensor(f"{tensor.id}[{index + 1}/{parts}]", tensor.kind,
                         _share(tensor.size, parts, index), index, index,
                         _share(tensor.load_us, parts, index))


def _check_slices(instance, layer, parts: int, dimension: int, what: str,
                  pieces: list[PreloadTensor]) -> None:
    if parts > dimension:
        raise _refuse(instance, layer, f"{parts} slices exceed its {dimension} {what}", "slices")
    if dimension % parts:
        raise _refuse(instance, layer, f"{parts} slices do not divide its {dimension} {what}",
                      "slices")
    for tensor in pieces:
        if tensor.size < parts:
            raise _refuse(instance, layer, f"{tensor.id} has {tensor.size} bytes, fewer than "
                          f"{parts} slices", "slices")


def sliced_layer(instance: PreloadInstance, choice: LayerSlicing) -> SlicedLayer:
    """What layer ``choice.layer`` becomes under ``choice`` (see the module docstring).

    Raises an :class:`InputError` naming the field (``slicing.kind``, ``slicing.slices``,
    ``slicing.kernel``) when the layer does not admit it.
    """
    layer = choice.layer
    if layer >= instance.num_layers:
        raise InputError(f"layer {layer} does not exist (there are {instance.num_layers})",
                         field="slicing.layer")
    base, weights, scratch = _with_kernel(instance, layer, choice.kernel)
    parts = choice.slices
    if parts == 1:
        local = [replace(t, first_op=0, last_op=0) for t in weights + scratch]
        return SlicedLayer((base,), tuple(local))
    op = base.op
    if op is None:
        raise _refuse(instance, layer, "carries no operator facts (op), which slicing needs: "
                      "it cannot be sliced", "kind")
    costs = slice_costs(instance)
    if choice.kind == "weight":
        if op.rows is None:
            raise _refuse(instance, layer, f"a {op.type} layer with kernel {op.kernel} cannot "
                          "be weight-sliced (no weight rows)", "kind")
        if not weights:
            raise _refuse(instance, layer, "has no weights to slice", "kind")
        _check_slices(instance, layer, parts, op.rows, "weight rows", weights)
        tensors = [_split(w, parts, j) for j in range(parts) for w in weights]
        tensors += [replace(s, kind="activation", first_op=0, last_op=parts - 1)
                    for s in scratch]
        extra = costs.overhead_us
    else:
        if op.kernel != FLATTENED_INPUT_KERNEL or op.channels is None:
            raise _refuse(instance, layer, f"a {op.type} layer with kernel {op.kernel} cannot "
                          f"be input-sliced (only the {FLATTENED_INPUT_KERNEL} kernel has a "
                          "flattened input)", "kind")
        if len(scratch) != 1:
            raise _refuse(instance, layer, f"input slicing needs one scratch buffer (the "
                          f"flattened input), the layer has {len(scratch)}", "kind")
        if op.output is None:
            raise _refuse(instance, layer, "names no output (op.output) to merge partial "
                          "outputs into", "kind")
        if parts > costs.max_input_slices:
            raise _refuse(instance, layer, f"{parts} slices exceed the platform's threshold of "
                          f"{costs.max_input_slices} input slices", "slices")
        _check_slices(instance, layer, parts, op.channels, "flattened input channels",
                      weights + scratch)
        output = instance.tensors[instance.index_of[op.output]]
        tensors = [_split(t, parts, j) for j in range(parts) for t in weights + scratch]
        tensors += [PreloadTensor(f"{base.name}/partial[{j + 1}/{parts}]", "scratch",
                                  output.size, j, j) for j in range(1, parts)]
        extra = op.merge_us
    layers = tuple(Layer(f"{base.name}[{j + 1}/{parts}]",
                         _share(base.compute_us, parts, j) + (extra if j else 0))
                   for j in range(parts))
    return SlicedLayer(layers, tuple(tensors))


def _checked_choices(instance: PreloadInstance, slicing) -> dict[int, LayerSlicing]:
    choices: dict[int, LayerSlicing] = {}
    for choice in slicing:
        if not isinstance(choice, LayerSlicing):
            raise InputError(f"expected a LayerSlicing, got {type(choice).__name__}",
                             field="slicing")
        if choice.layer >= instance.num_layers:
            raise InputError(f"layer {choice.layer} does not exist (there are "
                             f"{instance.num_layers})", field="slicing.layer")
        if choice.layer in choices:
            raise InputError(f"layer {choice.layer} is sliced twice", field="slicing.layer")
        if not is_identity(instance, choice):
            choices[choice.layer] = choice
    return choices


def apply_slicing(instance: PreloadInstance, slicing) -> PreloadInstance:
    """The instance with every decision of ``slicing`` (:class:`LayerSlicing` objects whose
    ``layer`` are indices of ``instance``) applied; ``instance`` itself when none changes it."""
    choices = _checked_choices(instance, slicing)
    if not choices:
        return instance
    pieces = {layer: sliced_layer(instance, choice) for layer, choice in choices.items()}
    start, end, layers = [], [], []
    for index, layer in enumerate(instance.layers):
        start.append(len(layers))
        layers.extend(pieces[index].layers if index in pieces else (layer,))
        end.append(len(layers) - 1)
    tensors: list[PreloadTensor] = []
    placed: set[int] = set()
    for tensor in instance.tensors:
        owner = tensor.first_op
        if owner in pieces and tensor.kind in ("weight", "scratch"):
            if owner not in placed:   # the layer's new tensors take its first own one's place
                placed.add(owner)
                tensors.extend(_shifted(pieces[owner].tensors, start[owner]))
            continue
        tensors.append(replace(tensor, first_op=start[tensor.first_op],
                               last_op=start[tensor.last_op] if tensor.is_weight
                               else end[tensor.last_op]))
    for owner in sorted(set(pieces) - placed):
        tensors.extend(_shifted(pieces[owner].tensors, start[owner]))
    provenance = dict(instance.provenance)
    provenance["slicing"] = list(provenance.get("slicing", [])) + [
        {"layer": c.layer, "kind": c.kind, "slices": c.slices, "kernel": c.kernel}
        for c in sorted(choices.values(), key=lambda c: c.layer)]
    return replace(instance, layers=tuple(layers), tensors=tuple(tensors),
                   provenance=provenance)


def _shifted(tensors, offset: int) -> list[PreloadTensor]:
    return [replace(t, first_op=t.first_op + offset, last_op=t.last_op + offset)
            for t in tensors]


def slice_layer(instance: PreloadInstance, layer: int, kind: str, k: int, *,
                kernel: str | None = None) -> PreloadInstance:
    """The instance in which ``layer`` became ``k`` sub-layers of ``kind`` (``"weight"`` or
    ``"input"``), run with ``kernel`` (``None``: its own). See the module docstring.

    >>> from optplan.preload import Layer, PreloadInstance, PreloadTensor
    >>> from optplan.preload.model import LayerOp
    >>> fc = PreloadInstance((Layer("fc", 10, LayerOp("FULLY_CONNECTED", "gemm", rows=4)),),
    ...                      (PreloadTensor("w", "weight", 64, 0, 0, 8),))
    >>> sliced = slice_layer(fc, 0, "weight", 2)
    >>> [(layer.name, layer.compute_us) for layer in sliced.layers]
    [('fc[1/2]', 5), ('fc[2/2]', 25)]
    >>> [(t.id, t.size, t.layer, t.load_us) for t in sliced.tensors]
    [('w[1/2]', 32, 0, 4), ('w[2/2]', 32, 1, 4)]
    """
    if kind not in SLICE_KINDS:
        raise InputError(f"must be one of {', '.join(SLICE_KINDS)}, got {kind!r}",
                         field="slicing.kind")
    return apply_slicing(instance, [LayerSlicing(layer, kind if k != 1 else None, k, kernel)])


def slicing_options(instance: PreloadInstance, layer: int,
                    menu=SLICE_MENU) -> tuple[LayerSlicing, ...]:
    """Every decision ``layer`` admits with slice counts from ``menu``: for each kernel (its own
    first, then the others by compute time) unsliced, then each admissible weight and input
    slice count in ascending order. The first option is the identity."""
    op = instance.layers[layer].op
    if op is None:
        return (LayerSlicing(layer),)
    options = []
    kernels = [None] + [k.name for k in sorted(op.kernels, key=lambda k: (k.compute_us, k.name))]
    for kernel in kernels:
        candidates = [LayerSlicing(layer, kernel=kernel)] + [
            LayerSlicing(layer, kind, parts, kernel)
            for kind in SLICE_KINDS for parts in sorted(set(menu)) if parts > 1]
        for candidate in candidates:
            try:
                sliced_layer(instance, candidate)
            except InputError:
                continue
            options.append(candidate)
    return tuple(options)


def all_slicings(instance: PreloadInstance, menu=SLICE_MENU):
    """Every combination of :func:`slicing_options` over the layers, as tuples of the
    decisions that change their layer (exponential: for tiny instances)."""
    per_layer = [slicing_options(instance, layer, menu) for layer in range(instance.num_layers)]
    for combination in itertools.product(*per_layer):
        yield tuple(c for c in combination if not is_identity(instance, c))


def resident_activations(instance: PreloadInstance) -> list[int]:
    """Per step, the bytes of the activations live there (what slicing cannot touch)."""
    breadth = [0] * instance.num_layers
    for tensor in instance.tensors:
        if tensor.kind == "activation":
            for step in range(tensor.first_op, tensor.last_op + 1):
                breadth[step] += tensor.size
    return breadth


def layer_peak(instance: PreloadInstance, choice: LayerSlicing,
               activations: list[int] | None = None) -> int:
    """The largest must-live breadth over the sub-layers of ``choice.layer`` under ``choice``:
    the activations live at the layer plus its sub-layer's own weights and scratch.
    ``activations`` is :func:`resident_activations` when the caller has it."""
    if activations is None:
        activations = resident_activations(instance)
    piece = sliced_layer(instance, choice)
    local = [0] * len(piece.layers)
    for tensor in piece.tensors:
        for step in range(tensor.first_op, tensor.last_op + 1):
            local[step] += tensor.size
    return activations[choice.layer] + max(local)


def sliced_budget_lower_bound(instance: PreloadInstance, menu=SLICE_MENU) -> int:
    """No plan with any slicing from ``menu`` fits a smaller budget: the largest, over the
    layers, of the smallest :func:`layer_peak` the layer's options reach (a layer's choice
    changes the breadth at its own sub-layers only)."""
    activations = resident_activations(instance)
    return max((min(layer_peak(instance, option, activations)
                    for option in slicing_options(instance, layer, menu))
                for layer in range(instance.num_layers)), default=0)
