"""The exact dynamic program over downsets: the small-graph oracle of ``schedule``.

A *downset* ``S`` is a set of ops closed under predecessors: the ops a topological order has
run after ``|S|`` steps. What is live while the next op ``v`` runs depends on ``S`` and ``v``
only — the buffers produced in ``S`` (or graph inputs) that an op outside ``S`` still reads
(or graph outputs), plus ``v``'s outputs, minus ``v``'s in-place savings (a source that
``v`` reads last) — so the least peak of any order of ``S``,

.. math::

    f(\\emptyset) = 0, \\qquad
    f(S \\cup \\{v\\}) = \\min_{v \\text{ ready in } S \\cup \\{v\\}}
        \\max\\bigl(f(S),\\; \\mathrm{live}(S, v)\\bigr),

gives the optimum ``f(V)`` (the memory-optimal scheduling recursion of Kayaaslan et al.
2018 and of the "dynamic programming over antichains" of Serenity, Ahn et al. 2020). The
states are visited level by level (``|S| = 0, 1, ...``); with an incumbent peak ``U`` every
transition reaching ``U`` is dropped, so when no state survives, ``U`` is optimal. The least
``f`` over a level is a lower bound on the optimum (every order passes through one state of
every level), which makes the program anytime.

Dominance: if a ready op ``v`` leaves no more bytes allocated than it frees and its step is no
higher than ``max(f(S), L)`` (``L`` a proven lower bound), some optimal order of the rest
runs ``v`` first (moving ``v`` to the front of any completion raises no step: the bytes it
keeps are offset by those it frees earlier, and readers it overtakes only free theirs
sooner), so only ``v`` is expanded. This collapses views, zero-byte ops and the
like-for-like updates of training graphs. Trailing ops
(:func:`optplan.schedule.decompose.trailing_ops`) run last.
"""

from __future__ import annotations

from dataclasses import dataclass

from optplan import __version__
from optplan.exact.budget import Budget
from optplan.result import SolverOutcome
from optplan.schedule.bounds import must_live_bound
from optplan.schedule.dag import Dag, peak
from optplan.schedule.decompose import trailing_ops
from optplan.registry import register
from optplan.schedule.driver import (PartOutcome, no_solver_params, solve_schedule,
                                     solve_schedule_offsets)
from optplan.schedule.model import ScheduleInstance
from optplan.schedule.validate import inplace_saving

__all__ = ["DpOutcome", "downset_dp", "dynamic_program", "dynamic_program_offsets",
           "MAX_STATES"]

SOLVER = "dynamic_program"
_REFERENCE = "dynamic program over downsets (Kayaaslan et al. 2018; Serenity, Ahn et al. 2020)"

MAX_STATES = 2_000_000
"""Downsets kept in memory at most (about 150 bytes each)."""


@dataclass(frozen=True)
class DpOutcome:
    """``order``: an optimal order (``None`` when it gave up, or when nothing beats the
    incumbent: then the incumbent is optimal). ``peak``: its peak. ``bound``: a proven lower
    bound on the optimum. ``proven``: the search finished. ``states``: downsets visited."""

    order: list[int] | None
    peak: int | None
    bound: int
    proven: bool
    states: int


def downset_dp(dag: Dag, *, upper_bound: int | None = None, lower_bound: int = 0,
               max_states: int = MAX_STATES, out_of_time=lambda: False,
               on_level=None) -> DpOutcome:
    """Run the program (see the module docstring) on ``dag``.

    ``upper_bound``: an incumbent's peak; only strictly better orders are searched for.
    ``lower_bound``: a proven lower bound on the optimum (it strengthens the dominance rule).
    ``max_states``, ``out_of_time()``: give up (``proven=False``) with the level bound.
    ``on_level(bound)`` is called with the lower bound after every level.
    """
    n = dag.num_ops
    if n == 0:
        return DpOutcome([], 0, 0, True, 1)
    full = (1 << n) - 1
    sizes = dag.sizes
    pred_mask = [sum(1 << u for u in preds) for preds in dag.preds]
    consumer_mask = [sum(1 << c for c in consumers) for consumers in dag.consumers]
    kept = [bool(dag.consumers[b]) or dag.output[b] for b in range(dag.num_buffers)]
    allocated = [sum(sizes[b] for b in dag.produced[v]) for v in range(n)]
    allocated_kept = [sum(sizes[b] for b in dag.produced[v] if kept[b]) for v in range(n)]
    releasable = [[b for b in dag.read[v] if not dag.output[b]] for v in range(n)]
    resident0 = sum(s for b, s in enumerate(sizes) if dag.producer[b] < 0 and kept[b])
    first_step_only = sum(s for b, s in enumerate(sizes) if dag.producer[b] < 0 and not kept[b])
    ready0 = sum(1 << v for v in range(n) if not pred_mask[v])
    deferred = sum(1 << v for v in trailing_ops(dag))
    limit = upper_bound

    level = {0: (0, resident0, ready0)}   # downset -> (least peak, resident bytes, ready ops)
    last_op: dict[int, int] = {}          # downset -> the op that ends its best order
    states = 1
    bound = 0
    for _ in range(n):
        following: dict[int, tuple[int, int, int]] = {}
        for expanded, (done, (best, resident, ready)) in enumerate(level.items()):
            if expanded % 1024 == 1023 and (states + len(following) > max_states
                                            or out_of_time()):
                return DpOutcome(None, None, bound, False, states + len(following))
            moves = []
            candidates = ready if (done | deferred) == full else ready & ~deferred
            while candidates:
                bit = candidates & -candidates
                candidates ^= bit
                v = bit.bit_length() - 1
                after = done | bit
                live = resident + allocated[v] + (first_step_only if not done else 0)
                if dag.pairs_of[v]:
                    live -= inplace_saving(
                        (a, b, sizes[b]) for a, b in dag.pairs_of[v]
                        if consumer_mask[a] & ~after == 0
                        and (after == full or not dag.output[a]))
                freed = sum(sizes[b] for b in releasable[v] if consumer_mask[b] & ~after == 0)
                if allocated_kept[v] <= freed and live <= max(best, lower_bound):
                    moves = [(v, bit, after, live, freed)]   # dominant: run it now
                    break
                moves.append((v, bit, after, live, freed))
            for v, bit, after, live, freed in moves:
                value = max(best, live)
                if limit is not None and value >= limit:
                    continue
                known = following.get(after)
                if known is not None and known[0] <= value:
                    continue
                if known is None:
                    newly = 0
                    for w in dag.succs[v]:
                        if pred_mask[w] & ~after == 0:
                            newly |= 1 << w
                    following[after] = (value, resident + allocated_kept[v] - freed,
                                        (ready ^ bit) | newly)
                else:
                    following[after] = (value,) + known[1:]
                last_op[after] = v
        states += len(following)
        level_bound = min((entry[0] for entry in following.values()), default=None)
        if level_bound is None:          # nothing beats the incumbent
            bound = max(bound, limit if limit is not None else 0)
            if on_level:
                on_level(bound)
            return DpOutcome(None, None, bound, True, states)
        bound = max(bound, level_bound)
        if on_level:
            on_level(bound)
        if states > max_states or out_of_time():
            return DpOutcome(None, None, bound, False, states)
        level = following
    value = level[full][0]
    order = []
    done = full
    while done:
        v = last_op[done]
        order.append(v)
        done ^= 1 << v
    order.reverse()
    return DpOutcome(order, value, value, True, states)


