"""Geometry the exact models share: conflicts, in-place pairs, time parts, symmetries.

In-place geometry (``docs/problems.md``)
----------------------------------------
An in-place pair ``(a, b)`` meets at one op ``t = a.last_op = b.first_op``: only there may
``b`` sit on exactly ``a``'s memory. The models use *trimmed* lifetimes
(:func:`optplan.bounds.trimmed_lifetimes`): every record that is the target ``b`` of some pair
loses its first op (a single-op target vanishes altogether). Two records whose trimmed
lifetimes intersect are never an in-place pair, so they must be kept apart exactly as without
in-place pairs: the operator profiles of the trimmed lifetimes are cliques of records that
need distinct objects and disjoint memory, their breadths and positional maximums are valid
lower bounds, and a global constraint (NoOverlap2D, per-profile cliques) can be posted on them.
The conflicting pairs that the trimmed lifetimes miss — every in-place pair, and every conflict
that lives only on a target's first op — are listed by :func:`explicit_conflicts` and get a
pairwise constraint ("disjoint, or the same memory if an in-place pair"). Without in-place
pairs nothing is trimmed and the list is empty.

Decomposition
-------------
Offsets split along the time axis: where no record is live on both sides of a cut, the parts are
independent packings, the arena is the maximum of the parts' arenas and the optimum is the
maximum of the parts' optima (:func:`time_components`). Shared objects do **not** split that way:
records of different parts never conflict, so one object may serve a record of each part, and
that sharing across parts is the whole problem (max-colouring). The union of per-part optima is
only an upper bound.

Symmetries
----------
Identical records (same lifetime and size, outside in-place pairs) are interchangeable, and a
packing turned upside down is a packing (without alignment and in-place pairs):
:func:`identical_groups` and :func:`mirror_allowed` say which symmetry-breaking constraints the
offsets models may post, :func:`oriented_hint` turns a packing into one that obeys them.
"""

from __future__ import annotations

from optplan.bounds import trimmed_lifetimes
from optplan.model import Instance

__all__ = ["conflict_pairs", "explicit_conflicts", "time_components", "sub_instance",
           "identical_groups", "mirror_allowed", "oriented_hint"]


def conflict_pairs(instance: Instance) -> list[tuple[int, int]]:
    """Every pair ``(i, j)``, ``i < j``, of records whose lifetimes intersect.

    A sweep over records sorted by first op; O(n log n + number of pairs).
    """
    order = sorted(range(len(instance)), key=lambda i: (instance.records[i].first_op, i))
    active: list[int] = []
    pairs = []
    for index in order:
        record = instance.records[index]
        active = [j for j in active if instance.records[j].last_op >= record.first_op]
        pairs.extend((min(j, index), max(j, index)) for j in active)
        active.append(index)
    return sorted(pairs)


def explicit_conflicts(instance: Instance,
                       lifetimes: list[tuple[int, int] | None] | None = None
                       ) -> list[tuple[int, int]]:
    """Conflicting pairs whose trimmed lifetimes do not intersect (in-place pairs included).

    Only records of in-place pairs are trimmed, so only pairs involving one are candidates.
    """
    if not instance.inplace_pairs:
        return []
    lifetimes = trimmed_lifetimes(instance) if lifetimes is None else lifetimes
    involved = {i for pair in instance.inplace_pairs for i in pair}
    pairs = set()
    for i in involved:
        ri = instance.records[i]
        for j, rj in enumerate(instance.records):
            if j == i or not ri.conflicts_with(rj):
                continue
            li, lj = lifetimes[i], lifetimes[j]
            if li is None or lj is None or li[1] < lj[0] or lj[1] < li[0]:
                pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def time_components(instance: Instance) -> list[list[int]]:
    """Record indices of the parts between time cuts that no lifetime crosses, in time order."""
    order = sorted(range(len(instance)), key=lambda i: (instance.records[i].first_op, i))
    components: list[list[int]] = []
    reach = -1
    for index in order:
        record = instance.records[index]
        if record.first_op > reach:
            components.append([])
        components[-1].append(index)
        reach = max(reach, record.last_op)
    return [sorted(component) for component in components]


def sub_instance(instance: Instance, indices: list[int], suffix: str) -> Instance:
    """The records ``indices`` (in that order) as an instance, in-place pairs kept."""
    position = {index: k for k, index in enumerate(indices)}
    pairs = tuple((position[a], position[b]) for a, b in instance.inplace_pairs
                  if a in position and b in position)
    return Instance(tuple(instance.records[i] for i in indices), f"{instance.name}{suffix}",
                    instance.alignment, pairs, instance.provenance)


def identical_groups(instance: Instance) -> tuple[list[list[int]], int | None]:
    """Groups (size >= 2) of identical records outside in-place pairs, and the largest record
    whose (first, last, size) is unique (the mirror anchor), if any."""
    in_pairs = {i for pair in instance.inplace_pairs for i in pair}
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(instance.records):
        key = (r.first_op, r.last_op, r.size, i if i in in_pairs else -1)
        groups.setdefault(key, []).append(i)
    unique = [g[0] for g in groups.values() if len(g) == 1]
    anchor = max(unique, key=lambda i: (instance.records[i].size, -i), default=None)
    return [g for g in groups.values() if len(g) > 1], anchor


def mirror_allowed(instance: Instance, alignment: int) -> bool:
    """Whether the mirror symmetry may be broken (no alignment, no in-place pairs)."""
    return alignment == 1 and not instance.inplace_pairs


def oriented_hint(instance, sizes, alignment, hint, symmetry_breaking) -> list[int]:
    """The hint, mirrored and with identical records re-ordered so that it obeys the
    symmetry-breaking constraints (it stays an equally good packing)."""
    hint = list(hint)
    if not symmetry_breaking:
        return hint
    groups, anchor = identical_groups(instance)
    if anchor is not None and mirror_allowed(instance, alignment):
        height = max(h + sizes[i] for i, h in enumerate(hint))
        if 2 * hint[anchor] + sizes[anchor] > height:
            hint = [height - h - sizes[i] for i, h in enumerate(hint)]
    for group in groups:
        for i, value in zip(group, sorted(hint[i] for i in group)):
            hint[i] = value
    return hint
