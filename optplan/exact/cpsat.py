"""CP-SAT formulations of shared objects and offsets, with in-place pairs (method ``cpsat``).

Each problem has model builders (the formulation is written out in their docstrings), a solve
step (:func:`optplan.exact.cpsat_solve.solve_model`: parameters passed straight through to
``solver.parameters``, an anytime callback) and extraction functions. Problem definitions:
``docs/problems.md``; models follow the OR-Tools CP-SAT samples (NoOverlap2D, hints, solution
callbacks). Sizes are divided by their gcd first (:func:`optplan.exact.scaling.scaling`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from optplan.bounds import maximal_profiles, offsets_bound, trimmed_lifetimes
from optplan.errors import InputError
from optplan.exact.budget import SPLIT, Budget
from optplan.exact.colgen import configuration_bound
from optplan.exact.cpsat_solve import (cp_model, cpsat_solver, cpsat_version, fixed_search_params,
                                       solve_model)
from optplan.exact.offsets_bound import capacity_bound
from optplan.exact.geometry import (explicit_conflicts, identical_groups, mirror_allowed,
                                    oriented_hint)
from optplan.exact.parts import PartOutcome, arena_of, solve_offsets_by_parts
from optplan.exact.representative import (check_conflict_encoding, choose_conflict_encoding,
                                          representative_structure, start_shared_objects)
from optplan.exact.run import ExactRun
from optplan.exact.scaling import CPSAT_LIMIT, Scaling, check_range, scaling
from optplan.model import Instance, SharedObjectsSolution
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["cpsat_shared_objects", "cpsat_offsets", "build_shared_objects_model",
           "build_shared_objects_colour_model", "build_offsets_model",
           "extract_shared_objects", "extract_colour_objects"]

SOLVER = "cpsat"
DEFAULT_WORKERS = 2
SHARED_OBJECTS_MODELS = ("colour", "representative")


# --- shared objects --------------------------------------------------------------------------

@dataclass
class SharedObjectsModel:
    model: object
    assign: dict            # (i, j) -> BoolVar: record i in the object represented by j
    ranked: list[int]       # records by (size desc, index): representatives come first
    objective: object       # the sum of the objects' sizes (size units)


def build_shared_objects_model(instance: Instance, scale: Scaling, *, lower: int, upper: int,
                               hint_ids=None, conflicts: str = "cliques",
                               positional_cuts: bool = True) -> SharedObjectsModel:
    r"""The representative formulation of SO(-IP), in size units.

    Rank records by (size desc, index); ``R(i)`` = records ranked before ``i`` that may share
    with it (no conflict, or an in-place pair). :math:`x_{ij}=1` iff record ``i`` is in the
    object represented by ``j`` (its top-ranked member); :math:`y_j = x_{jj}`.

    .. math::

        \min \sum_j s_j y_j \quad\text{s.t.}\quad
        \sum_{j \in R(i) \cup \{i\}} x_{ij} = 1 \;\; \forall i                  \\
        x_{ij} \le y_j \;\; \forall i, j \in R(i)                                \\
        \sum_{i \in P,\, j \in R(i)} x_{ij} \le y_j \;\; \forall P \in \mathcal P, j \notin P
            \quad\text{(one clique per maximal trimmed operator profile)}      \\
        x_{uj} + x_{vj} \le y_j \;\; \forall (u,v) \in E_{\text{explicit}},
            \text{not in-place}, j \in R(u) \cap R(v)                           \\
        \sum_{j:\, s_j \ge m_k} y_j \ge k \;\; \forall k
            \quad\text{(positional maximums } m_1 \ge m_2 \ge \dots)         \\
        L \le \sum_j s_j y_j \le U

    where :math:`\mathcal P` are the maximal profiles of the in-place-trimmed lifetimes,
    :math:`E_{\text{explicit}}` the conflicts those profiles miss
    (:func:`~optplan.exact.geometry.explicit_conflicts`), ``L`` the positional-maximums bound
    and ``U`` the warm start. The ranking is the symmetry breaking: every partition has
    exactly one representation. ``hint_ids`` (object ids per record) become a complete hint.
    Variants (``conflicts``): ``pairs`` posts one row per conflicting pair instead of per
    profile; ``no_overlap`` replaces the profile rows by one
    :math:`\mathrm{NoOverlap}(\{[\tau_i, \tau'_i+1) \text{ present iff } x_{ij}\})` per
    representative ``j`` (compact for training graphs, weaker LP);
    ``positional_cuts=False`` drops the positional rows.
    """
    model = cp_model().CpModel()
    sizes = scale.sizes
    structure = representative_structure(instance, conflicts=conflicts,
                                         positional_cuts=positional_cuts)
    ranked, candidates = structure.ranked, structure.candidates
    x = {(i, j): model.new_bool_var(f"x_{i}_{j}") for i in ranked for j in candidates[i]}
    y = {j: x[j, j] for j in ranked}
    if conflicts == "no_overlap":
        lifetimes = trimmed_lifetimes(instance)
        members: dict[int, list] = {j: [] for j in ranked}
        for (i, j), var in x.items():
            if lifetimes[i] is not None:
                first, last = lifetimes[i]
                members[j].append(model.new_optional_fixed_size_interval_var(
                    first, last - first + 1, var, f"life_{i}_{j}"))
        for j, intervals in members.items():
            if len(intervals) > 1:
                model.add_no_overlap(intervals)

    for i in ranked:
        model.add_exactly_one(x[i, j] for j in candidates[i])
    for (i, j), var in x.items():
        if i != j:
            model.add_implication(var, y[j])
    for j, members in structure.groups:
        model.add(sum(x[i, j] for i in members) <= y[j])
    for k, representatives in enumerate(structure.positional, start=1):
        model.add(sum(y[j] for j in representatives) >= k)
    objective = sum(sizes[j] * y[j] for j in ranked)
    model.add(objective >= lower)
    model.add(objective <= upper)
    model.minimize(objective)

    if hint_ids is not None:
        for i, j in structure.representatives_of(hint_ids).items():
            for candidate in candidates[i]:
                model.add_hint(x[i, candidate], candidate == j)
    return SharedObjectsModel(model, x, ranked, objective)


@dataclass
class ColourModel:
    model: object
    colour: dict            # record -> IntVar, its object's rank by size
    counts: list            # n_k: IntVar, objects of size >= the k-th largest distinct size
    objective: object       # the sum of the objects' sizes (size units)


def build_shared_objects_colour_model(instance: Instance, scale: Scaling, *, lower: int,
                                      upper: int, hint_ids=None) -> ColourModel:
    r"""The size-class colouring formulation of SO(-IP), in size units.

    Distinct sizes :math:`v_1 > \dots > v_m`, weights :math:`w_k = v_k - v_{k+1}`
    (:math:`v_{m+1} = 0`), ``k(i)`` the class of record ``i``. Objects are ranked by size
    (colour 0 is the largest); :math:`\chi_i` is the colour of record ``i`` and :math:`n_k` the
    number of objects no smaller than :math:`v_k`, so the cost :math:`\sum_o \max_{i \in o} s_i`
    equals :math:`\sum_k w_k n_k`:

    .. math::

        \min \sum_k w_k n_k \quad\text{s.t.}\quad
        \chi_i < n_{k(i)} \;\; \forall i                                         \\
        n_1 \le n_2 \le \dots \le n_m                                           \\
        \mathrm{AllDifferent}(\chi_i : i \in P) \;\; \forall P \in \mathcal P
            \quad\text{(maximal trimmed operator profiles)}                        \\
        \chi_u \ne \chi_v \;\; \forall (u, v) \in E_{\text{explicit}},
            \text{not in-place}                                                    \\
        n_k \ge \max_{P \in \mathcal P} |\{i \in P : s_i \ge v_k\}|            \\
        L \le \sum_k w_k n_k \le U, \qquad
        0 \le \chi_i < \min(n, \lfloor U / v_m \rfloor)

    Any partition, objects ranked by size, is a solution of equal cost; any solution gives
    a partition (records by colour) of no greater cost. The AllDifferent constraints carry
    Hall-interval reasoning over nested colour ranges that the representative formulation's
    LP lacks: raw Inception v3 closes in seconds here. ``hint_ids`` become a complete hint.
    """
    model = cp_model().CpModel()
    sizes = scale.sizes
    values = sorted(set(sizes), reverse=True)
    size_class = {value: k for k, value in enumerate(values)}
    weights = [value - (values[k + 1] if k + 1 < len(values) else 0)
               for k, value in enumerate(values)]
    colours = max(1, min(len(sizes), upper // values[-1]))
    lifetimes = trimmed_lifetimes(instance)
    profiles = maximal_profiles(lifetimes)
    floors = [0] * len(values)
    for profile in profiles:
        histogram = [0] * len(values)
        for i in profile:
            histogram[size_class[sizes[i]]] += 1
        for k, count in enumerate(itertools.accumulate(histogram)):
            floors[k] = max(floors[k], count)
    floors = list(itertools.accumulate(floors, max))

    colour = {i: model.new_int_var(0, colours - 1, f"colour_{i}") for i in range(len(sizes))}
    counts = [model.new_int_var(min(floor, colours), colours, f"n_{k}")
              for k, floor in enumerate(floors)]
    for i, var in colour.items():
        model.add(var < counts[size_class[sizes[i]]])
    for smaller, larger in zip(counts, counts[1:]):
        model.add(smaller <= larger)
    for profile in profiles:
        if len(profile) > 1:
            model.add_all_different([colour[i] for i in profile])
    for u, v in explicit_conflicts(instance, lifetimes):
        if (u, v) not in instance.inplace_set:
            model.add(colour[u] != colour[v])
    objective = sum(weight * count for weight, count in zip(weights, counts))
    model.add(objective >= lower)
    model.add(objective <= upper)
    model.minimize(objective)

    if hint_ids is not None:
        maxima: dict[int, int] = {}
        for i, object_id in enumerate(hint_ids):
            maxima[object_id] = max(maxima.get(object_id, 0), sizes[i])
        rank = {object_id: r for r, object_id in
                enumerate(sorted(maxima, key=lambda o: (-maxima[o], o)))}
        if len(rank) <= colours:
            for i, object_id in enumerate(hint_ids):
                model.add_hint(colour[i], rank[object_id])
            for k, value in enumerate(values):
                model.add_hint(counts[k], sum(1 for m in maxima.values() if m >= value))
    return ColourModel(model, colour, counts, objective)


def extract_shared_objects(instance: Instance, assign: dict, values: dict
                           ) -> SharedObjectsSolution:
    """Object ids numbered by representative, from the ``x`` values of the representative
    formulation."""
    representative = {i: j for (i, j) in assign if values[i, j]}
    numbering: dict[int, int] = {}
    object_ids = []
    for i in range(len(instance)):
        object_ids.append(numbering.setdefault(representative[i], len(numbering)))
    return SharedObjectsSolution.from_object_ids(instance, object_ids)


def extract_colour_objects(instance: Instance, colour: dict, values: dict
                           ) -> SharedObjectsSolution:
    """Object ids from the colours of the colouring formulation, renumbered 0, 1, ..."""
    numbering: dict[int, int] = {}
    return SharedObjectsSolution.from_object_ids(
        instance, [numbering.setdefault(values[i], len(numbering)) for i in range(len(instance))])


def _shared_objects_phase(run: ExactRun, scale: Scaling, seconds, label: str, *, model: str,
                          conflicts: str, positional_cuts: bool, export_path,
                          solver_params: dict) -> bool:
    """One CP-SAT phase on ``model`` for ``seconds`` (at most what is left): build, solve,
    extract. Offers the partition found and the bound learnt; True when CP-SAT proved the
    optimum."""
    instance, unit = run.instance, scale.unit
    if run.out_of_time() or run.budget.solver_seconds(seconds) == 0:
        run.info[f"cpsat_{label}_status"] = "NOT_STARTED"
        return False
    lower, upper = -(-run.bound // unit), run.objective // unit
    if model == "colour":
        built = build_shared_objects_colour_model(instance, scale, lower=lower, upper=upper,
                                                  hint_ids=run.solution.object_ids)
        variables, objective = built.colour, built.objective
    else:
        built = build_shared_objects_model(
            instance, scale, lower=lower, upper=upper, hint_ids=run.solution.object_ids,
            conflicts=choose_conflict_encoding(instance, conflicts, no_overlap=True),
            positional_cuts=positional_cuts)
        variables, objective = built.assign, built.objective
    if export_path is not None:
        built.model.export_to_file(str(export_path))
    if run.out_of_time():
        return False
    answer = solve_model(built.model, variables, budget=run.budget, seconds=seconds,
                         objective=objective, workers=run.workers, seed=run.seed,
                         solver_params=solver_params,
                         on_progress=lambda incumbent, bound: run.trajectory.record(
                             incumbent * unit, None if bound is None else bound * unit))
    run.info[f"cpsat_{label}_status"] = answer.status
    run.info[f"cpsat_{label}_wall_time"] = answer.wall_time
    if answer.has_solution:
        extract = extract_colour_objects if model == "colour" else extract_shared_objects
        run.offer(extract(instance, variables, answer.values))
    run.raise_bound(None if answer.bound is None else answer.bound * unit)
    return answer.status == "OPTIMAL"


def _configuration_phase(run: ExactRun, scale: Scaling, seconds) -> None:
    """Column generation on the configuration LP: its bound, and its partition if better."""
    found = configuration_bound(run.instance, scale.sizes, run.solution.object_ids,
                                time_limit=seconds)
    run.info |= {"configuration_bound": found.bound * scale.unit,
                 "configuration_lp_converged": found.converged,
                 "configuration_iterations": found.iterations,
                 "configuration_columns": found.columns,
                 "configuration_time": round(run.budget.elapsed(), 6)}
    run.raise_bound(found.bound * scale.unit)
    if found.object_ids is not None:     # validated by configuration_bound
        run.offer(SharedObjectsSolution.from_object_ids(run.instance, found.object_ids))


@register("cpsat", Problem.SHARED_OBJECTS, kind="exact",
          reference="configuration LP by column generation, then size-class colouring "
                    "(or the representative formulation); OR-Tools CP-SAT")
def cpsat_shared_objects(instance: Instance, *, time_limit=None, workers=None, seed=None,
                         warm_start=True, initial_solution=None, stop_at_bound: bool = True,
                         first_model: float = SPLIT.first_model,
                         column_generation: float = SPLIT.column_generation,
                         model: str = "colour", conflicts: str = "auto",
                         positional_cuts: bool = True, export_path=None,
                         **solver_params) -> SolverOutcome:
    """Shared objects (SO, SO-IP): CP-SAT, the configuration LP, then CP-SAT again.

    Steps: the warm start and the positional-maximums bound
    (:func:`~optplan.exact.representative.start_shared_objects`); CP-SAT on ``model`` for a
    ``first_model`` share of the time (most networks close here); column generation on the
    configuration LP (:mod:`optplan.exact.colgen`) for a ``column_generation`` share, whose
    bound and dive close the training graphs, where the compact models stall at the
    positional-maximums bound; then CP-SAT again for the rest of the time, with the best bound
    as its floor and the best partition as its hint. OPTIMAL only when CP-SAT proved it or
    the incumbent meets a proven bound.

    Parameters
    ----------
    time_limit, workers, seed
        For the whole call (warm start and model building included); CP-SAT's
        ``num_workers`` (default 2), ``random_seed`` (default 0).
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`); its best partition is the first hint.
    stop_at_bound
        Return the warm start, proven optimal, when it meets the positional-maximums bound,
        and the best partition when it meets the configuration LP bound (else the CP-SAT
        model always runs).
    first_model, column_generation
        Shares of ``time_limit`` for the first CP-SAT phase and the configuration LP (without
        a limit: ``SPLIT.first_model_seconds`` and ``SPLIT.configuration_seconds`` of
        :data:`optplan.exact.budget.SPLIT`); ``column_generation=0`` skips both (a single
        CP-SAT run).
    model
        ``colour`` (:func:`build_shared_objects_colour_model`) or ``representative``
        (:func:`build_shared_objects_model`, with ``conflicts`` and ``positional_cuts``).
    export_path
        Write the CP-SAT model with ``CpModel.export_to_file`` (``.pb.txt`` for text).
    **solver_params
        Set on ``solver.parameters`` as given.
    """
    if model not in SHARED_OBJECTS_MODELS:
        raise InputError(f"unknown model {model!r}; valid: {', '.join(SHARED_OBJECTS_MODELS)}",
                         field="model")
    check_conflict_encoding(conflicts)
    cpsat_solver(time_limit=None, workers=1, seed=0, solver_params=solver_params)  # names
    run = ExactRun(instance, Problem.SHARED_OBJECTS, solver=SOLVER, version=cpsat_version(),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    scale, done = start_shared_objects(run, warm_start=warm_start,
                                       initial_solution=initial_solution,
                                       stop_at_bound=stop_at_bound, value_limit=CPSAT_LIMIT,
                                       solver_label="CP-SAT")
    if done is not None:
        return done
    phase = dict(model=model, conflicts=conflicts, positional_cuts=positional_cuts,
                 export_path=export_path, solver_params=solver_params)
    proven = False
    if column_generation > 0 and first_model > 0:
        seconds = run.budget.share(first_model)
        proven = _shared_objects_phase(run, scale, SPLIT.first_model_seconds if seconds is None
                                       else seconds, "first", **phase)
    if not proven and column_generation > 0 and not run.meets_bound():
        if not run.out_of_time():
            seconds = run.budget.share(column_generation)
            _configuration_phase(run, scale, SPLIT.configuration_seconds if seconds is None
                                 else seconds)
            if stop_at_bound and run.meets_bound():
                return run.finished("the configuration LP bound meets the incumbent")
    if not proven and (not run.meets_bound() or not stop_at_bound):
        proven = _shared_objects_phase(run, scale, None, "final", **phase)
    return run.outcome(proven=proven)


# --- offsets ---------------------------------------------------------------------------------

@dataclass
class OffsetsModel:
    model: object
    offsets: dict           # record -> IntVar, the offset in alignment units
    arena: object           # IntVar, the arena in alignment units


def build_offsets_model(instance: Instance, sizes, alignment: int, *, lower: int, upper: int,
                        fixed_arena: bool = False, hint=None,
                        symmetry_breaking: bool = True, cumulative: bool = True,
                        bottom_up: bool = False) -> OffsetsModel:
    r"""OC(-IP) as 2-D packing with fixed time coordinates, in alignment units.

    Sizes :math:`s_i` are in size units, ``alignment`` ``A`` in size units per offset step;
    offsets are :math:`A u_i`, the arena :math:`A k`:

    .. math::

        \min k \quad\text{s.t.}\quad
        \mathrm{NoOverlap2D}\big(\{[\tau_i, \tau'_i + 1) \times [A u_i, A u_i + s_i)\}\big)
            \quad\text{(trimmed lifetimes } [\tau_i, \tau'_i])                  \\
        A u_i + s_i \le A k \;\; \forall i                                       \\
        \mathrm{Cumulative}\big(\{[\tau_i, \tau'_i+1)\}, \{s_i\}, A k\big)
            \quad\text{(redundant: breadth at every op)}                        \\
        A u_u + s_u \le A u_v \;\lor\; A u_v + s_v \le A u_u
            \;[\lor\; u_u = u_v \text{ if in-place}] \;\; \forall (u,v) \in E_{\text{explicit}} \\
        A u_i + s_i \le A u_j \;\; \text{for identical records } i < j
            \text{ outside in-place pairs}                                      \\
        2 u_{i_0} + s_{i_0} \le k \;\; \text{(mirror symmetry; } A = 1,
            \text{ no in-place pairs, } i_0 \text{ the largest unique record)}  \\
        L \le k \le U

    ``L`` is the (trimmed) max breadth, ``U`` the warm start (both in alignment units);
    ``fixed_arena`` fixes :math:`k = L` and drops the objective (a feasibility model).
    ``hint`` (offsets in alignment units) becomes a hint. ``bottom_up`` adds a search
    strategy: branch on the offset with the lowest lower end (ties: earlier first op, then
    the larger record) and try its least value first, so that a worker that follows it packs
    from the bottom up as the offsets search does; at a fixed arena CP-SAT's fixed-search
    worker then decides most of MiniMalloc's challenging suite in seconds, where its default
    search finds nothing.
    """
    cp = cp_model()
    model = cp.CpModel()
    n = len(instance)
    lifetimes = trimmed_lifetimes(instance)
    points = sorted({p for life in lifetimes if life is not None for p in life})
    position = {p: k for k, p in enumerate(points)}

    arena = model.new_int_var(lower, lower if fixed_arena else upper, "arena")
    top = lower if fixed_arena else upper
    u = {i: model.new_int_var(0, max(0, (alignment * top - sizes[i]) // alignment), f"u_{i}")
         for i in range(n)}
    memory = {i: model.new_fixed_size_interval_var(alignment * u[i], sizes[i], f"mem_{i}")
              for i in range(n)}
    time = {}
    for i, life in enumerate(lifetimes):
        if life is not None:
            first, last = position[life[0]], position[life[1]]
            time[i] = model.new_fixed_size_interval_var(first, last - first + 1, f"time_{i}")

    model.add_no_overlap_2d([time[i] for i in time], [memory[i] for i in time])
    for i in range(n):
        model.add(alignment * u[i] + sizes[i] <= alignment * arena)
    if cumulative:
        model.add_cumulative([time[i] for i in time], [sizes[i] for i in time],
                             alignment * arena)
    for a, b in explicit_conflicts(instance, lifetimes):
        below = model.new_bool_var(f"below_{a}_{b}")
        above = model.new_bool_var(f"above_{a}_{b}")
        model.add(alignment * u[a] + sizes[a] <= alignment * u[b]).only_enforce_if(below)
        model.add(alignment * u[b] + sizes[b] <= alignment * u[a]).only_enforce_if(above)
        if (a, b) in instance.inplace_set:
            same = model.new_bool_var(f"same_{a}_{b}")
            model.add(u[a] == u[b]).only_enforce_if(same)
            model.add_exactly_one([below, above, same])
        else:
            model.add_exactly_one([below, above])
    if symmetry_breaking:
        _break_symmetries(model, instance, sizes, alignment, u, arena, mirror=not bottom_up)
    if bottom_up:
        order = sorted(time, key=lambda i: (lifetimes[i][0], -sizes[i], i))
        model.add_decision_strategy([u[i] for i in order], cp.CHOOSE_LOWEST_MIN,
                                    cp.SELECT_MIN_VALUE)
    if not fixed_arena:
        model.minimize(arena)
    if hint is not None:
        hint = oriented_hint(instance, sizes, alignment, hint, symmetry_breaking)
        for i in range(n):
            model.add_hint(u[i], hint[i])
        if not fixed_arena:
            model.add_hint(arena, max(-(-(alignment * h + sizes[i]) // alignment)
                                      for i, h in enumerate(hint)))
    return OffsetsModel(model, u, arena)


def _break_symmetries(model, instance, sizes, alignment, u, arena, *, mirror: bool) -> None:
    groups, anchor = identical_groups(instance)
    for group in groups:
        for i, j in zip(group, group[1:]):
            model.add(alignment * u[i] + sizes[i] <= alignment * u[j])
    if mirror and anchor is not None and mirror_allowed(instance, alignment):
        model.add(2 * u[anchor] + sizes[anchor] <= arena)




def _offsets_part(run: ExactRun, part: Instance, start_offsets, target: int, time_limit,
                  on_progress, *, solver_params, feasibility_first, search_bound,
                  export_path, symmetry_breaking, cumulative, bottom_up) -> PartOutcome:
    """One time part (``time_limit`` seconds, model building included): the search's bound,
    optionally a feasibility model at the bound, then the optimisation."""
    budget = Budget(time_limit)
    scale = scaling(part, with_alignment=True)
    unit, alignment = scale.unit, scale.alignment
    step = unit * alignment                            # bytes per offset step
    info: dict = {}
    proven = offsets_bound(part)
    if search_bound and time_limit is not None:
        proven = info["search_bound"] = capacity_bound(part, search_bound * time_limit).bound
    lower = max(proven, target) // step  # both are multiples of the alignment
    start_units = [o // step for o in start_offsets]
    upper = max(u - (-s // alignment) for u, s in zip(start_units, scale.sizes))
    lower = min(lower, upper)   # a part already below the target needs no improvement
    flags = dict(workers=run.workers, seed=run.seed, solver_params=solver_params)
    if feasibility_first and lower < upper:
        built = build_offsets_model(part, scale.sizes, alignment, lower=lower, upper=upper,
                                    fixed_arena=True, symmetry_breaking=symmetry_breaking,
                                    cumulative=cumulative, bottom_up=bottom_up)
        chosen = flags  # a worker follows the strategy, unless the caller chose the searches
        if bottom_up:
            chosen = flags | {"solver_params": fixed_search_params(run.workers) | solver_params}
        if not budget.exhausted():
            answer = solve_model(built.model, built.offsets, budget=budget,
                                 seconds=budget.share(feasibility_first), **chosen)
            info["feasibility_status"] = answer.status
            if answer.values:
                offsets = [answer.values[i] * step for i in range(len(part))]
                objective = arena_of(part, offsets)
                on_progress(objective, lower * step)
                return PartOutcome(offsets, objective, lower * step, objective <= lower * step,
                               info)
            if answer.status == "INFEASIBLE":
                lower += 1
                on_progress(None, lower * step)
    built = build_offsets_model(part, scale.sizes, alignment, lower=lower, upper=upper,
                                hint=start_units, symmetry_breaking=symmetry_breaking,
                                cumulative=cumulative)
    if export_path is not None:
        built.model.export_to_file(str(export_path))
    if budget.exhausted():
        return PartOutcome(list(start_offsets), arena_of(part, start_offsets), lower * step,
                           False, info)
    answer = solve_model(built.model, dict(built.offsets) | {"arena": built.arena},
                         budget=budget, objective=built.arena,
                         on_progress=lambda incumbent, bound: on_progress(
                             incumbent * step, None if bound is None else bound * step),
                         **flags)
    info["cpsat_status"] = answer.status
    bound = max(lower, answer.bound or 0) * step
    if answer.values:
        offsets = [answer.values[i] * step for i in range(len(part))]
        return PartOutcome(offsets, arena_of(part, offsets), bound, answer.status == "OPTIMAL",
                           info)
    return PartOutcome(list(start_offsets), arena_of(part, start_offsets), bound, False, info)


@register("cpsat", Problem.OFFSETS, kind="exact",
          reference="NoOverlap2D with fixed time intervals; OR-Tools CP-SAT")
def cpsat_offsets(instance: Instance, *, time_limit=None, workers=None, seed=None,
                  warm_start=True, initial_solution=None, stop_at_bound: bool = True,
                  decompose: bool = True, feasibility_first: float = SPLIT.feasibility_first,
                  search_bound: float = SPLIT.search_bound, symmetry_breaking: bool = True,
                  cumulative: bool = True, bottom_up: bool = True,
                  export_path=None, **solver_params) -> SolverOutcome:
    """Offsets (OC, OC-IP) by CP-SAT with NoOverlap2D, per time part.

    Parameters
    ----------
    time_limit, workers, seed
        For the whole call (warm start and model building included); CP-SAT's
        ``num_workers`` (default 2), ``random_seed`` (default 0).
    warm_start, initial_solution, stop_at_bound
        As for :func:`cpsat_shared_objects` (the bound is the max breadth).
    decompose
        Solve the time parts independently (:func:`~optplan.exact.geometry.time_components`).
    feasibility_first
        Share of a part's time spent first on the feasibility model with the arena fixed at
        the lower bound (0 disables it). A feasible answer is then optimal; an infeasible one
        raises the bound by one alignment step.
    search_bound
        Share of a part's time for raising its max breadth by the search's refutations
        (:func:`~optplan.exact.offsets_bound.capacity_bound`; 0 or no time limit: off).
    symmetry_breaking, cumulative, bottom_up
        Model variants (see :func:`build_offsets_model`); ``bottom_up`` (the search strategy
        that packs from the bottom up) goes into the feasibility model.
    export_path
        Write the optimisation model (implies ``decompose=False``).
    **solver_params
        Set on ``solver.parameters`` as given.
    """
    cpsat_solver(time_limit=None, workers=1, seed=0, solver_params=solver_params)  # names
    run = ExactRun(instance, Problem.OFFSETS, solver=SOLVER, version=cpsat_version(),
                   time_limit=time_limit, workers=workers, seed=seed,
                   default_workers=DEFAULT_WORKERS)
    check_range(instance, scaling(instance, with_alignment=True), CPSAT_LIMIT, "CP-SAT")

    def solve_part(part, start_offsets, target, limit, on_progress):
        return _offsets_part(run, part, start_offsets, target, limit, on_progress,
                             solver_params=solver_params, feasibility_first=feasibility_first,
                             search_bound=search_bound, export_path=export_path,
                             symmetry_breaking=symmetry_breaking,
                             cumulative=cumulative, bottom_up=bottom_up)

    return solve_offsets_by_parts(run, solve_part, warm_start=warm_start,
                                  initial_solution=initial_solution,
                                  decompose=decompose and export_path is None,
                                  stop_at_bound=stop_at_bound)
