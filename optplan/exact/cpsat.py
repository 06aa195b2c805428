"""CP-SAT formulations of shared objects and offsets, with in-place pairs (method ``cpsat``).

Each problem has a model builder (the formulation is written out in its docstring), a solve
step (parameters passed straight through to ``solver.parameters``, an anytime callback) and an
extraction step. Semantics: MISSION.md §1; models follow the OR-Tools CP-SAT samples
(NoOverlap2D, hints, solution callbacks). Sizes are divided by their gcd first
(:func:`optplan.exact._common.scaling`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from optplan.exact._common import (CPSAT_LIMIT, Budget, PartOutcome, Scaling, Trajectory,
                                   begin_shared_objects, check_conflict_encoding, check_range,
                                   choose_conflict_encoding, cpsat_solver, empty_outcome,
                                   explicit_conflicts, maximal_profiles, offsets_bound,
                                   representative_structure, scaling, solve_offsets_by_parts,
                                   solver_options, status_for, trimmed_lifetimes)
from optplan.errors import InputError
from optplan.exact._colgen import configuration_bound
from optplan.model import Instance, SharedObjectsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["cpsat_shared_objects", "cpsat_offsets", "build_shared_objects_model",
           "build_offsets_model"]

SOLVER = "cpsat"
DEFAULT_WORKERS = 2


def _cp_model():
    from ortools.sat.python import cp_model
    return cp_model


def _version() -> str:
    import ortools
    return ortools.__version__


# --- running a model -------------------------------------------------------------------------

@dataclass
class Run:
    """What one CP-SAT solve produced, in model units."""

    status: str
    objective: int | None
    bound: int | None
    values: dict = field(default_factory=dict)
    wall_time: float = 0.0


def _run(model, variables: dict, *, time_limit, workers, seed, solver_params: dict,
         on_progress=None) -> Run:
    """Solve ``model`` and read back ``variables`` (name -> var) from the best solution."""
    cp_model = _cp_model()
    solver = cpsat_solver(time_limit=time_limit, workers=workers, seed=seed,
                          solver_params=solver_params)

    class Progress(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            if on_progress is not None and model.has_objective():
                on_progress(round(self.ObjectiveValue()), _ceil(self.BestObjectiveBound()))

    status = solver.solve(model, Progress())
    name = solver.status_name(status)
    if name == "MODEL_INVALID":
        raise RuntimeError(f"CP-SAT rejected the model: {model.validate()}")
    run = Run(name, None, None, wall_time=solver.wall_time)
    if name in ("OPTIMAL", "FEASIBLE"):
        run.values = {key: solver.value(var) for key, var in variables.items()}
        if model.has_objective():
            run.objective = round(solver.objective_value)
            run.bound = _ceil(solver.best_objective_bound)
    elif name == "UNKNOWN" and model.has_objective():
        run.bound = _ceil(solver.best_objective_bound)
    return run


def _ceil(value: float) -> int | None:
    if not math.isfinite(value):
        return None
    rounded = round(value)
    return rounded if abs(value - rounded) < 1e-6 else int(-(-value // 1))


# --- shared objects --------------------------------------------------------------------------

@dataclass
class SharedObjectsModel:
    model: object
    assign: dict            # (i, j) -> BoolVar: record i in the object represented by j
    ranked: list[int]       # records by (size desc, index): representatives come first


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
    (:func:`~optplan.exact._common.explicit_conflicts`), ``L`` the positional-maximums bound
    and ``U`` the warm start. The ranking is the symmetry breaking: every partition has
    exactly one representation. ``hint_ids`` (object ids per record) become a complete hint.
    Variants (``conflicts``): ``pairs`` posts one row per conflicting pair instead of per
    profile; ``no_overlap`` replaces the profile rows by one
    :math:`\mathrm{NoOverlap}(\{[\tau_i, \tau'_i+1) \text{ present iff } x_{ij}\})` per
    representative ``j`` (compact for training graphs, weaker LP);
    ``positional_cuts=False`` drops the positional rows.
    """
    cp_model = _cp_model()
    model = cp_model.CpModel()
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
    return SharedObjectsModel(model, x, ranked)


