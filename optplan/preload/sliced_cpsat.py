"""Exact preload planning with layer slicing on CP-SAT (``cpsat`` with ``slicing=True``): the
slicing of every layer (kernel, kind and count from the menu) chosen jointly with the preload
decisions and the offsets, minimising the latency at the budget; and the minimum budget over
every slicing.

Semantics: ``docs/problems.md`` and :mod:`optplan.preload.slicing` (FlexNN, MobiCom'24, §3.2).
The models: :mod:`optplan.preload.sliced_model` (the joint model over the grid of
:mod:`optplan.preload.sliced_grid`, its fluid relaxation, the packing of the minimum budget).

:func:`cpsat_sliced` works in two stages:

1. *Search over slicings* (logic-based Benders): the master is the fluid relaxation
   (:func:`~optplan.preload.sliced_model.build_fluid_relaxation`) with one cut per slicing
   already solved, "with this slicing the latency is at least its proven bound" (or no plan at
   all), so the master's bound bounds the problem. Slicings are applied
   (:func:`~optplan.preload.slicing.apply_slicing`) and solved exactly by the preload model
   without slicing (:func:`~optplan.preload.exact_cpsat.cpsat_preload`, strong on one
   slicing): first the warm start's, then none at all (when every layer fits whole), then
   those of the master's solutions, best first. It ends when the bound meets the incumbent
   (OPTIMAL), when the master is infeasible or proposes nothing new, or when its share of the
   time is spent.
2. *The joint model* with what is left of the time, hinted with the incumbent, on grids of at
   most :data:`JOINT_MODEL_CANDIDATES` candidates (larger ones are beyond it within any
   practical limit).
"""

from __future__ import annotations

from dataclasses import replace

from optplan.exact.budget import SPLIT, Budget
from optplan.exact.cpsat_solve import CpsatRun, cpsat_solver, cpsat_version, solve_model
from optplan.exact.run import ExactRun
from optplan.preload.bounds import latency_lower_bound
from optplan.preload.exact_cpsat import (DEFAULT_WORKERS, SOLVER, BudgetOutcome,
                                         check_cpsat_range, cpsat_preload)
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.simulate import plan_peak, validate_plan
from optplan.preload.sliced_grid import (SlicingGrid, slicing_grid, start_sliced,
                                         start_sliced_budget)
from optplan.preload.sliced_model import (SlicedCpsatModel, build_fluid_relaxation,
                                          build_sliced_cpsat, build_sliced_packing)
from optplan.preload.slicing import SLICE_MENU, apply_slicing, is_identity
from optplan.result import SolverOutcome, Status

__all__ = ["cpsat_sliced", "cpsat_minimum_budget_sliced", "JOINT_MODEL_CANDIDATES",
           "MASTER_PARAMS"]

JOINT_MODEL_CANDIDATES = 400
"""The joint model runs after the search over slicings on grids of at most this many candidate
tensors (a small network's; VGG-19's grid has about 2,500)."""

MASTER_PARAMS = {"cp_model_probing_level": 0, "symmetry_level": 0}
"""CP-SAT parameters of the fluid master (the caller's ``solver_params`` override them): its
presolve's probing and symmetry search took 12 s of a 15 s share on MobileNet v2, without
them 3 s."""


def _solve(built: SlicedCpsatModel, budget: Budget, flags: dict, *, seconds=None,
           on_progress=None, on_solution=None) -> CpsatRun:
    return solve_model(built.model, {}, budget=budget, seconds=seconds,
                       objective=built.objective, on_progress=on_progress,
                       on_solution=on_solution, **flags)


def _checked(instance: PreloadInstance, plan: PreloadPlan) -> PreloadPlan:
    """``plan`` after the independent validator (a model that gives an invalid plan is a bug,
    never an answer)."""
    violations = validate_plan(instance, plan)
    if violations:
        raise RuntimeError(f"the sliced preload model gave an invalid plan: {violations[0]}")
    return plan


# --- stage 1: the search over slicings ---------------------------------------------------------