def _part(dag: Dag, start: list[int], target: int, time_limit, on_progress, *,
          max_states: int) -> PartOutcome:
    budget = Budget(time_limit)
    upper = peak(dag, start)
    result = downset_dp(dag, upper_bound=upper, lower_bound=max(target, must_live_bound(dag)),
                        max_states=max_states, out_of_time=budget.exhausted,
                        on_level=lambda bound: on_progress(None, bound))
    info = {"states": result.states}
    if result.order is not None:
        return PartOutcome(result.order, result.peak, result.bound, True, info)
    if result.proven:   # nothing beats the start
        return PartOutcome(None, upper, upper, True, info)
    return PartOutcome(None, upper, result.bound, False, info)


@register("dynamic_program", "schedule", kind="exact", reference=_REFERENCE)
def dynamic_program(instance: ScheduleInstance, *, time_limit=None, workers=None, seed=None,
                    warm_start=True, initial_solution=None, max_states: int = MAX_STATES,
                    decompose: bool = True, **solver_params) -> SolverOutcome:
    """Least peak (``schedule``) by the dynamic program over downsets, per segment.

    Parameters
    ----------
    time_limit
        Seconds for the whole call; a part that runs out reports its level bound.
    workers, seed
        Recorded only (the program is sequential and deterministic).
    warm_start, initial_solution
        Candidates for the incumbent (see :mod:`optplan.warm_start`).
    max_states
        Give up on a part (``FEASIBLE`` with the level bound) beyond this many downsets.
    decompose
        Solve the segments between cut ops apart.
    **solver_params
        None taken (an InputError names the first).
    """
    no_solver_params(SOLVER, solver_params)

    def solve_segment(dag, start, target, limit, on_progress):
        return _part(dag, start, target, limit, on_progress, max_states=max_states)

    return solve_schedule(instance, solve_segment, solver=SOLVER, version=__version__,
                          time_limit=time_limit, workers=workers, seed=seed,
                          warm_start=warm_start, initial_solution=initial_solution,
                          decompose=decompose, default_workers=1)


@register("dynamic_program", "schedule-offsets", kind="exact", reference=_REFERENCE)
def dynamic_program_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                            seed=None, warm_start=True, initial_solution=None,
                            max_states: int = MAX_STATES, decompose: bool = True,
                            placement: str = "cpsat", **solver_params) -> SolverOutcome:
    """Least arena (``schedule-offsets``): the least peak by the downset program (the bound),
    its order placed by the fixed-order exact offsets method ``placement``; no joint model,
    so the answer is proven when the placement meets the least peak.

    Parameters as for :func:`dynamic_program`; ``workers`` and ``seed`` go to the placement.
    """
    no_solver_params(SOLVER, solver_params)
    def solve_segment(dag, start, target, limit, on_progress):
        return _part(dag, start, target, limit, on_progress, max_states=max_states)

    return solve_schedule_offsets(instance, solve_segment, None, placement=placement,
                                  solver=SOLVER, version=__version__, time_limit=time_limit,
                                  workers=workers, seed=seed, warm_start=warm_start,
                                  initial_solution=initial_solution, decompose=decompose,
                                  peak_share=0.5, placement_share=0.5, default_workers=1)
