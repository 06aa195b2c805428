"""MILP formulations of shared objects and offsets, with in-place pairs (PuLP 3.x).

Two methods share the models: ``milp_highs`` (HiGHS, :mod:`optplan.exact.highs`) and
``milp_cbc`` (the CBC binary bundled with PuLP). The formulations mirror the CP-SAT ones in
:mod:`optplan.exact.cpsat` (same variables, same symmetry breaking, same bounds; the shared
index sets and geometry come from :mod:`optplan.exact.representative` and
:mod:`optplan.exact.geometry`); offsets use pairwise disjunctions with a big-M taken from the
warm start instead of NoOverlap2D. A MILP answer proves only what it may
(:func:`~optplan.exact.scaling.milp_proof_trusted`): OPTIMAL when the incumbent meets the
solver's rounded-up dual bound on a model whose numbers the solver resolves to the unit, or an
exactly computed bound.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from optplan.bounds import maximal_profiles, offsets_bound, trimmed_lifetimes
from optplan.exact.budget import SPLIT, Budget
from optplan.exact.geometry import conflict_pairs, identical_groups, mirror_allowed, oriented_hint
from optplan.exact.highs import (MilpRun, apply_start, check_highs_options, highs_version,
                                 run_highs)
from optplan.exact.parts import PartOutcome, arena_of, solve_offsets_by_parts
from optplan.exact.representative import (choose_conflict_encoding, representative_structure,
                                          start_shared_objects)
from optplan.exact.run import ExactRun
from optplan.exact.scaling import (MILP_LIMIT, Scaling, check_range, milp_proof_trusted,
                                   proven_bound, scaling)
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome
from optplan.validate import validate_offsets, validate_shared_objects

__all__ = ["milp_highs_shared_objects", "milp_highs_offsets", "milp_cbc_shared_objects",
           "milp_cbc_offsets", "build_shared_objects_milp", "build_offsets_milp",
           "cbc_version", "milp_version"]

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
    """A PuLP model with the variables read back after solving, the warm start as
    ``{variable: value}``, and its largest big-M and largest number (model units), which say
    whether the solver's proofs are taken."""

    problem: object                       # pulp.LpProblem
    variables: dict                       # key -> LpVariable
    start: dict = field(default_factory=dict)
    big_m: int = 0
    magnitude: int = 0

    @property
    def trusted(self) -> bool:
        return milp_proof_trusted(self.big_m, self.magnitude)


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
    start = {var: int(representative[i] == j) for (i, j), var in x.items()}
    return Milp(lp, x, start, big_m=0, magnitude=upper)


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
    groups, anchor = identical_groups(instance) if symmetry_breaking else ([], None)
    ordered = {(i, j) for group in groups for i, j in zip(group, group[1:])}
    start_units = oriented_hint(instance, sizes, alignment, start_units, symmetry_breaking)
    start = {u[i]: start_units[i] for i in range(n)} | {k: upper}
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
        start[below] = int(alignment * start_units[i] + sizes[i] <= alignment * start_units[j])
        start[above] = int(not start[below] and alignment * start_units[j] + sizes[j]
                           <= alignment * start_units[i])
        if (i, j) in instance.inplace_set:
            same = lp.add_variable(f"e_{i}_{j}", cat="Binary")
            lp += below + above + same == 1, f"choose_{i}_{j}"
            lp += u[i] - u[j] <= upper * (1 - same), f"same_{i}_{j}"
            lp += u[j] - u[i] <= upper * (1 - same), f"same_{j}_{i}"
            start[same] = int(not start[below] and not start[above])
            binaries["e", i, j] = same
        else:
            lp += below + above == 1, f"choose_{i}_{j}"
        binaries["z", i, j], binaries["z", j, i] = below, above
    if anchor is not None and mirror_allowed(instance, alignment):
        lp += 2 * u[anchor] + sizes[anchor] <= k, "mirror"
    variables = dict(u) | binaries | {"arena": k}
    return Milp(lp, variables, start, big_m=big_m, magnitude=big_m)


# --- solvers ---------------------------------------------------------------------------------

def _cbc_path() -> str | None:
    """The CBC binary bundled with PuLP (``None``: a ``cbc`` on the PATH)."""
    pulp = _pulp()
    bundled = getattr(pulp.PULP_CBC_CMD, "pulp_cbc_path", None)
    return bundled if bundled and os.access(bundled, os.X_OK) else None


@functools.cache
def cbc_version() -> str | None:
    """The version the CBC binary that ``milp_cbc`` runs prints, e.g. ``2.10.3`` (``None``:
    no binary). Every CBC result and the run manifest read it here."""
    try:
        output = subprocess.run([_cbc_path() or "cbc", "-quit"], capture_output=True, text=True,
                                timeout=10).stdout
    except (ImportError, OSError, subprocess.SubprocessError):
        return None
    return next((line.split(":", 1)[1].strip() for line in output.splitlines()
                 if line.strip().startswith("Version:")), None)


