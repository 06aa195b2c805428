"""MILP formulations of shared objects and offsets, with in-place pairs (PuLP 3.x).

Two methods share the models: ``milp_highs`` (HiGHS through highspy, PuLP's ``HiGHS`` API
solver) and ``milp_cbc`` (the CBC binary bundled with PuLP). The formulations mirror the
CP-SAT ones in :mod:`optplan.exact.cpsat` (same variables, same symmetry breaking, same
bounds); offsets use pairwise disjunctions with a big-M taken from the warm start instead of
NoOverlap2D. Statuses are checked against the solver's own dual bound: ``OPTIMAL`` is reported
only when the rounded-up bound meets the objective.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field

from optplan.errors import InputError
from optplan.exact._common import (MILP_LIMIT, Budget, PartOutcome, Scaling, Trajectory,
                                   begin_shared_objects, check_range, choose_conflict_encoding,
                                   conflict_pairs, empty_outcome, maximal_profiles, offsets_bound,
                                   representative_structure, scaling, solve_offsets_by_parts,
                                   solver_options, status_for, trimmed_lifetimes)
from optplan.exact.cpsat import _identical_groups, _mirror_allowed, _oriented_hint
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome, Status
from optplan.validate import validate

__all__ = ["milp_highs_shared_objects", "milp_highs_offsets", "milp_cbc_shared_objects",
           "milp_cbc_offsets", "build_shared_objects_milp", "build_offsets_milp"]

DEFAULT_WORKERS = 1
MODEL_TERMS_LIMIT = 1_000_000
"""PuLP builds models in Python: above this many (estimated) constraint terms a model takes
minutes and gigabytes to build (training graphs), so the method returns its warm start,
``FEASIBLE``, and says so in ``info["model"]`` instead."""


def _pulp():
    import pulp
    return pulp


# --- models ----------------------------------------------------------------------------------

@dataclass
class Milp:
    problem: object                       # pulp.LpProblem
    variables: dict                       # key -> LpVariable, read back after solving
    start: dict = field(default_factory=dict)   # key -> value of the warm start


def build_shared_objects_milp(instance: Instance, scale: Scaling, *, lower: int, upper: int,
                              start_ids, conflicts: str = "cliques",
                              positional_cuts: bool = True) -> Milp:
    r"""The representative formulation of SO(-IP) as a 0-1 program, in size units.

    Exactly :func:`optplan.exact.cpsat.build_shared_objects_model` (same variants):

    .. math::

        \min \sum_j s_j y_j \quad\text{s.t.}\quad
        \sum_{j \in R(i) \cup \{i\}} x_{ij} = 1,\;
        x_{ij} \le y_j,\;
        \sum_{i \in P} x_{ij} \le y_j \;(P \in \mathcal P, j \notin P),\;
        x_{uj} + x_{vj} \le y_j \;((u,v) \in E_{\text{explicit}}),\;
        \sum_{j: s_j \ge m_k} y_j \ge k,\;
        L \le \sum_j s_j y_j \le U,\; x \in \{0,1\}.
    """
    pulp = _pulp()
    sizes = scale.sizes
    lp = pulp.LpProblem("shared_objects", pulp.LpMinimize)
    structure = representative_structure(instance, conflicts=conflicts,
                                         positional_cuts=positional_cuts)
    ranked, candidates = structure.ranked, structure.candidates
    x = {(i, j): lp.add_variable(f"x_{i}_{j}", cat="Binary")
         for i in ranked for j in candidates[i]}
    y = {j: x[j, j] for j in ranked}
    objective = pulp.lpSum(sizes[j] * y[j] for j in ranked)
    lp += objective
    for i in ranked:
        lp += pulp.lpSum(x[i, j] for j in candidates[i]) == 1, f"assign_{i}"
    for (i, j), var in x.items():
        if i != j:
            lp += var <= y[j], f"open_{i}_{j}"
    for number, (j, members) in enumerate(structure.groups):
        lp += pulp.lpSum(x[i, j] for i in members) <= y[j], f"group_{number}"
    for k, representatives in enumerate(structure.positional, start=1):
        lp += pulp.lpSum(y[j] for j in representatives) >= k, f"position_{k}"
    lp += objective >= lower, "lower_bound"
    lp += objective <= upper, "upper_bound"
    representative = structure.representatives_of(start_ids)
    start = {key: int(representative[key[0]] == key[1]) for key in x}
    return Milp(lp, x, start)


def build_offsets_milp(instance: Instance, sizes, alignment: int, *, lower: int, upper: int,
                       start_units, symmetry_breaking: bool = True) -> Milp:
    r"""OC(-IP) with pairwise disjunctions and a tight big-M, in alignment units.

    Offsets :math:`A u_i`, arena :math:`A k`, :math:`M = A U` (no offset plus size exceeds the
    warm start's arena :math:`A U`):

    .. math::

        \min k \quad\text{s.t.}\quad
        A u_i + s_i \le A k \;\;\forall i,\qquad L \le k \le U                        \\
        A u_i + s_i \le A u_j + M (1 - z_{ij}),\;
        A u_j + s_j \le A u_i + M (1 - z_{ji}) \;\;\forall (i,j) \in E              \\
        z_{ij} + z_{ji} = 1 \;\;\text{(conflicting records)},\qquad
        z_{ij} + z_{ji} + e_{ij} = 1,\; |u_i - u_j| \le U (1 - e_{ij})
            \;\;\text{(in-place pairs)}                                            \\
        z_{ij} = 1 \;\text{for identical records } i < j;\qquad
        2 u_{i_0} + s_{i_0} \le k \;\text{(mirror, } A = 1 \text{, no in-place pairs)}

    ``L`` is the (trimmed) max breadth, ``E`` every conflicting pair; ``start_units`` (the warm
    start's offsets in alignment units) is kept as the MIP start.
    """
    pulp = _pulp()
    n = len(instance)
    lp = pulp.LpProblem("offsets", pulp.LpMinimize)
    big_m = alignment * upper
    u = {i: lp.add_variable(f"u_{i}", 0, max(0, (alignment * upper - sizes[i]) // alignment),
                            cat="Integer") for i in range(n)}
    k = lp.add_variable("arena", lower, upper, cat="Integer")
    lp += k
    for i in range(n):
        lp += alignment * u[i] + sizes[i] <= alignment * k, f"arena_{i}"
    groups, anchor = _identical_groups(instance) if symmetry_breaking else ([], None)
    ordered = {(i, j) for group in groups for i, j in zip(group, group[1:])}
    start_units = _oriented_hint(instance, sizes, alignment, start_units, symmetry_breaking)
    start = {i: start_units[i] for i in range(n)}
    start["arena"] = upper
    binaries: dict = {}
    for i, j in conflict_pairs(instance):
        if (i, j) in ordered or (j, i) in ordered:
            first, second = (i, j) if (i, j) in ordered else (j, i)
            lp += alignment * u[first] + sizes[first] <= alignment * u[second], f"order_{i}_{j}"
            continue
        below = lp.add_variable(f"z_{i}_{j}", cat="Binary")
        above = lp.add_variable(f"z_{j}_{i}", cat="Binary")
        lp += alignment * u[i] + sizes[i] <= alignment * u[j] + big_m * (1 - below), f"b_{i}_{j}"
        lp += alignment * u[j] + sizes[j] <= alignment * u[i] + big_m * (1 - above), f"b_{j}_{i}"
        start[("z", i, j)] = int(alignment * start_units[i] + sizes[i]
                                 <= alignment * start_units[j])
        start[("z", j, i)] = int(not start[("z", i, j)]
                                 and alignment * start_units[j] + sizes[j]
                                 <= alignment * start_units[i])
        if (i, j) in instance.inplace_set:
            same = lp.add_variable(f"e_{i}_{j}", cat="Binary")
            lp += below + above + same == 1, f"choose_{i}_{j}"
            lp += u[i] - u[j] <= upper * (1 - same), f"same_{i}_{j}"
            lp += u[j] - u[i] <= upper * (1 - same), f"same_{j}_{i}"
            start[("e", i, j)] = int(not start[("z", i, j)] and not start[("z", j, i)])
            binaries["e", i, j] = same
        else:
            lp += below + above == 1, f"choose_{i}_{j}"
        binaries["z", i, j], binaries["z", j, i] = below, above
    if anchor is not None and _mirror_allowed(instance, alignment):
        lp += 2 * u[anchor] + sizes[anchor] <= k, "mirror"
    variables = dict(u) | binaries | {"arena": k}
    return Milp(lp, variables, start)


# --- solving ---------------------------------------------------------------------------------

@dataclass
class MilpRun:
    status: str               # the solver's own word, for info
    has_solution: bool
    bound: float | None       # the solver's dual bound, model units
    version: str
    infeasible: bool = False  # proven infeasible


def _apply_start(milp: Milp) -> None:
    for key, value in milp.start.items():
        if key in milp.variables:
            milp.variables[key].setInitialValue(value)


def _highs_solver(*, time_limit, workers, seed, params: dict, with_start: bool):
    pulp = _pulp()
    import highspy

    class HiGHSWithStart(pulp.HiGHS):
        """PuLP's HiGHS API solver, passing the variables' initial values as a MIP start."""

        def callSolver(self, lp):
            if with_start:
                start = highspy.HighsSolution()
                start.col_value = [var.varValue if var.varValue is not None else 0.0
                                   for var in lp.variables()]
                start.value_valid = True
                lp.solverModel.setSolution(start)
            lp.solverModel.run()

    options = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.999, "random_seed": seed} | params
    probe = highspy.Highs()
    probe.setOptionValue("output_flag", False)
    for name, value in params.items():
        if probe.setOptionValue(name, value) != highspy.HighsStatus.kOk:
            raise InputError(f"HiGHS rejects option {name}={value!r}", field=name)
    return HiGHSWithStart(msg=False, timeLimit=time_limit, threads=workers, **options)


def _run_highs(milp: Milp, *, time_limit, workers, seed, params) -> MilpRun:
    solver = _highs_solver(time_limit=time_limit, workers=workers, seed=seed, params=params,
                           with_start=bool(milp.start))
    _apply_start(milp)
    milp.problem.solve(solver)
    highs = milp.problem.solverModel
    status = highs.modelStatusToString(highs.getModelStatus())
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    bound = info.mip_dual_bound if abs(info.mip_dual_bound) < 1e300 else None
    return MilpRun(status, has_solution, bound, f"highspy {highs.version()}",
                   infeasible=status == "Infeasible")


def _cbc_path() -> str | None:
    """The CBC binary bundled with PuLP (``None``: a ``cbc`` on the PATH)."""
    pulp = _pulp()
    bundled = getattr(pulp.PULP_CBC_CMD, "pulp_cbc_path", None)
    return bundled if bundled and os.access(bundled, os.X_OK) else None


def _run_cbc(milp: Milp, *, time_limit, workers, seed, params) -> MilpRun:
    pulp = _pulp()
    _apply_start(milp)
    handle, log_path = tempfile.mkstemp(suffix=".log", prefix="optplan-cbc-")
    os.close(handle)
    options = [f"randomCbcSeed {seed}"] + [f"{key} {value}" for key, value in params.items()]
    solver = pulp.COIN_CMD(path=_cbc_path(), msg=False, timeLimit=time_limit, threads=workers,
                           gapRel=0, gapAbs=0.999, warmStart=bool(milp.start), logPath=log_path,
                           options=options)
    try:
        milp.problem.solve(solver)
    except pulp.PulpSolverError as error:
        # CBC exits non-zero now and then when its time runs out while reading the MIP
        # start; the run then simply has no answer (the caller keeps its warm start).
        return MilpRun(f"cbc failed: {error}", False, None, f"cbc (pulp {pulp.__version__})")
    finally:
        with open(log_path, encoding="utf-8", errors="replace") as log_file:
            log = log_file.read()
        os.unlink(log_path)
    result = re.search(r"^Result - (.*)$", log, re.MULTILINE)
    version = re.search(r"^Version: (\S+)", log, re.MULTILINE)
    status = result.group(1).strip() if result else "no result line"
    optimal = status.startswith("Optimal solution found")
    objective = re.search(r"^Objective value:\s+(\S+)", log, re.MULTILINE)
    lower = re.search(r"^Lower bound:\s+(\S+)", log, re.MULTILINE)
    has_solution = milp.problem.sol_status in (pulp.LpSolutionOptimal,
                                               pulp.LpSolutionIntegerFeasible)
    bound = None
    if optimal and objective:
        bound = float(objective.group(1))
    elif lower:
        bound = float(lower.group(1))
    return MilpRun(status, has_solution, bound,
                   f"cbc {version.group(1) if version else '?'} (pulp {pulp.__version__})",
                   infeasible="infeasible" in status.lower())


BACKENDS = {"milp_highs": _run_highs, "milp_cbc": _run_cbc}


def _export(milp: Milp, path) -> None:
    path = str(path)
    if path.lower().endswith(".lp"):
        milp.problem.writeLP(path)
    else:
        milp.problem.writeMPS(path)


def _ceil_bound(bound: float | None) -> int | None:
    if bound is None:
        return None
    return int(-(-(bound - 1e-6) // 1))


# --- methods ---------------------------------------------------------------------------------

def _shared_objects(backend: str, instance: Instance, *, time_limit, workers, seed,
                    use_heuristics, stop_at_bound, conflicts, positional_cuts, export_path,
                    params) -> SolverOutcome:
    begun = begin_shared_objects(instance, solver=backend, version="",
                                 value_limit=MILP_LIMIT, solver_label="the MILP solvers",
                                 time_limit=time_limit, workers=workers, seed=seed,
                                 default_workers=DEFAULT_WORKERS,
                                 use_heuristics=use_heuristics, stop_at_bound=stop_at_bound)
    if begun.done is not None:
        return begun.done
    budget, flags, scale, trajectory = begun.budget, begun.flags, begun.scale, begun.trajectory
    start, bound, info = begun.start, begun.bound, begun.info
    unit = scale.unit
    encoding = choose_conflict_encoding(instance, conflicts, no_overlap=False)
    terms = _estimated_terms(instance, encoding)
    if terms > MODEL_TERMS_LIMIT:
        info["model"] = (f"not built: ~{terms} constraint terms > {MODEL_TERMS_LIMIT}; "
                         "warm start returned")
        return SolverOutcome(Status.FEASIBLE, start.solution, bound, backend, "",
                             trajectory.as_tuple(), info)
    milp = build_shared_objects_milp(instance, scale, lower=bound // unit,
                                     upper=start.objective // unit,
                                     start_ids=start.solution.object_ids,
                                     conflicts=encoding, positional_cuts=positional_cuts)
    if export_path is not None:
        _export(milp, export_path)
    run = BACKENDS[backend](milp, time_limit=budget.remaining(), workers=flags["workers"],
                            seed=flags["seed"], params=params)
    info["solver_status"] = run.status
    solution, objective = start.solution, start.objective
    if run.has_solution:
        ids = _object_ids(instance, milp)
        candidate = SharedObjectsSolution.from_object_ids(instance, ids)
        if validate(instance, Problem.SHARED_OBJECTS, candidate):
            info["extraction"] = "invalid after rounding; kept the warm start"
        elif candidate.total_size <= objective:
            solution, objective = candidate, candidate.total_size
    solver_bound = _ceil_bound(run.bound)
    best_bound = max(bound, (solver_bound or 0) * unit)
    status = status_for(objective, best_bound, proven=False)
    best_bound = objective if status is Status.OPTIMAL else best_bound
    trajectory.record(objective, best_bound)
    return SolverOutcome(status, solution, best_bound, backend, run.version,
                         trajectory.as_tuple(), info)


def _estimated_terms(instance: Instance, encoding: str) -> int:
    """A rough count of the constraint terms of the SO model (clique rows dominate)."""
    if encoding == "pairs":
        return 2 * len(conflict_pairs(instance)) * len(instance)
    lifetimes = trimmed_lifetimes(instance)
    return sum(len(profile) for profile in maximal_profiles(lifetimes)) * len(instance) // 2


def _object_ids(instance: Instance, milp: Milp) -> list[int]:
    representative = {i: j for (i, j), var in milp.variables.items()
                      if (var.varValue or 0) > 0.5}
    numbering: dict[int, int] = {}
    return [numbering.setdefault(representative.get(i, -1 - i), len(numbering))
            for i in range(len(instance))]


def _offsets_part(backend: str, part: Instance, start_offsets, target: int, time_limit,
                  on_progress, *, workers, seed, params, export_path, symmetry_breaking,
                  feasibility_first) -> PartOutcome:
    """One time part: optionally the feasibility model at the bound, then the optimisation."""
    budget = Budget(time_limit)   # model building counts against the part's time
    scale = scaling(part, Problem.OFFSETS)
    alignment = scale.alignment
    step = scale.unit * alignment
    lower = max(offsets_bound(part), target) // step
    start_units = [o // step for o in start_offsets]
    upper = max(u - (-s // alignment) for u, s in zip(start_units, scale.sizes))
    lower = min(lower, upper)
    info: dict = {}
    terms = 8 * len(conflict_pairs(part))
    if terms > MODEL_TERMS_LIMIT:
        info["model"] = (f"not built: ~{terms} constraint terms > {MODEL_TERMS_LIMIT}; "
                         "warm start kept")
        offsets = list(start_offsets)
        objective = _arena(part, offsets)
        return PartOutcome(offsets, objective, lower * step, objective <= lower * step, info)

    def attempt(low: int, high: int, clock: Budget, *, with_start: bool):
        milp = build_offsets_milp(part, scale.sizes, alignment, lower=low, upper=high,
                                  start_units=start_units, symmetry_breaking=symmetry_breaking)
        if not with_start:
            milp.start = {}
        run = BACKENDS[backend](milp, time_limit=clock.remaining(), workers=workers, seed=seed,
                                params=params)
        info["solver_version"] = run.version
        offsets = None
        if run.has_solution:
            candidate = [round(milp.variables[i].varValue or 0) * step
                         for i in range(len(part))]
            if validate(part, Problem.OFFSETS, OffsetsSolution.from_offsets(part, candidate)):
                info["extraction"] = "invalid after rounding; ignored"
            else:
                offsets = candidate
        return milp, run, offsets

    if feasibility_first and lower < upper:
        share = None if time_limit is None else max(0.05, feasibility_first * time_limit)
        _, run, offsets = attempt(lower, lower, Budget(share), with_start=False)
        info["feasibility_status"] = run.status
        if offsets is not None:
            objective = _arena(part, offsets)
            on_progress(objective, lower * step)
            return PartOutcome(offsets, objective, lower * step, True, info)
        if run.infeasible:
            lower += 1
            on_progress(None, lower * step)
    milp, run, offsets = attempt(lower, upper, budget, with_start=True)
    if export_path is not None:
        _export(milp, export_path)
    info["solver_status"] = run.status
    bound = max(lower, _ceil_bound(run.bound) or 0) * step
    offsets = list(start_offsets) if offsets is None else offsets
    objective = _arena(part, offsets)
    on_progress(objective, bound)
    return PartOutcome(offsets, objective, bound, objective <= bound, info)


def _arena(part: Instance, offsets) -> int:
    return round_up(max(o + r.size for o, r in zip(offsets, part.records)), part.alignment)


def _offsets(backend: str, instance: Instance, *, time_limit, workers, seed, use_heuristics,
             stop_at_bound, decompose, symmetry_breaking, feasibility_first, export_path,
             params) -> SolverOutcome:
    budget = Budget(time_limit)
    flags = solver_options(time_limit, workers, seed, DEFAULT_WORKERS)
    if len(instance) == 0:
        return empty_outcome(Problem.OFFSETS, backend, "", flags)
    check_range(instance, scaling(instance, Problem.OFFSETS), MILP_LIMIT, "the MILP solvers")
    trajectory = Trajectory(budget)
    versions = set()

    def solve_part(part, start_offsets, target, limit, on_progress):
        outcome = _offsets_part(backend, part, start_offsets, target, limit, on_progress,
                                workers=flags["workers"], seed=flags["seed"], params=params,
                                export_path=export_path, symmetry_breaking=symmetry_breaking,
                                feasibility_first=feasibility_first)
        version = outcome.info.pop("solver_version", None)
        if version:
            versions.add(version)
        return outcome

    solution, bound, status, info = solve_offsets_by_parts(
        instance, solve_part, budget=budget, trajectory=trajectory,
        use_heuristics=use_heuristics, decompose=decompose and export_path is None,
        stop_at_bound=stop_at_bound)
    return SolverOutcome(status, solution, bound, backend, ", ".join(sorted(versions)),
                         trajectory.as_tuple(), flags | info)


_SO_DOC = """Shared objects (SO, SO-IP) by {solver} on the representative 0-1 program.

    Parameters
    ----------
    time_limit, workers, seed
        The solver's time limit, threads (default 1) and random seed (default 0).
    use_heuristics
        Warm-start from the best registered heuristic (else a greedy construction); the
        start is handed to the solver as its MIP start.
    stop_at_bound
        Return the warm start, proven optimal, when it meets the positional-maximums bound.
    conflicts, positional_cuts
        Model variants (as for the CP-SAT method; ``auto`` means ``cliques`` here).
    export_path
        Write the model (``.lp`` for LP format, anything else MPS).
    **solver_params
        Passed to the solver as options ({options}).
    """

_OC_DOC = """Offsets (OC, OC-IP) by {solver} on the disjunctive program, per time part.

    Parameters
    ----------
    time_limit, workers, seed
        The solver's time limit (for the whole call), threads (default 1), random seed
        (default 0).
    use_heuristics, stop_at_bound
        As for the shared-objects method (the bound is the max breadth).
    decompose
        Solve the time parts independently.
    symmetry_breaking
        Order identical records and break the mirror symmetry.
    feasibility_first
        Fraction of a part's time spent first on the model with the arena fixed at the lower
        bound (0 disables it): a solution is then optimal, infeasibility raises the bound.
    export_path
        Write the model (implies ``decompose=False``).
    **solver_params
        Passed to the solver as options ({options}).
    """


def _register(backend: str, solver: str, options: str) -> None:
    def shared_objects(instance: Instance, *, time_limit=None, workers=None, seed=None,
                       use_heuristics: bool = True, stop_at_bound: bool = True,
                       conflicts: str = "auto", positional_cuts: bool = True,
                       export_path=None, **solver_params) -> SolverOutcome:
        return _shared_objects(backend, instance, time_limit=time_limit, workers=workers,
                               seed=seed, use_heuristics=use_heuristics,
                               stop_at_bound=stop_at_bound, conflicts=conflicts,
                               positional_cuts=positional_cuts, export_path=export_path,
                               params=solver_params)

    def offsets(instance: Instance, *, time_limit=None, workers=None, seed=None,
                use_heuristics: bool = True, stop_at_bound: bool = True, decompose: bool = True,
                symmetry_breaking: bool = True, feasibility_first: float = 0.3,
                export_path=None, **solver_params) -> SolverOutcome:
        return _offsets(backend, instance, time_limit=time_limit, workers=workers, seed=seed,
                        use_heuristics=use_heuristics, stop_at_bound=stop_at_bound,
                        decompose=decompose, symmetry_breaking=symmetry_breaking,
                        feasibility_first=feasibility_first, export_path=export_path,
                        params=solver_params)

    shared_objects.__name__ = f"{backend}_shared_objects"
    offsets.__name__ = f"{backend}_offsets"
    shared_objects.__doc__ = _SO_DOC.format(solver=solver, options=options)
    offsets.__doc__ = _OC_DOC.format(solver=solver, options=options)
    register(backend, Problem.SHARED_OBJECTS, kind="exact",
             reference=f"representative formulation with profile cliques; {solver}")(
        shared_objects)
    register(backend, Problem.OFFSETS, kind="exact",
             reference=f"pairwise disjunctions with big-M; {solver}")(offsets)
    globals()[shared_objects.__name__] = shared_objects
    globals()[offsets.__name__] = offsets


_register("milp_highs", "HiGHS (highspy via PuLP)", "HiGHS option names, e.g. presolve='off'")
_register("milp_cbc", "CBC (bundled with PuLP)", "CBC command-line options, e.g. cuts='off'")
