"""``optplan solve PATH --problem P --method M``: run one method on one instance."""

from __future__ import annotations

import json

from optplan.commands._common import add_problem_argument, add_solver_flags, positive_int
from optplan.formats import load_instance, write_solution_csv
from optplan.solve import solve


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "solve", help="run one method on one instance",
        description="Run one method on a MiniMalloc CSV or optplan JSON instance, validate the "
                    "solution, and print the result.")
    parser.add_argument("path", metavar="PATH", help="instance: MiniMalloc .csv or optplan .json")
    add_problem_argument(parser)
    parser.add_argument("--method", required=True, metavar="NAME",
                        help="method name (see 'optplan methods')")
    parser.add_argument("--alignment", type=positive_int, metavar="A",
                        help="offset alignment in bytes (overrides the instance's)")
    parser.add_argument("--inplace", action="store_true",
                        help="let declared in-place pairs share memory")
    add_solver_flags(parser)
    parser.add_argument("--output", metavar="OUT.csv",
                        help="write the instance's columns plus offset/object, in input order")
    parser.add_argument("--json", action="store_true",
                        help="print exactly one JSON object on one line")
    parser.set_defaults(run=run)


def run(args) -> int:
    instance = load_instance(args.path, alignment=args.alignment)
    result = solve(instance, args.method, args.problem, inplace=args.inplace,
                   time_limit=args.time_limit, workers=args.workers, seed=args.seed)
    if args.output and result.solution is not None:
        write_solution_csv(instance, result.problem, result.solution, args.output)
    if args.json:
        print(json.dumps(result.summary()))
    else:
        summary = result.summary()
        width = max(map(len, summary))
        for key, value in summary.items():
            print(f"{key:<{width}}  {value}")
        for violation in result.violations:
            print(f"violation  {violation}")
    return 0