@dataclass
class ColourModel:
    model: object
    colour: dict            # record -> IntVar, its object's rank by size
    counts: list            # n_k: IntVar, objects of size >= the k-th largest distinct size


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
    cp_model = _cp_model()
    model = cp_model.CpModel()
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
    return ColourModel(model, colour, counts)


def extract_shared_objects(instance: Instance, assign: dict, values: dict
                           ) -> SharedObjectsSolution:
    """Object ids numbered by representative, from the ``x`` values."""
    representative = {i: j for (i, j) in assign if values[i, j]}
    numbering: dict[int, int] = {}
    object_ids = []
    for i in range(len(instance)):
        object_ids.append(numbering.setdefault(representative[i], len(numbering)))
    return SharedObjectsSolution.from_object_ids(instance, object_ids)


@register("cpsat", Problem.SHARED_OBJECTS, kind="exact",
          reference="configuration LP by column generation, then size-class colouring "
                    "(or the representative formulation); OR-Tools CP-SAT")
def cpsat_shared_objects(instance: Instance, *, time_limit=None, workers=None, seed=None,
                         use_heuristics: bool = True, stop_at_bound: bool = True,
                         first_model: float = 0.2, column_generation: float = 0.3,
                         model: str = "colour",
                         conflicts: str = "auto", positional_cuts: bool = True,
                         export_path=None, **solver_params) -> SolverOutcome:
    """Shared objects (SO, SO-IP): CP-SAT, the configuration LP, then CP-SAT again.

    Steps: the warm start and the positional-maximums bound
    (:func:`~optplan.exact._common.begin_shared_objects`); CP-SAT on ``model`` for a
    ``first_model`` share of the time (most networks close here); column generation on the
    configuration LP (:mod:`optplan.exact._colgen`) for a ``column_generation`` share, whose
    bound and dive close the training graphs, where the compact models stall at the
    positional-maximums bound; then CP-SAT again for the rest of the time, with the best bound
    as its floor and the best partition as its hint. OPTIMAL only when CP-SAT proved it or
    the incumbent meets a proven bound.

    Parameters
    ----------
    time_limit, workers, seed
        For the whole call; CP-SAT's ``max_time_in_seconds`` is what is left, ``num_workers``
        (default 2), ``random_seed`` (default 0).
    use_heuristics
        Warm-start from the best registered heuristic (else from a greedy construction).
    stop_at_bound
        Return the warm start, proven optimal, when it meets the positional-maximums bound,
        and the best partition when it meets the configuration LP bound (else the CP-SAT
        model always runs).
    first_model, column_generation
        Shares of ``time_limit`` for the first CP-SAT phase and the configuration LP (without
        a limit: :data:`FIRST_MODEL_SECONDS`, :data:`CONFIGURATION_SECONDS`);
        ``column_generation=0`` skips both (a single CP-SAT run).
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
    begun = begin_shared_objects(instance, solver=SOLVER, version=_version(),
                                 value_limit=CPSAT_LIMIT, solver_label="CP-SAT",
                                 time_limit=time_limit, workers=workers, seed=seed,
                                 default_workers=DEFAULT_WORKERS,
                                 use_heuristics=use_heuristics, stop_at_bound=stop_at_bound)
    if begun.done is not None:
        return begun.done
    budget, flags, scale, trajectory = begun.budget, begun.flags, begun.scale, begun.trajectory
    solution, bound, info = begun.start.solution, begun.bound, begun.info
    unit = scale.unit

    state = _SharedObjectsState(solution, bound)

    def model_phase(seconds, label):
        """CP-SAT on ``model`` for ``seconds``; True when it proved the optimum."""
        lower, upper = -(-state.bound // unit), state.solution.total_size // unit
        if model == "colour":
            built = build_shared_objects_colour_model(instance, scale, lower=lower,
                                                      upper=upper,
                                                      hint_ids=state.solution.object_ids)
            variables = built.colour
        else:
            built = build_shared_objects_model(instance, scale, lower=lower, upper=upper,
                                               hint_ids=state.solution.object_ids,
                                               conflicts=choose_conflict_encoding(
                                                   instance, conflicts, no_overlap=True),
                                               positional_cuts=positional_cuts)
            variables = built.assign
        if export_path is not None:
            built.model.export_to_file(str(export_path))
        run = _run(built.model, variables, time_limit=seconds, workers=flags["workers"],
                   seed=flags["seed"], solver_params=solver_params,
                   on_progress=lambda inc, bnd: trajectory.record(
                       inc * unit, None if bnd is None else bnd * unit))
        info[f"cpsat_{label}_status"] = run.status
        info[f"cpsat_{label}_wall_time"] = run.wall_time
        if run.values and run.objective * unit <= state.solution.total_size:
            if model == "colour":
                found = SharedObjectsSolution.from_object_ids(
                    instance, _compact([run.values[i] for i in range(len(instance))]))
            else:
                found = extract_shared_objects(instance, built.assign, run.values)
            state.improve(found)
        state.bound = max(state.bound, (run.bound or 0) * unit)
        return run.status == "OPTIMAL"

    proven = False
    first_share = first_model if column_generation > 0 else 0.0
    if first_share > 0:
        seconds = None if time_limit is None else first_share * time_limit
        proven = model_phase(seconds if seconds is not None else FIRST_MODEL_SECONDS, "first")
    if not proven and column_generation > 0 and state.solution.total_size > state.bound:
        found = configuration_bound(
            instance, scale.sizes, state.solution.object_ids,
            time_limit=(CONFIGURATION_SECONDS if time_limit is None
                        else min(column_generation * time_limit, budget.remaining())))
        info |= {"configuration_bound": found.bound * unit, "configuration_lp_converged":
                 found.converged, "configuration_iterations": found.iterations,
                 "configuration_columns": found.columns,
                 "configuration_time": round(budget.elapsed(), 6)}
        state.bound = max(state.bound, found.bound * unit)
        if found.object_ids is not None:     # validated by configuration_bound
            state.improve(SharedObjectsSolution.from_object_ids(instance, found.object_ids))
        trajectory.record(state.solution.total_size, state.bound)
        if stop_at_bound and state.solution.total_size <= state.bound:
            info["proof"] = "the configuration LP bound meets the incumbent"
            return SolverOutcome(Status.OPTIMAL, state.solution, state.solution.total_size,
                                 SOLVER, _version(), trajectory.as_tuple(), info)
    if not proven and (state.solution.total_size > state.bound or not stop_at_bound):
        proven = model_phase(budget.remaining(), "final")
    objective = state.solution.total_size
    status = status_for(objective, state.bound, proven=proven)
    best_bound = objective if status is Status.OPTIMAL else state.bound
    trajectory.record(objective, best_bound)
    return SolverOutcome(status, state.solution, best_bound, SOLVER, _version(),
                         trajectory.as_tuple(), info)


FIRST_MODEL_SECONDS = 10.0
"""Without a time limit, the first CP-SAT phase's length (the last one runs to the end)."""
CONFIGURATION_SECONDS = 60.0
"""Without a time limit, column generation's cap (its bound is valid wherever it stops)."""


