r"""Exact CP-SAT model of preload-aware planning (method ``cpsat``, problem ``preload``).

Semantics: ``docs/problems.md`` (after FlexNN, MobiCom'24); modelling after the OR-Tools
CP-SAT samples (interval variables, ``add_no_overlap_2d``, hints, solution callbacks).
Times are integer µs, sizes bytes.

Formulation (``L`` layers, ``c_l`` compute, weights ``w`` of layer ``l_w`` with load ``d_w``
and options ``P_w``, tensors ``i`` of size ``s_i``; ``H`` = all compute + all loads)::

    y_{w,p}, b_w ∈ {0,1}:      Σ_{p∈P_w} y_{w,p} + b_w = 1           (preload at p, or pinned)
    pinned weights are stacked at the top of the budget M (see formulation.pinned_on_top:
    every plan has an equivalent one that does this), the rest packs below
        K = M - Σ_w s_w b_w
    x-interval of w, present iff not b_w:  [Σ_p p·y_{w,p}, l_w + 1)      (variable start)
    x-interval of the others:              [first_op, last_op + 1)       (fixed)
    y-interval of i (present with its x-interval):  [o_i, o_i + s_i),  o_i + s_i <= K
    NoOverlap2D(x, y)
    residence r_w = [Σ_p p·y_{w,p}, l_w + 1 + (L - l_w - 1) b_w), r_i = x_i otherwise:
    Cumulative(r, s, M)                                         (redundant, per-step capacity)
    E_l >= E_{l-1} + c_l                                  (S_l = E_l - c_l, E_{-1} = 0)
    loader order (l_w, id):  LS_k >= LE_{k-1};  LS_k >= E_{p-1} if y_{w,p} (p >= 1);
                             LE_k >= LS_k + d_w if not b_w;  LE_k >= LS_k;  S_{l_w} >= LE_k
    optional: Σ_i s_i · resident_i(t) <= M  for every step t    (the cumulative as LP rows)
    optional loader rows:  LS_k >= Σ_p C_{p-1} y_{w,p}           (C_l = c_0 + ... + c_l)
    (a) min E_{L-1}  with M = budget            (b) min M  with E_{L-1} <= target

Without the offsets and NoOverlap2D the model is the *cumulative relaxation* (it ignores
fragmentation only): :func:`cpsat_preload` solves it first, for a lower bound and for
decisions that the exact offsets solver then tries to pack.

The times are lower-bounded, not fixed, by the recurrences: every solution's simulated latency
is at most its E_{L-1}, and at the optimum they agree. A pinned weight's load takes no time and
waits for nothing, so the loader passes it by. The plan returned is re-timed by the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass

from optplan.exact.budget import SPLIT, Budget
from optplan.exact.cpsat import cpsat_offsets
from optplan.exact.cpsat_solve import CpsatRun, cp_model, cpsat_solver, cpsat_version, solve_model
from optplan.exact.run import ExactRun
from optplan.exact.scaling import CPSAT_LIMIT, check_values
from optplan.model import Instance, UsageRecord
from optplan.preload.bounds import budget_lower_bound, latency_lower_bound
from optplan.preload.flexnn import pin_all, plan_from_decisions
from optplan.preload.formulation import (horizon, pinned_on_top, preload_options,
                                         start_latency)
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import memory_intervals, plan_decisions, plan_peak
from optplan.result import SolverOutcome, Status

__all__ = ["build_cpsat_model", "cpsat_preload", "cpsat_minimum_budget", "BudgetOutcome"]

SOLVER = "cpsat"
DEFAULT_WORKERS = 2
NOGOOD_ROUNDS = 25
"""Master/subproblem rounds of the decomposition in :func:`_relax_and_pack`."""
SHRINK_STEPS = 6
"""Relaxations at smaller budgets tried when no packed decision set meets the bound."""


def check_cpsat_range(instance: PreloadInstance, capacity: int) -> None:
    """A SolverRangeError when the budget, the sizes or the times exceed CP-SAT's range."""
    check_values(max(capacity, sum(t.size for t in instance.tensors)), CPSAT_LIMIT, "CP-SAT",
                 "memory sizes", "budget")
    check_values(horizon(instance), CPSAT_LIMIT, "CP-SAT", "compute and load times",
                 "compute_us")


