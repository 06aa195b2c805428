"""``minimalloc``: MiniMalloc's own solver (google/minimalloc) under a capacity bisection.

MiniMalloc (Moffitt, ASPLOS'23) is not on PyPI, and optplan ships nothing built from it. The
method uses the solver it finds: the binary named by the environment variable
``MINIMALLOC_BIN``, else MiniMalloc's Python module ``minimalloc``; with neither it fails
with a one-line error saying so.

MiniMalloc decides one capacity at a time: is there a packing with every ``offset + size <=
capacity``? The binary's contract (``src/main.cc``)::

    minimalloc --capacity=C --input=IN.csv --output=OUT.csv --timeout=Ss [--NAME=VALUE ...]

reads ``id,lower,upper,size`` (half-open ``[lower, upper)``: ``upper = last_op + 1``) and
exits 0 having written ``id,lower,upper,size,offset``; otherwise it exits 1 with the status on
stderr after its ``Elapsed time`` line: ``NOT_FOUND`` (no packing: proven) or
``DEADLINE_EXCEEDED`` (out of time: nothing proven). Its other flags (``--check_dominance``,
``--preordering_heuristics``, ...: the search techniques of its ``SolverParams``) are absl
flags: ``--only_check_args`` checks them without solving. The Python module's
``Solver(SolverParams).solve`` returns ``None`` for both statuses; a ``None`` that comes back
before the probe's timeout is a ``NOT_FOUND`` (the deadline is only reported once it has
passed).

MiniMalloc's own ``--minimize_capacity`` bisection counts a timed-out probe as infeasible and
then returns its last packing as if it had converged, so the method bisects itself, with
optplan's rules: probe the lower bound (max breadth), then one granule below the incumbent,
then the middle of what is open. Capacities are multiples of the granule, the gcd of the sizes
(pushed down, a packing's offsets are sums of sizes). A packing lowers the incumbent to its
arena, ``NOT_FOUND`` at C proves the bound C + one granule, a timeout (or a packing above
the capacity asked) proves nothing. The probes share the time as the ``search`` method's do
(:data:`optplan.exact.budget.SPLIT`: the first ``first_probe`` of it, every later one
``later_probe`` of what remains, the last possible one all of it). Sizes are in units of the
alignment (:func:`~optplan.peers.unit_instance`).
"""

from __future__ import annotations

import hashlib
import importlib
import math
import os
import subprocess
import tempfile
import time
from pathlib import Path

from optplan.bounds import lower_bound
from optplan.errors import InputError
from optplan.exact.budget import SPLIT
from optplan.exact.run import ExactRun
from optplan.formats.minimalloc_csv import read_minimalloc_csv, write_minimalloc_csv
from optplan.heuristics.constructions import stacked_offsets
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.peers import PeerUnavailableError, offsets_in_bytes, rejected, unit_instance
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome
from optplan.validate import validate

__all__ = ["minimalloc", "find_solver", "BinarySolver", "ModuleSolver", "TIMEOUT",
           "ENVIRONMENT_VARIABLE"]

ENVIRONMENT_VARIABLE = "MINIMALLOC_BIN"
SOLVER = "minimalloc"
TIMEOUT = "timeout"
"""What a probe returns when it ran out of time (nothing proven)."""
KILL_GRACE_S = 5.0
"""Seconds past a probe's own timeout after which the binary is killed (counted a timeout),
and all that checking its flags may take."""
SET_BY_THE_METHOD = {
    "capacity": "the bisection sets it for each probe",
    "input": "the method writes the problem",
    "output": "the method reads the answer",
    "timeout": "give the method's time_limit",
    "minimize_capacity": "the method bisects the capacity itself",
}
"""MiniMalloc parameters the method sets itself: refused as solver parameters."""

_UNAVAILABLE = (f"method 'minimalloc' needs MiniMalloc's solver (google/minimalloc, not on "
                f"PyPI): set {ENVIRONMENT_VARIABLE} to its binary or install its Python module")


def _not_set_by_the_method(solver_params: dict) -> None:
    for name in solver_params:
        if name in SET_BY_THE_METHOD:
            raise InputError(f"not a solver parameter of method 'minimalloc': "
                             f"{SET_BY_THE_METHOD[name]}", field=name)


