r"""Exact MILP model of preload-aware planning with layer slicing (``milp_highs`` with
``slicing=True``; PuLP with HiGHS): the cross-check of :mod:`optplan.preload.sliced_cpsat`.

Semantics: ``docs/problems.md`` and :mod:`optplan.preload.slicing`; the grid, its candidates and
why a model over it is exact: :mod:`optplan.preload.sliced_grid`. The decisions and timing of
:mod:`optplan.preload.exact_milp` on the grid, with one binary per layer option: preload steps
are binaries per grid step (``O(steps)`` per weight: a model for small instances), memory
non-overlap big-M disjunctions switched on when two residences share a step. Sizes are divided
by their gcd ``u``; times are integer µs.

Formulation (grid steps ``s``; layer ``l`` with options ``o`` of ``k_o`` sub-layers computing
``c_{o,j}`` at ``s_l + j``; candidates ``i`` of option ``o(i)`` on grid steps ``[f_i, e_i]``;
weights ``w`` at grid step ``g_w`` with size ``z_w``, load ``d_w``; ``T`` the horizon)::

    u_{l,o} ∈ {0,1}:   Σ_o u_{l,o} = 1
    y_{w,p}, b_w ∈ {0,1}:   Σ_{p <= g_w} y_{w,p} + b_w = u_{o(w)}         (preload at p, pinned)
    live_w(s) = b_w + Σ_{p <= s} y_{w,p} (s < g_w),  u_{o(w)} (s = g_w),  b_w (s > g_w)
    live_i(s) = u_{o(i)} on [f_i, e_i];  live_a(s) = 1 on [f_a, e_a]
    window (if any):  π(g_w) - π(p) <= window + S (1 - y_{w,p})                (π linear in u)
    0 <= o_i <= M - z_i
    for every two tensors that may share a step (not two options of one layer), v ∈ {0,1}:
        v >= live_i(s) + live_j(s) - 1  for every step s both may hold
        o_i + z_i <= o_j + M (1 - z_{ij}) + M (1 - v);   o_j + z_j <= o_i + M z_{ij} + M (1 - v)
    Σ_i z_i live_i(s) <= M  for every step s                            (per-step capacity)
    C_s = Σ_{o: k_o > j} c_{o,j} u_{l,o};   E_s >= E_{s-1} + C_s
    loader, in load order (g_w, id):  LS_w >= LE_v;  LS_w >= E_{p-1} - T (1 - y_{w,p});
        LE_w >= LS_w + d_w Σ_p y_{w,p};   E_{g_w} - C_{g_w} >= LE_w
    (a) min E_{S-1}  with M = budget            (b) min M  with E_{S-1} <= target

HiGHS runs through :mod:`optplan.exact.highs`; its proofs count only when the model's numbers
let it resolve a unit (:func:`optplan.exact.scaling.milp_proof_trusted`; the big-Ms are the
budget in units and the horizon ``T``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from optplan.exact.highs import check_highs_options, run_highs
from optplan.exact.milp import milp_version
from optplan.exact.run import ExactRun
from optplan.exact.scaling import milp_proof_trusted, proven_bound
from optplan.preload.exact_cpsat import BudgetOutcome
from optplan.preload.exact_milp import (DEFAULT_WORKERS, SOLVER, check_milp_range, milp_capacity,
                                        solve_milp)
from optplan.preload.flexnn import plan_from_decisions
from optplan.preload.formulation import compacted_offsets
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_peak, validate_plan
from optplan.preload.sliced_model import sliced_horizon
from optplan.preload.sliced_grid import (GridSolution, SlicingGrid, slicing_grid, start_sliced,
                                         start_sliced_budget)
from optplan.preload.slicing import SLICE_MENU
from optplan.result import SolverOutcome, Status

__all__ = ["build_sliced_milp", "milp_sliced", "milp_minimum_budget_sliced", "MAX_TENSORS"]

MAX_TENSORS = 600
"""The most tensors (activations and candidates on the grid) the model is built for: it has
a disjunction per pair that may share a step and a binary per weight and grid step. Beyond
it :func:`milp_sliced` returns its warm start (``info["stopped"]`` says why)."""


def _pulp():
    import pulp
    return pulp


@dataclass
class SlicedMilp:
    grid: SlicingGrid
    problem: object                  # pulp.LpProblem
    unit: int
    use: list                        # per layer, per option: LpVariable
    choose: dict                     # (candidate, step | None) -> LpVariable
    activation_offsets: list
    offsets: dict                    # candidate -> LpVariable (units)
    big_m: int
    start: dict = field(default_factory=dict)   # LpVariable -> warm-start value

    @property
    def trusted(self) -> bool:
        return milp_proof_trusted(self.big_m, self.big_m)

    def solution(self) -> GridSolution:
        """The grid solution of the solved model (offsets in bytes, not yet compacted)."""
        chosen = tuple(max(range(len(row)), key=lambda o: row[o].varValue or 0)
                       for row in self.use)
        preload = {}
        for (index, step), var in self.choose.items():
            candidate = self.grid.candidates[index]
            if chosen[candidate.layer] == candidate.option and (var.varValue or 0) > 0.5:
                preload[index] = step
        activation_offsets = tuple(self.unit * (var.varValue or 0.0)
                                   for var in self.activation_offsets)
        offsets = {i: self.unit * (var.varValue or 0.0) for i, var in self.offsets.items()
                   if chosen[self.grid.candidates[i].layer] == self.grid.candidates[i].option}
        return GridSolution(chosen, preload, activation_offsets, offsets)


def build_sliced_milp(grid: SlicingGrid, *, objective: str = "latency",
                      budget: int | None = None, budget_range: tuple[int, int] | None = None,
                      latency_target: int | None = None,
                      hint: GridSolution | None = None) -> SlicedMilp:
    """The model of the module docstring (``budget`` in bytes for (a); ``budget_range`` in
    bytes and ``latency_target`` for (b)): options, decisions, memory, timing, objective."""
    pulp = _pulp()
    unit = math.gcd(*(t.size for t in grid.activations),
                    *(c.tensor.size for c in grid.candidates)) or 1
    lp = pulp.LpProblem("preload_sliced", pulp.LpMinimize)
    top = sliced_horizon(grid)
    capacity, cap_value = milp_capacity(lp, objective, budget, budget_range, unit)
    use = [[lp.add_variable(f"u_{l}_{o}", cat="Binary") for o in range(len(options))]
           for l, options in enumerate(grid.options)]
    for layer, row in enumerate(use):
        lp += pulp.lpSum(row) == 1, f"one_option_{layer}"
    choose = _decisions(lp, grid, use)
    live = _residence(grid, use, choose)
    activation_offsets, offsets = _memory(lp, grid, live, unit, capacity, cap_value)
    latency = _timing(lp, grid, use, choose, top)
    if objective == "latency":
        lp += latency
    else:
        lp += latency <= (top if latency_target is None else latency_target), "target"
        lp += capacity
    milp = SlicedMilp(grid, lp, unit, use, choose, activation_offsets, offsets,
                      max(cap_value, top, grid.steps))
    if hint is not None:
        _start(milp, hint)
    return milp


def _decisions(lp, grid: SlicingGrid, use: list) -> dict:
    """``y_{w,p}`` and ``b_w`` of every weight candidate (one of them iff present), and the
    window."""
    pulp = _pulp()
    choose: dict = {}
    window = grid.instance.window
    for index in grid.weights:
        candidate = grid.candidates[index]
        own = candidate.tensor.layer
        steps = range(grid.earliest_preload(index), own + 1)
        for step in steps:
            choose[index, step] = lp.add_variable(f"y_{index}_{step}", cat="Binary")
        options = [choose[index, step] for step in steps]
        if grid.can_pin(index):
            choose[index, None] = lp.add_variable(f"b_{index}", cat="Binary")
            options.append(choose[index, None])
        lp += pulp.lpSum(options) == use[candidate.layer][candidate.option], f"decide_{index}"
        for step in (steps if window is not None else ()):
            distance = _sliced_step(grid, use, own) - _sliced_step(grid, use, step)
            lp += distance <= window + grid.steps * (1 - choose[index, step]), \
                f"window_{index}_{step}"
    return choose


def _sliced_step(grid: SlicingGrid, use: list, step: int):
    """``π(step)`` as a linear expression of the options."""
    pulp = _pulp()
    layer, j = grid.layer_of_step[step]
    return pulp.lpSum((grid.slices(m, option) if m < layer else min(j, grid.slices(m, option)))
                      * var for m in range(layer + 1) for option, var in enumerate(use[m]))


def _residence(grid: SlicingGrid, use: list, choose: dict) -> list[dict]:
    """Per tensor (activations, then candidates), step -> a 0/1 expression (or 1) of its
    residence at that step, for the steps it may hold."""
    pulp = _pulp()
    everything = range(grid.steps)
    live = [{step: 1 for step in range(t.first_op, t.last_op + 1)} for t in grid.activations]
    for index, candidate in enumerate(grid.candidates):
        tensor = candidate.tensor
        present = use[candidate.layer][candidate.option]
        if not tensor.is_weight:
            live.append({step: present for step in range(tensor.first_op, tensor.last_op + 1)})
            continue
        own, pinned = tensor.layer, choose.get((index, None))
        steps = range(grid.earliest_preload(index), own + 1)
        residence = {}
        for step in everything:
            if step == own:
                residence[step] = present
            elif step < own and (steps[0] <= step or pinned is not None):
                residence[step] = pulp.lpSum([choose[index, p] for p in steps if p <= step]
                                             + ([pinned] if pinned is not None else []))
            elif step > own and pinned is not None:
                residence[step] = pinned
        live.append(residence)
    return live


def _exclusive(grid: SlicingGrid, i: int, j: int) -> bool:
    """Tensors ``i`` and ``j`` (activations first, then candidates) of two options of one
    layer: never present together."""
    count = len(grid.activations)
    if i < count or j < count:
        return False
    a, b = grid.candidates[i - count], grid.candidates[j - count]
    return a.layer == b.layer and a.option != b.option


def _memory(lp, grid: SlicingGrid, live: list, unit: int, capacity, cap_value: int):
    """Offsets below the budget, the per-step capacity rows and the big-M disjunctions of
    tensors that may share a step; returns the offset variables (units)."""
    pulp = _pulp()
    tensors = list(grid.activations) + [c.tensor for c in grid.candidates]
    sizes = [t.size // unit for t in tensors]
    offsets = [lp.add_variable(f"o_{i}", 0, max(0, cap_value - sizes[i]))
               for i in range(len(tensors))]
    for index in range(len(tensors)):
        lp += offsets[index] + sizes[index] <= capacity, f"cap_{index}"
    for step in range(grid.steps):
        lp += pulp.lpSum(sizes[i] * live[i][step] for i in range(len(tensors))
                         if step in live[i]) <= capacity, f"breadth_{step}"
    for i in range(len(tensors)):
        for j in range(i + 1, len(tensors)):
            shared = sorted(set(live[i]) & set(live[j]))
            if not shared or _exclusive(grid, i, j):
                continue
            if all(isinstance(live[k][s], int) for k in (i, j) for s in shared):
                together = 1
            else:
                together = lp.add_variable(f"v_{i}_{j}", cat="Binary")
                for step in shared:
                    lp += together >= live[i][step] + live[j][step] - 1, f"v_{i}_{j}_{step}"
            below = lp.add_variable(f"z_{i}_{j}", cat="Binary")
            apart = cap_value * (1 - together)
            lp += offsets[i] + sizes[i] <= offsets[j] + cap_value * (1 - below) + apart, \
                f"below_{i}_{j}"
            lp += offsets[j] + sizes[j] <= offsets[i] + cap_value * below + apart, \
                f"above_{i}_{j}"
    count = len(grid.activations)
    return offsets[:count], dict(enumerate(offsets[count:]))


def _timing(lp, grid: SlicingGrid, use: list, choose: dict, top: int):
    """The sub-step and loader recurrences; returns ``E_{S-1}``."""
    pulp = _pulp()
    compute, layer_end = [], []
    for step in range(grid.steps):
        layer, _ = grid.layer_of_step[step]
        compute.append(pulp.lpSum(value * use[layer][option]
                                  for option, value in grid.compute(step).items()))
        layer_end.append(lp.add_variable(f"E_{step}", 0, top))
        lp += layer_end[step] >= (layer_end[step - 1] if step else 0) + compute[step], \
            f"chain_{step}"
    previous_end = None
    for index in grid.weights:
        tensor = grid.candidates[index].tensor
        load_start = lp.add_variable(f"LS_{index}", 0, top)
        load_end = lp.add_variable(f"LE_{index}", 0, top)
        if previous_end is not None:
            lp += load_start >= previous_end, f"loader_{index}"
        loads = []
        for step in range(grid.earliest_preload(index), tensor.layer + 1):
            var = choose[index, step]
            loads.append(var)
            if step >= 1:
                lp += load_start >= layer_end[step - 1] - top * (1 - var), f"after_{index}_{step}"
        lp += load_end >= load_start + tensor.load_us * pulp.lpSum(loads), f"load_{index}"
        lp += layer_end[tensor.layer] - compute[tensor.layer] >= load_end, f"ready_{index}"
        previous_end = load_end
    return layer_end[-1]


def _start(milp: SlicedMilp, hint: GridSolution) -> None:
    """``hint`` as the MIP start: options, decisions and offsets."""
    for layer, row in enumerate(milp.use):
        for option, var in enumerate(row):
            milp.start[var] = int(hint.chosen[layer] == option)
    for (index, step), var in milp.choose.items():
        milp.start[var] = int(hint.preload.get(index, "absent") == step)
    for var, offset in zip(milp.activation_offsets, hint.activation_offsets):
        milp.start[var] = offset // milp.unit
    for index, var in milp.offsets.items():
        milp.start[var] = hint.offsets.get(index, 0) // milp.unit


def _plan(milp: SlicedMilp) -> PreloadPlan | None:
    """The plan of the solved model, offsets compacted to whole bytes; ``None`` when the
    solver's answer (floating point, with tolerances) is not a valid plan."""
    grid, solution = milp.grid, milp.solution()
    sliced, decisions = grid.sliced(solution)
    values = {sliced.index_of[t.id]: offset
              for t, offset in zip(grid.activations, solution.activation_offsets)}
    for position, offset in solution.offsets.items():
        values[sliced.index_of[grid.candidates[position].tensor.id]] = offset
    offsets = compacted_offsets(sliced, decisions, values)
    plan = plan_from_decisions(sliced, offsets, decisions)
    plan = replace(plan, slicing=grid.slicing_of(solution.chosen))
    return None if validate_plan(grid.instance, plan) else plan


