"""``optplan compare PATH... --problem P``: methods side by side on instances, against one
reference per instance.

Every instance file is read and checked, and every method name looked up, before anything is
solved. Then each instance runs every method and its rows are printed (and flushed) as soon
as they are done. The *reference* of an instance is the best lower bound proven by any method
run on it (an exact method's proven bound or its proven optimum; never below the
combinatorial lower bound, which is shown beside it); every gap is measured against it, so
the gaps of one instance are comparable. A method whose proven bound exceeds another
method's valid objective would be a bug, and is reported as one.
"""

from __future__ import annotations

import contextlib
import sys

from optplan.commands._common import (add_problem_argument, add_solver_flags, objective_unit,
                                      record_problems, time_limit_of)
from optplan.errors import InputError, about_file
from optplan.formats import load_instance
from optplan.problems import Problem
from optplan.registry import get_method, methods
from optplan.result import Result, Status, relative_gap
from optplan.solve import solve

COLUMNS = ("method", "status", "objective", "bound", "gap", "time_s")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="run methods on instances and print objectives, gaps, statuses, times",
        description="Run methods on instances and print, per instance and method, the status, "
                    "the objective, its gap to the instance's reference and the wall time. "
                    "The reference is the best lower bound proven by the methods run (an "
                    "exact method's bound or proven optimum), never below the combinatorial "
                    "lower bound, which is printed beside it. Every input is read and every "
                    "method name checked before anything is solved; each instance's rows are "
                    "printed as soon as its methods have finished. Every solution is "
                    "validated; an invalid one has the status INVALID. A bound method "
                    "(lower_bound) computes no solution: its status is UNKNOWN and its "
                    "bound counts towards the reference.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="instance files (.csv, .json)")
    add_problem_argument(parser, problems=record_problems())
    parser.add_argument("--methods", metavar="A,B,...",
                        help="comma-separated method names (default: every records heuristic)")
    add_solver_flags(parser)
    parser.set_defaults(run=run)


def _default_methods(problem: Problem) -> list[str]:
    """optplan's own records heuristics (peers run only when named: some take their whole
    time limit)."""
    return [name for name, info in methods(builtin_only=True).items()
            if info.kind == "heuristic" and info.input == "records"
            and problem in info.implementations]


def reference_of(results: list[Result]) -> tuple[int, str]:
    """The instance's reference and where it comes from: the largest bound proven by a run
    whose solution (if any) the validator accepted, at least the combinatorial bound."""
    combinatorial = results[0].lower_bound
    trusted = [r for r in results if r.valid is not False and r.best_bound is not None]
    best = max([combinatorial] + [r.best_bound for r in trusted])
    optimal = [r.method for r in trusted if r.status is Status.OPTIMAL and r.objective == best]
    if optimal:
        return best, f"optimum proven by {optimal[0]}"
    if best > combinatorial:
        return best, f"bound proven by {next(r.method for r in trusted if r.best_bound == best)}"
    return best, "the combinatorial lower bound"


def _status(result: Result) -> str:
    return "INVALID" if result.valid is False else result.status.value


class _Printer:
    """Fixed column widths, known before the first row: method names from the list, numbers
    from the largest objective any method can reach (every tensor in memory of its own)."""

    def __init__(self, names: list[str], instances):
        largest = max(sum(record.size for record in instance.records) for instance in instances)
        self.widths = (max(map(len, names + ["method"])), len("INFEASIBLE"),
                       max(len("objective"), len(f"{largest:,}") + 1),
                       len(f"{largest:,}"), len("+1000.0%"), len("time_s") + 2)

    def line(self, cells) -> str:
        method, status, *numbers = cells
        text = [method.ljust(self.widths[0]), status.ljust(self.widths[1])]
        text += [cell.rjust(width) for cell, width in zip(numbers, self.widths[2:])]
        return "  " + "  ".join(text).rstrip()

    def header(self) -> str:
        return self.line(COLUMNS)

    def row(self, result: Result, reference: int, proves_bounds: bool) -> str:
        if result.objective is None:
            objective = gap = "-"
        else:
            objective = f"{result.objective:,}" + ("!" if result.valid is False else "")
            gap = "-" if result.valid is False else _percent(relative_gap(result.objective,
                                                                          reference))
        bound = "-" if not proves_bounds or result.best_bound is None \
            else f"{result.best_bound:,}"
        return self.line((result.method, _status(result), objective, bound, gap,
                          f"{result.wall_time_s:.3f}"))


def _percent(gap: float | None) -> str:
    if gap is None:
        return "-"
    if gap == float("inf"):
        return "inf"
    return f"{100 * gap:+.1f}%" if gap else "0.0%"


def _contradictions(results: list[Result]) -> list[str]:
    """A proven bound above a valid objective: one of the two methods is wrong."""
    notes = []
    for bounded in results:
        if bounded.valid is False or bounded.best_bound is None:
            continue
        for solved in results:
            if solved.valid and solved.objective is not None \
                    and solved.objective < bounded.best_bound:
                notes.append(f"{bounded.method} proves a bound of {bounded.best_bound:,} but "
                             f"{solved.method} found {solved.objective:,}: one of them is wrong")
    return notes


class _Note:
    """A transient ``solving ...`` line on a terminal's stderr; nothing elsewhere."""

    def __init__(self):
        self.active = sys.stderr.isatty()
        self.width = 0

    def show(self, text: str) -> None:
        if self.active:
            self.clear()
            sys.stderr.write(text)
            sys.stderr.flush()
            self.width = len(text)

    def clear(self) -> None:
        if self.active and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


def run(args) -> int:
    problem = Problem.parse(args.problem)
    names = [name.strip() for name in args.methods.split(",")] if args.methods \
        else _default_methods(problem)
    if not names or not all(names):
        raise InputError("empty method name in --methods", field="--methods")
    for name in names:
        get_method(name, problem)
    instances = [load_instance(path) for path in args.paths]
    if not instances:
        raise InputError("no instances given", field="paths")
    path_of = {id(instance): path for instance, path in zip(instances, args.paths)}
    printer, note = _Printer(names, instances), _Note()
    proves_bounds = {name: get_method(name).kind != "heuristic" for name in names}
    print(f"{problem.cli_name}: objective and bound in {objective_unit(problem)}; gap = "
          "(objective - reference) / reference,\nthe reference being the best bound proven "
          "by the methods run on the instance")
    if any(get_method(name).kind == "bound" for name in names):
        print("a bound method computes a bound and no solution: its status is UNKNOWN")
    sys.stdout.flush()
    for instance in instances:
        results = []
        for index, name in enumerate(names, 1):
            note.show(f"{instance.name}: {name} ({index}/{len(names)}) ...")
            with about_file(path_of[id(instance)],
                            unless_fields=("time_limit", "workers", "seed")), \
                    contextlib.redirect_stdout(sys.stderr):
                results.append(solve(instance, name, problem,
                                     time_limit=time_limit_of(args, name),
                                     workers=args.workers, seed=args.seed))
        note.clear()
        reference, source = reference_of(results)
        print(f"\n{instance.name} ({len(instance)} tensors): reference {reference:,} "
              f"({source}), combinatorial lower bound {results[0].lower_bound:,}")
        print(printer.header())
        for result in results:
            print(printer.row(result, reference, proves_bounds[result.method]))
        for text in _contradictions(results):
            print(f"  warning: {text}")
        for result in results:
            if result.valid is False:
                print(f"  {result.method}: invalid solution: {result.violations[0]}")
        sys.stdout.flush()
    return 0
