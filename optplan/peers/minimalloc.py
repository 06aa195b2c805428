"""``minimalloc``: MiniMalloc's own solver (google/minimalloc) under a capacity bisection.

MiniMalloc (Moffitt, ASPLOS'23) is not on PyPI, and optplan ships nothing built from it. The
method uses the solver it finds: the binary named by the environment variable
``MINIMALLOC_BIN``, else MiniMalloc's Python module ``minimalloc``; with neither it fails
with a one-line error saying so.

MiniMalloc decides one capacity at a time: is there a packing with every ``offset + size <=
capacity``? The binary's contract (``src/main.cc``)::

    minimalloc --capacity=C --input=IN.csv --output=OUT.csv --timeout=Ss

reads ``id,lower,upper,size`` (half-open ``[lower, upper)``: ``upper = last_op + 1``) and
exits 0 having written ``id,lower,upper,size,offset``; otherwise it exits 1 with the status on
stderr after its ``Elapsed time`` line: ``NOT_FOUND`` (no packing: proven) or
``DEADLINE_EXCEEDED`` (out of time: nothing proven). The Python module's ``Solver.solve``
returns ``None`` for both; a ``None`` that comes back before the probe's timeout is a
``NOT_FOUND`` (the deadline is only reported once it has passed).

MiniMalloc's own ``--minimize_capacity`` bisection counts a timed-out probe as infeasible and
then returns its last packing as if it had converged, so the method bisects itself, with
optplan's rules: probe the lower bound (max breadth), then one granule below the incumbent
(at first the stacked packing, so MiniMalloc finds its own start), then the middle of what is
open. Capacities are multiples of the granule, the gcd of the sizes (pushed down, a packing's
offsets are sums of sizes). A packing lowers the incumbent to its arena, ``NOT_FOUND`` at C
proves the bound C + one granule, a timeout proves nothing. The first probe gets half the
time, every later one half of what remains (the last possible one all of it). Sizes are in
units of the alignment (:func:`~optplan.peers.unit_instance`).
"""

from __future__ import annotations

import hashlib
import importlib
import math
import os
import subprocess
import tempfile
from pathlib import Path

from optplan.bounds import lower_bound
from optplan.exact.budget import Budget, Trajectory
from optplan.formats.minimalloc_csv import read_minimalloc_csv, write_minimalloc_csv
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.peers import PeerUnavailableError, offsets_in_bytes, unit_instance
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome, Status
from optplan.validate import validate

__all__ = ["minimalloc", "find_solver", "BinarySolver", "ModuleSolver", "TIMEOUT",
           "ENVIRONMENT_VARIABLE"]

ENVIRONMENT_VARIABLE = "MINIMALLOC_BIN"
SOLVER = "minimalloc"
TIMEOUT = "timeout"
"""What a probe returns when it ran out of time (nothing proven)."""
FIRST_PROBE_SHARE = 0.5
KILL_GRACE_S = 5.0
"""Seconds past a probe's own timeout after which the binary is killed (counted a timeout)."""

_UNAVAILABLE = (f"method 'minimalloc' needs MiniMalloc's solver (google/minimalloc, not on "
                f"PyPI): set {ENVIRONMENT_VARIABLE} to its binary or install its Python module")


