"""CP-SAT formulations of ``schedule`` (peak) and ``schedule-offsets`` (arena).

Both decide the step of every op (a permutation respecting the dependencies) and so the
lifetime of every buffer, as OLLA/MODeL (Steiner et al. 2023) do with an ILP; here the
lifetimes are CP-SAT intervals whose ends follow the ops' steps, the peak is a cumulative
constraint on them and the placement a NoOverlap2D of (lifetime x address) boxes. Each model
has a builder (its formulation in the docstring, in constraint order), a solve step
(parameters passed straight to ``solver.parameters``, an anytime callback) and an extraction
step. Sizes are divided by their greatest common divisor (with the alignment, for offsets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from optplan.errors import SolverRangeError
from optplan.exact.budget import Budget
from optplan.exact.cpsat_solve import cpsat_solver, cpsat_version
from optplan.exact.scaling import CPSAT_LIMIT
from optplan.result import SolverOutcome
from optplan.schedule.dag import Dag, lifetimes_of, order_indices, peak
from optplan.registry import register
from optplan.schedule.driver import PartOutcome, solve_schedule, solve_schedule_offsets
from optplan.schedule.model import ScheduleInstance, ScheduleSolution

__all__ = ["cpsat_schedule", "cpsat_schedule_offsets", "build_schedule_model",
           "extract_order", "size_unit", "objective_range", "cpsat_segment", "cpsat_joint"]

SOLVER = "cpsat"
_REFERENCE = "CP-SAT model of order and lifetimes (after OLLA/MODeL, Steiner et al. 2023)"
DEFAULT_WORKERS = 2


@dataclass
class ScheduleModel:
    """A built model: ``position[v]`` (op steps), ``offset[b]`` (addresses in units, arena
    models only), ``objective`` (peak or arena, in units), the size ``unit`` in bytes."""

    model: object
    position: list
    offset: list | None
    objective: object
    unit: int


def build_schedule_model(dag: Dag, *, lower: int, upper: int, start: list[int] | None = None,
                         alignment: int | None = None, start_offsets=None) -> ScheduleModel:
    r"""The order model; with ``alignment`` the joint order and placement model.

    Steps :math:`p_v` of the ops, lifetime :math:`[s_b, e_b)` of buffer :math:`b` (producer
    :math:`k(b)`, readers :math:`C(b)`), in-place choices :math:`y_{kab}` (op :math:`k`
    writes :math:`b` over :math:`a`), sizes :math:`w_b`, :math:`n` ops:

    .. math::

        &p_v \in [\#\mathrm{anc}(v),\; n - 1 - \#\mathrm{desc}(v)],\quad
            \mathrm{AllDifferent}(p),\quad p_v \ge p_u + 1 \;\; (u \to v)             \\
        &s_b = p_{k(b)} + \textstyle\sum_{a} y_{k(b)ab}\; (0 \text{ for graph inputs}),\quad
         e_b = \max_{c \in C(b)} p_c + 1\; (n \text{ for graph outputs},\;
               p_{k(b)} + 1 \text{ when unread})                                       \\
        &y_{kab} \Rightarrow e_a \le p_k + 1,\quad
         \textstyle\sum_b y_{kab} \le 1,\; \sum_a y_{kab} \le 1                        \\
        &\text{peak: } \mathrm{Cumulative}(\{[s_b, e_b)\}, w, P),\quad L \le P \le U,
         \quad \min P                                                                   \\
        &\text{arena: } o_b = A q_b,\; o_b + w_b \le A K,\;
         \mathrm{NoOverlap2D}(\{[s_b, e_b) \times [o_b, o_b + w_b)\}),\;
         y_{kab} \Rightarrow o_b = o_a,\; \mathrm{Cumulative}(\ldots, A K),\;
         L \le A K \le U,\quad \min K

    :math:`L, U` (``lower``, ``upper``) are in bytes (an arena bound is rounded to the
    alignment :math:`A`). A pair lets the target skip its first step, on the source's memory.
    ``start`` (an order) and ``start_offsets`` (per buffer, bytes) become the hint.
    """
    from ortools.sat.python import cp_model

    n = dag.num_ops
    arena = alignment is not None
    unit, step = size_unit(dag.sizes, alignment if arena else 1)
    sizes = [size // unit for size in dag.sizes]
    if sum(sizes) + step > CPSAT_LIMIT:
        raise SolverRangeError(f"sizes too large for CP-SAT: {sum(sizes)} units of {unit} "
                               "bytes", field="size")
    model = cp_model.CpModel()
    position = [model.new_int_var(low, high, f"p{v}") for v, (low, high)
                in enumerate(dag.windows)]
    model.add_all_different(position)
    for v, preds in enumerate(dag.preds):
        for u in preds:
            model.add(position[v] >= position[u] + 1)

    choose = {}
    for k, a, b in dag.pairs:
        choose[k, a, b] = model.new_bool_var(f"y{k}_{a}_{b}")
    ends, intervals = [], []
    for b in range(dag.num_buffers):
        p = dag.producer[b]
        shift = [var for key, var in choose.items() if key[2] == b]
        start_expr = position[p] if p >= 0 else 0
        if shift:   # an interval's start must be affine: a variable of its own
            start_expr = model.new_int_var(0, n, f"s{b}")
            model.add(start_expr == position[p] + sum(shift))
        if dag.output[b]:
            end_expr = n
        elif dag.consumers[b]:
            end_expr = model.new_int_var(0, n, f"e{b}")
            model.add_max_equality(end_expr, [position[c] + 1 for c in dag.consumers[b]])
        else:
            end_expr = (position[p] + 1) if p >= 0 else 1
        length = model.new_int_var(0, n, f"l{b}")
        intervals.append(model.new_interval_var(start_expr, length, end_expr, f"t{b}"))
        ends.append(end_expr)
    for (k, a, b), var in choose.items():
        model.add(ends[a] <= position[k] + 1).only_enforce_if(var)
    for source in {a for _, a, _ in choose}:
        model.add(sum(var for key, var in choose.items() if key[1] == source) <= 1)
    for target in {b for _, _, b in choose}:
        model.add(sum(var for key, var in choose.items() if key[2] == target) <= 1)

    low, high = objective_range(lower, upper, unit, step, arena)
    offset = None
    if not arena:
        objective = model.new_int_var(min(low, high), high, "peak")
        model.add_cumulative(intervals, sizes, objective)
    else:
        objective = model.new_int_var(min(low, high), high, "arena")
        offset, boxes = [], []
        for b, size in enumerate(sizes):
            slot = model.new_int_var(0, max(0, (high * step - size) // step), f"q{b}")
            offset.append(slot)
            model.add(step * slot + size <= step * objective)
            boxes.append(model.new_fixed_size_interval_var(step * slot, size, f"m{b}"))
        model.add_no_overlap_2d(intervals, boxes)
        model.add_cumulative(intervals, sizes, step * objective)
        for (k, a, b), var in choose.items():
            model.add(offset[b] == offset[a]).only_enforce_if(var)
    model.minimize(objective)

    if start is not None:
        _hint(model, dag, position, choose, start)
        if arena and start_offsets is not None:
            for b, slot in enumerate(offset):
                model.add_hint(slot, start_offsets[b] // (unit * step))
    return ScheduleModel(model, position, offset, objective, unit * step)


def size_unit(sizes, alignment: int) -> tuple[int, int]:
    """``(unit, step)``: sizes are counted in units of ``unit`` bytes and offsets in steps of
    ``step`` units. Some optimal placement puts every buffer at a sum of sizes rounded up to
    the alignment (left-justified packings), so when the alignment divides the sizes' gcd
    ``g`` the unit is ``g``; otherwise it is ``gcd(g, alignment)``."""
    g = math.gcd(*sizes) or 1
    unit = g if g % alignment == 0 else math.gcd(g, alignment)
    return unit, (alignment // unit if alignment > unit else 1)


def objective_range(lower: int, upper: int, unit: int, step: int,
                    arena: bool) -> tuple[int, int]:
    """The objective's domain in model units (``unit`` bytes; ``step`` units per arena step)
    from ``lower`` and ``upper`` in bytes. An arena's ``lower`` bounds this graph's arena, so
    it rounds up. A peak's ``lower`` is only where the search may stop: a segment is given
    the whole graph's bound, which can lie above the segment's own optimum, so it rounds
    down (rounding it up to the unit would put a floor above both, and the solver would
    report that floor as a bound of the whole)."""
    if not arena:
        return lower // unit, upper // unit
    return -(-lower // (unit * step)), upper // (unit * step)


def _hint(model, dag: Dag, position, choose, start: list[int]) -> None:
    """Hint the steps of ``start`` and, per op, the in-place pairs it can use there."""
    first, last = lifetimes_of(dag, start)
    step_of = {v: s for s, v in enumerate(start)}
    for v, var in enumerate(position):
        model.add_hint(var, step_of[v])
    used_sources, used_targets = set(), set()
    for (k, a, b), var in choose.items():
        usable = (last[a] == step_of[k] and a not in used_sources and b not in used_targets)
        if usable:
            used_sources.add(a)
            used_targets.add(b)
        model.add_hint(var, int(usable))


def _solve(built: ScheduleModel, *, time_limit, workers, seed, solver_params, on_progress):
    """Solve; ``(status name, steps, offsets or None, objective, bound)`` in model units."""
    from ortools.sat.python import cp_model

    solver = cpsat_solver(time_limit=time_limit, workers=workers, seed=seed,
                          solver_params=solver_params)

    class Progress(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            on_progress(round(self.ObjectiveValue()) * built.unit,
                        math.ceil(self.BestObjectiveBound() - 1e-6) * built.unit)

    status = solver.status_name(solver.solve(built.model, Progress()))
    if status == "MODEL_INVALID":
        raise RuntimeError(f"CP-SAT rejected the model: {built.model.validate()}")
    steps = offsets = objective = None
    if status in ("OPTIMAL", "FEASIBLE"):
        steps = [solver.value(var) for var in built.position]
        if built.offset is not None:
            offsets = [solver.value(var) * built.unit for var in built.offset]
        objective = round(solver.objective_value) * built.unit
    bound = None
    if status != "INFEASIBLE" and math.isfinite(solver.best_objective_bound):
        bound = math.ceil(solver.best_objective_bound - 1e-6) * built.unit
    return status, steps, offsets, objective, bound


def extract_order(steps: list[int]) -> list[int]:
    """The ops sorted by their steps."""
    return sorted(range(len(steps)), key=lambda v: steps[v])


def cpsat_segment(dag: Dag, start: list[int], target: int, time_limit, on_progress, *,
                  workers, seed, solver_params) -> PartOutcome:
    """The order model on ``dag`` from ``start`` down to ``target`` (peak bytes)."""
    budget = Budget(time_limit)
    upper = peak(dag, start)
    built = build_schedule_model(dag, lower=target, upper=upper, start=start)
    status, steps, _, objective, bound = _solve(
        built, time_limit=budget.remaining(), workers=workers, seed=seed,
        solver_params=solver_params, on_progress=on_progress)
    info = {"solver_status": status}
    if status == "INFEASIBLE":   # nothing between the target and the start: start is optimal
        return PartOutcome(None, upper, upper, True, info)
    order = extract_order(steps) if steps is not None else None
    objective = peak(dag, order) if order is not None else upper
    bound = max(target, bound or 0)
    return PartOutcome(order, objective, bound, status == "OPTIMAL" or objective <= bound,
                       info)


def cpsat_joint(instance: ScheduleInstance, dag: Dag, start: ScheduleSolution, lower: int,
                time_limit, on_progress, *, workers, seed, solver_params) -> PartOutcome:
    """The joint order and placement model from the plan ``start`` down to ``lower`` (arena
    bytes)."""
    from optplan.schedule.validate import arena_of

    budget = Budget(time_limit)   # building the model counts against the time
    upper = arena_of(instance, start)
    order = order_indices(dag, start.order)
    built = build_schedule_model(dag, lower=lower, upper=upper, start=order,
                                 alignment=instance.alignment,
                                 start_offsets=[start.offsets[name]
                                                for name in dag.buffer_names])
    status, steps, offsets, objective, bound = _solve(
        built, time_limit=budget.remaining(), workers=workers, seed=seed,
        solver_params=solver_params, on_progress=on_progress)
    info = {"solver_status": status}
    if status == "INFEASIBLE":
        return PartOutcome(None, upper, upper, True, info)
    if steps is None:
        return PartOutcome(None, upper, max(lower, bound or 0), False, info)
    placed = dict(zip(dag.buffer_names, offsets))
    return PartOutcome(extract_order(steps), objective, max(lower, bound or 0),
                       status == "OPTIMAL", info, placed)


def _flagged(solve, workers, seed, solver_params):
    """``solve`` with the run's workers (default 2), seed (default 0) and parameters."""
    return partial(solve, workers=DEFAULT_WORKERS if workers is None else workers,
                   seed=0 if seed is None else seed, solver_params=solver_params)


@register("cpsat", "schedule", kind="exact", reference=_REFERENCE)
def cpsat_schedule(instance: ScheduleInstance, *, time_limit=None, workers=None, seed=None,
                   warm_start=True, initial_solution=None, decompose: bool = True,
                   **solver_params) -> SolverOutcome:
    """Least peak (``schedule``) by CP-SAT on the order model, per segment.

    Parameters
    ----------
    time_limit, workers, seed
        CP-SAT's ``max_time_in_seconds`` (for the whole call), ``num_workers`` (default 2),
        ``random_seed`` (default 0).
    warm_start, initial_solution
        Candidates for the start (see :mod:`optplan.warm_start`); the best is the
        hint and the upper bound.
    decompose
        Solve the segments between cut ops apart (:mod:`optplan.schedule.decompose`).
    **solver_params
        Set on ``solver.parameters`` as given.
    """
    return solve_schedule(instance, _flagged(cpsat_segment, workers, seed, solver_params),
                          solver=SOLVER, version=cpsat_version,
                          time_limit=time_limit, workers=workers, seed=seed,
                          warm_start=warm_start, initial_solution=initial_solution,
                          decompose=decompose, default_workers=DEFAULT_WORKERS)


@register("cpsat", "schedule-offsets", kind="exact", reference=_REFERENCE)
def cpsat_schedule_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                           seed=None, warm_start=True, initial_solution=None,
                           decompose: bool = True, **solver_params) -> SolverOutcome:
    """Least arena (``schedule-offsets``) by CP-SAT: the least peak as the bound (order model
    per segment, part of the time), the least-peak order placed by the fixed-order ``cpsat``
    offsets method, then the joint order and placement model.

    Parameters as for :func:`cpsat_schedule`.
    """
    return solve_schedule_offsets(instance,
                                  _flagged(cpsat_segment, workers, seed, solver_params),
                                  _flagged(cpsat_joint, workers, seed, solver_params),
                                  placement="cpsat",
                                  solver=SOLVER, version=cpsat_version, time_limit=time_limit,
                                  workers=workers, seed=seed, warm_start=warm_start,
                                  initial_solution=initial_solution, decompose=decompose,
                                  default_workers=DEFAULT_WORKERS)
