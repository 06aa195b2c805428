r"""The configuration LP of shared objects, solved by column generation, with a price-and-branch
incumbent (used by ``cpsat`` before its model; ``docs/problems.md``).

A *configuration* is a set ``S`` of records that one object may hold: pairwise disjoint
lifetimes, except in-place pairs (``docs/problems.md``). It costs :math:`c_S = \max_{i \in S}
s_i`. The LP relaxation of "cover every record by configurations" is

.. math::

    z_{LP} = \min \sum_S c_S \lambda_S \quad\text{s.t.}\quad
        \sum_{S \ni i} \lambda_S \ge 1 \;\; \forall i, \qquad \lambda \ge 0,

and its dual is :math:`\max \sum_i y_i` s.t. :math:`\sum_{i \in S} y_i \le c_S` for every
``S``, :math:`y \ge 0`. Pricing is cheap because configurations are chains of an interval
order: for each distinct size ``v`` the heaviest configuration among the records no larger
than ``v`` (weighted interval scheduling, with an in-place target allowed to follow its
source on the shared op) is the most violated dual row of cost ``v``. It is exact without
in-place pairs and a relaxation with them (see :class:`Pricer`): never a missed column,
so the bound is sound either way.

*Every* iteration yields a valid lower bound (Farley's): with
:math:`\theta = \max(1, \max_v W_v / v)` (``W_v`` the heaviest configuration of class ``v``),
:math:`y / \theta` is dual feasible, so :math:`\sum_i y_i / \theta \le z_{LP} \le
\mathrm{OPT}`; at convergence :math:`\theta = 1` and the bound is :math:`z_{LP}`. The bound is
computed from the duals themselves (negative values clipped), never from the LP's objective,
so solver tolerances cannot make it unsound.

Incumbents come from a dive (fix the largest fractional column, price again, until the LP is
integral) and from the integer restricted master (the generated columns, integral ``λ``,
solved by HiGHS from the start partition); a record covered twice stays in its first
configuration. On the training graphs the LP value is the optimum and the dive finds a
partition at that value within seconds, where the compact models stall at the
positional-maximums bound.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from optplan.exact.budget import SPLIT, Budget
from optplan.model import Instance, SharedObjectsSolution
from optplan.problems import Problem
from optplan.validate import validate

__all__ = ["ConfigurationBound", "configuration_bound"]

_REDUCED_COST_TOLERANCE = 1e-9
"""A column enters when its dual weight exceeds its cost by this relative margin."""
_BOUND_SLACK = 1e-6
"""Absolute slack (in size units) taken off the float bound before rounding it up."""


@dataclass
class ConfigurationBound:
    """What column generation proved and found, in size units of the scaled instance."""

    bound: int                   # a valid lower bound on the optimum (rounded up)
    lp_value: float | None       # the restricted master's LP value at the last iteration
    converged: bool              # no column prices out: bound is the LP optimum
    iterations: int
    columns: int
    object_ids: list[int] | None = None   # the best valid partition found, if any


class Pricer:
    """Heaviest configurations per size class: weighted interval scheduling on the lifetimes,
    where an in-place pair ``(a, b)`` may also chain (``b`` starts on ``a``'s last op).

    Records are taken in order of last op; ``ending[i]`` is the heaviest configuration whose
    latest record is ``i``: ``w_i`` plus the best of the records that end before ``i`` starts
    or, for each in-place source ``a`` of ``i``, ``ending[a]``. Every SO(-IP) object (members
    pairwise disjoint, except in-place pairs) is such a chain, so no configuration is missed
    and the bound is sound. Without in-place pairs the chains are exactly the objects; with
    them a chain through a single-op record ``a`` may also join ``a``'s source and target,
    which conflict unless they are a pair too (a superset: the bound stays valid, and
    partitions are validated before they are returned).
    """

    def __init__(self, instance: Instance, sizes):
        self.sizes = sizes
        records = instance.records
        self.sources: dict[int, list[int]] = {}
        for a, b in instance.inplace_pairs:
            self.sources.setdefault(b, []).append(a)
        depth = _chain_depths(len(records), self.sources)
        self.by_end = sorted(range(len(records)), key=lambda i: (
            records[i].last_op, records[i].first_op, depth[i], i))
        ends = [records[i].last_op for i in self.by_end]
        # predecessor[i]: how many records (in end order) finish before record i starts
        self.predecessor = {i: bisect.bisect_left(ends, records[i].first_op)
                            for i in self.by_end}
        position = {i: p for p, i in enumerate(self.by_end)}
        # exact only when every source comes before its target (no cycle of pairs)
        self.exact = all(position[a] < position[b] for a, b in instance.inplace_pairs)

    def heaviest(self, weights, cap: int) -> tuple[float, list[int]]:
        """The heaviest configuration of records no larger than ``cap`` and its weight."""
        best = [0.0] * (len(self.by_end) + 1)
        best_last: list[int | None] = [None] * (len(self.by_end) + 1)
        ending: dict[int, float] = {}
        before: dict[int, int | None] = {}      # the record chosen just before i
        for p, i in enumerate(self.by_end, start=1):
            best[p], best_last[p] = best[p - 1], best_last[p - 1]
            if self.sizes[i] > cap or weights[i] <= 0:
                continue
            q = self.predecessor[i]
            value, previous = best[q], best_last[q]
            for a in self.sources.get(i, ()):
                if a in ending and ending[a] > value:
                    value, previous = ending[a], a
            ending[i], before[i] = value + weights[i], previous
            if ending[i] > best[p]:
                best[p], best_last[p] = ending[i], i
        members = []
        i = best_last[-1]
        while i is not None:
            members.append(i)
            i = before[i]
        return best[-1], members


def _chain_depths(count: int, sources: dict[int, list[int]]) -> list[int]:
    """Length of the longest in-place chain ending at each record (ties in end order)."""
    depth = [-1] * count
    for start in range(count):
        stack = [start]
        while stack:
            i = stack[-1]
            pending = [a for a in sources.get(i, ()) if depth[a] < 0]
            if pending and len(stack) <= count:
                stack.extend(pending)
                continue
            stack.pop()
            depth[i] = 1 + max((depth[a] for a in sources.get(i, ())), default=0)
    return depth


class _Master:
    """The restricted master LP in HiGHS and its columns (lists of records)."""

    def __init__(self, sizes, start_ids):
        import highspy

        self.highspy = highspy
        self.sizes = sizes
        self.highs = highspy.Highs()
        for option, value in (("output_flag", False), ("random_seed", 0), ("threads", 1)):
            self.highs.setOptionValue(option, value)
        empty_index, empty_value = np.array([], dtype=np.int32), np.array([], dtype=float)
        for _ in range(len(sizes)):
            self.highs.addRow(1.0, highspy.kHighsInf, 0, empty_index, empty_value)
        self.columns: list[list[int]] = []
        groups: dict[int, list[int]] = {}
        for i, object_id in enumerate(start_ids):
            groups.setdefault(object_id, []).append(i)
        for members in groups.values():
            self.add(members)
        self.start_columns = len(self.columns)     # the start partition: a MIP start

    def add(self, members: list[int]) -> None:
        self.columns.append(members)
        self.highs.addCol(float(max(self.sizes[i] for i in members)), 0.0,
                          self.highspy.kHighsInf, len(members),
                          np.array(members, dtype=np.int32), np.ones(len(members)))

    def solve_lp(self) -> bool:
        self.highs.run()
        return self.highs.getModelStatus() == self.highspy.HighsModelStatus.kOptimal

    def values(self) -> np.ndarray:
        return np.array(self.highs.getSolution().col_value)

    def partition(self, chosen) -> list[int] | None:
        """Object ids from chosen columns; a record covered twice stays in the first."""
        object_ids = [-1] * len(self.sizes)
        numbering: dict[int, int] = {}
        for column in chosen:
            for i in self.columns[column]:
                if object_ids[i] < 0:
                    object_ids[i] = numbering.setdefault(column, len(numbering))
        return object_ids if min(object_ids, default=0) >= 0 else None


def _generate(master: _Master, pricer: Pricer, classes, budget: Budget
              ) -> tuple[float, float | None, bool, int]:
    """Price columns in until none prices out (or time is up): (bound, LP value, converged,
    iterations). The bound is Farley's, valid at every iteration."""
    bound, lp_value, iterations = 0.0, None, 0
    while not budget.exhausted():
        iterations += 1
        if not master.solve_lp():
            break
        lp_value = master.highs.getInfo().objective_function_value
        duals = np.maximum(np.array(master.highs.getSolution().row_dual), 0.0)
        ratio, entering = 1.0, []
        for cap in classes:
            weight, members = pricer.heaviest(duals, cap)
            ratio = max(ratio, weight / cap)
            if weight > cap * (1 + _REDUCED_COST_TOLERANCE) and members:
                entering.append(members)
        bound = max(bound, float(duals.sum()) / ratio)
        if not entering:
            return bound, lp_value, True, iterations
        for members in entering:
            master.add(members)
    return bound, lp_value, False, iterations


def configuration_bound(instance: Instance, sizes, start_ids, *, time_limit=None,
                        integer_share: float = SPLIT.integer_master) -> ConfigurationBound:
    """Column generation on the configuration LP of ``instance`` with sizes ``sizes`` (scaled).

    Parameters
    ----------
    instance
        The instance (its in-place pairs may share: SO-IP; drop them for SO).
    sizes
        Record sizes in the units the bound is wanted in (e.g. divided by their gcd).
    start_ids
        Object ids of a feasible partition: its objects are the first columns.
    time_limit
        Seconds for the whole call; the bound returned is valid wherever it stops.
    integer_share
        Share of ``time_limit`` (at least 1 s) for the integer restricted master.

    When the LP converged, a dive looks for an integer answer in ``SPLIT.dive`` of the time
    left (:data:`optplan.exact.budget.SPLIT`): fix the
    largest fractional column at 1, price again, repeat until the LP is integral. Unless that
    meets the bound, the integer restricted master over every column generated (started from
    the first partition) runs for up to ``integer_share`` of the limit. Both give incumbents,
    never bounds.
    """
    budget = Budget(time_limit)
    pricer = Pricer(instance, sizes)
    if not pricer.exact:      # a cycle of in-place pairs: no sound pricing, no bound
        return ConfigurationBound(0, None, False, 0, 0)
    classes = sorted(set(sizes), reverse=True)
    master = _Master(sizes, start_ids)
    bound, lp_value, converged, iterations = _generate(master, pricer, classes, budget)
    result = ConfigurationBound(max(0, math.ceil(bound - _BOUND_SLACK)), lp_value, converged,
                                iterations, len(master.columns))
    if not converged:
        return result
    remaining = budget.remaining()
    best = _valid(instance, _dive(master, pricer, classes,
                                  budget.part(None if remaining is None
                                              else SPLIT.dive * remaining)))
    if best is None or _cost(best, sizes) > result.bound:
        found = _valid(instance, _integer_master(master, budget, integer_share, time_limit))
        if found is not None and (best is None or _cost(found, sizes) < _cost(best, sizes)):
            best = found
    result.object_ids, result.columns = best, len(master.columns)
    return result


def _valid(instance: Instance, object_ids) -> list[int] | None:
    """``object_ids`` when they form a valid SO(-IP) partition of ``instance``, else None."""
    if object_ids is None:
        return None
    solution = SharedObjectsSolution.from_object_ids(instance, object_ids)
    return None if validate(instance, Problem.SHARED_OBJECTS, solution) else object_ids


def _cost(object_ids, sizes) -> int:
    maxima: dict[int, int] = {}
    for object_id, size in zip(object_ids, sizes):
        maxima[object_id] = max(maxima.get(object_id, 0), size)
    return sum(maxima.values())


def _dive(master: _Master, pricer: Pricer, classes, budget: Budget) -> list[int] | None:
    """Fix the largest fractional column at 1 and re-price until the LP is integral."""
    while not budget.exhausted():
        values = master.values()
        fractional = np.flatnonzero((values > 1e-6) & (values < 1 - 1e-6))
        if len(fractional) == 0:
            return master.partition(np.flatnonzero(values > 0.5))
        chosen = [int(fractional[np.argmax(values[fractional])])]
        for column in chosen:
            master.highs.changeColBounds(int(column), 1.0, master.highspy.kHighsInf)
        if not _generate(master, pricer, classes, budget)[2]:
            return None
    return None


def _integer_master(master: _Master, budget: Budget, share: float, time_limit
                    ) -> list[int] | None:
    """The restricted master with integral columns (every column free again)."""
    highspy, highs = master.highspy, master.highs
    count = highs.getNumCol()
    everything = np.arange(count, dtype=np.int32)
    highs.changeColsBounds(count, everything, np.zeros(count), np.full(count, highspy.kHighsInf))
    highs.changeColsIntegrality(count, everything,
                                np.array([highspy.HighsVarType.kInteger] * count))
    seconds = (SPLIT.integer_master_seconds if time_limit is None
               else max(1.0, share * time_limit))
    if budget.remaining() is not None:
        if budget.exhausted():
            return None
        seconds = min(seconds, budget.remaining())
    highs.setOptionValue("time_limit", seconds)
    highs.setOptionValue("mip_rel_gap", 0.0)
    highs.setOptionValue("mip_abs_gap", 0.5)     # costs are integers: stop only at the optimum
    start = highspy.HighsSolution()
    start.col_value = [1.0 if column < master.start_columns else 0.0 for column in range(count)]
    start.value_valid = True
    highs.setSolution(start)
    highs.run()
    if highs.getInfo().primal_solution_status != 2:     # 2: a feasible solution exists
        return None
    return master.partition(np.flatnonzero(master.values() > 0.5))
