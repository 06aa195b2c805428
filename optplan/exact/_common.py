"""Helpers shared by the exact solvers: scaling, range checks, in-place geometry, bounds,
warm starts, time-axis decomposition, outcomes.

In-place geometry (MISSION.md §1.3)
-----------------------------------
An in-place pair ``(a, b)`` meets at one op ``t = a.last_op = b.first_op``: only there may
``b`` sit on exactly ``a``'s memory. The models use *trimmed* lifetimes: every record that is
the target ``b`` of some pair loses its first op (a single-op target vanishes altogether). Two
records whose trimmed lifetimes intersect are never an in-place pair (a pair ``(u, v)`` meets
only on ``v``'s first op, which ``v`` has lost), so they must be kept apart exactly as without
in-place pairs: the operator profiles of the trimmed lifetimes are cliques of records that
need distinct objects and disjoint memory, their breadths and positional maximums are valid
lower bounds, and a global constraint (NoOverlap2D, per-profile cliques) can be posted on them.
The conflicting pairs that the trimmed lifetimes miss — every in-place pair, and every conflict
that lives only on a target's first op — are listed by :func:`explicit_conflicts` and get a
pairwise constraint ("disjoint, or the same memory if an in-place pair"). Trimming the sources'
last ops instead is equally valid (the lower bounds take the better of the two); trimming
both is valid but weaker. Without in-place pairs nothing is trimmed and the list is empty.

Decomposition
-------------
Offsets split along the time axis: where no record is live on both sides of a cut, the parts are
independent packings, the arena is the maximum of the parts' arenas and the optimum is the
maximum of the parts' optima (:func:`time_components`). Shared objects do **not** split that way:
records of different parts never conflict, so one object may serve a record of each part, and
that sharing across parts is the whole problem (max-colouring). The union of per-part optima is
only an upper bound. (SO does split into connected components of the *compatibility* structure,
but an interval graph's complement is almost always connected, so we do not try.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from optplan.bounds import (inplace_max_breadth, inplace_positional_maximums, maximal_profiles,
                            offsets_bound, shared_objects_bound, trimmed_lifetimes)
from optplan.errors import InputError, SolverRangeError
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, Solution, round_up
from optplan.problems import Problem
from optplan.result import SolverOutcome, Status

__all__ = [
    "CPSAT_LIMIT", "MILP_LIMIT", "Scaling", "scaling", "check_range", "Budget", "Trajectory",
    "trimmed_lifetimes", "conflict_pairs", "explicit_conflicts", "maximal_profiles",
    "inplace_positional_maximums", "inplace_max_breadth", "shared_objects_bound",
    "offsets_bound", "can_share", "cpsat_solver", "begin_shared_objects",
    "left_justified_offsets", "greedy_shared_objects",
    "WarmStart", "warm_start", "warm_start_budget", "time_components", "sub_instance",
    "objective_of", "solver_options", "status_for", "empty_outcome", "PartOutcome",
    "solve_offsets_by_parts", "RepresentativeStructure", "representative_structure",
    "choose_conflict_encoding", "check_conflict_encoding", "CONFLICT_ENCODINGS",
]

CPSAT_LIMIT = 2 ** 60
"""CP-SAT works on int64 and rejects models whose linear sums could overflow; every scaled
quantity (the sum of all sizes bounds every offset, arena and objective) must stay below this."""
WARM_START_SHARE = 0.1
"""Heuristics for the warm start are started only during this share of the time limit."""
MILP_LIMIT = 10 ** 15
"""MILP solvers work in doubles; with big-M constraints, integers beyond ~1e15 lose precision."""


# --- scaling and ranges ----------------------------------------------------------------------

@dataclass(frozen=True)
class Scaling:
    """Sizes (and the alignment) divided by their greatest common divisor ``unit``.

    ``alignment`` is the instance alignment in units: offsets are multiples of it.
    """

    unit: int
    sizes: tuple[int, ...]
    alignment: int

    def units(self, value: int) -> int:
        """A byte value that is a multiple of ``unit``, in units."""
        return value // self.unit


def scaling(instance: Instance, problem: Problem) -> Scaling:
    """The gcd scaling of ``instance`` for ``problem`` (the alignment counts for offsets)."""
    values = [r.size for r in instance.records]
    if problem is Problem.OFFSETS:
        values.append(instance.alignment)
    unit = math.gcd(*values) if values else 1
    unit = unit or 1
    alignment = instance.alignment // unit if problem is Problem.OFFSETS else 1
    return Scaling(unit, tuple(r.size // unit for r in instance.records), alignment)


def check_range(instance: Instance, scale: Scaling, limit: int, solver: str) -> None:
    """Raise :class:`SolverRangeError` when the scaled instance exceeds ``limit``.

    The sum of the scaled sizes (plus one alignment step) bounds every offset, arena and
    objective value a model holds, so it is the quantity checked.
    """
    total = sum(scale.sizes) + scale.alignment
    if total > limit:
        largest = max(range(len(instance)), key=lambda i: instance.records[i].size)
        raise SolverRangeError(
            f"sizes too large for {solver}: their sum is {total} units of {scale.unit} bytes "
            f"after gcd scaling, above the solver's limit {limit} (largest: tensor "
            f"{instance.records[largest].id} with {instance.records[largest].size} bytes)",
            field="size")


# --- time budget and anytime curve -----------------------------------------------------------

class Budget:
    """Wall-clock budget of one solver call (``time_limit=None``: unlimited)."""

    def __init__(self, time_limit: float | None):
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"must be > 0, got {time_limit!r}", field="time_limit")
        self.time_limit = None if time_limit is None else float(time_limit)
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self, floor: float = 0.05) -> float | None:
        """Seconds left (at least ``floor``, so that a solver still gets a chance to start)."""
        if self.time_limit is None:
            return None
        return max(floor, self.time_limit - self.elapsed())

    def exhausted(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit


@dataclass
class Trajectory:
    """``(seconds, incumbent, bound)`` samples in objective units, kept monotone."""

    budget: Budget
    samples: list = field(default_factory=list)

    def record(self, incumbent: int | None, bound: int | None, seconds: float | None = None):
        seconds = self.budget.elapsed() if seconds is None else seconds
        if self.samples:
            _, last_incumbent, last_bound = self.samples[-1]
            if last_incumbent is not None:
                incumbent = last_incumbent if incumbent is None else min(incumbent,
                                                                         last_incumbent)
            if last_bound is not None:
                bound = last_bound if bound is None else max(bound, last_bound)
            if (incumbent, bound) == (last_incumbent, last_bound):
                return
        self.samples.append((round(seconds, 6), incumbent, bound))

    def as_tuple(self) -> tuple:
        return tuple(self.samples)


def cpsat_solver(*, time_limit, workers, seed, solver_params):
    """A CP-SAT solver with the run's time limit, workers and seed; ``solver_params`` pass
    straight through to ``solver.parameters`` (an unknown name is an InputError)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    for name, value in (solver_params or {}).items():
        if not hasattr(solver.parameters, name):
            raise InputError(f"CP-SAT has no parameter {name!r}", field=name)
        setattr(solver.parameters, name, value)
    return solver


