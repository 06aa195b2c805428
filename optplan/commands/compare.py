"""``optplan compare PATH... --problem P``: methods side by side on instances, as a table."""

from __future__ import annotations

from optplan.commands._common import (add_problem_argument, add_solver_flags, record_problems,
                                      time_limit_of)
from optplan.errors import InputError
from optplan.formats import load_instance
from optplan.problems import Problem
from optplan.registry import get_method, methods
from optplan.solve import solve


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="run methods on instances and print a table of objectives",
        description="Run methods on instances and print objective values (and the gap to the "
                    "lower bound, in percent) per instance and method. Every solution is "
                    "validated; an invalid one is marked with '!'.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="instance files (.csv, .json)")
    add_problem_argument(parser, problems=record_problems())
    parser.add_argument("--methods", metavar="A,B,...",
                        help="comma-separated method names (default: every records heuristic)")
    add_solver_flags(parser)
    parser.set_defaults(run=run)


def _default_methods(problem: Problem) -> list[str]:
    return [name for name, info in methods().items()
            if info.kind == "heuristic" and info.input == "records"
            and problem in info.implementations]


def run(args) -> int:
    problem = Problem.parse(args.problem)
    names = args.methods.split(",") if args.methods else _default_methods(problem)
    for name in names:
        get_method(name, problem)
    rows = []
    for path in args.paths:
        instance = load_instance(path)
        cells = {}
        bound = None
        for name in names:
            result = solve(instance, name, problem, time_limit=time_limit_of(args, name),
                           workers=args.workers, seed=args.seed)
            bound = result.lower_bound
            if result.objective is None:
                cells[name] = result.status.value
            else:
                mark = "" if result.valid else "!"
                cells[name] = f"{result.objective}{mark} (+{100 * (result.gap or 0):.1f}%)"
        rows.append((instance.name, len(instance), bound, cells))
    if not rows:
        raise InputError("no instances given", field="paths")
    header = ["instance", "tensors", "lower_bound"] + names
    table = [[name, str(count), str(bound)] + [cells[m] for m in names]
             for name, count, bound, cells in rows]
    widths = [max(len(row[i]) for row in table + [header]) for i in range(len(header))]
    print(f"{problem.cli_name}: objective (gap to the lower bound)")
    for row in [header, ["-" * w for w in widths]] + table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
