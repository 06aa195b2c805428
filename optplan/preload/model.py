"""The preload-aware planning problem (``docs/problems.md``, after FlexNN, MobiCom'24): plain data.

Layers ``0..L-1`` run in order; layer ``l`` computes for ``compute_us`` µs. Tensors of kind
``activation`` or ``scratch`` live on the closed step interval ``[first_op, last_op]``. A
``weight`` belongs to layer ``l_w = first_op = last_op``, has ``size`` bytes and ``load_us``.
A plan pins a weight (resident on ``[0, L-1]``, no load) or preloads it at a step ``p_w`` with
``max(0, l_w - window) <= p_w <= l_w`` (resident on ``[p_w, l_w]``), and gives every tensor an
offset. Timing and validity live in :mod:`optplan.preload.simulate`.

Layer slicing (FlexNN, MobiCom'24, §3.2; :mod:`optplan.preload.slicing`) adds optional data:
a layer's :class:`LayerOp` (what kernel selection and slicing need to know of its operator), the
instance's :class:`SliceCosts` (the platform's slicing parameters) and a plan's
:class:`LayerSlicing` decisions. Instances and plans without them are exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from optplan.errors import InputError
from optplan.model import MAX_VALUE, require_int

__all__ = ["KINDS", "SLICE_KINDS", "KernelCost", "LayerOp", "Layer", "PreloadTensor",
           "SliceCosts", "PreloadInstance", "LayerSlicing", "PlanEntry", "PreloadPlan"]

KINDS = ("activation", "scratch", "weight")
SLICE_KINDS = ("weight", "input")


def _name(value, field_name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"must be a non-empty string, got {value!r}", field=field_name)
    return value


@dataclass(frozen=True)
class KernelCost:
    """Another kernel (implementation) of a layer, priced by the cost model: its compute time,
    the bytes and load time of the layer's weights in its format, its scratch bytes."""

    name: str
    compute_us: int
    weight_bytes: int
    load_us: int
    scratch_bytes: int = 0

    def __post_init__(self):
        _name(self.name, "kernels.name")
        for key in ("compute_us", "weight_bytes", "load_us", "scratch_bytes"):
            object.__setattr__(self, key, require_int(getattr(self, key), f"kernels.{key}",
                                                      minimum=0))


@dataclass(frozen=True)
class LayerOp:
    """What kernel selection and slicing know of a layer's operator (absent: neither applies).

    ``type`` is the operator (``FULLY_CONNECTED``, ``CONV_2D``, ...), ``kernel`` the kernel the
    layer's compute time, weights and scratch are priced for. ``rows`` is the dimension weight
    slicing splits (an FC layer's output features, a convolution's output channels; ``None``:
    not weight-sliceable), ``channels`` the one input slicing splits (the channels of the
    im2col "flattened input", ``C_in·K_h·K_w``; ``None``: not input-sliceable), ``output`` the activation the
    layer writes, ``merge_us`` the time to add one partial output into it. ``kernels`` are the
    layer's other kernels, none faster than its own (so the latency bound of the instance
    bounds every kernel choice).
    """

    type: str
    kernel: str
    rows: int | None = None
    channels: int | None = None
    output: str | None = None
    merge_us: int = 0
    kernels: tuple[KernelCost, ...] = ()

    def __post_init__(self):
        _name(self.type, "op.type")
        _name(self.kernel, "op.kernel")
        for key in ("rows", "channels"):
            if getattr(self, key) is not None:
                object.__setattr__(self, key, require_int(getattr(self, key), f"op.{key}",
                                                          minimum=1))
        if self.output is not None:
            _name(self.output, "op.output")
        object.__setattr__(self, "merge_us", require_int(self.merge_us, "op.merge_us",
                                                         minimum=0))
        object.__setattr__(self, "kernels", tuple(self.kernels))
        names = [self.kernel]
        for kernel in self.kernels:
            if not isinstance(kernel, KernelCost):
                raise InputError(f"expected a KernelCost, got {type(kernel).__name__}",
                                 field="op.kernels")
            if kernel.name in names:
                raise InputError(f"kernel {kernel.name!r} listed twice", field="op.kernels.name")
            names.append(kernel.name)

    def alternative(self, name: str) -> KernelCost | None:
        """The other kernel called ``name`` (``None`` when there is none)."""
        return next((kernel for kernel in self.kernels if kernel.name == name), None)


@dataclass(frozen=True)
class Layer:
    """One layer in execution order: a name, its compute time in integer µs and, for kernel
    selection and slicing, its operator (``None``: neither applies)."""

    name: str
    compute_us: int
    op: LayerOp | None = None

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise InputError(f"must be a string, got {self.name!r}", field="layers.name")
        object.__setattr__(self, "compute_us",
                           require_int(self.compute_us, f"layers.compute_us ({self.name})",
                                    minimum=0))
        if self.op is not None and not isinstance(self.op, LayerOp):
            raise InputError(f"expected a LayerOp, got {type(self.op).__name__}",
                             field="layers.op")