# --- in-place geometry -----------------------------------------------------------------------

def conflict_pairs(instance: Instance) -> list[tuple[int, int]]:
    """Every pair ``(i, j)``, ``i < j``, of records whose lifetimes intersect.

    A sweep over records sorted by first op; O(n log n + number of pairs).
    """
    order = sorted(range(len(instance)), key=lambda i: (instance.records[i].first_op, i))
    active: list[int] = []
    pairs = []
    for index in order:
        record = instance.records[index]
        active = [j for j in active if instance.records[j].last_op >= record.first_op]
        pairs.extend((min(j, index), max(j, index)) for j in active)
        active.append(index)
    return sorted(pairs)


def explicit_conflicts(instance: Instance,
                       lifetimes: list[tuple[int, int] | None] | None = None
                       ) -> list[tuple[int, int]]:
    """Conflicting pairs whose trimmed lifetimes do not intersect (in-place pairs included).

    Only records of in-place pairs are trimmed, so only pairs involving one are candidates.
    """
    if not instance.inplace_pairs:
        return []
    lifetimes = trimmed_lifetimes(instance) if lifetimes is None else lifetimes
    involved = {i for pair in instance.inplace_pairs for i in pair}
    pairs = set()
    for i in involved:
        ri = instance.records[i]
        for j, rj in enumerate(instance.records):
            if j == i or not ri.conflicts_with(rj):
                continue
            li, lj = lifetimes[i], lifetimes[j]
            if li is None or lj is None or li[1] < lj[0] or lj[1] < li[0]:
                pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def can_share(instance: Instance, i: int, j: int) -> bool:
    """Whether records ``i`` and ``j`` may use the same memory (no conflict, or in-place)."""
    return (not instance.records[i].conflicts_with(instance.records[j])
            or (i, j) in instance.inplace_set)