def _run_cbc(milp: Milp, *, seconds, workers, seed, params) -> MilpRun:
    pulp = _pulp()
    apply_start(milp.start)
    handle, log_path = tempfile.mkstemp(suffix=".log", prefix="optplan-cbc-")
    os.close(handle)
    options = [f"randomCbcSeed {seed}"] + [f"{key} {value}" for key, value in params.items()]
    solver = pulp.COIN_CMD(path=_cbc_path(), msg=False, timeLimit=seconds, threads=workers,
                           gapRel=0, gapAbs=0.999, warmStart=bool(milp.start), logPath=log_path,
                           options=options)
    try:
        milp.problem.solve(solver)
    except pulp.PulpSolverError as error:
        # CBC exits non-zero now and then when its time runs out while reading the MIP
        # start; the run then simply has no answer (the caller keeps its warm start).
        return MilpRun(f"cbc failed: {error}", False, None)
    finally:
        with open(log_path, encoding="utf-8", errors="replace") as log_file:
            log = log_file.read()
        os.unlink(log_path)
    result = re.search(r"^Result - (.*)$", log, re.MULTILINE)
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
    return MilpRun(status, has_solution, bound, optimal=optimal,
                   infeasible="infeasible" in status.lower())


def _run_highs(milp: Milp, *, seconds, workers, seed, params) -> MilpRun:
    return run_highs(milp.problem, seconds=seconds, workers=workers, seed=seed, params=params,
                     start=milp.start)


BACKENDS = {"milp_highs": _run_highs, "milp_cbc": _run_cbc}
_VERSIONS = {"milp_highs": highs_version, "milp_cbc": cbc_version}


def milp_version(backend: str) -> str:
    """The version of ``backend``'s solver library (``""``: not found), for the results of
    every problem's MILP methods."""
    return _VERSIONS[backend]() or ""


def _check_params(backend: str, params: dict) -> None:
    if backend == "milp_highs":
        check_highs_options(params)


def _export(milp: Milp, path) -> None:
    path = str(path)
    if path.lower().endswith(".lp"):
        milp.problem.writeLP(path)
    else:
        milp.problem.writeMPS(path)


def _solve(backend: str, milp: Milp, run: ExactRun, budget: Budget, params: dict) -> MilpRun:
    """Run ``backend`` on ``milp`` for what is left of ``budget`` (less the overrun a solver
    has shown; nothing when that leaves no time)."""
    limit = budget.solver_seconds()
    if limit is not None and limit <= 0:
        return MilpRun("NOT_STARTED", False, None)
    started = time.perf_counter()
    answer = BACKENDS[backend](milp, seconds=limit, workers=run.workers, seed=run.seed,
                               params=params)
    budget.solver_ran(limit, time.perf_counter() - started)
    return answer


def _proven_bound(milp: Milp, answer: MilpRun) -> int | None:
    """The dual bound (model units) when the model's numbers let the solver prove it."""
    return proven_bound(answer.bound) if milp.trusted else None


# --- shared objects --------------------------------------------------------------------------

