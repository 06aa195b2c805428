"""Simple constructions that the exact methods start from (not registered as methods).

* :func:`decreasing_size_objects` — records by decreasing size, each into the first object it
  may join (max-colouring's first-fit by weight);
* :func:`decreasing_size_offsets` — records by decreasing size, each at its lowest aligned
  offset clear of the conflicting records placed before it (left-justified placement);
* :func:`stacked` — every record in its own object, or stacked end to end: O(n), the answer
  of last resort when the time runs out before anything better.

"May share" honours in-place pairs for objects (:func:`can_share`); offsets keep the records
of a pair apart, which is always valid.
"""

from __future__ import annotations

from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up

__all__ = ["can_share", "decreasing_size_objects", "decreasing_size_offsets",
           "left_justified_offsets", "stacked_objects", "stacked_offsets"]


def can_share(instance: Instance, i: int, j: int) -> bool:
    """Whether records ``i`` and ``j`` may use the same memory (no conflict, or in-place)."""
    return (not instance.records[i].conflicts_with(instance.records[j])
            or (i, j) in instance.inplace_set)


def _by_decreasing_size(instance: Instance) -> list[int]:
    return sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))


def decreasing_size_objects(instance: Instance) -> SharedObjectsSolution:
    """Records by decreasing size, each into the first object it may join (else a new one)."""
    objects: list[list[int]] = []
    object_ids = [0] * len(instance)
    for i in _by_decreasing_size(instance):
        for number, members in enumerate(objects):
            if all(can_share(instance, i, j) for j in members):
                members.append(i)
                object_ids[i] = number
                break
        else:
            object_ids[i] = len(objects)
            objects.append([i])
    return SharedObjectsSolution.from_object_ids(instance, object_ids)


def left_justified_offsets(instance: Instance, order) -> list[int]:
    """Place records in ``order``, each at its lowest aligned offset clear of every
    conflicting record placed before it (in-place pairs are kept apart too). O(n^2)."""
    records = instance.records
    alignment = instance.alignment
    offsets = [0] * len(records)
    placed: list[int] = []
    for index in order:
        record = records[index]
        blockers = [(offsets[j], offsets[j] + records[j].size) for j in placed
                    if record.conflicts_with(records[j])]
        candidates = sorted({0} | {round_up(end, alignment) for _, end in blockers})
        offsets[index] = next(c for c in candidates
                              if all(c + record.size <= start or end <= c
                                     for start, end in blockers))
        placed.append(index)
    return offsets


def decreasing_size_offsets(instance: Instance) -> OffsetsSolution:
    """Left-justified placement by decreasing size."""
    return OffsetsSolution.from_offsets(
        instance, left_justified_offsets(instance, _by_decreasing_size(instance)))


def stacked_objects(instance: Instance) -> SharedObjectsSolution:
    """Every record in an object of its own."""
    return SharedObjectsSolution(tuple(range(len(instance))),
                                 tuple(r.size for r in instance.records))


def stacked_offsets(instance: Instance) -> OffsetsSolution:
    """Every record on top of the previous one, at aligned offsets."""
    offsets, top = [], 0
    for record in instance.records:
        offsets.append(top)
        top = round_up(top + record.size, instance.alignment)
    return OffsetsSolution.from_offsets(instance, offsets)