# --- simple constructive solutions -----------------------------------------------------------

def left_justified_offsets(instance: Instance, order) -> list[int]:
    """Place records in ``order``, each at its lowest aligned offset clear of every
    conflicting record placed before it (in-place pairs are kept apart too). O(n^2)."""
    records = instance.records
    alignment = instance.alignment
    offsets = [0] * len(records)
    placed: list[int] = []
    for index in order:
        record = records[index]
        blockers = [(offsets[j], offsets[j] + records[j].size) for j in placed
                    if record.conflicts_with(records[j])]
        candidates = sorted({0} | {round_up(end, alignment) for _, end in blockers})
        offsets[index] = next(c for c in candidates
                              if all(c + record.size <= start or end <= c
                                     for start, end in blockers))
        placed.append(index)
    return offsets


def greedy_shared_objects(instance: Instance) -> SharedObjectsSolution:
    """Records by decreasing size, each into the first object it may join (else a new one)."""
    order = sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))
    objects: list[list[int]] = []
    object_ids = [0] * len(instance)
    for i in order:
        for number, members in enumerate(objects):
            if all(can_share(instance, i, j) for j in members):
                members.append(i)
                object_ids[i] = number
                break
        else:
            object_ids[i] = len(objects)
            objects.append([i])
    return SharedObjectsSolution.from_object_ids(instance, object_ids)


# --- warm start ------------------------------------------------------------------------------

@dataclass(frozen=True)
class WarmStart:
    solution: Solution
    objective: int
    method: str


def objective_of(instance: Instance, problem: Problem, solution: Solution) -> int:
    from optplan.solve import objective_value
    return objective_value(instance, problem, solution)


def warm_start(instance: Instance, problem: Problem, *, use_heuristics: bool = True,
               time_budget: float | None = None) -> WarmStart:
    """The best valid solution among the registered record heuristics for ``problem``.

    Every heuristic of kind ``heuristic`` and input ``records`` is run through
    :func:`optplan.solve.solve` (which validates); those that raise are skipped. A simple
    built-in construction (greedy by size) is always a candidate, so there is always a start.
    Randomised heuristics (those taking a ``seed``, typically iterative) and the
    :data:`QUADRATIC_HEURISTICS` run last. With a
    ``time_budget`` (seconds) on an instance of more than :data:`IN_PROCESS_RECORDS` records,
    the heuristics run one after another in a forked child that is killed when the budget
    is spent, so that one slow heuristic cannot eat the solver's time.
    """
    from optplan.registry import methods
    from optplan.validate import validate

    if problem is Problem.SHARED_OBJECTS:
        fallback = greedy_shared_objects(instance)
    else:
        order = sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))
        fallback = OffsetsSolution.from_offsets(instance, left_justified_offsets(instance, order))
    assert not validate(instance, problem, fallback)
    best = WarmStart(fallback, objective_of(instance, problem, fallback), "builtin_greedy")
    if not use_heuristics:
        return best
    candidates = [(name, info) for name, info in methods(builtin_only=True).items()
                  if info.kind == "heuristic" and info.input == "records"
                  and problem in info.implementations]
    candidates.sort(key=lambda item: ("seed" in (item[1].accepts(problem) or {"seed"}),
                                      item[0] in QUADRATIC_HEURISTICS))
    names = [name for name, _ in candidates]
    if time_budget is not None and len(instance) > IN_PROCESS_RECORDS:
        found = _heuristics_in_child(instance, problem, names, time_budget)
    else:
        found = _heuristics_in_process(instance, problem, names, time_budget)
    for name, objective, solution in found:
        if objective < best.objective:
            best = WarmStart(solution, objective, name)
    return best