def _solve_slicing(run: ExactRun, grid: SlicingGrid, chosen: tuple, stage: Budget,
                   share: float, flags: dict, relaxation: bool) -> int | None:
    """Solve the slicing ``chosen`` exactly (its sliced instance, without slicing) in
    ``share`` of the stage; offer its plan to ``run``; return a proven lower bound of its
    latency (``None``: no plan fits)."""
    instance = run.instance
    slicing = grid.slicing_of(chosen)
    sliced = apply_slicing(instance, slicing)
    start = None
    if run.solution is not None and run.solution.slicing == slicing:
        start = replace(run.solution, slicing=())
    limit = stage.share(share)
    if limit is not None and limit <= 0:   # the stage ran out since its caller looked
        return latency_lower_bound(sliced)
    outcome = cpsat_preload(sliced, time_limit=limit,
                            workers=flags["workers"], seed=flags["seed"],
                            initial_solution=start, relaxation=relaxation,
                            **flags["solver_params"])
    if outcome.solution is not None:
        run.offer(_checked(instance, replace(outcome.solution, slicing=slicing)))
    if outcome.status is Status.INFEASIBLE:
        return None
    return outcome.best_bound if outcome.best_bound is not None else \
        latency_lower_bound(sliced)


def _search_slicings(run: ExactRun, grid: SlicingGrid, flags: dict, stage: Budget,
                     relaxation: bool) -> bool:
    """Stage 1 of the module docstring; offers plans and bounds to ``run``. Returns False
    when it proved that no slicing admits a plan."""
    start = _on_grid(grid, run.solution)
    master = build_fluid_relaxation(grid, budget=run.instance.budget, hint=start)
    master.model.add(master.objective >= latency_lower_bound(run.instance))
    solved: dict[tuple, int | None] = {}
    unsliced = tuple(next((o for o, option in enumerate(options)
                           if is_identity(run.instance, option)), None)
                     for options in grid.options)
    proposals = [unsliced] if None not in unsliced else []
    if start is not None:
        proposals.append(start.chosen)     # solved first: the last proposal is the best
    master_flags = flags | {"solver_params": MASTER_PARAMS | flags["solver_params"]}
    master_share, feasible = SPLIT.fluid_master, True
    while not stage.exhausted() and not run.meets_bound():
        fresh = [c for c in dict.fromkeys(reversed(proposals)) if c not in solved]
        if fresh:
            share = SPLIT.unsliced if fresh[0] == unsliced else SPLIT.fixed_slicing
            solved[fresh[0]] = _solve_slicing(run, grid, fresh[0], stage, share, flags,
                                              relaxation)
            _cut(master, fresh[0], solved[fresh[0]])
            continue
        proposals.clear()
        answer = _solve(master, stage, master_flags, seconds=stage.share(master_share),
                        on_solution=lambda value: proposals.append(master.chosen(value)))
        if answer.status == "INFEASIBLE":   # every slicing is solved or admits no plan
            feasible = run.solution is not None
            break
        run.raise_bound(answer.bound)
        if not any(c not in solved for c in proposals):
            if answer.status == "OPTIMAL":
                break    # the master's best slicings are solved, their bounds not proven
            master_share *= 2     # nothing new yet: search the master longer
    run.info["slicings_solved"] = len(solved)
    return feasible


def _cut(master: SlicedCpsatModel, chosen: tuple, bound: int | None) -> None:
    """The slicing ``chosen`` is solved: with it the latency is at least ``bound``
    (``None``: it admits no plan)."""
    literals = [row[option] for row, option in zip(master.use, chosen)
                if not isinstance(row[option], int)]
    if bound is None:
        master.model.add_bool_or([~literal for literal in literals])
    else:
        master.model.add(master.objective >= bound).only_enforce_if(literals)


def _on_grid(grid: SlicingGrid, plan: PreloadPlan | None):
    return None if plan is None else grid.solution_of(plan)


# --- objective (a): minimum latency at the budget, over every slicing ---------------------------

