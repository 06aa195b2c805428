"""OmniMalloc's allocators as offsets methods ``omnimalloc_<name>``.

OmniMalloc (PyPI ``omnimalloc`` 1.0.0, Apache-2.0, fpedd/omnimalloc; the ``peers`` extra) ships
19 allocators behind one API; the 18 that install from PyPI are here (its ``minimalloc``
wrapper needs MiniMalloc's own module: see :mod:`optplan.peers.minimalloc`). Each method is
named after the allocator's registry name, the snake-case class name without ``Allocator``
(``GreedyBySizeAllocator`` → ``omnimalloc_greedy_by_size``).

Semantics of the conversion (tested in ``tests/test_peers.py``):

* OmniMalloc's ``Allocation(id, size, start, end)`` is live on the half-open ``[start, end)``;
  optplan's record on the closed ``[first_op, last_op]``: ``start = first_op``,
  ``end = last_op + 1``. Allocations touching at one op (``a.last_op == b.first_op``) conflict.
* OmniMalloc has no alignment: it sees :func:`~optplan.peers.unit_instance` (sizes in units of
  the alignment, rounded up) and its offsets are multiplied back.
* It rejects zero sizes and empty lifetimes, which optplan's records cannot have either.
* Some allocators return the allocations in their own order (the greedy ones sorted by
  their key): offsets are read back by id, never by position.

Flags: ``workers`` is the thread count (OmniMalloc's process-wide cap ``set_max_threads``,
which its native kernels obey, and ``num_threads`` where the constructor takes one; default
1); ``time_limit`` is ``timeout`` where the allocator has one (``None``: no time limit, the
allocator's iteration limit still ends it — OmniMalloc's own 3 s default is not used);
``seed`` is ``seed`` where it has one (default 0).
"""

from __future__ import annotations

import importlib.util
import inspect
import threading

from optplan.errors import InputError
from optplan.exact.budget import Budget
from optplan.exact.run import ExactRun
from optplan.model import Instance, require_int, round_up
from optplan.problems import Problem
from optplan.peers import PeerUnavailableError, offsets_in_bytes, rejected, unit_instance
from optplan.registry import register
from optplan.result import SolverOutcome, Status
from optplan.validate import validate

__all__ = ["allocations", "unit_offsets", "run_allocator", "check_range", "TOTAL_LIMITS",
           "omnimalloc_supermalloc", "omnimalloc_telamalloc",
           "omnimalloc_simulated_annealing", "omnimalloc_tabu_search",
           "omnimalloc_hill_climb", "omnimalloc_genetic", "omnimalloc_random",
           "omnimalloc_naive", "omnimalloc_best_fit", "omnimalloc_greedy",
           "omnimalloc_greedy_by_size", "omnimalloc_greedy_by_duration",
           "omnimalloc_greedy_by_area", "omnimalloc_greedy_by_conflict",
           "omnimalloc_greedy_by_conflict_size", "omnimalloc_greedy_by_start",
           "omnimalloc_greedy_by_all", "omnimalloc_omni"]

SOLVER = "omnimalloc"
DEFAULT_WORKERS = 1
DEFAULT_SEED = 0
INSTALL_HINT = "pip install 'optplan[peers]'"
_REFERENCE = "OmniMalloc 1.0.0 (fpedd/omnimalloc) "
if importlib.util.find_spec("omnimalloc") is None:  # listed, but not offered as working
    _REFERENCE = f"[not installed: {INSTALL_HINT}] " + _REFERENCE

_THREAD_CAP = threading.Lock()  # OmniMalloc's thread cap is process-wide

