"""The preload-aware planning problem (``docs/problems.md``, after FlexNN, MobiCom'24): plain data.

Layers ``0..L-1`` run in order; layer ``l`` computes for ``compute_us`` µs. Tensors of kind
``activation`` or ``scratch`` live on the closed step interval ``[first_op, last_op]``. A
``weight`` belongs to layer ``l_w = first_op = last_op``, has ``size`` bytes and ``load_us``.
A plan pins a weight (resident on ``[0, L-1]``, no load) or preloads it at a step ``p_w`` with
``max(0, l_w - window) <= p_w <= l_w`` (resident on ``[p_w, l_w]``), and gives every tensor an
offset. Timing and validity live in :mod:`optplan.preload.simulate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from optplan.errors import InputError
from optplan.model import MAX_VALUE, require_int

__all__ = ["KINDS", "Layer", "PreloadTensor", "PreloadInstance", "PlanEntry", "PreloadPlan"]

KINDS = ("activation", "scratch", "weight")


@dataclass(frozen=True)
class Layer:
    """One layer in execution order: a name and its compute time in integer µs."""

    name: str
    compute_us: int

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise InputError(f"must be a string, got {self.name!r}", field="layers.name")
        object.__setattr__(self, "compute_us",
                           require_int(self.compute_us, f"layers.compute_us ({self.name})",
                                    minimum=0))


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
class PreloadInstance:
    """Layers, tensors, the preload ``window`` (``None``: no limit) and the memory ``budget``
    (``None``: unlimited)."""

    layers: tuple[Layer, ...]
    tensors: tuple[PreloadTensor, ...]
    name: str = "preload"
    window: int | None = None
    budget: int | None = None
    provenance: dict = field(default_factory=dict, compare=False, repr=False)

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
class PlanEntry:
    """One tensor's placement: ``offset``; for a weight, ``pinned`` or a ``preload_op``."""

    id: str
    offset: int
    preload_op: int | None = None
    pinned: bool = False


@dataclass(frozen=True)
class PreloadPlan:
    """One entry per tensor (in the instance's order) with the *stated* latency and peak;
    the validator recomputes both and reports a mismatch."""

    entries: tuple[PlanEntry, ...]
    latency_us: int
    peak: int

    def __post_init__(self):
        object.__setattr__(self, "entries", tuple(self.entries))

    @cached_property
    def by_id(self) -> dict[str, PlanEntry]:
        return {entry.id: entry for entry in self.entries}
