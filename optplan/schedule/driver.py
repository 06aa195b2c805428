"""The steps every exact schedule method shares: budget, warm start, bound, decomposition,
the time split and the outcome. A method supplies only how it solves one part.

``schedule`` (peak): the warm start and the must-live bound first (equal: proven); then the
free and trailing ops are set aside and the rest split into segments
(:mod:`optplan.schedule.decompose`); the segments are solved hardest first, each with an
equal share of the time left, down to the best proven bound of the whole (the peak is the
largest segment peak, so no segment needs to go below it).

``schedule-offsets`` (arena): a share of the time proves (or bounds) the least peak, which
bounds the arena from below; the warm start places the heuristic orders and that least-peak
order with the offsets heuristics; if the best plan does not meet the bound, the fixed-order
exact offsets method places the least-peak order (another share), and if that does not meet
it either, the joint model of order and offsets gets the rest of the time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optplan.exact._common import Budget, Trajectory, solver_options, status_for
from optplan.model import Problem, round_up
from optplan.result import SolverOutcome, Status
from optplan.schedule.bounds import must_live_bound
from optplan.schedule.dag import dag_of, order_names, peak
from optplan.schedule.decompose import Segment, expand, reduce_dag, segments
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import arena_of, induced_instance, validate_schedule_offsets
from optplan.validate import validate_offsets
from optplan.schedule.warm_start import start_order, start_plan

__all__ = ["PartOutcome", "PEAK_SHARE", "PLACEMENT_SHARE", "solve_schedule",
           "solve_schedule_offsets", "place_order"]

PEAK_SHARE = 0.3
"""``schedule-offsets``: the share of the time limit spent on the least peak (the bound)."""
PLACEMENT_SHARE = 0.3
"""``schedule-offsets``: the share spent placing the least-peak order exactly."""


@dataclass
class PartOutcome:
    """One part's answer: ``order`` (op indices of the part, ``None``: keep the start) with its
    ``objective``, a ``bound`` proven for the whole problem, whether the part is ``proven``
    (optimal, or no worse than the target it was given), and the solver's ``info``."""

    order: list[int] | None
    objective: int
    bound: int
    proven: bool
    info: dict = field(default_factory=dict)
    offsets: dict | None = None   # schedule-offsets: buffer name -> offset


def _empty(solver: str, version: str, flags: dict, with_offsets: bool) -> SolverOutcome:
    solution = ScheduleSolution((), {} if with_offsets else None)
    return SolverOutcome(Status.OPTIMAL, solution, 0, solver, version, ((0.0, 0, 0),), flags)


def solve_schedule(instance: ScheduleInstance, solve_segment, *, solver: str, version,
                   time_limit=None, workers=None, seed=None, warm_start=True,
                   initial_solution=None, decompose: bool = True,
                   default_workers: int = 1) -> SolverOutcome:
    """Least peak by parts (see the module docstring).

    ``solve_segment(dag, start, target, time_limit, on_progress) -> PartOutcome`` solves one
    segment (a :class:`~optplan.schedule.dag.Dag`) from the start order ``start``; ``target``
    is a proven bound of the whole (no need to go below it); ``on_progress(incumbent,
    bound)`` reports its anytime curve. ``version`` is a string or a callable giving it.
    """
    budget = Budget(time_limit)
    flags = solver_options(time_limit, workers, seed, default_workers)
    if instance.num_ops == 0:
        return _empty(solver, _text(version), flags, False)
    trajectory = Trajectory(budget)
    order, _, bound, status, info = _least_peak(
        instance, solve_segment, budget=budget, trajectory=trajectory, warm_start=warm_start,
        initial_solution=initial_solution, decompose=decompose)
    dag = dag_of(instance)
    solution = ScheduleSolution(order_names(dag, order))
    return SolverOutcome(status, solution, bound, solver, _text(version), trajectory.as_tuple(),
                         flags | info)


