r"""Exact MILP model of preload-aware planning (method ``milp_highs``; PuLP with HiGHS).

Semantics: ``docs/problems.md`` (after FlexNN, MobiCom'24). The same decisions and timing as
:mod:`optplan.preload.exact_cpsat`; memory non-overlap becomes big-M disjunctions that are
switched on only when two residence intervals intersect. Sizes are divided by their gcd ``u``
(every packing compacts downwards onto offsets that are sums of sizes, so the budget becomes
``floor(M / u)`` units without losing a solution). Times are integer µs.

Formulation (``T`` = the time horizon, ``M`` the budget in units)::

    y_{w,p}, b_w ∈ {0,1}:  Σ_p y_{w,p} + b_w = 1
    live_w(t) = b_w + Σ_{p <= t} y_{w,p} (t < l_w),  1 (t = l_w),  b_w (t > l_w)   (resident)
    0 <= o_i <= M - s_i
    for every pair i < j that may share a step, with v_{ij} ∈ {0,1} forced to 1 when they do
    (fixed intervals: v = 1; weight/fixed: v >= live_w(last_op_j) or b_w;
     weight/weight: v >= b_i, v >= b_j, v >= Σ_{p <= l_i} y_{j,p}  for l_i <= l_j):
        o_i + s_i <= o_j + M (1 - z_{ij}) + M (1 - v_{ij})
        o_j + s_j <= o_i + M z_{ij}       + M (1 - v_{ij})
    Σ_i s_i live_i(t) <= M  for every step t                       (per-step capacity)
    E_l >= E_{l-1} + c_l;  LS_k >= LE_{k-1};  LS_k >= E_{p-1} - T (1 - y_{w,p});
    LE_k >= LS_k + d_w (1 - b_w);  E_{l_w} - c_{l_w} >= LE_k
    (a) min E_{L-1}             (b) min M  s.t.  E_{L-1} <= target

HiGHS runs through :mod:`optplan.exact.highs`; its proofs count only when the model's numbers
let it resolve a unit (:func:`optplan.exact.scaling.milp_proof_trusted`; the big-Ms are the
budget in units and the horizon ``T``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from optplan.exact.budget import Budget
from optplan.exact.highs import check_highs_options, run_highs
from optplan.exact.milp import milp_version
from optplan.exact.run import ExactRun
from optplan.exact.scaling import MILP_LIMIT, check_values, milp_proof_trusted, proven_bound
from optplan.preload.bounds import budget_lower_bound, latency_lower_bound
from optplan.preload.exact_cpsat import BudgetOutcome
from optplan.preload.flexnn import pin_all, plan_from_decisions
from optplan.preload.formulation import (compacted_offsets, horizon, preload_options,
                                         start_latency)
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_decisions, plan_peak, validate_plan
from optplan.result import SolverOutcome, Status

__all__ = ["build_milp", "milp_preload", "milp_minimum_budget", "solve_milp", "milp_capacity"]

SOLVER = "milp_highs"
DEFAULT_WORKERS = 1


def _pulp():
    import pulp
    return pulp


@dataclass
class PreloadMilp:
    problem: object                  # pulp.LpProblem
    choose: dict                     # (weight, step | None) -> LpVariable
    offsets: list                    # LpVariable per tensor (units)
    unit: int
    start: dict = field(default_factory=dict)   # LpVariable -> warm-start value
    big_m: int = 0                   # the largest big-M (the budget in units, the horizon)

    @property
    def trusted(self) -> bool:
        return milp_proof_trusted(self.big_m, self.big_m)


def _live_expression(instance: PreloadInstance, choose: dict, index: int, step: int):
    """``1`` when weight ``index`` is resident at ``step`` (a linear 0/1 expression)."""
    tensor = instance.tensors[index]
    pinned = choose[index, None]
    if step > tensor.layer:
        return pinned
    return pinned + sum(choose[index, p] for p in preload_options(instance, index) if p <= step)


def milp_capacity(lp, objective: str, budget, budget_range, unit: int):
    """``(capacity, its largest value)`` in units: the budget for objective ``latency``, an
    integer variable over ``budget_range`` (bytes) for ``budget``."""
    if objective == "latency":
        return budget // unit, budget // unit
    upper = budget_range[1] // unit
    return lp.add_variable("budget", -(-budget_range[0] // unit), upper, cat="Integer"), upper


def build_milp(instance: PreloadInstance, *, objective: str = "latency",
               budget: int | None = None, budget_range: tuple[int, int] | None = None,
               latency_target: int | None = None,
               hint: PreloadPlan | None = None) -> PreloadMilp:
    """The model of the module docstring (``budget`` in bytes for (a); ``budget_range`` in
    bytes and ``latency_target`` for (b)): decisions, memory, timing, objective, start."""
    pulp = _pulp()
    unit = math.gcd(*(t.size for t in instance.tensors)) or 1
    lp = pulp.LpProblem("preload", pulp.LpMinimize)
    capacity, cap_value = milp_capacity(lp, objective, budget, budget_range, unit)
    choose = _decision_variables(lp, instance)
    offsets = _memory(lp, instance, choose, unit, capacity, cap_value)
    layer_end = _timing(lp, instance, choose)
    if objective == "latency":
        lp += layer_end[-1]
    else:
        lp += layer_end[-1] <= latency_target, "target"
        lp += capacity
    milp = PreloadMilp(lp, choose, offsets, unit, big_m=max(cap_value, horizon(instance)))
    if hint is not None:
        decisions = plan_decisions(instance, hint)
        for (index, step), var in choose.items():
            milp.start[var] = int(decisions[index] == step)
        given = {i: hint.by_id[t.id].offset for i, t in enumerate(instance.tensors)}
        for index, offset in compacted_offsets(instance, decisions, given).items():
            milp.start[offsets[index]] = offset // unit
    return milp


def _decision_variables(lp, instance: PreloadInstance) -> dict:
    """``y_{w,p}`` and ``b_w`` of every weight, exactly one of them chosen."""
    pulp = _pulp()
    choose: dict = {}
    for index, tensor in enumerate(instance.tensors):
        if tensor.is_weight:
            for step in preload_options(instance, index):
                choose[index, step] = lp.add_variable(f"y_{index}_{step}", cat="Binary")
            choose[index, None] = lp.add_variable(f"pin_{index}", cat="Binary")
            lp += pulp.lpSum(v for (i, _), v in choose.items() if i == index) == 1, \
                f"one_{index}"
    return choose


def _memory(lp, instance: PreloadInstance, choose: dict, unit: int, capacity,
            cap_value: int) -> list:
    """Offsets below the budget, the per-step capacity rows and the big-M disjunctions of
    tensors that share a step; returns the offset variables (units)."""
    pulp = _pulp()
    tensors = instance.tensors
    sizes = [t.size // unit for t in tensors]
    offsets = [lp.add_variable(f"o_{i}", 0, max(0, cap_value - sizes[i]))
               for i in range(len(tensors))]
    for index in range(len(tensors)):
        lp += offsets[index] + sizes[index] <= capacity, f"cap_{index}"

    def live(index: int, step: int):
        tensor = tensors[index]
        if tensor.is_weight:
            return _live_expression(instance, choose, index, step)
        return 1 if tensor.first_op <= step <= tensor.last_op else 0

    for step in range(instance.num_layers):
        lp += pulp.lpSum(sizes[i] * live(i, step) for i in range(len(tensors))) <= capacity, \
            f"breadth_{step}"
    for i in range(len(tensors)):
        for j in range(i + 1, len(tensors)):
            together = _together(instance, choose, i, j, lp)
            if together is None:
                continue
            below = lp.add_variable(f"z_{i}_{j}", cat="Binary")
            apart = cap_value * (1 - together)
            lp += offsets[i] + sizes[i] <= offsets[j] + cap_value * (1 - below) + apart, \
                f"below_{i}_{j}"
            lp += offsets[j] + sizes[j] <= offsets[i] + cap_value * below + apart, \
                f"above_{i}_{j}"
    return offsets


def _timing(lp, instance: PreloadInstance, choose: dict) -> list:
    """The layer and loader recurrences; returns the ``E_l`` variables."""
    tensors, compute = instance.tensors, instance.compute_us
    top = horizon(instance)
    layer_end = []
    prefix = 0
    for layer in range(instance.num_layers):
        prefix += compute[layer]
        layer_end.append(lp.add_variable(f"E_{layer}", prefix, top))
        if layer:
            lp += layer_end[layer] >= layer_end[layer - 1] + compute[layer], f"chain_{layer}"
    previous_end = None
    for index in instance.load_order:
        tensor = tensors[index]
        load_start = lp.add_variable(f"LS_{index}", 0, top)
        load_end = lp.add_variable(f"LE_{index}", 0, top)
        if previous_end is not None:
            lp += load_start >= previous_end, f"loader_{index}"
        for step in preload_options(instance, index):
            if step >= 1:
                lp += load_start >= layer_end[step - 1] - top * (1 - choose[index, step]), \
                    f"after_{index}_{step}"
        lp += load_end >= load_start + tensor.load_us * (1 - choose[index, None]), \
            f"load_{index}"
        lp += layer_end[tensor.layer] - compute[tensor.layer] >= load_end, f"ready_{index}"
        previous_end = load_end
    return layer_end


def _together(instance: PreloadInstance, choose: dict, i: int, j: int, lp):
    """``1`` (or a 0/1 expression/variable) when tensors ``i`` and ``j`` share a step;
    ``None`` when they never do."""
    a, b = instance.tensors[i], instance.tensors[j]
    if not a.is_weight and not b.is_weight:
        return 1 if a.first_op <= b.last_op and b.first_op <= a.last_op else None
    if a.is_weight and b.is_weight:
        if a.layer > b.layer:
            i, j, a, b = j, i, b, a
        together = lp.add_variable(f"v_{i}_{j}", cat="Binary")
        lp += together >= choose[i, None]
        lp += together >= choose[j, None]
        lp += together >= _live_expression(instance, choose, j, a.layer)
        return together
    weight, other = (i, j) if a.is_weight else (j, i)
    fixed = instance.tensors[other]
    layer = instance.tensors[weight].layer
    if fixed.first_op > layer:
        return choose[weight, None]
    if fixed.last_op >= layer:
        return 1
    return _live_expression(instance, choose, weight, fixed.last_op)


def check_milp_range(instance: PreloadInstance, capacity: int) -> None:
    """A SolverRangeError when the budget, the sizes or the times exceed the MILP range."""
    check_values(max(capacity, sum(t.size for t in instance.tensors)), MILP_LIMIT,
                 "the MILP solvers", "memory sizes", "budget")
    check_values(horizon(instance), MILP_LIMIT, "the MILP solvers", "compute and load times",
                 "compute_us")


def _run(milp: PreloadMilp, budget: Budget, *, workers, seed, params):
    """Solve with HiGHS in what is left of ``budget`` (see :meth:`Budget.solver_seconds`)."""
    return run_highs(milp.problem, seconds=budget.solver_seconds(), workers=workers, seed=seed,
                     params=params, start=milp.start)


def _extract(instance: PreloadInstance, milp: PreloadMilp) -> PreloadPlan:
    decisions = {}
    for (index, step), var in milp.choose.items():
        if (var.varValue or 0) > 0.5:
            decisions[index] = step
    # Continuous offsets become whole bytes (compaction never raises a tensor).
    values = {i: var.varValue or 0.0 for i, var in enumerate(milp.offsets)}
    offsets = compacted_offsets(instance, decisions, values)
    return plan_from_decisions(instance, offsets, decisions)


def milp_preload(instance: PreloadInstance, *, time_limit: float | None = None,
                 workers: int | None = None, seed: int | None = None, warm_start=True,
                 initial_solution: PreloadPlan | None = None,
                 **solver_params) -> SolverOutcome:
    """Minimum latency at ``instance.budget`` (objective (a)) with HiGHS.

    Parameters and statuses as :func:`optplan.preload.exact_cpsat.cpsat_preload`;
    ``solver_params`` are HiGHS option names. ``OPTIMAL`` only when the plan meets a proven
    bound (HiGHS's dual bound, when the model lets it prove one, or the latency bound).
    """
    check_highs_options(solver_params)
    run = ExactRun(instance, "preload", solver=SOLVER, version=milp_version(SOLVER),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    done = start_latency(run, warm_start, initial_solution, check_milp_range)
    if done is not None:
        return done
    if run.meets_bound():
        return run.finished("the warm start meets the latency bound")
    milp = build_milp(instance, budget=instance.budget, hint=run.solution)

    def valid_plan(solved):
        found = _extract(instance, solved)
        return None if validate_plan(instance, found) else found

    return solve_milp(run, milp, solver_params, valid_plan)


def solve_milp(run: ExactRun, milp, solver_params: dict, extract) -> SolverOutcome:
    """Solve a built preload MILP (``problem``, ``start``, ``trusted``) with HiGHS in what
    is left of ``run``'s budget and return the outcome: ``extract(milp)`` (a valid plan or
    ``None``) is offered; HiGHS's infeasibility and bound count when ``milp.trusted``."""
    run.info["proofs_trusted"] = milp.trusted
    if run.out_of_time():
        return run.outcome()
    answer = _run(milp, run.budget, workers=run.workers, seed=run.seed, params=solver_params)
    run.info["highs_status"] = answer.status
    if answer.infeasible and milp.trusted:
        return run.outcome(infeasible=True)
    if answer.has_solution:
        run.offer(extract(milp))
    if milp.trusted:
        run.raise_bound(proven_bound(answer.bound))
    return run.outcome()