class BinarySolver:
    """MiniMalloc's command-line binary at ``path``."""

    def __init__(self, path: str):
        self.path = path
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        self.version = f"binary sha256:{digest[:16]}"  # which build, without its path

    def decide(self, units: Instance, capacity: int, timeout: float | None):
        """Offsets of a packing within ``capacity``, ``None`` (proven: none exists) or
        :data:`TIMEOUT`."""
        with tempfile.TemporaryDirectory(prefix="optplan-minimalloc-") as folder:
            given, answer = Path(folder) / "problem.csv", Path(folder) / "solution.csv"
            write_minimalloc_csv(units, given)
            command = [self.path, f"--capacity={capacity}", f"--input={given}",
                       f"--output={answer}"]
            if timeout is not None:
                command.append(f"--timeout={timeout:.3f}s")
            try:
                run = subprocess.run(command, capture_output=True, text=True,
                                     timeout=None if timeout is None else timeout + KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                return TIMEOUT
            except OSError as error:
                raise PeerUnavailableError(f"{ENVIRONMENT_VARIABLE}={self.path}: cannot run: "
                                           f"{error.strerror}") from None
            if run.returncode == 0:
                return _offsets_from_csv(units, answer)
            searched = "Elapsed time" in run.stderr  # printed once the search has ended
            statuses = [line.split(":", 1)[0].strip() for line in run.stderr.splitlines()]
            if searched and "NOT_FOUND" in statuses:
                return None
            if searched and "DEADLINE_EXCEEDED" in statuses:
                return TIMEOUT
            last = (run.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"MiniMalloc binary failed (exit {run.returncode}): {last}")


class ModuleSolver:
    """MiniMalloc's Python module (its pybind11 bindings)."""

    def __init__(self, module):
        self.module = module
        self.version = f"module {getattr(module, '__version__', '?')}"

    def decide(self, units: Instance, capacity: int, timeout: float | None):
        """As :meth:`BinarySolver.decide`."""
        import time

        with tempfile.TemporaryDirectory(prefix="optplan-minimalloc-") as folder:
            path = Path(folder) / "problem.csv"
            write_minimalloc_csv(units, path)
            problem = self.module.from_csv(path.read_text(encoding="utf-8"))
        problem.capacity = capacity
        params = self.module.SolverParams()
        params.timeout = timeout
        start = time.perf_counter()
        solution = self.module.Solver(params).solve(problem)
        if solution is not None:
            return tuple(int(offset) for offset in solution.offsets)
        if timeout is None or time.perf_counter() - start < timeout:
            return None
        return TIMEOUT


def find_solver():
    """The solver to use: ``MINIMALLOC_BIN``'s binary, else the ``minimalloc`` module;
    :class:`~optplan.peers.PeerUnavailableError` when there is neither."""
    path = os.environ.get(ENVIRONMENT_VARIABLE)
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise PeerUnavailableError(f"{ENVIRONMENT_VARIABLE}={path} is not an executable "
                                       f"file ({_UNAVAILABLE})")
        return BinarySolver(path)
    try:
        module = importlib.import_module("minimalloc")
    except ImportError:
        raise PeerUnavailableError(_UNAVAILABLE) from None
    if not all(hasattr(module, name) for name in ("from_csv", "Solver", "SolverParams")):
        raise PeerUnavailableError(f"the 'minimalloc' module found is not MiniMalloc's "
                                   f"({_UNAVAILABLE})")
    return ModuleSolver(module)


def _offsets_from_csv(units: Instance, path: Path) -> tuple[int, ...]:
    """The offsets of MiniMalloc's answer, by id, after checking it echoes the problem."""
    answered, solution = read_minimalloc_csv(path, with_offsets=True)
    given = {record.id: record for record in units.records}
    if len(answered) != len(units) or any(given.get(record.id) != record
                                          for record in answered.records):
        raise RuntimeError(f"MiniMalloc answered a different problem in {path.name}")
    by_id = dict(zip((record.id for record in answered.records), solution.offsets))
    return tuple(by_id[record.id] for record in units.records)


def _available() -> bool:
    try:
        find_solver()
    except PeerUnavailableError:
        return False
    return True


_REFERENCE = "MiniMalloc (Moffitt, ASPLOS'23), google/minimalloc, under a capacity bisection"
if not _available():  # listed, but not offered as working
    _REFERENCE = f"[not available: set {ENVIRONMENT_VARIABLE}] " + _REFERENCE


@register("minimalloc", Problem.OFFSETS, kind="exact", reference=_REFERENCE)
def minimalloc(instance: Instance, *, time_limit: float | None = None) -> SolverOutcome:
    """Minimise the arena with MiniMalloc's decision procedure under a capacity bisection.

    Parameters
    ----------
    instance : Instance
        An offsets instance; in-place pairs are ignored (see :mod:`optplan.peers`).
    time_limit : float, optional
        Seconds for the whole bisection (``None``: until proven). MiniMalloc is
        single-threaded and deterministic: it takes no ``workers`` and no ``seed``.

    Returns
    -------
    SolverOutcome
        ``OPTIMAL`` when the bisection closes (the incumbent meets the proven bound, and no
        in-place pairs are given), else ``FEASIBLE`` with the proven bound. A packing that
        optplan's validator rejects ends the run and is returned as it is (the result then
        says ``valid`` False). ``info`` holds the solver, its ``probes`` (capacity, result,
        seconds each) and the time limit.
    """
    solver = find_solver()
    budget = Budget(time_limit)
    info = {"solver": solver.version, "time_limit": time_limit, "probes": []}
    if len(instance) == 0:
        return SolverOutcome(Status.OPTIMAL, OffsetsSolution.from_offsets(instance, ()),
                             best_bound=0, solver=SOLVER, solver_version=solver.version,
                             info=info)
    units = unit_instance(instance)
    offsets = _stacked(units)
    incumbent = max(offset + record.size for offset, record in zip(offsets, units.records))
    # Pushed down, every packing has its offsets at sums of sizes: capacities that matter are
    # multiples of the sizes' gcd, and no packing within C proves the bound C + granule.
    granule = math.gcd(*(record.size for record in units.records))
    bound = search_low = round_up(lower_bound(units, Problem.OFFSETS), granule)
    trajectory = Trajectory(budget, f"{SOLVER} offsets", "bytes")
    trajectory.record(incumbent * instance.alignment, bound * instance.alignment)
    rejected = False
    while search_low < incumbent and not budget.exhausted() and not rejected:
        probes = info["probes"]
        high = (incumbent - 1) // granule * granule
        capacity = (search_low if not probes else high if len(probes) == 1
                    else search_low + (high - search_low) // 2 // granule * granule)
        remaining = budget.remaining()
        share = 1.0 if search_low == high else FIRST_PROBE_SHARE if not probes else 0.5
        started = budget.elapsed()
        answer = solver.decide(units, capacity, None if remaining is None else remaining * share)
        if answer is TIMEOUT:
            result, search_low = "timeout", capacity + granule
        elif answer is None:
            result, bound = "infeasible", capacity + granule
            search_low = bound
        else:
            packing = OffsetsSolution.from_offsets(units, answer)
            if validate(units, Problem.OFFSETS, packing):
                result, offsets, rejected = "invalid", answer, True
            else:
                result = "feasible"
                if packing.arena_size < incumbent:
                    offsets, incumbent = answer, packing.arena_size
        probes.append({"capacity": capacity * instance.alignment, "result": result,
                       "seconds": round(budget.elapsed() - started, 6)})
        trajectory.record(incumbent * instance.alignment,
                          min(bound, incumbent) * instance.alignment)
    proven = not rejected and bound >= incumbent and not instance.inplace_pairs
    best_bound = None if instance.inplace_pairs else min(bound, incumbent) * instance.alignment
    return SolverOutcome(Status.OPTIMAL if proven else Status.FEASIBLE,
                         offsets_in_bytes(instance, offsets), best_bound=best_bound,
                         solver=SOLVER, solver_version=solver.version,
                         trajectory=trajectory.as_tuple(), info=info)


def _stacked(units: Instance) -> tuple[int, ...]:
    """Every tensor on top of the previous one: the packing that needs no solver."""
    offsets, top = [], 0
    for record in units.records:
        offsets.append(top)
        top += record.size
    return tuple(offsets)