def _least_peak(instance, solve_segment, *, budget: Budget, trajectory: Trajectory,
                warm_start, initial_solution, decompose: bool):
    dag = dag_of(instance)
    name, order, objective = start_order(instance, dag, warm_start, initial_solution)
    bound = must_live_bound(dag)
    trajectory.record(objective, bound)
    info = {"warm_start": name, "warm_start_objective": objective,
            "warm_start_time": round(budget.elapsed(), 6), "combinatorial_bound": bound}
    if objective <= bound:
        info["proof"] = "warm start meets the must-live bound"
        return order, objective, objective, Status.OPTIMAL, info

    reduction = reduce_dag(dag)
    kept = reduction.kept
    parts = (segments(kept.dag) if decompose
             else [Segment(tuple(range(len(kept.ops))), kept.dag)])
    info |= {"parts": len(parts), "free_ops": len(reduction.free),
             "trailing_ops": len(reduction.trailing)}
    position = {v: step for step, v in enumerate(order)}
    part_orders, part_peaks = [], []
    for part in parts:   # the start's order inside every part (part ops -> kept -> dag)
        local = sorted(range(len(part.ops)), key=lambda k: position[kept.ops[part.ops[k]]])
        part_orders.append(local)
        part_peaks.append(peak(part.dag, local))
    # The trailing ops' last steps hold the same bytes in every order: a floor of the peak.
    rebuilt = peak(dag, _joined(dag, reduction, parts, part_orders))
    floor = rebuilt if rebuilt > max(part_peaks, default=0) else 0
    proven: dict[int, bool] = {}
    queue = sorted(range(len(parts)), key=lambda k: -part_peaks[k])
    for rank, k in enumerate(queue):
        if part_peaks[k] <= bound or parts[k].dag.has_one_order:
            proven[k] = True     # at the bound, or the part has one order only
            continue
        if budget.exhausted():
            proven[k] = False
            continue
        open_parts = sum(1 for m in queue[rank:]
                         if part_peaks[m] > bound and not parts[m].dag.has_one_order)
        limit = budget.remaining()
        if limit is not None:
            limit = max(0.05, limit / open_parts)

        def on_progress(incumbent, part_bound, k=k):
            others = max((part_peaks[m] for m in range(len(parts)) if m != k), default=floor)
            trajectory.record(None if incumbent is None else max(incumbent, others, floor),
                              None if part_bound is None else max(part_bound, bound))

        outcome = solve_segment(parts[k].dag, part_orders[k], bound, limit, on_progress)
        if outcome.order is not None and outcome.objective <= part_peaks[k]:
            part_orders[k], part_peaks[k] = outcome.order, outcome.objective
        bound = max(bound, outcome.bound)
        proven[k] = outcome.proven
        if outcome.info:
            info.setdefault("part_info", []).append(
                {"part": k, "ops": len(parts[k].ops)} | outcome.info)
    order = _joined(dag, reduction, parts, part_orders)
    objective = peak(dag, order)
    status = status_for(objective, bound, proven=all(proven.values()))
    bound = objective if status is Status.OPTIMAL else bound
    trajectory.record(objective, bound)
    return order, objective, bound, status, info


def _joined(dag, reduction, parts, part_orders) -> list[int]:
    """The order of ``dag`` made of the parts' orders, free and trailing ops put back."""
    return expand(dag, reduction, [part.ops[k] for part, local in zip(parts, part_orders)
                                   for k in local])