def _shared_objects(backend: str, instance: Instance, *, time_limit, workers, seed, warm_start,
                    initial_solution, stop_at_bound, conflicts, positional_cuts, export_path,
                    solver_params) -> SolverOutcome:
    _check_params(backend, solver_params)
    run = ExactRun(instance, Problem.SHARED_OBJECTS, solver=backend,
                   version=milp_version(backend), time_limit=time_limit, workers=workers,
                   seed=seed, default_workers=DEFAULT_WORKERS)
    scale, done = start_shared_objects(run, warm_start=warm_start,
                                       initial_solution=initial_solution,
                                       stop_at_bound=stop_at_bound, value_limit=MILP_LIMIT,
                                       solver_label="the MILP solvers")
    if done is not None:
        return done
    unit = scale.unit
    encoding = choose_conflict_encoding(instance, conflicts, no_overlap=False)
    terms = _estimated_terms(instance, encoding)
    if terms > MODEL_TERMS_LIMIT:
        run.info["model"] = (f"not built: ~{terms} constraint terms > {MODEL_TERMS_LIMIT}; "
                             "warm start returned")
        return run.outcome()
    milp = build_shared_objects_milp(instance, scale, lower=-(-run.bound // unit),
                                     upper=run.objective // unit,
                                     start_ids=run.solution.object_ids,
                                     conflicts=encoding, positional_cuts=positional_cuts)
    run.info["proofs_trusted"] = milp.trusted
    if export_path is not None:
        _export(milp, export_path)
    if run.out_of_time():
        return run.outcome()
    answer = _solve(backend, milp, run, run.budget, solver_params)
    run.info["solver_status"] = answer.status
    if answer.has_solution:
        candidate = SharedObjectsSolution.from_object_ids(instance, _object_ids(instance, milp))
        if validate_shared_objects(instance, candidate):
            run.info["extraction"] = "invalid after rounding; kept the warm start"
        else:
            run.offer(candidate)
    bound = _proven_bound(milp, answer)
    run.raise_bound(None if bound is None else bound * unit)
    return run.outcome()


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


# --- offsets ---------------------------------------------------------------------------------

def _offsets_part(backend: str, run: ExactRun, part: Instance, start_offsets, target: int,
                  time_limit, on_progress, *, solver_params, export_path, symmetry_breaking,
                  feasibility_first) -> PartOutcome:
    """One time part: optionally the feasibility model at the bound, then the optimisation.
    A bound learnt from the solver counts only when the model lets it prove it."""
    budget = Budget(time_limit)   # model building counts against the part's time
    scale = scaling(part, with_alignment=True)
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
        objective = arena_of(part, start_offsets)
        return PartOutcome(list(start_offsets), objective, lower * step,
                           objective <= lower * step, info)

    def attempt(low: int, high: int, clock: Budget, *, with_start: bool):
        milp = build_offsets_milp(part, scale.sizes, alignment, lower=low, upper=high,
                                  start_units=start_units, symmetry_breaking=symmetry_breaking)
        if not with_start:
            milp.start = {}
        info["proofs_trusted"] = milp.trusted
        if clock.exhausted():
            return milp, None, None
        answer = _solve(backend, milp, run, clock, solver_params)
        offsets = None
        if answer.has_solution:
            candidate = [round(milp.variables[i].varValue or 0) * step for i in range(len(part))]
            if validate_offsets(part, OffsetsSolution.from_offsets(part, candidate)):
                info["extraction"] = "invalid after rounding; ignored"
            else:
                offsets = candidate
        return milp, answer, offsets

    if feasibility_first and lower < upper:
        seconds = budget.share(feasibility_first)
        milp, answer, offsets = attempt(lower, lower, budget.part(seconds), with_start=False)
        if answer is not None:
            info["feasibility_status"] = answer.status
        if offsets is not None:
            objective = arena_of(part, offsets)
            on_progress(objective, lower * step)
            return PartOutcome(offsets, objective, lower * step, objective <= lower * step,
                               info)
        if answer is not None and answer.infeasible and milp.trusted:
            lower += 1
            on_progress(None, lower * step)
    milp, answer, offsets = attempt(lower, upper, budget, with_start=True)
    if export_path is not None:
        _export(milp, export_path)
    solver_bound = None
    if answer is not None:
        info["solver_status"] = answer.status
        solver_bound = _proven_bound(milp, answer)
    bound = max(lower, solver_bound or 0) * step
    offsets = list(start_offsets) if offsets is None else offsets
    objective = arena_of(part, offsets)
    on_progress(objective, bound)
    return PartOutcome(offsets, objective, bound, objective <= bound, info)


def _offsets(backend: str, instance: Instance, *, time_limit, workers, seed, warm_start,
             initial_solution, stop_at_bound, decompose, symmetry_breaking, feasibility_first,
             export_path, solver_params) -> SolverOutcome:
    _check_params(backend, solver_params)
    run = ExactRun(instance, Problem.OFFSETS, solver=backend, version=milp_version(backend),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    check_range(instance, scaling(instance, with_alignment=True), MILP_LIMIT,
                "the MILP solvers")

    def solve_part(part, start_offsets, target, limit, on_progress):
        return _offsets_part(backend, run, part, start_offsets, target, limit, on_progress,
                             solver_params=solver_params, export_path=export_path,
                             symmetry_breaking=symmetry_breaking,
                             feasibility_first=feasibility_first)

    return solve_offsets_by_parts(run, solve_part, warm_start=warm_start,
                                  initial_solution=initial_solution,
                                  decompose=decompose and export_path is None,
                                  stop_at_bound=stop_at_bound)


# --- the registered methods ------------------------------------------------------------------

@register("milp_highs", Problem.SHARED_OBJECTS, kind="exact",
          reference="representative formulation with profile cliques; HiGHS (highspy via PuLP)")
def milp_highs_shared_objects(instance: Instance, *, time_limit=None, workers=None, seed=None,
                              warm_start=True, initial_solution=None,
                              stop_at_bound: bool = True, conflicts: str = "auto",
                              positional_cuts: bool = True, export_path=None,
                              **solver_params) -> SolverOutcome:
    """Shared objects (SO, SO-IP) by HiGHS on the representative 0-1 program.

    Parameters
    ----------
    time_limit, workers, seed
        For the whole call (warm start and model building included); HiGHS's threads
        (default 1) and random seed (default 0).
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`); its best solution is the MIP start.
    stop_at_bound
        Return the warm start, proven optimal, when it meets the positional-maximums bound.
    conflicts, positional_cuts
        Model variants (as for the CP-SAT method; ``auto`` means ``cliques`` here).
    export_path
        Write the model (``.lp`` for LP format, anything else MPS).
    **solver_params
        HiGHS option names, e.g. ``presolve="off"``.
    """
    return _shared_objects("milp_highs", instance, time_limit=time_limit, workers=workers,
                           seed=seed, warm_start=warm_start, initial_solution=initial_solution,
                           stop_at_bound=stop_at_bound, conflicts=conflicts,
                           positional_cuts=positional_cuts, export_path=export_path,
                           solver_params=solver_params)


@register("milp_cbc", Problem.SHARED_OBJECTS, kind="exact",
          reference="representative formulation with profile cliques; CBC (bundled with PuLP)")
def milp_cbc_shared_objects(instance: Instance, *, time_limit=None, workers=None, seed=None,
                            warm_start=True, initial_solution=None, stop_at_bound: bool = True,
                            conflicts: str = "auto", positional_cuts: bool = True,
                            export_path=None, **solver_params) -> SolverOutcome:
    """Shared objects (SO, SO-IP) by CBC on the representative 0-1 program; parameters as for
    :func:`milp_highs_shared_objects`, ``**solver_params`` CBC command-line options, e.g.
    ``cuts="off"``."""
    return _shared_objects("milp_cbc", instance, time_limit=time_limit, workers=workers,
                           seed=seed, warm_start=warm_start, initial_solution=initial_solution,
                           stop_at_bound=stop_at_bound, conflicts=conflicts,
                           positional_cuts=positional_cuts, export_path=export_path,
                           solver_params=solver_params)


@register("milp_highs", Problem.OFFSETS, kind="exact",
          reference="pairwise disjunctions with big-M; HiGHS (highspy via PuLP)")
def milp_highs_offsets(instance: Instance, *, time_limit=None, workers=None, seed=None,
                       warm_start=True, initial_solution=None, stop_at_bound: bool = True,
                       decompose: bool = True, symmetry_breaking: bool = True,
                       feasibility_first: float = SPLIT.feasibility_first, export_path=None,
                       **solver_params) -> SolverOutcome:
    """Offsets (OC, OC-IP) by HiGHS on the disjunctive program, per time part.

    Parameters
    ----------
    time_limit, workers, seed
        For the whole call (warm start and model building included); HiGHS's threads
        (default 1) and random seed (default 0).
    warm_start, initial_solution, stop_at_bound
        As for :func:`milp_highs_shared_objects` (the bound is the max breadth).
    decompose
        Solve the time parts independently.
    symmetry_breaking
        Order identical records and break the mirror symmetry.
    feasibility_first
        Share of a part's time spent first on the model with the arena fixed at the lower
        bound (0 disables it): a solution is then optimal, a trusted infeasibility raises the
        bound.
    export_path
        Write the model (implies ``decompose=False``).
    **solver_params
        HiGHS option names, e.g. ``presolve="off"``.
    """
    return _offsets("milp_highs", instance, time_limit=time_limit, workers=workers, seed=seed,
                    warm_start=warm_start, initial_solution=initial_solution,
                    stop_at_bound=stop_at_bound, decompose=decompose,
                    symmetry_breaking=symmetry_breaking, feasibility_first=feasibility_first,
                    export_path=export_path, solver_params=solver_params)


@register("milp_cbc", Problem.OFFSETS, kind="exact",
          reference="pairwise disjunctions with big-M; CBC (bundled with PuLP)")
def milp_cbc_offsets(instance: Instance, *, time_limit=None, workers=None, seed=None,
                     warm_start=True, initial_solution=None, stop_at_bound: bool = True,
                     decompose: bool = True, symmetry_breaking: bool = True,
                     feasibility_first: float = SPLIT.feasibility_first, export_path=None,
                     **solver_params) -> SolverOutcome:
    """Offsets (OC, OC-IP) by CBC on the disjunctive program; parameters as for
    :func:`milp_highs_offsets`, ``**solver_params`` CBC command-line options, e.g.
    ``cuts="off"``."""
    return _offsets("milp_cbc", instance, time_limit=time_limit, workers=workers, seed=seed,
                    warm_start=warm_start, initial_solution=initial_solution,
                    stop_at_bound=stop_at_bound, decompose=decompose,
                    symmetry_breaking=symmetry_breaking, feasibility_first=feasibility_first,
                    export_path=export_path, solver_params=solver_params)
