"""The problem model: usage records, instances and solutions (plain frozen data).

Time is the operator index in a fixed execution order. A usage record is live on every op of
the *closed* interval ``[first_op, last_op]`` and needs ``size`` bytes. Two records conflict
when their intervals intersect.

An instance may declare in-place pairs ``(a, b)`` (``docs/problems.md``): tensor ``b`` may occupy
exactly ``a``'s memory (the same shared object, or the same offset) provided
``a.last_op == b.first_op`` and ``b.size <= a.size``. Otherwise the two conflict as usual.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from optplan.errors import InputError

__all__ = [
    "UsageRecord",
    "Instance",
    "SharedObjectsSolution",
    "OffsetsSolution",
    "Solution",
    "round_up",
    "require_int",
]


def round_up(value: int, alignment: int) -> int:
    """The smallest multiple of ``alignment`` that is ``>= value``."""
    return -(-value // alignment) * alignment


MAX_VALUE = 2**62
"""The largest size, op, alignment, and sum of aligned sizes an instance may hold.

Every method's plan fits in the sum of the sizes rounded up to the alignment (stacking every
tensor is a plan, and a placement never starts above the tensors below it), so a sum within
2^62 keeps every offset, arena, breadth, bound and ``offset + size + alignment`` inside int64:
heuristics may use numpy int64 arrays without overflow checks. An instance that does not fit
is refused when it is built (:class:`Instance`), once for every method."""


def require_int(value, field_name: str, *, minimum: int | None = None) -> int:
    """``value`` as an int, or an InputError naming ``field_name`` (non-integers, booleans,
    values below ``minimum`` or above 2^62)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be an integer, got {value!r}", field=field_name)
    value = int(value)
    if minimum is not None and value < minimum:
        raise InputError(f"must be >= {minimum}, got {value}", field=field_name)
    if value > MAX_VALUE:
        raise InputError(f"too large: {value} > 2^62", field=field_name)
    return value


@dataclass(frozen=True)
class UsageRecord:
    """A tensor's usage: live on ops ``first_op..last_op`` (both included), ``size`` bytes."""

    id: str
    first_op: int
    last_op: int
    size: int

    def __post_init__(self):
        if not isinstance(self.id, str) or not self.id:
            raise InputError(f"must be a non-empty string, got {self.id!r}", field="id")
        where = f" (tensor {self.id})"
        try:
            object.__setattr__(self, "first_op", require_int(self.first_op, "first_op", minimum=0))
            object.__setattr__(self, "last_op", require_int(self.last_op, "last_op", minimum=0))
            object.__setattr__(self, "size", require_int(self.size, "size", minimum=1))
        except InputError as error:
            raise InputError(error.message + where, field=error.field) from None
        if self.last_op < self.first_op:
            raise InputError(f"last_op {self.last_op} < first_op {self.first_op}{where}",
                             field="last_op")

    def conflicts_with(self, other: "UsageRecord") -> bool:
        return self.first_op <= other.last_op and other.first_op <= self.last_op