def solve_schedule_offsets(instance: ScheduleInstance, solve_segment, solve_joint=None, *,
                           placement: str, solver: str, version, time_limit=None,
                           workers=None, seed=None, warm_start=True, initial_solution=None,
                           decompose: bool = True, peak_share: float = PEAK_SHARE,
                           placement_share: float = PLACEMENT_SHARE,
                           default_workers: int = 1) -> SolverOutcome:
    """Least arena: the least peak as the bound, the warm start, the least-peak order placed
    exactly, then the joint model.

    ``solve_segment`` as for :func:`solve_schedule`; ``placement`` names the registered
    exact offsets method that places the least-peak order's records (``cpsat``,
    ``milp_highs``, ...); ``solve_joint(instance, dag, start, lower, time_limit,
    on_progress) -> PartOutcome`` (``None``: no joint model) improves the plan ``start`` (a
    :class:`ScheduleSolution` with offsets) down to ``lower``, both in arena bytes; its
    ``order`` and ``offsets`` (buffer name -> offset) make the plan.
    """
    budget = Budget(time_limit)
    flags = solver_options(time_limit, workers, seed, default_workers)
    if instance.num_ops == 0:
        return _empty(solver, _text(version), flags, True)
    dag = dag_of(instance)
    trajectory = Trajectory(budget)
    peak_budget = Budget(None if time_limit is None else peak_share * time_limit)
    least_order, least_peak, peak_bound, peak_status, peak_info = _least_peak(
        instance, solve_segment, budget=peak_budget, trajectory=Trajectory(peak_budget),
        warm_start=warm_start, initial_solution=initial_solution, decompose=decompose)
    lower = round_up(peak_bound, instance.alignment)
    info = {"peak": least_peak, "peak_status": str(peak_status), "peak_bound": peak_bound,
            "peak_time": round(budget.elapsed(), 6)}
    info |= {f"peak_{key}": value for key, value in peak_info.items()
             if key in ("warm_start", "parts", "proof")}
    name, plan, objective = start_plan(instance, dag, warm_start, initial_solution,
                                       [("least_peak", least_order)])
    trajectory.record(objective, lower)
    info |= {"warm_start": name, "warm_start_objective": objective,
             "warm_start_time": round(budget.elapsed(), 6), "combinatorial_bound": lower}
    proven = False
    if objective > lower and not budget.exhausted():
        limit = budget.remaining()
        limit = None if limit is None else min(limit, max(0.05, placement_share * time_limit))
        placed = place_order(instance, order_names(dag, least_order), placement,
                             time_limit=limit, workers=flags["workers"], seed=flags["seed"])
        info |= {"placement": placement, "placement_time": round(budget.elapsed(), 6)}
        if placed is not None and arena_of(instance, placed) < objective:
            plan, objective = placed, arena_of(instance, placed)
            info["placement_objective"] = objective
            trajectory.record(objective, lower)
    if objective <= lower:
        info["proof"] = "a plan meets the least peak"
    elif solve_joint is not None and not budget.exhausted():
        outcome = solve_joint(instance, dag, plan, lower, budget.remaining(),
                              lambda incumbent, bound: trajectory.record(incumbent, bound))
        info |= outcome.info
        proven = outcome.proven
        if outcome.order is not None:
            found = ScheduleSolution(order_names(dag, outcome.order), outcome.offsets)
            if validate_schedule_offsets(instance, found):
                info["extraction"] = "the joint model's plan does not validate; kept the start"
                proven = False
            elif arena_of(instance, found) <= objective:
                plan, objective = found, arena_of(instance, found)
        lower = max(lower, outcome.bound)
    status = status_for(objective, lower, proven=proven)
    bound = objective if status is Status.OPTIMAL else lower
    trajectory.record(objective, bound)
    return SolverOutcome(status, plan, bound, solver, _text(version), trajectory.as_tuple(),
                         flags | info)


def place_order(instance: ScheduleInstance, order, method: str, *, time_limit, workers,
                seed) -> ScheduleSolution | None:
    """``order`` placed by the registered fixed-order offsets method ``method`` on the records
    it induces (``None`` when the method finds no valid placement)."""
    from optplan.registry import get_method

    records = induced_instance(instance, order)
    problem = Problem.parse("offsets")
    outcome = get_method(method, problem).implementations[problem](
        records, time_limit=time_limit, workers=workers, seed=seed)
    if outcome.solution is None or validate_offsets(records, outcome.solution):
        return None
    return ScheduleSolution(tuple(order), {record.id: offset for record, offset
                                           in zip(records.records, outcome.solution.offsets)})


def _text(version) -> str:
    return version() if callable(version) else str(version)
