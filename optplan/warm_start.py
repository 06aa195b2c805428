"""Warm starts: the solutions an exact method starts from, handed in by its caller.

An exact method takes ``warm_start`` and ``initial_solution`` (the keyword contract of
:mod:`optplan.registry`). ``warm_start`` is

* ``True`` (the default): the problem's warm-start heuristics (``ProblemSpec.warm_start``,
  fast and strong ones first, then ``ProblemSpec.inplace_warm_start`` when the instance has
  in-place pairs);
* ``False``: none;
* a sequence of candidates: registered heuristic names, callables ``instance -> solution``,
  or solutions.

``initial_solution`` is one more solution (e.g. a plan from a previous run), tried first.
:func:`warm_start` evaluates the candidates within the method's budget — heuristics are
started during :attr:`~optplan.exact.budget.TimeSplit.warm_start` of the time limit and
abandoned at :attr:`~optplan.exact.budget.TimeSplit.warm_start_cap` (on instances of more than
:data:`IN_PROCESS_RECORDS` records they run in a forked child that is killed then) — puts each
answer through the problem's validator and keeps the best. An exact method never returns a
solution worse than that best.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from optplan.errors import InputError
from optplan.exact.budget import SPLIT, Budget
from optplan.problems import ProblemSpec, get_problem
from optplan.registry import methods

__all__ = ["Candidate", "WarmStart", "warm_start", "candidates_of", "IN_PROCESS_RECORDS"]

IN_PROCESS_RECORDS = 64
"""Up to this many records (or tensors), heuristics run in-process (a fork costs more)."""


@dataclass(frozen=True)
class Candidate:
    """A valid starting solution, its objective and where it came from."""

    solution: Any
    objective: int
    source: str


@dataclass(frozen=True)
class WarmStart:
    """What the warm start found: the best candidate (``None``: none was valid) and every
    candidate tried, ``(source, objective)`` (``None`` when it failed or was invalid)."""

    best: Candidate | None
    tried: tuple[tuple[str, int | None], ...]
    seconds: float

    def info(self) -> dict:
        """The ``info`` entries of a method's outcome."""
        return {"warm_start": None if self.best is None else self.best.source,
                "warm_start_objective": None if self.best is None else self.best.objective,
                "warm_start_time": round(self.seconds, 6),
                "warm_start_candidates": dict(self.tried)}


def candidates_of(spec: ProblemSpec, warm_start, instance=None) -> list[tuple[str, Any]]:
    """``(source, candidate)`` pairs for the ``warm_start`` argument of an exact method on
    ``instance`` (whose in-place pairs, if any, add the heuristics that use them)."""
    if warm_start is True:
        items = list(spec.warm_start)
        if getattr(instance, "inplace_pairs", ()):
            items += spec.inplace_warm_start
    elif warm_start is False or warm_start is None:
        items = []
    elif isinstance(warm_start, (str, bytes)) or not hasattr(warm_start, "__iter__"):
        raise InputError("must be true, false or a list of heuristics or solutions, got "
                         f"{warm_start!r}", field="warm_start")
    else:
        items = list(warm_start)
    registered = None
    found = []
    for item in items:
        if isinstance(item, str):
            registered = registered if registered is not None else methods()
            info = registered.get(item)
            if info is None or info.kind != "heuristic" or spec.name not in info.implementations:
                raise InputError(f"{item!r} is not a {spec.name} heuristic", field="warm_start")
            found.append((item, info.implementations[spec.name]))
        elif isinstance(item, spec.solution_type) or callable(item):
            found.append((getattr(item, "__name__", "given"), item))
        else:
            raise InputError(f"expected a heuristic or a {spec.solution_type.__name__}, got "
                             f"{type(item).__name__}", field="warm_start")
    return found


def warm_start(instance, problem, warm_start=True, initial_solution=None, *, budget: Budget,
               construction: Callable | None = None) -> WarmStart:
    """The best valid solution among ``initial_solution``, the ``warm_start`` candidates and
    ``construction`` (a callable tried last, e.g. a simple greedy construction that gives a
    model its upper bound even without heuristics), evaluated within ``budget``."""
    spec = get_problem(problem)
    items = [] if initial_solution is None else [("initial_solution", initial_solution)]
    items += candidates_of(spec, warm_start, instance)
    if construction is not None:
        items.append((construction.__name__, construction))
    start = budget.elapsed()
    calls = [item for item in items if not isinstance(item[1], spec.solution_type)]
    if calls and budget.time_limit is not None and len(instance) > IN_PROCESS_RECORDS:
        answers = _in_child(instance, items, budget)
    else:
        answers = _in_process(instance, items, budget)
    best, tried = None, []
    for source, solution in answers:
        objective = None
        if solution is not None and not spec.validate(instance, solution):
            objective = spec.objective(instance, solution)
            if best is None or objective < best.objective:
                best = Candidate(solution, objective, source)
        tried.append((source, objective))
    return WarmStart(best, tuple(tried), budget.elapsed() - start)


def _answer(instance, candidate):
    """A candidate's solution (``None`` when its heuristic raised)."""
    if not callable(candidate):
        return candidate
    try:
        return candidate(instance)
    except Exception:  # noqa: BLE001 -- a broken heuristic must not break the exact method
        return None


def _in_process(instance, items, budget: Budget) -> list:
    window = budget.share(SPLIT.warm_start)
    start_until = None if window is None else budget.elapsed() + window
    answers = []
    for source, candidate in items:
        if callable(candidate) and start_until is not None and budget.elapsed() >= start_until:
            break
        answers.append((source, _answer(instance, candidate)))
    return answers


def _send_answers(instance, items, start_until: float, connection) -> None:
    for position, (source, candidate) in enumerate(items):
        if callable(candidate) and time.perf_counter() >= start_until:
            break
        connection.send((position, _answer(instance, candidate)))
    connection.send(None)
    connection.close()


def _in_child(instance, items, budget: Budget) -> list:
    """Evaluate the candidates in a forked child; keep what it reported before the cap."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    start_until = time.perf_counter() + budget.share(SPLIT.warm_start)
    child = context.Process(target=_send_answers, args=(instance, items, start_until, sender),
                            daemon=True)
    try:
        child.start()
    except (AssertionError, OSError):  # e.g. inside a daemonic pool worker: no children
        receiver.close()
        sender.close()
        return _in_process(instance, items, budget)
    sender.close()
    stop_at = time.perf_counter() + budget.share(SPLIT.warm_start_cap)
    answers = []
    try:
        while True:
            left = stop_at - time.perf_counter()
            if left <= 0 or not receiver.poll(left):
                break
            message = receiver.recv()
            if message is None:
                break
            position, solution = message
            answers.append((items[position][0], solution))
    except EOFError:
        pass
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
    return answers
