"""The independent validator: every solution from every method goes through it.

It shares no code with any solver. Each check returns :class:`Violation` objects with a
machine-readable kind and a sentence that names the tensors involved, so a failing test or a
rejected solver answer says *why*.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution
from optplan.problems import Problem, get_problem

__all__ = ["ViolationKind", "Violation", "validate", "validate_shared_objects",
           "validate_offsets"]


class ViolationKind(str, enum.Enum):
    """The kinds of violation of optplan's own problems (a problem package may use its own
    strings as kinds)."""

    WRONG_LENGTH = "wrong_length"          # not one entry per record
    BAD_OBJECT_ID = "bad_object_id"        # object id outside 0..len(object_sizes)-1
    OBJECT_TOO_SMALL = "object_too_small"  # an object smaller than one of its tensors
    SHARED_CONFLICT = "shared_conflict"    # two conflicting tensors in one object
    NEGATIVE_OFFSET = "negative_offset"
    MISALIGNED = "misaligned"              # offset not a multiple of the alignment
    OVERLAP = "overlap"                    # two conflicting tensors overlap in memory
    ARENA_MISSTATED = "arena_misstated"    # stated arena size != max(offset + size)
    BAD_INPLACE = "bad_inplace"            # an in-place pair sharing memory other than exactly
    WRONG_TYPE = "wrong_type"              # a solution of the wrong problem
    # Preload-aware planning (optplan.preload, ``docs/problems.md``):
    MISSING_TENSOR = "missing_tensor"      # a plan without exactly one entry per tensor
    OVER_BUDGET = "over_budget"            # offset + size beyond the memory budget
    BAD_PRELOAD = "bad_preload"            # preload step outside [max(0, l_w - window), l_w]
    LATENCY_MISSTATED = "latency_misstated"
    PEAK_MISSTATED = "peak_misstated"


@dataclass(frozen=True)
class Violation:
    kind: ViolationKind | str
    message: str

    def __str__(self) -> str:
        return f"{getattr(self.kind, 'value', self.kind)}: {self.message}"


def validate(instance, problem: Problem | str, solution) -> list[Violation]:
    """All violations of ``solution`` for ``problem`` on ``instance`` (empty when valid), by
    the problem's own validator on the problem table."""
    spec = get_problem(problem)
    if not isinstance(solution, spec.solution_type):
        return [Violation(ViolationKind.WRONG_TYPE, f"expected a {spec.name} solution "
                          f"({spec.solution_type.__name__}), got {type(solution).__name__}")]
    return spec.validate(instance, solution)


def validate_shared_objects(instance: Instance,
                            solution: SharedObjectsSolution) -> list[Violation]:
    records = instance.records
    if len(solution.object_ids) != len(records):
        return [Violation(ViolationKind.WRONG_LENGTH, f"{len(solution.object_ids)} object ids "
                          f"for {len(records)} tensors")]
    violations: list[Violation] = []
    members: dict[int, list[int]] = {}
    for index, obj in enumerate(solution.object_ids):
        if not 0 <= obj < len(solution.object_sizes):
            violations.append(Violation(ViolationKind.BAD_OBJECT_ID,
                                        f"tensor {records[index].id} has object {obj}, but there "
                                        f"are {len(solution.object_sizes)} objects"))
            continue
        members.setdefault(obj, []).append(index)
        if records[index].size > solution.object_sizes[obj]:
            violations.append(Violation(ViolationKind.OBJECT_TOO_SMALL,
                                        f"object {obj} has {solution.object_sizes[obj]} bytes but "
                                        f"tensor {records[index].id} needs {records[index].size}"))
    for obj, indices in members.items():
        indices.sort(key=lambda i: (records[i].first_op, i))
        active: list[int] = []
        for index in indices:
            record = records[index]
            active = [j for j in active if records[j].last_op >= record.first_op]
            for j in active:
                if (j, index) not in instance.inplace_set:
                    violations.append(Violation(
                        ViolationKind.SHARED_CONFLICT,
                        f"tensors {records[j].id} [{records[j].first_op}, {records[j].last_op}] "
                        f"and {record.id} [{record.first_op}, {record.last_op}] are live together "
                        f"but share object {obj}"))
            active.append(index)
    return violations


def validate_offsets(instance: Instance, solution: OffsetsSolution) -> list[Violation]:
    records = instance.records
    if len(solution.offsets) != len(records):
        return [Violation(ViolationKind.WRONG_LENGTH, f"{len(solution.offsets)} offsets for "
                          f"{len(records)} tensors")]
    violations: list[Violation] = []
    alignment = instance.alignment
    for record, offset in zip(records, solution.offsets):
        if offset < 0:
            violations.append(Violation(ViolationKind.NEGATIVE_OFFSET,
                                        f"tensor {record.id} at offset {offset}"))
        if offset % alignment:
            violations.append(Violation(ViolationKind.MISALIGNED,
                                        f"tensor {record.id} at offset {offset} is not a "
                                        f"multiple of the alignment {alignment}"))
    top = max((o + r.size for o, r in zip(solution.offsets, records)), default=0)
    if solution.arena_size != top:
        violations.append(Violation(ViolationKind.ARENA_MISSTATED,
                                    f"stated arena size {solution.arena_size} but "
                                    f"max(offset + size) is {top}"))
    # Sweep over time: each tensor is checked against the tensors still live when it starts.
    offsets = np.asarray(solution.offsets, dtype=object if top >= 2**62 else np.int64)
    ends = offsets + instance.sizes.astype(offsets.dtype)
    order = sorted(range(len(records)), key=lambda i: (records[i].first_op, i))
    active = np.zeros(0, dtype=np.int64)
    for index in order:
        record = records[index]
        if len(active):
            active = active[instance.last_ops[active] >= record.first_op]
            hits = active[(offsets[active] < ends[index]) & (offsets[index] < ends[active])]
            for j in hits.tolist():
                pair = (j, index) in instance.inplace_set
                if pair and offsets[j] == offsets[index]:
                    continue
                kind = ViolationKind.BAD_INPLACE if pair else ViolationKind.OVERLAP
                other = records[j]
                violations.append(Violation(
                    kind, f"tensors {other.id} [{other.first_op}, {other.last_op}] at "
                          f"[{offsets[j]}, {ends[j]}) and {record.id} [{record.first_op}, "
                          f"{record.last_op}] at [{offsets[index]}, {ends[index]}) overlap"
                          + (" (an in-place pair must share the same offset)" if pair else "")))
        active = np.append(active, index)
    return violations