@dataclass(frozen=True)
class PreloadTensor:
    """An activation, scratch buffer or weight (``load_us`` only for weights)."""

    id: str
    kind: str
    size: int
    first_op: int
    last_op: int
    load_us: int = 0

    def __post_init__(self):
        if not isinstance(self.id, str) or not self.id:
            raise InputError(f"must be a non-empty string, got {self.id!r}", field="tensors.id")
        where = f" (tensor {self.id})"
        if self.kind not in KINDS:
            raise InputError(f"must be one of {', '.join(KINDS)}, got {self.kind!r}{where}",
                             field="tensors.kind")
        for name, minimum in (("size", 1), ("first_op", 0), ("last_op", 0), ("load_us", 0)):
            try:
                value = require_int(getattr(self, name), f"tensors.{name}", minimum=minimum)
            except InputError as error:
                raise InputError(error.message + where, field=error.field) from None
            object.__setattr__(self, name, value)
        if self.last_op < self.first_op:
            raise InputError(f"last_op {self.last_op} < first_op {self.first_op}{where}",
                             field="tensors.last_op")
        if self.kind == "weight" and self.first_op != self.last_op:
            raise InputError(f"a weight needs first_op == last_op (its layer), got "
                             f"[{self.first_op}, {self.last_op}]{where}", field="tensors.last_op")
        if self.kind == "scratch" and self.first_op != self.last_op:
            raise InputError(f"a scratch buffer lives on one layer, got "
                             f"[{self.first_op}, {self.last_op}]{where}", field="tensors.last_op")
        if self.kind != "weight" and self.load_us:
            raise InputError(f"only weights have a load time{where}", field="tensors.load_us")

    @property
    def is_weight(self) -> bool:
        return self.kind == "weight"

    @property
    def layer(self) -> int:
        """The layer a weight belongs to (``first_op``)."""
        return self.first_op


@dataclass(frozen=True)
class SliceCosts:
    """The platform's slicing parameters (FlexNN §3.2): ``overhead_us`` µs of dispatch for
    every sub-layer a weight-sliced layer adds, and ``max_input_slices``, the threshold on
    the number of input slices."""

    overhead_us: int
    max_input_slices: int

    def __post_init__(self):
        object.__setattr__(self, "overhead_us", require_int(self.overhead_us,
                                                            "slice_costs.overhead_us", minimum=0))
        object.__setattr__(self, "max_input_slices",
                           require_int(self.max_input_slices, "slice_costs.max_input_slices",
                                       minimum=1))