QUADRATIC_HEURISTICS = frozenset({"min_cost_flow", "coloring_independent_set"})
"""Heuristics that take seconds to minutes on a thousand records (min_cost_flow: 3 min on
the GPT-2 training graph): the warm start tries them last, so that a budget spent on them
does not cost the fast ones' answers."""

IN_PROCESS_RECORDS = 64
"""Up to this many records, heuristics run in-process (they are fast, a fork is not)."""


def _heuristic_answers(instance: Instance, problem: Problem, names, clock: Budget):
    """Yield ``(name, objective, solution)`` for every valid heuristic answer."""
    from optplan.solve import solve

    for name in names:
        if clock.exhausted():
            return
        try:
            result = solve(instance, name, problem, inplace=bool(instance.inplace_pairs))
        except Exception:  # noqa: BLE001 -- a broken heuristic must not break the exact solver
            continue
        if result.valid and result.objective is not None:
            yield name, result.objective, result.solution


def _heuristics_in_process(instance, problem, names, time_budget) -> list:
    return list(_heuristic_answers(instance, problem, names, Budget(time_budget)))


def _send_heuristic_answers(instance, problem, names, connection) -> None:
    for answer in _heuristic_answers(instance, problem, names, Budget(None)):
        connection.send(answer)
    connection.send(None)
    connection.close()


def _heuristics_in_child(instance, problem, names, time_budget: float) -> list:
    """Run the heuristics in a forked child; keep what it reported within the budget."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send_heuristic_answers,
                            args=(instance, problem, names, sender), daemon=True)
    try:
        child.start()
    except (AssertionError, OSError):  # e.g. inside a daemonic pool worker: no children
        receiver.close()
        sender.close()
        return _heuristics_in_process(instance, problem, names, time_budget)
    sender.close()
    deadline = time.perf_counter() + time_budget
    answers = []
    try:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or not receiver.poll(remaining):
                break
            answer = receiver.recv()
            if answer is None:
                break
            answers.append(answer)
    except EOFError:
        pass
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
    return answers


def warm_start_budget(time_limit: float | None) -> float | None:
    """The share of a solver's time limit that heuristics may use for the warm start."""
    return None if time_limit is None else WARM_START_SHARE * time_limit


# --- decomposition ---------------------------------------------------------------------------

def time_components(instance: Instance) -> list[list[int]]:
    """Record indices of the parts between time cuts that no lifetime crosses, in time order."""
    order = sorted(range(len(instance)), key=lambda i: (instance.records[i].first_op, i))
    components: list[list[int]] = []
    reach = -1
    for index in order:
        record = instance.records[index]
        if record.first_op > reach:
            components.append([])
        components[-1].append(index)
        reach = max(reach, record.last_op)
    return [sorted(component) for component in components]


def sub_instance(instance: Instance, indices: list[int], suffix: str) -> Instance:
    """The records ``indices`` (in that order) as an instance, in-place pairs kept."""
    position = {index: k for k, index in enumerate(indices)}
    pairs = tuple((position[a], position[b]) for a, b in instance.inplace_pairs
                  if a in position and b in position)
    return Instance(tuple(instance.records[i] for i in indices), f"{instance.name}{suffix}",
                    instance.alignment, pairs, instance.provenance)


# --- outcomes --------------------------------------------------------------------------------

