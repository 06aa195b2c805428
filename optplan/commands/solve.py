"""``optplan solve PATH --problem P --method M``: run one method on one instance."""

from __future__ import annotations

import json

from optplan.commands._common import (add_exact_options, add_problem_argument, add_progress_flag,
                                      add_solver_flags, heartbeat, instance_options,
                                      method_parameters, positive_int, time_limit_of)
from optplan.problems import get_problem
from optplan.solve import solve


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "solve", help="run one method on one instance",
        description="Run one method on a MiniMalloc CSV or optplan JSON instance, validate the "
                    "solution, and print the result.")
    parser.add_argument("path", metavar="PATH", help="instance: MiniMalloc .csv or optplan .json "
                        "(preload: a preload instance .json)")
    add_problem_argument(parser)
    parser.add_argument("--method", required=True, metavar="NAME",
                        help="method name (see 'optplan methods')")
    parser.add_argument("--alignment", type=positive_int, metavar="A",
                        help="offset alignment in bytes (overrides the instance's)")
    parser.add_argument("--inplace", action="store_true",
                        help="let declared in-place pairs share memory")
    parser.add_argument("--budget", type=positive_int, metavar="BYTES",
                        help="preload: the memory budget (default: the instance's, else none)")
    add_solver_flags(parser)
    add_exact_options(parser)
    add_progress_flag(parser)
    parser.add_argument("--output", metavar="OUT",
                        help="write the solution: a CSV of the instance's columns plus offset/"
                             "object, in input order (preload: the plan JSON)")
    parser.add_argument("--json", action="store_true",
                        help="print exactly one JSON object on one line")
    parser.set_defaults(run=run)


def run(args) -> int:
    spec = get_problem(args.problem)
    load, options = instance_options(spec, alignment=args.alignment, budget=args.budget)
    params = method_parameters(args) | options
    instance = spec.load_instance(args.path, **load)
    with heartbeat(args):
        result = solve(instance, args.method, spec.name, inplace=args.inplace,
                       time_limit=time_limit_of(args, args.method), workers=args.workers,
                       seed=args.seed, **params)
    if args.output and result.solution is not None:
        spec.write_solution(instance, result.solution, args.output)
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
