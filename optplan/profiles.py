"""Operator profiles and breadths (Pisarchyk & Lee 2020, §3).

The operator profile of op k is the set of records live at k; its breadth is the sum of their
sizes. Instances whose time axis is sparse (MiniMalloc's runs to 2^20) are first compressed to
their interval endpoints: only ops where some record starts or ends are kept, in order. Dense
instances, where every op is such an endpoint, are unchanged by the compression.
"""

from __future__ import annotations

import numpy as np

from optplan.model import Instance

__all__ = ["compressed_times", "operator_profiles", "breadths"]


def compressed_times(instance: Instance) -> tuple[np.ndarray, np.ndarray, int]:
    """Records' ``(first, last)`` on the compressed time axis, and the number of kept ops.

    Complexity O(n log n).
    """
    if len(instance) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, 0
    points = np.unique(np.concatenate([instance.first_ops, instance.last_ops]))
    first = np.searchsorted(points, instance.first_ops)
    last = np.searchsorted(points, instance.last_ops)
    return first, last, len(points)


def operator_profiles(instance: Instance) -> list[list[int]]:
    """For every kept op (in order), the indices of the records live there, in index order.

    Complexity O(n + sum of profile lengths).
    """
    first, last, count = compressed_times(instance)
    profiles: list[list[int]] = [[] for _ in range(count)]
    for index, (start, end) in enumerate(zip(first.tolist(), last.tolist())):
        for op in range(start, end + 1):
            profiles[op].append(index)
    return profiles


def breadths(instance: Instance) -> np.ndarray:
    """Breadth of every kept op, by a difference array. Complexity O(n log n).

    int64 is exact here: an :class:`~optplan.model.Instance` keeps the sum of its sizes within
    2^62 (:data:`optplan.model.MAX_VALUE`), and no breadth exceeds that sum.
    """
    first, last, count = compressed_times(instance)
    delta = np.zeros(count + 1, dtype=np.int64)
    np.add.at(delta, first, instance.sizes)
    np.add.at(delta, last + 1, -instance.sizes)
    return np.cumsum(delta[:-1])