def solver_options(time_limit, workers, seed, default_workers: int) -> dict:
    """The effective solver flags (what ``info`` records)."""
    return {"time_limit": time_limit, "workers": default_workers if workers is None else workers,
            "seed": 0 if seed is None else seed}


def status_for(objective: int | None, bound: int | None, proven: bool) -> Status:
    """OPTIMAL when the solver proved it or the objective meets a proven bound."""
    if objective is None:
        return Status.UNKNOWN
    if proven or (bound is not None and objective <= bound):
        return Status.OPTIMAL
    return Status.FEASIBLE


def empty_outcome(problem: Problem, solver: str, version: str, info: dict) -> SolverOutcome:
    """The trivially optimal outcome of an instance without records."""
    solution = (SharedObjectsSolution((), ()) if problem is Problem.SHARED_OBJECTS
                else OffsetsSolution((), 0))
    return SolverOutcome(Status.OPTIMAL, solution, 0, solver, version, ((0.0, 0, 0),), info)


# --- the offsets driver: warm start, bound, decomposition ------------------------------------

@dataclass
class PartOutcome:
    """A part's packing in bytes: ``objective`` is its aligned arena, ``bound`` a proven lower
    bound on the whole instance's objective learnt on this part, ``proven`` whether the part
    solver closed its own search."""

    offsets: list[int]
    objective: int
    bound: int
    proven: bool
    info: dict = field(default_factory=dict)


def solve_offsets_by_parts(instance: Instance, solve_part, *, budget: Budget,
                           trajectory: Trajectory, use_heuristics: bool, decompose: bool,
                           stop_at_bound: bool) -> tuple[OffsetsSolution, int, Status, dict]:
    """Warm start, then solve each time part with ``solve_part`` and stitch the packings.

    ``solve_part(part, start_offsets, target, time_limit, on_progress)`` returns a
    :class:`PartOutcome`; ``target`` is a proven lower bound on the whole objective (the
    part need not go below it, since the arena is the maximum over parts), and
    ``on_progress(incumbent, bound)`` reports the part's anytime curve in bytes.
    Returns the solution, the proven bound, the status and an ``info`` dict.
    """
    start = warm_start(instance, Problem.OFFSETS, use_heuristics=use_heuristics,
                       time_budget=warm_start_budget(budget.time_limit))
    global_bound = offsets_bound(instance)
    trajectory.record(start.objective, global_bound)
    info = {"warm_start": start.method, "warm_start_objective": start.objective,
            "warm_start_time": round(budget.elapsed(), 6), "combinatorial_bound": global_bound}
    offsets = list(start.solution.offsets)
    if stop_at_bound and start.objective <= global_bound:
        info["proof"] = "warm start meets the combinatorial bound"
        return start.solution, global_bound, Status.OPTIMAL, info

    parts = time_components(instance) if decompose else [list(range(len(instance)))]
    info["parts"] = len(parts)
    part_instances = [sub_instance(instance, part, f"#{k}") for k, part in enumerate(parts)]
    part_bounds = [offsets_bound(p) for p in part_instances]
    part_objectives = [round_up(max(offsets[i] + instance.records[i].size for i in part),
                                instance.alignment) for part in parts]
    proven: dict[int, bool] = {}
    # Hardest parts first: their bounds raise the target the easier parts must reach. A
    # second pass gives the time that quick parts left to the parts still open.
    order = sorted(range(len(parts)), key=lambda k: -part_bounds[k])
    for attempt in range(2):
        queue = [k for k in order if attempt == 0 or not proven.get(k, True)]
        for position, k in enumerate(queue):
            if stop_at_bound and part_objectives[k] <= global_bound:
                proven[k] = True
                continue
            if budget.exhausted():
                proven.setdefault(k, False)
                continue
            # the time left is shared by this part and the later ones that still need work
            remaining_parts = sum(1 for m in queue[position:]
                                  if part_objectives[m] > global_bound or not stop_at_bound)
            limit = budget.remaining()
            if limit is not None:
                limit = max(0.05, limit / max(1, remaining_parts))

            def on_progress(incumbent, bound, k=k):
                others = max((part_objectives[m] for m in range(len(parts)) if m != k),
                             default=0)
                trajectory.record(None if incumbent is None else max(incumbent, others),
                                  None if bound is None else max(bound, global_bound))

            part_start = [offsets[i] for i in parts[k]]
            outcome = solve_part(part_instances[k], part_start, global_bound, limit,
                                 on_progress)
            if outcome.objective <= part_objectives[k]:
                for i, offset in zip(parts[k], outcome.offsets):
                    offsets[i] = offset
                part_objectives[k] = outcome.objective
            global_bound = max(global_bound, outcome.bound)
            proven[k] = outcome.proven
            info.setdefault("part_info", []).append({"part": k, "records": len(parts[k]),
                                                     "pass": attempt + 1} | outcome.info)
        if budget.exhausted() or all(proven.values()):
            break
    all_proven = all(proven.values())
    solution = OffsetsSolution.from_offsets(instance, offsets)
    objective = objective_of(instance, Problem.OFFSETS, solution)
    status = status_for(objective, global_bound, proven=all_proven)
    bound = objective if status is Status.OPTIMAL else global_bound
    trajectory.record(objective, bound)
    return solution, bound, status, info