_INT64_MAX = 2**63 - 1
TOTAL_LIMITS = {"naive": None, "telamalloc": _INT64_MAX // 4}
"""The largest total size, in units of the alignment, that each allocator takes: OmniMalloc's
native kernels refuse more (``check_total_size``, which keeps their sums inside int64):
``INT64_MAX // 2`` unless listed here, ``INT64_MAX // 4`` for TelaMalloc; the naive allocator
has no such limit. optplan admits totals up to 2^62, so the peers check first."""


def _omnimalloc():
    try:
        import omnimalloc
    except ImportError:
        raise PeerUnavailableError(f"the OmniMalloc methods need the 'omnimalloc' package: "
                                   f"{INSTALL_HINT}") from None
    return omnimalloc


def allocations(units: Instance) -> tuple:
    """OmniMalloc allocations of a :func:`~optplan.peers.unit_instance`: id = record index,
    ``[start, end) = [first_op, last_op + 1)``."""
    Allocation = _omnimalloc().Allocation
    return tuple(Allocation(index, record.size, record.first_op, record.last_op + 1)
                 for index, record in enumerate(units.records))


def unit_offsets(units: Instance, placed) -> list[int]:
    """The offsets of placed allocations, by id (in whatever order they come back)."""
    offsets: list[int | None] = [None] * len(units)
    for allocation in placed:
        offsets[allocation.id] = allocation.offset
    missing = [units.records[i].id for i, offset in enumerate(offsets) if offset is None]
    if missing:
        raise RuntimeError(f"OmniMalloc returned no offset for tensor {missing[0]}")
    return offsets


def run_allocator(instance: Instance, name: str, *, workers: int | None, **options):
    """Run OmniMalloc's allocator ``name`` (constructor ``options``) on ``instance``.

    Returns ``(solution, result, info)``: the solution in bytes, what the allocator returned
    (``solve()``'s result for SuperMalloc, else the placed allocations) and the effective
    settings for ``SolverOutcome.info``.
    """
    omnimalloc = _omnimalloc()
    from omnimalloc.allocators import BaseAllocator

    threads = _threads(workers)
    try:
        allocator = BaseAllocator.get(name)(**options)
    except ImportError as error:  # GeneticAllocator needs deap
        raise PeerUnavailableError(f"OmniMalloc's {name} allocator: {error}; "
                                   f"{INSTALL_HINT}") from None
    units = unit_instance(instance)
    with _THREAD_CAP:
        omnimalloc.set_max_threads(threads)
        if name == "supermalloc":
            result = allocator.solve(allocations(units))
            placed = result.allocations
        else:
            result = placed = allocator.allocate(allocations(units))
    solution = offsets_in_bytes(instance, unit_offsets(units, placed))
    info = {"allocator": repr(allocator), "threads": threads}
    return solution, result, info


def check_range(instance: Instance, name: str) -> None:
    """An :class:`~optplan.errors.InputError` naming ``size`` when OmniMalloc's allocator
    ``name`` cannot take ``instance`` (:data:`TOTAL_LIMITS`): its own range, refused up front
    instead of failing inside it."""
    limit = TOTAL_LIMITS.get(name, _INT64_MAX // 2)
    total = sum(record.size for record in unit_instance(instance).records)
    if limit is not None and total > limit:
        raise InputError(f"OmniMalloc's {name} allocator takes sizes totalling at most {limit} "
                         f"units of the alignment; this instance's total {total}", field="size")


def _heuristic(instance: Instance, name: str, workers, **options) -> SolverOutcome:
    check_range(instance, name)
    solution, _, info = run_allocator(instance, name, workers=workers, **options)
    return SolverOutcome(Status.FEASIBLE, solution, solver=f"{SOLVER}:{name}",
                         solver_version=_omnimalloc().__version__, info=info)


def _seed(seed: int | None) -> int:
    return DEFAULT_SEED if seed is None else require_int(seed, "seed", minimum=0)


def _threads(workers: int | None) -> int:
    return DEFAULT_WORKERS if workers is None else require_int(workers, "workers", minimum=1)


def _timeout(time_limit: float | None) -> float | None:
    return Budget(time_limit).time_limit  # checked: positive or None


# --- the exact one ---------------------------------------------------------------------------

SUPERMALLOC_SET_BY_THE_METHOD = {"timeout": "give the method's time_limit",
                                 "num_threads": "give the method's workers"}


def _supermalloc_params(solver_params: dict) -> dict:
    """``solver_params`` as keyword arguments of ``SupermallocAllocator`` (JSON lists as the
    tuples it takes), checked by building one and by its sort keys: an
    :class:`~optplan.errors.InputError` names the first it does not take."""
    from omnimalloc.allocators.supermalloc import SortKey, SupermallocAllocator

    def tuples(value):
        return tuple(map(tuples, value)) if isinstance(value, list) else value

    taken = set(inspect.signature(SupermallocAllocator).parameters)
    offered = ", ".join(sorted(taken - set(SUPERMALLOC_SET_BY_THE_METHOD)))
    for name in solver_params:
        if name in SUPERMALLOC_SET_BY_THE_METHOD:
            raise InputError(f"not a solver parameter of method 'omnimalloc_supermalloc': "
                             f"{SUPERMALLOC_SET_BY_THE_METHOD[name]}", field=name)
        if name not in taken:
            raise InputError(f"OmniMalloc's SupermallocAllocator takes no such parameter "
                             f"(it takes: {offered})", field=name)
    params = {name: tuples(value) for name, value in solver_params.items()}
    try:
        SupermallocAllocator(**params)
        letters = {key.value for key in SortKey}
        for order in params.get("heuristics", ()):
            unknown = sorted(set("".join(order)) - letters)
            if unknown:
                raise ValueError(f"unknown sort key {unknown[0]!r} (keys: "
                                 f"{''.join(sorted(letters))})")
    except (TypeError, ValueError) as error:
        raise InputError(f"OmniMalloc's SupermallocAllocator refuses it: {error}",
                         field=next(iter(params))) from None
    return params


@register("omnimalloc_supermalloc", Problem.OFFSETS, kind="exact",
          reference=_REFERENCE + "SupermallocAllocator")
def omnimalloc_supermalloc(instance: Instance, *, time_limit: float | None = None,
                           workers: int | None = None, seed: int | None = None,
                           warm_start=False, initial_solution=None,
                           **solver_params) -> SolverOutcome:
    """OmniMalloc's SuperMalloc: a MiniMalloc-style branch and bound over canonical packings,
    a portfolio of three static orders searched in parallel below the greedy incumbent.

    ``OPTIMAL`` only when SuperMalloc's own proof flag says so, optplan's validator accepts the
    packing and its arena is the peak SuperMalloc claims (and no warm start beat it);
    otherwise ``FEASIBLE`` with SuperMalloc's lower bound where that is below the incumbent
    (a warm start that meets it without the flag stays ``FEASIBLE``). (SuperMalloc infers its
    proof from time: its search reports "nothing below" and "out of time" alike, and it counts
    a search that ended before the deadline as exhausted.) In-place pairs are ignored, so the
    proof and the bound do not hold for the in-place problem: there ``FEASIBLE`` without a
    bound of its own. A packing the validator rejects is returned as it is
    (:func:`~optplan.peers.rejected`).

    Parameters
    ----------
    time_limit : float, optional
        Seconds for the whole run: SuperMalloc's ``timeout`` is what the warm start left.
    workers : int, optional
        SuperMalloc's ``num_threads`` and OmniMalloc's thread cap (default 1).
    seed : int, optional
        Recorded, not used: SuperMalloc takes no seed. It is deterministic on one thread
        without a time limit; otherwise its answer depends on timing, not on a seed.
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`). SuperMalloc takes no starting packing, so
        the better of its answer and the warm start's best is returned. ``False`` by default:
        SuperMalloc is measured as shipped, its figures its own and not optplan's heuristics'.
    **solver_params
        Keyword arguments of ``SupermallocAllocator`` (``heuristics``: its static orders, as
        lists of sort-key letters, e.g. ``[["W", "A", "T"]]``), checked before any work.
    """
    omnimalloc = _omnimalloc()
    params = _supermalloc_params(solver_params)
    check_range(instance, "supermalloc")
    run = ExactRun(instance, Problem.OFFSETS, solver=f"{SOLVER}:supermalloc",
                   version=omnimalloc.__version__, time_limit=time_limit,
                   workers=_threads(workers), seed=_seed(seed), default_workers=DEFAULT_WORKERS)
    run.start(warm_start, initial_solution)
    seconds = run.budget.solver_seconds()
    if seconds is not None and seconds <= 0:
        run.out_of_time()
        return run.outcome()
    solution, result, info = run_allocator(instance, "supermalloc", workers=run.workers,
                                           timeout=seconds, num_threads=run.workers,
                                           **params)
    unit = instance.alignment
    peak, bound = result.peak * unit, result.lower_bound * unit
    run.info |= info | {"timeout": seconds, "proved_optimal": result.proved_optimal,
                        "peak": peak, "lower_bound": bound}
    violations = validate(instance, Problem.OFFSETS, solution)
    if violations:
        if not instance.inplace_pairs:
            run.raise_bound(bound)
        return rejected(run, solution, violations[0])
    run.offer(solution)
    arena = round_up(solution.arena_size, unit)
    if (result.proved_optimal and not instance.inplace_pairs and arena == peak
            and run.objective == peak):  # a better warm start would refute the proof
        run.raise_bound(peak)
    elif not instance.inplace_pairs and bound < run.objective:
        run.raise_bound(bound)  # below the incumbent: never OPTIMAL without the proof flag
    return run.outcome()


# --- searches with a time limit and a seed ---------------------------------------------------

@register("omnimalloc_telamalloc", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "TelamallocAllocator (after Maas et al., ASPLOS'23)")
def omnimalloc_telamalloc(instance: Instance, *, time_limit: float | None = None,
                          workers: int | None = None, seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's TelaMalloc adaptation: per conflict-graph component, tiered placement with
    bounded backtracking (at most 10000 backtracks), minimising the peak."""
    return _heuristic(instance, "telamalloc", workers, timeout=_timeout(time_limit),
                      seed=_seed(seed))


@register("omnimalloc_simulated_annealing", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "SimulatedAnnealingAllocator")
def omnimalloc_simulated_annealing(instance: Instance, *, time_limit: float | None = None,
                                   workers: int | None = None,
                                   seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's simulated annealing over first-fit orders: swaps a peak allocation with an
    earlier temporal neighbour (3000 iterations, temperature 3.0 cooled by 0.998)."""
    return _heuristic(instance, "simulated_annealing", workers, timeout=_timeout(time_limit),
                      seed=_seed(seed))


@register("omnimalloc_tabu_search", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "TabuSearchAllocator")
def omnimalloc_tabu_search(instance: Instance, *, time_limit: float | None = None,
                           workers: int | None = None, seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's tabu search over first-fit orders: the best non-tabu swap of 20 candidates
    per iteration, its reversal tabu for 15 (500 iterations)."""
    return _heuristic(instance, "tabu_search", workers, timeout=_timeout(time_limit),
                      seed=_seed(seed))


@register("omnimalloc_hill_climb", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "HillClimbAllocator")
def omnimalloc_hill_climb(instance: Instance, *, time_limit: float | None = None,
                          workers: int | None = None, seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's hill climbing: its simulated annealing at temperature zero (only
    non-worsening swaps, 3000 iterations)."""
    return _heuristic(instance, "hill_climb", workers, timeout=_timeout(time_limit),
                      seed=_seed(seed))


@register("omnimalloc_genetic", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GeneticAllocator (DEAP)")
def omnimalloc_genetic(instance: Instance, *, time_limit: float | None = None,
                       workers: int | None = None, seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's genetic algorithm over first-fit orders (DEAP; population 100 seeded with
    the greedy orders, 50 generations, ordered crossover, shuffle mutation)."""
    return _heuristic(instance, "genetic", workers, timeout=_timeout(time_limit),
                      seed=_seed(seed))


@register("omnimalloc_random", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "RandomAllocator")
def omnimalloc_random(instance: Instance, *, workers: int | None = None,
                      seed: int | None = None) -> SolverOutcome:
    """OmniMalloc's random search: first fit in 100 random orders, the best kept."""
    return _heuristic(instance, "random", workers, seed=_seed(seed))


# --- one-pass placements ---------------------------------------------------------------------

@register("omnimalloc_naive", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "NaiveAllocator")
def omnimalloc_naive(instance: Instance, *, workers: int | None = None) -> SolverOutcome:
    """OmniMalloc's naive allocator: every allocation stacked on the previous one."""
    return _heuristic(instance, "naive", workers)


@register("omnimalloc_best_fit", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "BestFitAllocator")
def omnimalloc_best_fit(instance: Instance, *, workers: int | None = None) -> SolverOutcome:
    """OmniMalloc's best fit: each allocation, in input order, in the tightest gap."""
    return _heuristic(instance, "best_fit", workers)


@register("omnimalloc_greedy", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyAllocator")
def omnimalloc_greedy(instance: Instance, *, workers: int | None = None) -> SolverOutcome:
    """OmniMalloc's greedy base: first fit in input order."""
    return _heuristic(instance, "greedy", workers)


@register("omnimalloc_greedy_by_size", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyBySizeAllocator")
def omnimalloc_greedy_by_size(instance: Instance, *, workers: int | None = None
                              ) -> SolverOutcome:
    """OmniMalloc's first fit, largest size first."""
    return _heuristic(instance, "greedy_by_size", workers)


@register("omnimalloc_greedy_by_duration", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByDurationAllocator")
def omnimalloc_greedy_by_duration(instance: Instance, *, workers: int | None = None
                                  ) -> SolverOutcome:
    """OmniMalloc's first fit, longest lifetime first."""
    return _heuristic(instance, "greedy_by_duration", workers)


@register("omnimalloc_greedy_by_area", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByAreaAllocator")
def omnimalloc_greedy_by_area(instance: Instance, *, workers: int | None = None
                              ) -> SolverOutcome:
    """OmniMalloc's first fit, largest size × lifetime first."""
    return _heuristic(instance, "greedy_by_area", workers)


@register("omnimalloc_greedy_by_conflict", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByConflictAllocator")
def omnimalloc_greedy_by_conflict(instance: Instance, *, workers: int | None = None
                                  ) -> SolverOutcome:
    """OmniMalloc's first fit, most conflicting allocations first (ties: larger first)."""
    return _heuristic(instance, "greedy_by_conflict", workers)


@register("omnimalloc_greedy_by_conflict_size", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByConflictSizeAllocator")
def omnimalloc_greedy_by_conflict_size(instance: Instance, *, workers: int | None = None
                                       ) -> SolverOutcome:
    """OmniMalloc's first fit, largest conflict degree × size first."""
    return _heuristic(instance, "greedy_by_conflict_size", workers)


@register("omnimalloc_greedy_by_start", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByStartAllocator")
def omnimalloc_greedy_by_start(instance: Instance, *, workers: int | None = None
                               ) -> SolverOutcome:
    """OmniMalloc's first fit, earliest start first (ties: larger first)."""
    return _heuristic(instance, "greedy_by_start", workers)


@register("omnimalloc_greedy_by_all", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "GreedyByAllAllocator")
def omnimalloc_greedy_by_all(instance: Instance, *, workers: int | None = None
                             ) -> SolverOutcome:
    """OmniMalloc's seven greedy orders run in parallel (``workers`` threads), the lowest
    placement pressure kept."""
    return _heuristic(instance, "greedy_by_all", workers, num_threads=_threads(workers))


@register("omnimalloc_omni", Problem.OFFSETS, kind="heuristic",
          reference=_REFERENCE + "OmniAllocator")
def omnimalloc_omni(instance: Instance, *, workers: int | None = None) -> SolverOutcome:
    """OmniMalloc's default allocator: its compiled greedy portfolio."""
    return _heuristic(instance, "omni", workers)