@dataclass(frozen=True)
class Instance:
    """Usage records plus the settings shared by the shared-objects and offsets problems.

    ``inplace_pairs`` holds record *indices* ``(a, b)``; ``alignment`` applies to offsets.
    """

    records: tuple[UsageRecord, ...]
    name: str = "instance"
    alignment: int = 1
    inplace_pairs: tuple[tuple[int, int], ...] = ()
    provenance: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "records", tuple(self.records))
        object.__setattr__(self, "alignment", require_int(self.alignment, "alignment", minimum=1))
        seen: set[str] = set()
        for record in self.records:
            if not isinstance(record, UsageRecord):
                raise InputError(f"expected a UsageRecord, got {type(record).__name__}",
                                 field="records")
            if record.id in seen:
                raise InputError(f"duplicate id {record.id!r}", field="id")
            seen.add(record.id)
        pairs = []
        for a, b in self.inplace_pairs:
            a = require_int(a, "inplace")
            b = require_int(b, "inplace")
            if not (0 <= a < len(self.records) and 0 <= b < len(self.records)) or a == b:
                raise InputError(f"pair ({a}, {b}) does not name two records", field="inplace")
            ra, rb = self.records[a], self.records[b]
            if ra.last_op != rb.first_op:
                raise InputError(f"pair ({ra.id}, {rb.id}): {ra.id}.last_op {ra.last_op} != "
                                 f"{rb.id}.first_op {rb.first_op}", field="inplace")
            if rb.size > ra.size:
                raise InputError(f"pair ({ra.id}, {rb.id}): {rb.id}.size {rb.size} > "
                                 f"{ra.id}.size {ra.size}", field="inplace")
            pairs.append((a, b))
        if len(set(pairs)) != len(pairs):
            raise InputError("duplicate in-place pair", field="inplace")
        object.__setattr__(self, "inplace_pairs", tuple(pairs))
        _check_total(self.records, self.alignment)

    def __repr__(self) -> str:
        """One short line (the records themselves are in ``.records``)."""
        extras = [f"alignment={self.alignment}"] if self.alignment != 1 else []
        if self.inplace_pairs:
            extras.append(f"inplace_pairs={len(self.inplace_pairs)}")
        return (f"Instance({self.name!r}, {len(self)} records, {self.num_ops} ops"
                + "".join(f", {extra}" for extra in extras) + ")")

    # Cheap derived views (bulk algorithms use the numpy arrays).
    def __len__(self) -> int:
        return len(self.records)

    @cached_property
    def first_ops(self) -> np.ndarray:
        return np.fromiter((r.first_op for r in self.records), dtype=np.int64, count=len(self))

    @cached_property
    def last_ops(self) -> np.ndarray:
        return np.fromiter((r.last_op for r in self.records), dtype=np.int64, count=len(self))

    @cached_property
    def sizes(self) -> np.ndarray:
        return np.fromiter((r.size for r in self.records), dtype=np.int64, count=len(self))

    @cached_property
    def index_of(self) -> dict[str, int]:
        return {r.id: i for i, r in enumerate(self.records)}

    @cached_property
    def inplace_set(self) -> frozenset[tuple[int, int]]:
        """Both orientations of every in-place pair, for O(1) look-ups."""
        return frozenset(self.inplace_pairs) | frozenset((b, a) for a, b in self.inplace_pairs)

    @property
    def num_ops(self) -> int:
        """One past the last op any record uses (0 for an empty instance)."""
        return int(self.last_ops.max()) + 1 if len(self) else 0

    def without_inplace(self) -> "Instance":
        if not self.inplace_pairs:
            return self
        return Instance(self.records, self.name, self.alignment, (), self.provenance)

    def with_alignment(self, alignment: int) -> "Instance":
        return Instance(self.records, self.name, alignment, self.inplace_pairs, self.provenance)

    @classmethod
    def from_tuples(cls, triples, *, name: str = "instance", alignment: int = 1,
                    inplace_pairs=()) -> "Instance":
        """Build from ``(first_op, last_op, size)`` triples; ids are ``"0"``, ``"1"``, ..."""
        records = [UsageRecord(str(i), first, last, size) for i, (first, last, size)
                   in enumerate(triples)]
        return cls(tuple(records), name=name, alignment=alignment, inplace_pairs=inplace_pairs)


def _check_total(records, alignment: int) -> None:
    """Refuse instances whose aligned sizes sum beyond :data:`MAX_VALUE`."""
    total = sum(record.size for record in records)
    aligned = total if alignment == 1 else sum(round_up(r.size, alignment) for r in records)
    if aligned > MAX_VALUE:
        field_name = "size" if total > MAX_VALUE else "alignment"
        rounded = "" if field_name == "size" else f" rounded up to the alignment {alignment}"
        raise InputError(f"the tensors' sizes{rounded} sum to {aligned}, above the limit "
                         "2^62 that keeps every plan within 64-bit integers", field=field_name)


@dataclass(frozen=True)
class SharedObjectsSolution:
    """Tensor i goes to object ``object_ids[i]``; object j has ``object_sizes[j]`` bytes."""

    object_ids: tuple[int, ...]
    object_sizes: tuple[int, ...]

    def __post_init__(self):
        object.__setattr__(self, "object_ids", tuple(int(x) for x in self.object_ids))
        object.__setattr__(self, "object_sizes", tuple(int(x) for x in self.object_sizes))

    @property
    def total_size(self) -> int:
        return sum(self.object_sizes)

    @classmethod
    def from_object_ids(cls, instance: Instance, object_ids) -> "SharedObjectsSolution":
        """Object sizes derived as the largest member of each object (ids 0..k-1)."""
        object_ids = [int(x) for x in object_ids]
        count = max(object_ids) + 1 if object_ids else 0
        sizes = [0] * count
        for record, obj in zip(instance.records, object_ids):
            if obj >= 0:
                sizes[obj] = max(sizes[obj], record.size)
        return cls(tuple(object_ids), tuple(sizes))


@dataclass(frozen=True)
class OffsetsSolution:
    """Tensor i starts at byte ``offsets[i]``; ``arena_size`` is the stated ``max(offset+size)``."""

    offsets: tuple[int, ...]
    arena_size: int

    def __post_init__(self):
        object.__setattr__(self, "offsets", tuple(int(x) for x in self.offsets))
        object.__setattr__(self, "arena_size", int(self.arena_size))

    @classmethod
    def from_offsets(cls, instance: Instance, offsets) -> "OffsetsSolution":
        offsets = tuple(int(x) for x in offsets)
        top = max((o + r.size for o, r in zip(offsets, instance.records)), default=0)
        return cls(offsets, top)


Solution = SharedObjectsSolution | OffsetsSolution