# --- the representative formulation of shared objects (shared by CP-SAT and MILP) -------------

@dataclass(frozen=True)
class RepresentativeStructure:
    """Index sets of the representative formulation (see ``build_shared_objects_model``).

    ``candidates[i]``: the representatives record ``i`` may join (higher-ranked records it
    may share with, then itself). ``groups``: ``(j, members)`` rows
    :math:`\\sum_{i \\in members} x_{ij} \\le y_j`. ``positional``: per position k (1-based),
    the representatives at least as large as the k-th positional maximum.
    """

    ranked: list[int]
    candidates: dict[int, list[int]]
    groups: list[tuple[int, list[int]]]
    positional: list[list[int]]

    def representatives_of(self, object_ids) -> dict[int, int]:
        """Per record, the top-ranked member of its object under ``object_ids``."""
        top: dict[int, int] = {}
        for i in self.ranked:
            top.setdefault(object_ids[i], i)
        return {i: top[object_ids[i]] for i in self.ranked}


CONFLICT_ENCODINGS = ("auto", "cliques", "pairs", "no_overlap")
CLIQUE_TERMS_LIMIT = 2_000_000
"""``auto`` switches from clique rows to per-representative NoOverlap above this estimate of
the number of clique-row terms (training graphs: millions of terms, minutes to build)."""


def representative_structure(instance: Instance, *, conflicts: str = "cliques",
                             positional_cuts: bool = True) -> RepresentativeStructure:
    """Build the index sets of the representative formulation.

    ``conflicts`` says how "members of one object do not conflict" is written:
    ``cliques``: one row per maximal trimmed profile and representative, plus rows for the
    explicit conflicts; ``pairs``: the textbook model, one row per conflicting pair and
    representative; ``no_overlap``: only the explicit-conflict rows (the caller posts a
    NoOverlap of each representative's candidates' trimmed lifetimes).
    """
    if conflicts not in CONFLICT_ENCODINGS[1:]:
        raise InputError(f"unknown encoding {conflicts!r}; valid: "
                         f"{', '.join(CONFLICT_ENCODINGS)}", field="conflicts")
    ranked = sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))
    conflicting = set(conflict_pairs(instance))
    candidates: dict[int, list[int]] = {}
    for position, i in enumerate(ranked):
        candidates[i] = [j for j in ranked[:position]
                         if (min(i, j), max(i, j)) not in conflicting
                         or (i, j) in instance.inplace_set] + [i]
    groups: list[tuple[int, list[int]]] = []
    if conflicts == "cliques":
        for profile in maximal_profiles(trimmed_lifetimes(instance)):
            by_representative: dict[int, list[int]] = {}
            for i in profile:
                for j in candidates[i][:-1]:
                    by_representative.setdefault(j, []).append(i)
            groups.extend((j, members) for j, members in by_representative.items()
                          if len(members) > 1)
    if conflicts == "pairs":
        apart = [pair for pair in conflicting if pair not in instance.inplace_set]
    else:
        apart = [pair for pair in explicit_conflicts(instance)
                 if pair not in instance.inplace_set]
    for u, v in sorted(apart):
        common = set(candidates[u][:-1]) & set(candidates[v][:-1])
        groups.extend((j, [u, v]) for j in sorted(common))
    positional = []
    if positional_cuts:
        for value in inplace_positional_maximums(instance):
            positional.append([j for j in ranked if instance.records[j].size >= value])
    return RepresentativeStructure(ranked, candidates, groups, positional)