class BinarySolver:
    """MiniMalloc's command-line binary at ``path``; solver parameters are its flags."""

    def __init__(self, path: str):
        self.path = path
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        self.version = f"binary sha256:{digest[:16]}"  # which build, without its path

    @staticmethod
    def flags(solver_params: dict) -> list[str]:
        """``--name=value`` for each solver parameter (booleans as ``true``/``false``,
        lists joined by commas, as absl reads them)."""
        def text(value) -> str:
            if isinstance(value, bool):
                return str(value).lower()
            if isinstance(value, (list, tuple)):
                return ",".join(map(str, value))
            return str(value)

        return [f"--{name}={text(value)}" for name, value in solver_params.items()]

    def check(self, solver_params: dict) -> None:
        """An :class:`~optplan.errors.InputError` naming the first parameter the binary does
        not take (its absl ``--only_check_args``: names and values, without solving)."""
        _not_set_by_the_method(solver_params)
        if not solver_params:
            return
        command = [self.path, "--only_check_args=true", *self.flags(solver_params)]
        try:
            run = self._run(command, KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"MiniMalloc binary did not check its flags within "
                               f"{KILL_GRACE_S:g} s") from None
        if run.returncode == 0:
            return
        lines = run.stderr.strip().splitlines() or [f"exit {run.returncode}"]
        for name in solver_params:
            for line in lines:
                if f"'{name}'" in line:
                    raise InputError(f"MiniMalloc's binary refuses it: {line.strip()}",
                                     field=name)
        raise InputError(f"MiniMalloc's binary refuses the solver parameters: {lines[-1]}",
                         field=next(iter(solver_params)))

    def _run(self, command: list[str], timeout: float | None):
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except OSError as error:
            raise PeerUnavailableError(f"{ENVIRONMENT_VARIABLE}={self.path}: cannot run: "
                                       f"{error.strerror}") from None

    def decide(self, units: Instance, capacity: int, timeout: float | None,
               solver_params: dict):
        """Offsets of a packing within ``capacity``, ``None`` (proven: none exists) or
        :data:`TIMEOUT`."""
        with tempfile.TemporaryDirectory(prefix="optplan-minimalloc-") as folder:
            given, answer = Path(folder) / "problem.csv", Path(folder) / "solution.csv"
            write_minimalloc_csv(units, given)
            command = [self.path, f"--capacity={capacity}", f"--input={given}",
                       f"--output={answer}", *self.flags(solver_params)]
            if timeout is not None:
                command.append(f"--timeout={timeout:.3f}s")
            try:
                run = self._run(command, None if timeout is None else timeout + KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                return TIMEOUT
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
    """MiniMalloc's Python module (its pybind11 bindings); solver parameters are attributes
    of its ``SolverParams``."""

    def __init__(self, module):
        self.module = module
        self.version = f"module {getattr(module, '__version__', '?')}"

    def check(self, solver_params: dict) -> None:
        """An :class:`~optplan.errors.InputError` naming the first parameter that is no
        attribute of ``SolverParams`` or whose value it refuses."""
        _not_set_by_the_method(solver_params)
        self._params(solver_params, None)

    def _params(self, solver_params: dict, timeout: float | None):
        params = self.module.SolverParams()
        for name, value in solver_params.items():
            if name.startswith("_") or not hasattr(params, name):
                raise InputError("MiniMalloc's SolverParams has no such attribute", field=name)
            try:
                setattr(params, name, value)
            except (TypeError, ValueError) as error:
                raise InputError(f"MiniMalloc's SolverParams refuses {value!r}: {error}",
                                 field=name) from None
        params.timeout = timeout
        return params

    def decide(self, units: Instance, capacity: int, timeout: float | None,
               solver_params: dict):
        """As :meth:`BinarySolver.decide`."""
        with tempfile.TemporaryDirectory(prefix="optplan-minimalloc-") as folder:
            path = Path(folder) / "problem.csv"
            write_minimalloc_csv(units, path)
            problem = self.module.from_csv(path.read_text(encoding="utf-8"))
        problem.capacity = capacity
        start = time.perf_counter()
        solution = self.module.Solver(self._params(solver_params, timeout)).solve(problem)
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
def minimalloc(instance: Instance, *, time_limit: float | None = None,
               workers: int | None = None, seed: int | None = None, warm_start=False,
               initial_solution=None, **solver_params) -> SolverOutcome:
    """Minimise the arena with MiniMalloc's decision procedure under a capacity bisection.

    Parameters
    ----------
    instance : Instance
        An offsets instance; in-place pairs are ignored (see :mod:`optplan.peers`).
    time_limit : float, optional
        Seconds for the whole run, warm start included (``None``: until proven).
    workers, seed : int, optional
        Recorded, not used: MiniMalloc is single-threaded and deterministic.
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`); its best candidate's arena is the
        bisection's first incumbent, so the method never returns worse. ``False`` by default:
        MiniMalloc is measured as shipped, from the stacked packing (every tensor on top of
        the previous one), so that its figures are its own and not optplan's heuristics'.
    **solver_params
        Passed straight to MiniMalloc: ``--name=value`` flags of its binary, attributes of
        its module's ``SolverParams`` (e.g. ``check_dominance=False``). A name it does not
        take is an :class:`~optplan.errors.InputError`, checked before any work; the
        parameters the method sets itself (``capacity``, ``timeout``, ...) are refused.

    Returns
    -------
    SolverOutcome
        ``OPTIMAL`` when the bisection closes (the incumbent meets the proven bound, and no
        in-place pairs are given), else ``FEASIBLE`` with the proven bound. A packing that
        optplan's validator rejects ends the run and is returned as it is (the result then
        says ``valid`` False). ``info`` holds the solver, its ``probes`` (capacity, result,
        seconds each), the warm start and the solver flags.
    """
    solver = find_solver()
    solver.check(solver_params)
    run = ExactRun(instance, Problem.OFFSETS, solver=SOLVER, version=solver.version,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    run.info |= {"solver": solver.version, "probes": []}
    unit = instance.alignment
    units = unit_instance(instance)
    # Pushed down, every packing has its offsets at sums of sizes: capacities that matter are
    # multiples of the sizes' gcd, and no packing within C proves the bound C + granule.
    granule = math.gcd(*(record.size for record in units.records)) or 1
    bound = search_low = round_up(lower_bound(units, Problem.OFFSETS), granule)
    proves = not instance.inplace_pairs  # MiniMalloc's bounds ignore in-place sharing
    if proves:
        run.raise_bound(bound * unit)
    run.start(warm_start, initial_solution, fallback=stacked_offsets)
    probes = run.info["probes"]
    while search_low < run.objective // unit and not run.out_of_time():
        incumbent = run.objective // unit
        high = (incumbent - 1) // granule * granule
        capacity = (search_low if not probes else high if len(probes) == 1
                    else search_low + (high - search_low) // 2 // granule * granule)
        remaining = run.budget.remaining()
        share = (1.0 if search_low == high else SPLIT.first_probe if not probes
                 else SPLIT.later_probe)
        started = run.budget.elapsed()
        answer = solver.decide(units, capacity, None if remaining is None else remaining * share,
                               solver_params)
        if answer is TIMEOUT:
            result, search_low = "timeout", capacity + granule
        elif answer is None:
            result, bound = "infeasible", capacity + granule
            search_low = bound
            if proves:
                run.raise_bound(min(bound, incumbent) * unit)
        else:
            packing = OffsetsSolution.from_offsets(units, answer)
            violations = validate(units, Problem.OFFSETS, packing)
            if violations:
                probes.append(_probe(capacity * unit, "invalid", run, started))
                return rejected(run, offsets_in_bytes(instance, answer), violations[0])
            result = "feasible"
            if packing.arena_size > capacity:  # beyond what was asked: proves nothing
                result, search_low = "above capacity", capacity + granule
            run.offer(offsets_in_bytes(instance, answer))
        probes.append(_probe(capacity * unit, result, run, started))
    return run.outcome()


def _probe(capacity: int, result: str, run: ExactRun, started: float) -> dict:
    return {"capacity": capacity, "result": result,
            "seconds": round(run.budget.elapsed() - started, 6)}