def milp_minimum_budget(instance: PreloadInstance, *, latency_target: int | None = None,
                        time_limit: float | None = None, workers: int | None = None,
                        seed: int | None = None, **solver_params) -> BudgetOutcome:
    """Objective (b) with HiGHS; returns a :class:`~optplan.preload.exact_cpsat.BudgetOutcome`
    (``budget`` and ``best_bound`` in bytes)."""
    check_highs_options(solver_params)
    workers = DEFAULT_WORKERS if workers is None else workers
    seed = 0 if seed is None else seed
    info = {"time_limit": time_limit, "workers": workers, "seed": seed, "objective": "budget",
            "latency_target": latency_target}
    instance = instance.with_budget(None)
    if latency_target is not None and latency_target < latency_lower_bound(instance):
        return BudgetOutcome(Status.INFEASIBLE, None, None, None, info)
    start = pin_all(instance)
    upper = plan_peak(instance, start)
    check_milp_range(instance, upper)
    lower = budget_lower_bound(instance)
    target = horizon(instance) if latency_target is None else latency_target
    milp = build_milp(instance, objective="budget", budget_range=(lower, upper),
                      latency_target=target, hint=start)
    answer = _run(milp, Budget(time_limit), workers=workers, seed=seed, params=solver_params)
    info["highs_status"] = answer.status
    plan, bound = start, lower
    if answer.has_solution:
        found = _extract(instance, milp)
        if not validate_plan(instance.with_budget(upper), found) and (
                plan_peak(instance, found) <= plan_peak(instance, plan)):
            plan = found
    if milp.trusted and answer.bound is not None:
        bound = max(bound, proven_bound(answer.bound) * milp.unit)
    peak = plan_peak(instance, plan)
    proven = peak <= bound
    return BudgetOutcome(Status.OPTIMAL if proven else Status.FEASIBLE, peak,
                         peak if proven else bound, plan, info)