def check_conflict_encoding(conflicts: str) -> None:
    """An InputError naming the valid encodings unless ``conflicts`` is one."""
    if conflicts not in CONFLICT_ENCODINGS:
        raise InputError(f"unknown encoding {conflicts!r}; valid: "
                         f"{', '.join(CONFLICT_ENCODINGS)}", field="conflicts")


def choose_conflict_encoding(instance: Instance, conflicts: str, *, no_overlap: bool) -> str:
    """Resolve ``auto``: clique rows unless their estimated size exceeds
    :data:`CLIQUE_TERMS_LIMIT` and the solver has a NoOverlap constraint."""
    check_conflict_encoding(conflicts)
    if conflicts == "no_overlap" and not no_overlap:
        raise InputError("no_overlap needs CP-SAT; use cliques or pairs", field="conflicts")
    if conflicts != "auto":
        return conflicts
    profiles = maximal_profiles(trimmed_lifetimes(instance))
    estimate = sum(len(profile) for profile in profiles) * len(instance) // 2
    return "no_overlap" if no_overlap and estimate > CLIQUE_TERMS_LIMIT else "cliques"


@dataclass
class SharedObjectsStart:
    """Everything a shared-objects exact method has before it builds its model; ``done`` is
    its answer when no model is needed (an empty instance, or a warm start at the bound)."""

    done: SolverOutcome | None
    budget: Budget
    flags: dict
    scale: Scaling | None = None
    trajectory: Trajectory | None = None
    start: "WarmStart | None" = None
    bound: int = 0
    info: dict = field(default_factory=dict)


def begin_shared_objects(instance: Instance, *, solver: str, version: str, value_limit: int,
                         solver_label: str, time_limit, workers, seed, default_workers: int,
                         use_heuristics: bool, stop_at_bound: bool) -> SharedObjectsStart:
    """The steps every shared-objects formulation takes first: flags, scaling and its range
    check, the warm start, the combinatorial bound, and the early stop when they meet."""
    budget = Budget(time_limit)
    flags = solver_options(time_limit, workers, seed, default_workers)
    if len(instance) == 0:
        return SharedObjectsStart(empty_outcome(Problem.SHARED_OBJECTS, solver, version, flags),
                                  budget, flags)
    scale = scaling(instance, Problem.SHARED_OBJECTS)
    check_range(instance, scale, value_limit, solver_label)
    trajectory = Trajectory(budget)
    start = warm_start(instance, Problem.SHARED_OBJECTS, use_heuristics=use_heuristics,
                       time_budget=warm_start_budget(time_limit))
    bound = shared_objects_bound(instance)
    trajectory.record(start.objective, bound)
    info = flags | {"warm_start": start.method, "warm_start_objective": start.objective,
                    "warm_start_time": round(budget.elapsed(), 6), "combinatorial_bound": bound}
    done = None
    if stop_at_bound and start.objective <= bound:
        info["proof"] = "warm start meets the combinatorial bound"
        done = SolverOutcome(Status.OPTIMAL, start.solution, bound, solver, version,
                             trajectory.as_tuple(), info)
    return SharedObjectsStart(done, budget, flags, scale, trajectory, start, bound, info)