@dataclass(frozen=True)
class PreloadInstance:
    """Layers, tensors, the preload ``window`` (``None``: no limit), the memory ``budget``
    (``None``: unlimited) and the platform's ``slice_costs`` (``None``: the defaults of
    :mod:`optplan.preload.slicing`)."""

    layers: tuple[Layer, ...]
    tensors: tuple[PreloadTensor, ...]
    name: str = "preload"
    window: int | None = None
    budget: int | None = None
    provenance: dict = field(default_factory=dict, compare=False, repr=False)
    slice_costs: SliceCosts | None = None

    def __post_init__(self):
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "tensors", tuple(self.tensors))
        if not self.layers:
            raise InputError("an instance needs at least one layer", field="layers")
        for layer in self.layers:
            if not isinstance(layer, Layer):
                raise InputError(f"expected a Layer, got {type(layer).__name__}", field="layers")
        seen: set[str] = set()
        for tensor in self.tensors:
            if not isinstance(tensor, PreloadTensor):
                raise InputError(f"expected a PreloadTensor, got {type(tensor).__name__}",
                                 field="tensors")
            if tensor.id in seen:
                raise InputError(f"duplicate id {tensor.id!r}", field="tensors.id")
            seen.add(tensor.id)
            if tensor.last_op >= len(self.layers):
                raise InputError(f"last_op {tensor.last_op} is not a layer (there are "
                                 f"{len(self.layers)}) (tensor {tensor.id})",
                                 field="tensors.last_op")
        # Like an Instance's (optplan.model.MAX_VALUE): every plan and latency stays in int64.
        for total, what, field_name in (
                (sum(t.size for t in self.tensors), "the tensors' sizes", "tensors.size"),
                (sum(layer.compute_us for layer in self.layers)
                 + sum(t.load_us for t in self.tensors), "the compute and load times",
                 "layers.compute_us")):
            if total > MAX_VALUE:
                raise InputError(f"{what} sum to {total}, above the limit 2^62 that keeps every "
                                 "plan within 64-bit integers", field=field_name)
        if self.window is not None:
            object.__setattr__(self, "window", require_int(self.window, "window", minimum=0))
        if self.budget is not None:
            object.__setattr__(self, "budget", require_int(self.budget, "budget", minimum=0))
        if self.slice_costs is not None and not isinstance(self.slice_costs, SliceCosts):
            raise InputError(f"expected SliceCosts, got {type(self.slice_costs).__name__}",
                             field="slice_costs")
        self._check_ops()

    def _check_ops(self) -> None:
        """A layer's ``op.output`` names an activation it writes; no other kernel is faster."""
        if all(layer.op is None for layer in self.layers):
            return
        written = {(t.id, t.first_op) for t in self.tensors if t.kind == "activation"}
        for index, layer in enumerate(self.layers):
            if layer.op is None:
                continue
            if layer.op.output is not None and (layer.op.output, index) not in written:
                raise InputError(f"{layer.op.output!r} is not an activation written by layer "
                                 f"{index} ({layer.name})", field=f"layers[{index}].op.output")
            for kernel in layer.op.kernels:
                if kernel.compute_us < layer.compute_us:
                    raise InputError(f"kernel {kernel.name!r} of layer {index} ({layer.name}) "
                                     f"computes in {kernel.compute_us} µs, faster than the "
                                     f"layer's {layer.compute_us} µs: the layer must carry its "
                                     "fastest kernel",
                                     field=f"layers[{index}].op.kernels.compute_us")

    # Cheap derived views.

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def __len__(self) -> int:
        return len(self.tensors)

    @cached_property
    def compute_us(self) -> tuple[int, ...]:
        return tuple(layer.compute_us for layer in self.layers)

    @cached_property
    def index_of(self) -> dict[str, int]:
        return {tensor.id: i for i, tensor in enumerate(self.tensors)}

    @cached_property
    def load_order(self) -> tuple[int, ...]:
        """Indices of the weights in the loader's order ``(l_w, id)``."""
        weights = [i for i, t in enumerate(self.tensors) if t.is_weight]
        return tuple(sorted(weights, key=lambda i: (self.tensors[i].layer, self.tensors[i].id)))

    def earliest_preload(self, index: int) -> int:
        """``max(0, l_w - window)`` of weight ``index`` (0 without a window)."""
        layer = self.tensors[index].layer
        return 0 if self.window is None else max(0, layer - self.window)

    def with_budget(self, budget: int | None) -> "PreloadInstance":
        return replace(self, budget=budget)

    def with_window(self, window: int | None) -> "PreloadInstance":
        return replace(self, window=window)


@dataclass(frozen=True)
class LayerSlicing:
    """A plan's decision for layer ``layer`` (its index in the instance the plan is for): run
    it with ``kernel`` (``None``: its own) as ``slices`` sub-layers of ``kind`` (``"weight"``
    or ``"input"``; ``None`` exactly when ``slices`` is 1)."""

    layer: int
    kind: str | None = None
    slices: int = 1
    kernel: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "layer", require_int(self.layer, "slicing.layer", minimum=0))
        object.__setattr__(self, "slices", require_int(self.slices, "slicing.slices",
                                                       minimum=1))
        if self.kind is not None and self.kind not in SLICE_KINDS:
            raise InputError(f"must be one of {', '.join(SLICE_KINDS)}, got {self.kind!r}",
                             field="slicing.kind")
        if (self.kind is None) != (self.slices == 1):
            raise InputError(f"layer {self.layer}: a kind goes with more than one slice, got "
                             f"kind {self.kind!r} and {self.slices} slice(s)",
                             field="slicing.kind")
        if self.kernel is not None:
            _name(self.kernel, "slicing.kernel")


@dataclass(frozen=True)
class PlanEntry:
    """One tensor's placement: ``offset``; for a weight, ``pinned`` or a ``preload_op``."""

    id: str
    offset: int
    preload_op: int | None = None
    pinned: bool = False


@dataclass(frozen=True)
class PreloadPlan:
    """One entry per tensor (in the instance's order) with the *stated* latency and peak;
    the validator recomputes both and reports a mismatch. A plan with ``slicing`` is a plan
    for the instance those layer decisions make (its entries name that instance's tensors)."""

    entries: tuple[PlanEntry, ...]
    latency_us: int
    peak: int
    slicing: tuple[LayerSlicing, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "entries", tuple(self.entries))
        object.__setattr__(self, "slicing", tuple(self.slicing))

    @cached_property
    def by_id(self) -> dict[str, PlanEntry]:
        return {entry.id: entry for entry in self.entries}