# --- the model ---------------------------------------------------------------------------------

@dataclass
class CpsatModel:
    model: object
    choose: dict          # (weight, step) -> BoolVar; (weight, None) -> pinned BoolVar
    offsets: list
    layer_end: list
    objective: object     # the expression minimised (latency or budget)


def build_cpsat_model(instance: PreloadInstance, *, objective: str = "latency",
                      budget: int | None = None, budget_range: tuple[int, int] | None = None,
                      latency_target: int | None = None, hint: PreloadPlan | None = None,
                      capacity_rows: bool = False, loader_rows: bool = False,
                      packing: bool = True) -> CpsatModel:
    """The model of the module docstring. ``budget`` for (a); ``budget_range`` (lower, upper)
    and ``latency_target`` for (b). ``hint`` becomes a complete solution hint.
    ``packing=False`` drops the offsets and NoOverlap2D: the *cumulative relaxation*, whose
    optimum is a lower bound (it ignores fragmentation only).
    ``capacity_rows`` and ``loader_rows`` add the two families of redundant linear rows (off by
    default: on MobileNet v2 they slowed CP-SAT down without raising its bound)."""
    model = cp_model().CpModel()
    if objective == "latency":
        capacity, cap_value = budget, budget
    else:
        capacity = model.new_int_var(budget_range[0], budget_range[1], "budget")
        cap_value = budget_range[1]
    choose = _decisions_variables(model, instance)
    offsets = _memory(model, instance, choose, capacity, cap_value, packing=packing,
                      capacity_rows=capacity_rows)
    layer_end = _timing(model, instance, choose, loader_rows=loader_rows)
    latency = layer_end[-1]
    if objective == "latency":
        model.minimize(latency)
        goal = latency
    else:
        model.add(latency <= latency_target)
        model.minimize(capacity)
        goal = capacity
    if hint is not None:
        _add_hint(model, instance, choose, offsets, hint)
    return CpsatModel(model, choose, offsets, layer_end, goal)


def _decisions_variables(model, instance: PreloadInstance) -> dict:
    """``y_{w,p}`` and ``b_w`` of every weight, exactly one of them chosen."""
    choose: dict = {}
    for index, tensor in enumerate(instance.tensors):
        if tensor.is_weight:
            steps = preload_options(instance, index)
            for step in steps:
                choose[index, step] = model.new_bool_var(f"y_{index}_{step}")
            choose[index, None] = model.new_bool_var(f"pin_{index}")
            model.add_exactly_one([choose[index, step] for step in steps]
                                  + [choose[index, None]])
    return choose


def _memory(model, instance: PreloadInstance, choose: dict, capacity, cap_value: int, *,
            packing: bool, capacity_rows: bool) -> list:
    """Residence intervals, the cumulative, and (``packing``) offsets under NoOverlap2D with
    the pinned weights stacked at the top of the budget; returns the offset variables."""
    tensors, layers = instance.tensors, instance.num_layers
    pinned_bytes = sum(tensors[i].size * var for (i, step), var in choose.items()
                       if step is None)
    below = model.new_int_var(0, cap_value, "unpinned_capacity")
    model.add(below == capacity - pinned_bytes)
    x_intervals, y_intervals, offsets, residences, demands = [], [], [], [], []
    for index, tensor in enumerate(tensors):
        present = ~choose[index, None] if tensor.is_weight else None
        if tensor.is_weight:
            steps = preload_options(instance, index)
            pinned = choose[index, None]
            start = model.new_int_var(0, tensor.layer, f"start_{index}")
            model.add(start == sum(step * choose[index, step] for step in steps))
            # Residence (pinned: every step) for the cumulative, with the constant budget.
            end = model.new_int_var(tensor.layer + 1, layers, f"end_{index}")
            model.add(end == tensor.layer + 1 + (layers - tensor.layer - 1) * pinned)
            span = model.new_int_var(1, layers, f"span_{index}")
            residences.append(model.new_interval_var(start, span, end, f"r_{index}"))
            if packing:
                length = model.new_int_var(1, tensor.layer + 1, f"len_{index}")
                x_intervals.append(model.new_optional_interval_var(
                    start, length, tensor.layer + 1, present, f"x_{index}"))
        else:
            fixed = model.new_fixed_size_interval_var(
                tensor.first_op, tensor.last_op - tensor.first_op + 1, f"x_{index}")
            residences.append(fixed)
            x_intervals.append(fixed)
        demands.append(tensor.size)
        if not packing:
            continue
        offset = model.new_int_var(0, cap_value - tensor.size, f"o_{index}")
        offsets.append(offset)
        if present is None:
            model.add(offset + tensor.size <= below)
            y_intervals.append(model.new_fixed_size_interval_var(offset, tensor.size,
                                                                 f"y_{index}"))
        else:
            model.add(offset + tensor.size <= below).only_enforce_if(present)
            model.add(offset == 0).only_enforce_if(~present)
            y_intervals.append(model.new_optional_fixed_size_interval_var(
                offset, tensor.size, present, f"y_{index}"))
    if packing:
        model.add_no_overlap_2d(x_intervals, y_intervals)
    model.add_cumulative(residences, demands, capacity)
    for step in range(layers if capacity_rows else 0):   # the cumulative as LP rows
        model.add(sum(tensor.size * resident(instance, choose, index, step)
                      for index, tensor in enumerate(tensors)) <= capacity)
    return offsets