def cpsat_sliced(instance: PreloadInstance, *, time_limit: float | None = None,
                 workers: int | None = None, seed: int | None = None, warm_start=True,
                 initial_solution: PreloadPlan | None = None, relaxation: bool = True,
                 menu=SLICE_MENU, **solver_params) -> SolverOutcome:
    """Minimum latency at ``instance.budget`` over every layer slicing with slice counts from
    ``menu`` (default :data:`~optplan.preload.slicing.SLICE_MENU`) and every plan; see the
    module docstring.

    Parameters as :func:`optplan.preload.exact_cpsat.cpsat_preload`; the warm start is by
    default :data:`~optplan.preload.sliced_grid.WARM_START` (``flexnn_sliced`` first).
    ``relaxation`` is passed to the exact solves of single slicings.

    Returns
    -------
    SolverOutcome
        A plan with its ``slicing``; ``OPTIMAL`` only when proven (the search's bound or the
        joint model's proof meets it); ``INFEASIBLE`` below
        :func:`~optplan.preload.slicing.sliced_budget_lower_bound` or when proven.
    """
    cpsat_solver(time_limit=None, workers=1, seed=0, solver_params=solver_params)  # names
    run = ExactRun(instance, "preload", solver=SOLVER, version=cpsat_version(),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    done = start_sliced(run, menu, warm_start, initial_solution, check_cpsat_range)
    if done is not None:
        return done
    grid = slicing_grid(instance, menu, instance.budget)
    flags = {"workers": run.workers, "seed": run.seed, "solver_params": solver_params}
    joint = len(grid.candidates) <= JOINT_MODEL_CANDIDATES
    stage = run.budget.part(run.budget.share(SPLIT.slicing_search) if joint else None)
    feasible = _search_slicings(run, grid, flags, stage, relaxation)
    if not feasible:
        run.info["proof"] = "no slicing admits a plan"
        return run.outcome(infeasible=True)
    if run.meets_bound():
        return run.finished("a plan meets the bound of the search over slicings")
    if not joint or run.out_of_time():
        return run.outcome()
    built = build_sliced_cpsat(grid, budget=instance.budget, hint=_on_grid(grid, run.solution))
    built.model.add(built.objective >= run.bound)
    answer = _solve(built, run.budget, flags, on_progress=run.trajectory.record)
    run.info["cpsat_status"] = answer.status
    if answer.status == "INFEASIBLE":
        return run.outcome(infeasible=True)
    if answer.has_solution:
        run.offer(_checked(instance, grid.plan(built.solution(answer.solver))))
    run.raise_bound(answer.bound)
    return run.outcome(proven=answer.status == "OPTIMAL")


# --- objective (b): minimum budget at a latency target, over every slicing ----------------------

def cpsat_minimum_budget_sliced(instance: PreloadInstance, *,
                                latency_target: int | None = None,
                                time_limit: float | None = None, workers: int | None = None,
                                seed: int | None = None, menu=SLICE_MENU,
                                **solver_params) -> BudgetOutcome:
    """Objective (b) over every layer slicing from ``menu``: the smallest budget at which
    latency <= ``latency_target`` (``None``: the minimum feasible budget, where nothing needs
    preloading: :func:`~optplan.preload.sliced_model.build_sliced_packing`; with a target the
    joint model).

    Bounds: :func:`~optplan.preload.slicing.sliced_budget_lower_bound` below; above, the
    packing of :func:`~optplan.preload.sliced_search.minimum_budget_sliced` (no target) or
    every weight pinned, unsliced (any reachable target). ``instance.budget`` is ignored."""
    start = start_sliced_budget(instance, menu, latency_target, time_limit=time_limit,
                                workers=workers, seed=seed, default_workers=DEFAULT_WORKERS,
                                check_range=check_cpsat_range)
    if isinstance(start, BudgetOutcome):
        return start
    instance, info, lower, upper, plan, budget = (start.instance, start.info, start.lower,
                                                  start.upper, start.plan, start.budget)
    bound = lower
    proven_by_solver = False
    if upper > lower:
        grid = slicing_grid(instance, menu, upper)
        hint = grid.solution_of(plan)
        if latency_target is None:
            built = build_sliced_packing(grid, budget_range=(lower, upper), hint=hint)
        else:
            built = build_sliced_cpsat(grid, budget_range=(lower, upper),
                                       latency_target=latency_target, hint=hint)
        answer = _solve(built, budget, {"workers": info["workers"], "seed": info["seed"],
                                        "solver_params": solver_params})
        info["cpsat_status"] = answer.status
        if answer.has_solution:
            found = _checked(instance.with_budget(upper),
                             grid.plan(built.solution(answer.solver)))
            if found.peak < plan_peak(instance, plan):
                plan = found
        if answer.bound is not None:
            bound = max(bound, answer.bound * built.unit)
        proven_by_solver = answer.status == "OPTIMAL"
    info["wall_time_s"] = round(budget.elapsed(), 3)
    peak = plan_peak(instance, plan)
    proven = proven_by_solver or peak <= bound
    return BudgetOutcome(Status.OPTIMAL if proven else Status.FEASIBLE, peak,
                         peak if proven else bound, plan, info)