@dataclass
class _SharedObjectsState:
    """The incumbent and proven bound of one shared-objects call, in bytes."""

    solution: SharedObjectsSolution
    bound: int

    def improve(self, candidate: SharedObjectsSolution) -> None:
        if candidate.total_size < self.solution.total_size:
            self.solution = candidate


SHARED_OBJECTS_MODELS = ("colour", "representative")


def _compact(labels) -> list[int]:
    """Labels renumbered 0, 1, ... in order of first appearance."""
    numbering: dict[int, int] = {}
    return [numbering.setdefault(label, len(numbering)) for label in labels]


# --- offsets ---------------------------------------------------------------------------------

@dataclass
class OffsetsModel:
    model: object
    offsets: dict           # record -> IntVar, the offset in alignment units
    arena: object           # IntVar, the arena in alignment units


def build_offsets_model(instance: Instance, sizes, alignment: int, *, lower: int, upper: int,
                        fixed_arena: bool = False, hint=None,
                        symmetry_breaking: bool = True, cumulative: bool = True
                        ) -> OffsetsModel:
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
    ``hint`` (offsets in alignment units) becomes a hint.
    """
    cp_model = _cp_model()
    model = cp_model.CpModel()
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
        _break_symmetries(model, instance, sizes, alignment, u, arena)
    if not fixed_arena:
        model.minimize(arena)
    if hint is not None:
        hint = _oriented_hint(instance, sizes, alignment, hint, symmetry_breaking)
        for i in range(n):
            model.add_hint(u[i], hint[i])
        if not fixed_arena:
            model.add_hint(arena, max(-(-(alignment * h + sizes[i]) // alignment)
                                      for i, h in enumerate(hint)))
    return OffsetsModel(model, u, arena)


def _identical_groups(instance: Instance) -> tuple[list[list[int]], int | None]:
    """Groups (size >= 2) of identical records outside in-place pairs, and the largest record
    whose (first, last, size) is unique (the mirror anchor), if any."""
    in_pairs = {i for pair in instance.inplace_pairs for i in pair}
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(instance.records):
        key = (r.first_op, r.last_op, r.size, i if i in in_pairs else -1)
        groups.setdefault(key, []).append(i)
    unique = [g[0] for g in groups.values() if len(g) == 1]
    anchor = max(unique, key=lambda i: (instance.records[i].size, -i), default=None)
    return [g for g in groups.values() if len(g) > 1], anchor


def _mirror_allowed(instance: Instance, alignment: int) -> bool:
    return alignment == 1 and not instance.inplace_pairs


def _break_symmetries(model, instance, sizes, alignment, u, arena) -> None:
    groups, anchor = _identical_groups(instance)
    for group in groups:
        for i, j in zip(group, group[1:]):
            model.add(alignment * u[i] + sizes[i] <= alignment * u[j])
    if anchor is not None and _mirror_allowed(instance, alignment):
        model.add(2 * u[anchor] + sizes[anchor] <= arena)


def _oriented_hint(instance, sizes, alignment, hint, symmetry_breaking) -> list[int]:
    """The hint, mirrored and with identical records re-ordered so that it obeys the
    symmetry-breaking constraints (it stays an equally good packing)."""
    hint = list(hint)
    if not symmetry_breaking:
        return hint
    groups, anchor = _identical_groups(instance)
    if anchor is not None and _mirror_allowed(instance, alignment):
        height = max(h + sizes[i] for i, h in enumerate(hint))
        if 2 * hint[anchor] + sizes[anchor] > height:
            hint = [height - h - sizes[i] for i, h in enumerate(hint)]
    for group in groups:
        for i, value in zip(group, sorted(hint[i] for i in group)):
            hint[i] = value
    return hint


def _solve_offsets_part(part: Instance, start_offsets, target: int, time_limit, on_progress, *,
                        workers, seed, solver_params, feasibility_first, export_path,
                        symmetry_breaking, cumulative) -> PartOutcome:
    """One time part: optionally a feasibility model at the bound, then the optimisation."""
    scale = scaling(part, Problem.OFFSETS)
    unit, alignment = scale.unit, scale.alignment
    step = unit * alignment                            # bytes per offset step
    lower = max(offsets_bound(part), target) // step  # both are multiples of the alignment
    start_units = [o // step for o in start_offsets]
    upper = max(u - (-s // alignment) for u, s in zip(start_units, scale.sizes))
    lower = min(lower, upper)   # a part already below the target needs no improvement
    info: dict = {}
    budget = Budget(time_limit)
    if feasibility_first and lower < upper:
        built = build_offsets_model(part, scale.sizes, alignment, lower=lower, upper=upper,
                                    fixed_arena=True, symmetry_breaking=symmetry_breaking,
                                    cumulative=cumulative)
        share = None if time_limit is None else max(0.05, feasibility_first * time_limit)
        run = _run(built.model, built.offsets, time_limit=share, workers=workers, seed=seed,
                   solver_params=solver_params)
        info["feasibility_status"] = run.status
        if run.values:
            offsets = [run.values[i] * step for i in range(len(part))]
            objective = _arena(part, offsets)
            on_progress(objective, lower * step)
            return PartOutcome(offsets, objective, lower * step, True, info)
        if run.status == "INFEASIBLE":
            lower += 1
            on_progress(None, lower * step)
    built = build_offsets_model(part, scale.sizes, alignment, lower=lower, upper=upper,
                                hint=start_units, symmetry_breaking=symmetry_breaking,
                                cumulative=cumulative)
    if export_path is not None:
        built.model.export_to_file(str(export_path))
    variables = dict(built.offsets) | {"arena": built.arena}
    run = _run(built.model, variables, time_limit=budget.remaining(), workers=workers,
               seed=seed, solver_params=solver_params,
               on_progress=lambda inc, bnd: on_progress(
                   inc * step, None if bnd is None else bnd * step))
    info["cpsat_status"] = run.status
    bound = max(lower, run.bound or 0) * step
    if run.values:
        offsets = [run.values[i] * step for i in range(len(part))]
        return PartOutcome(offsets, _arena(part, offsets), bound, run.status == "OPTIMAL", info)
    return PartOutcome(list(start_offsets), _arena(part, start_offsets), bound, False, info)


def _arena(part: Instance, offsets) -> int:
    return round_up(max(o + r.size for o, r in zip(offsets, part.records)), part.alignment)


@register("cpsat", Problem.OFFSETS, kind="exact",
          reference="NoOverlap2D with fixed time intervals; OR-Tools CP-SAT")
def cpsat_offsets(instance: Instance, *, time_limit=None, workers=None, seed=None,
                  use_heuristics: bool = True, stop_at_bound: bool = True,
                  decompose: bool = True, feasibility_first: float = 0.3,
                  symmetry_breaking: bool = True, cumulative: bool = True,
                  export_path=None, **solver_params) -> SolverOutcome:
    """Offsets (OC, OC-IP) by CP-SAT with NoOverlap2D, per time part.

    Parameters
    ----------
    time_limit, workers, seed
        CP-SAT's ``max_time_in_seconds`` (for the whole call), ``num_workers`` (default 2),
        ``random_seed`` (default 0).
    use_heuristics, stop_at_bound
        As for :func:`cpsat_shared_objects` (the bound is the max breadth).
    decompose
        Solve the time parts independently (:func:`~optplan.exact._common.time_components`).
    feasibility_first
        Fraction of a part's time spent first on the feasibility model with the arena fixed
        at the lower bound (0 disables it). A feasible answer is then optimal; an infeasible
        one raises the bound by one alignment step.
    symmetry_breaking, cumulative
        Model variants (see :func:`build_offsets_model`).
    export_path
        Write the optimisation model (implies ``decompose=False``).
    **solver_params
        Set on ``solver.parameters`` as given.
    """
    budget = Budget(time_limit)
    flags = solver_options(time_limit, workers, seed, DEFAULT_WORKERS)
    if len(instance) == 0:
        return empty_outcome(Problem.OFFSETS, SOLVER, _version(), flags)
    check_range(instance, scaling(instance, Problem.OFFSETS), CPSAT_LIMIT, "CP-SAT")
    trajectory = Trajectory(budget)

    def solve_part(part, start_offsets, target, limit, on_progress):
        return _solve_offsets_part(part, start_offsets, target, limit, on_progress,
                                   workers=flags["workers"], seed=flags["seed"],
                                   solver_params=solver_params,
                                   feasibility_first=feasibility_first,
                                   export_path=export_path,
                                   symmetry_breaking=symmetry_breaking, cumulative=cumulative)

    solution, bound, status, info = solve_offsets_by_parts(
        instance, solve_part, budget=budget, trajectory=trajectory,
        use_heuristics=use_heuristics, decompose=decompose and export_path is None,
        stop_at_bound=stop_at_bound)
    return SolverOutcome(status, solution, bound, SOLVER, _version(), trajectory.as_tuple(),
                         flags | info)