def _timing(model, instance: PreloadInstance, choose: dict, *, loader_rows: bool) -> list:
    """The layer and loader recurrences; returns the ``E_l`` variables."""
    tensors, compute = instance.tensors, instance.compute_us
    top = horizon(instance)
    prefix, layer_end = 0, []
    for layer in range(instance.num_layers):
        prefix += compute[layer]
        layer_end.append(model.new_int_var(prefix, top, f"E_{layer}"))
        if layer:
            model.add(layer_end[layer] >= layer_end[layer - 1] + compute[layer])
    previous_end = None
    for index in instance.load_order:
        tensor = tensors[index]
        load_start = model.new_int_var(0, top, f"LS_{index}")
        load_end = model.new_int_var(0, top, f"LE_{index}")
        if previous_end is not None:
            model.add(load_start >= previous_end)
        for step in preload_options(instance, index):
            if step >= 1:
                model.add(load_start >= layer_end[step - 1]).only_enforce_if(choose[index, step])
        model.add(load_end >= load_start + tensor.load_us).only_enforce_if(
            ~choose[index, None])
        model.add(load_end >= load_start)
        model.add(layer_end[tensor.layer] - compute[tensor.layer] >= load_end)
        if loader_rows:   # LS_k >= E_{p-1} >= C_{p-1}, as one linear row
            model.add(load_start >= earliest_start(instance, choose, index))
        previous_end = load_end
    return layer_end


def _add_hint(model, instance: PreloadInstance, choose: dict, offsets: list,
              hint: PreloadPlan) -> None:
    """``hint`` (with its pinned weights moved on top) as a complete solution hint."""
    decisions = plan_decisions(instance, hint)
    for (index, step), var in choose.items():
        model.add_hint(var, decisions[index] == step)
    lowered = pinned_on_top(instance, hint).by_id
    for index, (tensor, offset) in enumerate(zip(instance.tensors, offsets)):
        pinned = tensor.is_weight and decisions[index] is None
        model.add_hint(offset, 0 if pinned else lowered[tensor.id].offset)


def resident(instance: PreloadInstance, choose: dict, index: int, step: int):
    """1 when tensor ``index`` is resident at ``step``, a 0/1 linear expression for weights."""
    tensor = instance.tensors[index]
    if not tensor.is_weight:
        return int(tensor.first_op <= step <= tensor.last_op)
    if step == tensor.layer:
        return 1
    pinned = choose[index, None]
    if step > tensor.layer:
        return pinned
    return pinned + sum(choose[index, p] for p in preload_options(instance, index) if p <= step)


def earliest_start(instance: PreloadInstance, choose: dict, index: int):
    """A linear lower bound on ``LS_w``: the compute of the layers before its preload step."""
    prefix = [0]
    for value in instance.compute_us:
        prefix.append(prefix[-1] + value)
    return sum(prefix[step] * choose[index, step] for step in preload_options(instance, index)
               if step >= 1)


# --- solving and extraction --------------------------------------------------------------------

