"""The steps every exact schedule method shares, on one :class:`~optplan.exact.run.ExactRun`
per call (its budget, warm start, anytime curve and honest outcome): the bound, the
decomposition and the time split. A method supplies only how it solves one part.

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

from optplan.errors import InputError
from optplan.exact.run import ExactRun
from optplan.model import round_up
from optplan.problems import Problem
from optplan.result import SolverOutcome
from optplan.schedule.bounds import must_live_bound
from optplan.schedule.dag import dag_of, order_indices, order_names, peak
from optplan.schedule.decompose import Segment, expand, reduce_dag, segments
from optplan.schedule.heuristics import best_offsets, original_order, original_order_offsets
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import induced_instance, validate_schedule_offsets
from optplan.validate import validate_offsets

__all__ = ["PartOutcome", "PEAK_SHARE", "PLACEMENT_SHARE", "solve_schedule",
           "solve_schedule_offsets", "place_order", "no_solver_params"]

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


def no_solver_params(solver: str, solver_params: dict) -> None:
    """An InputError naming the first solver parameter of a method that takes none."""
    if solver_params:
        name = next(iter(solver_params))
        raise InputError(f"{solver} takes no solver parameter {name!r}", field=name)


def _run(instance, problem: str, *, solver, version, time_limit, workers, seed,
         default_workers) -> ExactRun:
    return ExactRun(instance, problem, solver=solver, version=_text(version),
                    time_limit=time_limit, workers=workers, seed=seed,
                    default_workers=default_workers)


def solve_schedule(instance: ScheduleInstance, solve_segment, *, solver: str, version,
                   time_limit=None, workers=None, seed=None, warm_start=True,
                   initial_solution=None, decompose: bool = True,
                   default_workers: int = 1) -> SolverOutcome:
    """Least peak by parts (see the module docstring), on one :class:`ExactRun`.

    ``solve_segment(dag, start, target, time_limit, on_progress) -> PartOutcome`` solves one
    segment (a :class:`~optplan.schedule.dag.Dag`) from the start order ``start``; ``target``
    is a proven bound of the whole (no need to go below it); ``on_progress(incumbent,
    bound)`` reports its anytime curve. ``version`` is a string or a callable giving it.
    """
    run = _run(instance, "schedule", solver=solver, version=version, time_limit=time_limit,
               workers=workers, seed=seed, default_workers=default_workers)
    proven = _least_peak(run, solve_segment, warm_start=warm_start,
                         initial_solution=initial_solution, decompose=decompose)
    return run.outcome(proven=proven)


def _least_peak(run: ExactRun, solve_segment, *, warm_start, initial_solution,
                decompose: bool) -> bool:
    """Improve ``run`` (problem ``schedule``) by parts; whether every part is proven."""
    instance = run.instance
    dag = dag_of(instance)
    bound = must_live_bound(dag)
    run.raise_bound(bound)
    run.info["combinatorial_bound"] = bound
    run.start(warm_start, initial_solution, fallback=original_order)
    order = order_indices(dag, run.solution.order)
    if run.meets_bound():
        run.info["proof"] = "warm start meets the must-live bound"
        return True

    reduction = reduce_dag(dag)
    kept = reduction.kept
    parts = (segments(kept.dag) if decompose
             else [Segment(tuple(range(len(kept.ops))), kept.dag)])
    run.info |= {"parts": len(parts), "free_ops": len(reduction.free),
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
        if run.out_of_time():
            proven[k] = False
            continue
        open_parts = sum(1 for m in queue[rank:]
                         if part_peaks[m] > bound and not parts[m].dag.has_one_order)
        limit = run.budget.remaining()
        if limit is not None:
            limit = max(0.05, limit / open_parts)

        def on_progress(incumbent, part_bound, k=k):
            # the curve of the whole: the other parts' peaks (and the floor) stay as they are
            others = max((part_peaks[m] for m in range(len(parts)) if m != k), default=floor)
            run.trajectory.record(
                None if incumbent is None else max(incumbent, others, floor),
                None if part_bound is None else max(part_bound, bound))

        outcome = solve_segment(parts[k].dag, part_orders[k], bound, limit, on_progress)
        if outcome.order is not None and outcome.objective <= part_peaks[k]:
            part_orders[k], part_peaks[k] = outcome.order, outcome.objective
        bound = max(bound, outcome.bound)
        proven[k] = outcome.proven
        if outcome.info:
            run.info.setdefault("part_info", []).append(
                {"part": k, "ops": len(parts[k].ops)} | outcome.info)
    order = _joined(dag, reduction, parts, part_orders)
    run.offer(ScheduleSolution(order_names(dag, order)), peak(dag, order))
    run.raise_bound(bound)
    return all(proven.values())


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
    flags = dict(solver=solver, version=version, workers=workers, seed=seed,
                 default_workers=default_workers)
    run = _run(instance, "schedule-offsets", time_limit=time_limit, **flags)
    dag = dag_of(instance)
    # The bound: the least peak, as the schedule method would find it in its share of time.
    peak_run = _run(instance, "schedule", time_limit=None if time_limit is None
                    else peak_share * time_limit, **flags)
    peak_proven = _least_peak(peak_run, solve_segment, warm_start=_orders_of(warm_start),
                              initial_solution=_order_of(initial_solution),
                              decompose=decompose)
    peak_outcome = peak_run.outcome(proven=peak_proven)
    least_order = peak_outcome.solution.order
    lower = round_up(peak_outcome.best_bound, instance.alignment)
    run.info |= {"peak": peak_run.objective, "peak_status": str(peak_outcome.status),
                 "peak_bound": peak_outcome.best_bound,
                 "peak_time": round(run.budget.elapsed(), 6)}
    run.info |= {f"peak_{key}": value for key, value in peak_run.info.items()
                 if key in ("warm_start", "parts", "proof")}
    run.start(warm_start, initial_solution, fallback=original_order_offsets)
    run.offer(best_offsets(instance, ScheduleSolution(least_order)))
    run.raise_bound(lower)
    run.info["combinatorial_bound"] = lower
    proven = False
    if not run.meets_bound() and not run.out_of_time():
        limit = run.budget.remaining()
        limit = None if limit is None else min(limit, max(0.05, placement_share * time_limit))
        placed = None if limit is not None and limit <= 0 else place_order(
            instance, least_order, placement, time_limit=limit, workers=run.workers,
            seed=run.seed)   # (limit 0: the budget ran out since out_of_time looked)
        run.info |= {"placement": placement,
                     "placement_time": round(run.budget.elapsed(), 6)}
        if placed is not None and run.offer(placed):
            run.info["placement_objective"] = run.objective
    if run.meets_bound():
        run.info["proof"] = "a plan meets the least peak"
    elif solve_joint is not None and not run.out_of_time():
        outcome = solve_joint(instance, dag, run.solution, run.bound, run.budget.remaining(),
                              lambda incumbent, bound: run.raise_bound(bound))
        run.info |= outcome.info
        proven = outcome.proven
        if outcome.order is not None:
            found = ScheduleSolution(order_names(dag, outcome.order), outcome.offsets)
            if validate_schedule_offsets(instance, found):
                run.info["extraction"] = ("the joint model's plan does not validate; kept the "
                                          "start")
                proven = False
            else:
                run.offer(found)
        run.raise_bound(outcome.bound)
    return run.outcome(proven=proven)


def _order_of(solution):
    """A plan's order alone (the peak stage's candidate), ``None`` stays ``None``."""
    return None if solution is None else ScheduleSolution(solution.order)


def _orders_of(warm_start):
    """The peak stage's warm start: ``True``/``False`` as given, plans reduced to their
    orders, heuristic names and callables of ``schedule-offsets`` left out (they are the
    arena stage's)."""
    if warm_start is True or warm_start is False or warm_start is None:
        return warm_start
    return [_order_of(item) for item in warm_start if isinstance(item, ScheduleSolution)]


def place_order(instance: ScheduleInstance, order, method: str, *, time_limit, workers,
                seed) -> ScheduleSolution | None:
    """``order`` placed by the registered fixed-order offsets method ``method`` on the records
    it induces (``None`` when the method finds no valid placement)."""
    from optplan.registry import get_method   # the registry imports this package

    records = induced_instance(instance, order)
    problem = Problem.OFFSETS
    outcome = get_method(method, problem).implementations[problem](
        records, time_limit=time_limit, workers=workers, seed=seed)
    if outcome.solution is None or validate_offsets(records, outcome.solution):
        return None
    return ScheduleSolution(tuple(order), {record.id: offset for record, offset
                                           in zip(records.records, outcome.solution.offsets)})


def _text(version) -> str:
    return version() if callable(version) else str(version)