def milp_sliced(instance: PreloadInstance, *, time_limit: float | None = None,
                workers: int | None = None, seed: int | None = None, warm_start=True,
                initial_solution: PreloadPlan | None = None, menu=SLICE_MENU,
                **solver_params) -> SolverOutcome:
    """Minimum latency at ``instance.budget`` over every layer slicing from ``menu``, with
    HiGHS. Parameters and statuses as :func:`optplan.preload.sliced_cpsat.cpsat_sliced`;
    ``solver_params`` are HiGHS option names."""
    check_highs_options(solver_params)
    run = ExactRun(instance, "preload", solver=SOLVER, version=milp_version(SOLVER),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    done = start_sliced(run, menu, warm_start, initial_solution, check_milp_range)
    if done is not None:
        return done
    grid = slicing_grid(instance, menu, instance.budget)
    tensors = len(grid.activations) + len(grid.candidates)
    if tensors > MAX_TENSORS:
        run.info["stopped"] = (f"the model is for small instances: {tensors} tensors on the "
                               f"grid, more than {MAX_TENSORS}")
        return run.outcome()
    hint = None if run.solution is None else grid.solution_of(run.solution)
    return solve_milp(run, build_sliced_milp(grid, budget=instance.budget, hint=hint),
                      solver_params, _plan)


def milp_minimum_budget_sliced(instance: PreloadInstance, *,
                               latency_target: int | None = None,
                               time_limit: float | None = None, workers: int | None = None,
                               seed: int | None = None, menu=SLICE_MENU,
                               **solver_params) -> BudgetOutcome:
    """Objective (b) over every layer slicing from ``menu`` with HiGHS (see
    :func:`optplan.preload.sliced_cpsat.cpsat_minimum_budget_sliced`)."""
    check_highs_options(solver_params)
    start = start_sliced_budget(instance, menu, latency_target, time_limit=time_limit,
                                workers=workers, seed=seed, default_workers=DEFAULT_WORKERS,
                                check_range=check_milp_range)
    if isinstance(start, BudgetOutcome):
        return start
    instance, info, lower, upper, plan = (start.instance, start.info, start.lower, start.upper,
                                          start.plan)
    grid = slicing_grid(instance, menu, upper)
    bound = lower
    large = len(grid.activations) + len(grid.candidates) > MAX_TENSORS
    if lower < upper and large:
        info["stopped"] = f"the model is for small instances (at most {MAX_TENSORS} tensors)"
    elif lower < upper:
        milp = build_sliced_milp(grid, objective="budget", budget_range=(lower, upper),
                                 latency_target=latency_target, hint=grid.solution_of(plan))
        answer = run_highs(milp.problem, seconds=start.budget.solver_seconds(),
                           workers=info["workers"],
                           seed=info["seed"], params=solver_params, start=milp.start)
        info["highs_status"] = answer.status
        if answer.has_solution:
            found = _plan(milp)
            if found is not None and found.peak <= plan_peak(instance, plan):
                plan = found
        if milp.trusted and answer.bound is not None:
            bound = max(bound, proven_bound(answer.bound) * milp.unit)
    peak = plan_peak(instance, plan)
    proven = peak <= bound
    return BudgetOutcome(Status.OPTIMAL if proven else Status.FEASIBLE, peak,
                         peak if proven else bound, plan, info)