def _solve(built: CpsatModel, budget: Budget, flags: dict, *, seconds=None,
           on_progress=None) -> CpsatRun:
    return solve_model(built.model, {}, budget=budget, seconds=seconds,
                       objective=built.objective, on_progress=on_progress, **flags)


def _extract(instance: PreloadInstance, built: CpsatModel, solver) -> PreloadPlan:
    """The plan of a solution: its decisions, its offsets, the pinned weights on top."""
    decisions = _decisions(built, solver)
    offsets = {index: solver.value(var) for index, var in enumerate(built.offsets)}
    top = max((offsets[i] + t.size for i, t in enumerate(instance.tensors)
               if decisions.get(i, 0) is not None), default=0)
    for index in sorted((i for i, step in decisions.items() if step is None),
                        key=lambda i: instance.tensors[i].id):
        offsets[index] = top
        top += instance.tensors[index].size
    return plan_from_decisions(instance, offsets, decisions)


def _decisions(built: CpsatModel, solver) -> dict[int, int | None]:
    return {index: choice for (index, choice), var in built.choose.items() if solver.value(var)}


# --- objective (a): minimum latency at the budget ----------------------------------------------

def cpsat_preload(instance: PreloadInstance, *, time_limit: float | None = None,
                  workers: int | None = None, seed: int | None = None, warm_start=True,
                  initial_solution: PreloadPlan | None = None, capacity_rows: bool = False,
                  loader_rows: bool = False, relaxation: bool = True,
                  **solver_params) -> SolverOutcome:
    """Minimum latency at ``instance.budget`` (objective (a)); see the module docstring.

    Parameters
    ----------
    instance : PreloadInstance
        ``budget`` ``None`` means unlimited (answered without search: pin everything).
    time_limit, workers, seed :
        For the whole call (warm start and model building included); CP-SAT's
        ``num_workers`` (default 2), ``random_seed``.
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`; by default the better of FlexNN and
        no-preload): the hint, and the answer when nothing better is found.
        ``initial_solution`` may be e.g. the optimum at a smaller budget, in a sweep.
    capacity_rows, loader_rows : bool
        Redundant linear rows (see :func:`build_cpsat_model`).
    relaxation : bool
        First solve the cumulative relaxation (a lower bound) and pack its decisions with the
        exact offsets solver (default); the full model then starts from that bound and plan.
    **solver_params
        Further ``CpSolver.parameters`` fields, passed straight through.

    Returns
    -------
    SolverOutcome
        ``OPTIMAL`` only when CP-SAT proved it (or the plan meets the latency bound);
        ``best_bound`` in µs.
    """
    cpsat_solver(time_limit=None, workers=1, seed=0, solver_params=solver_params)  # names
    run = ExactRun(instance, "preload", solver=SOLVER, version=cpsat_version(),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    done = start_latency(run, warm_start, initial_solution, check_cpsat_range)
    if done is not None:
        return done
    flags = {"workers": run.workers, "seed": run.seed, "solver_params": solver_params}
    if relaxation and not run.meets_bound() and not run.out_of_time():
        if not _relax_and_pack(run, flags):
            return run.outcome(infeasible=True)
    if run.meets_bound():
        return run.finished(run.info.get("proof", "a plan meets a proven lower bound"))
    if run.out_of_time():
        return run.outcome()
    built = build_cpsat_model(instance, budget=instance.budget, hint=run.solution,
                              capacity_rows=capacity_rows, loader_rows=loader_rows)
    built.model.add(built.objective >= run.bound)
    if run.out_of_time():
        return run.outcome()
    answer = _solve(built, run.budget, flags, on_progress=run.trajectory.record)
    run.info["cpsat_status"] = answer.status
    run.info["wall_time_s"] = round(run.budget.elapsed(), 3)
    if answer.status == "INFEASIBLE":
        return run.outcome(infeasible=True)
    if answer.has_solution:
        run.offer(_extract(instance, built, answer.solver))
    run.raise_bound(answer.bound)
    return run.outcome(proven=answer.status == "OPTIMAL")


def _relax_and_pack(run: ExactRun, flags: dict) -> bool:
    """Logic-based Benders decomposition on the cumulative relaxation, then shrinking.

    *Master*: the cumulative relaxation (``packing=False``), which ignores fragmentation only,
    so its optimum is a lower bound. *Subproblem*: pack the master's decisions (the full model
    with the decisions fixed). A decision set proven not to fit the budget admits no
    plan, so a no-good cut excludes it and the master's optimum stays a valid bound (it can
    only rise); a packing that fits is a plan, optimal when it meets the bound. At most
    :data:`NOGOOD_ROUNDS` rounds, in ``SPLIT.relaxation`` of the time.

    If no plan meets the bound, the relaxation is solved again at smaller budgets (less memory:
    decisions that fragment less), by bisection between the must-live bound and the budget, at
    most :data:`SHRINK_STEPS` times, for a better incumbent. Offers every plan and bound to
    ``run``; returns False when the problem is proven infeasible.
    """
    instance = run.instance
    budget = instance.budget
    stage = run.budget.part(run.budget.share(SPLIT.relaxation))

    def pack_limit():   # packings that fit are found fast; proofs that none does are slow
        share = stage.time_limit
        return SPLIT.pack_seconds if share is None else max(SPLIT.pack_seconds, share / 20)

    master = build_cpsat_model(instance, budget=budget, packing=False, hint=run.solution)
    sound = True
    for round_number in range(NOGOOD_ROUNDS):
        if stage.exhausted():
            break
        answer = _solve(master, stage, flags)
        run.info["relaxation_rounds"] = round_number + 1
        if answer.status == "INFEASIBLE":
            if sound:
                run.info["proof"] = ("the cumulative relaxation, less decision sets proven "
                                     "unpackable, is infeasible")
                return False
            break
        if sound and answer.status in ("OPTIMAL", "FEASIBLE", "UNKNOWN"):
            run.raise_bound(answer.bound)
            run.info["relaxation_bound_us"] = run.bound
        if not answer.has_solution:
            break
        decisions = _decisions(master, answer.solver)
        packed, proven = _pack(instance, decisions, budget, stage.part(pack_limit()), flags)
        if packed is not None:
            run.offer(packed)
            return True   # optimal when the master was solved to optimality
        sound = sound and proven
        master.model.add(sum(master.choose[key] for key in decisions.items()) <=
                         len(decisions) - 1)
    if run.meets_bound():
        return True
    packed_at, failed_at = budget_lower_bound(instance), budget
    for _ in range(SHRINK_STEPS):
        target = (packed_at + failed_at) // 2
        if failed_at - packed_at <= max(1, budget // 200) or stage.exhausted():
            break
        built = build_cpsat_model(instance.with_budget(target), budget=target, packing=False)
        answer = _solve(built, stage, flags)
        if not answer.has_solution:
            break
        if run.objective is not None and answer.bound is not None and \
                answer.bound >= run.objective:
            packed_at = target   # nothing at or below this budget beats the plan we have
            continue
        packed, _ = _pack(instance, _decisions(built, answer.solver), budget,
                          stage.part(pack_limit()), flags)
        if packed is None:
            failed_at = target
            continue
        packed_at = target
        if run.offer(packed):
            run.info["relaxation_packed_at"] = target
    return True


def _pack(instance: PreloadInstance, decisions: dict, budget: int, stage: Budget,
          flags: dict) -> tuple[PreloadPlan | None, bool]:
    """Pack the decisions' residence intervals into ``budget``: the full model with the
    decisions fixed (a NoOverlap2D feasibility problem). Returns the plan (``None`` when none
    was found) and whether "it does not fit" is proven."""
    built = build_cpsat_model(instance.with_budget(budget), budget=budget)
    for key, var in built.choose.items():
        built.model.add(var == int(decisions[key[0]] == key[1]))
    answer = _solve(built, stage, flags)
    if answer.has_solution:
        return _extract(instance, built, answer.solver), False
    return None, answer.status == "INFEASIBLE"


# --- objective (b): minimum budget at a latency target -------------------------------------------

@dataclass(frozen=True)
class BudgetOutcome:
    """Objective (b): the smallest budget whose optimal latency is at most the target."""

    status: Status
    budget: int | None          # the best budget found (the plan's peak)
    best_bound: int | None      # proven lower bound on the minimum budget
    plan: PreloadPlan | None
    info: dict


def _tightest(instance: PreloadInstance, decisions: dict, upper: int, stage: Budget,
              flags: dict) -> PreloadPlan | None:
    """The decisions packed with the least peak the offsets method ``cpsat`` finds, or
    ``None`` above ``upper``."""
    intervals = memory_intervals(instance, decisions)
    records = Instance(tuple(UsageRecord(t.id, first, last, t.size) for t, (first, last)
                             in zip(instance.tensors, intervals)), f"{instance.name}/packing")
    seconds = stage.remaining()
    if seconds is not None and seconds <= 0:   # the stage ran out: no packing found in time
        return None
    outcome = cpsat_offsets(records, time_limit=seconds, workers=flags["workers"],
                            seed=flags["seed"])
    if outcome.solution is None or outcome.solution.arena_size > upper:
        return None
    return plan_from_decisions(instance, dict(enumerate(outcome.solution.offsets)), decisions)


def cpsat_minimum_budget(instance: PreloadInstance, *, latency_target: int | None = None,
                         time_limit: float | None = None, workers: int | None = None,
                         seed: int | None = None, relaxation: bool = True,
                         **solver_params) -> BudgetOutcome:
    """Objective (b): minimise the budget subject to latency <= ``latency_target``
    (``None``: no target, the minimum feasible budget). ``instance.budget`` is ignored.
    ``relaxation`` as in :func:`cpsat_preload`: the cumulative relaxation first."""
    workers = DEFAULT_WORKERS if workers is None else workers
    seed = 0 if seed is None else seed
    info = {"time_limit": time_limit, "workers": workers, "seed": seed, "objective": "budget",
            "latency_target": latency_target}
    instance = instance.with_budget(None)
    lower = budget_lower_bound(instance)
    if latency_target is not None and latency_target < latency_lower_bound(instance):
        info["proof"] = "target below the latency lower bound"
        return BudgetOutcome(Status.INFEASIBLE, None, None, None, info)
    target = horizon(instance) if latency_target is None else latency_target
    plan = pin_all(instance)   # meets every reachable target: latency = the lower bound
    upper = plan_peak(instance, plan)
    check_cpsat_range(instance, upper)
    budget = Budget(time_limit)
    flags = {"workers": workers, "seed": seed, "solver_params": solver_params}
    bound = lower
    if relaxation:
        # The cumulative relaxation bounds the budget from below; its decisions, packed by
        # the exact offsets solver, give a plan (their optimal arena) from above.
        stage = budget.part(budget.share(SPLIT.relaxation))
        built = build_cpsat_model(instance, objective="budget", budget_range=(lower, upper),
                                  latency_target=target, hint=plan, packing=False)
        answer = _solve(built, stage, flags)
        info["relaxation_status"] = answer.status
        if answer.status == "INFEASIBLE":
            return BudgetOutcome(Status.INFEASIBLE, None, None, None, info)
        bound = max(bound, answer.bound or 0)
        if answer.has_solution and not stage.exhausted():
            packed = _tightest(instance, _decisions(built, answer.solver), upper, stage, flags)
            if packed is not None and packed.peak < plan.peak:
                plan = packed
        if plan.peak <= bound:
            info["proof"] = "the packed relaxation meets the relaxation's bound"
            return BudgetOutcome(Status.OPTIMAL, plan.peak, plan.peak, plan, info)
    built = build_cpsat_model(instance, objective="budget",
                              budget_range=(bound, plan_peak(instance, plan)),
                              latency_target=target, hint=plan)
    if not budget.exhausted():
        answer = _solve(built, budget, flags)
        info["cpsat_status"] = answer.status
        if answer.has_solution:
            found = _extract(instance, built, answer.solver)
            if plan_peak(instance, found) <= plan_peak(instance, plan):
                plan = found
        bound = max(bound, answer.bound or 0)
        proven_by_solver = answer.status == "OPTIMAL"
    else:
        proven_by_solver = False
    info["wall_time_s"] = round(budget.elapsed(), 3)
    peak = plan_peak(instance, plan)
    proven = proven_by_solver or peak <= bound
    return BudgetOutcome(Status.OPTIMAL if proven else Status.FEASIBLE, peak,
                         peak if proven else bound, plan, info)
