"""``optplan validate PATH SOLUTION.csv --problem P``: check a solution file."""

from __future__ import annotations

import json

from optplan.commands._common import RECORD_PROBLEMS, add_problem_argument, positive_int
from optplan.formats import load_instance, read_solution_csv
from optplan.model import Problem
from optplan.bounds import lower_bound
from optplan.solve import objective_value
from optplan.validate import validate

EXIT_INVALID = 1


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate", help="check a solution file against an instance",
        description="Check a solution CSV (columns id and offset/object) against an instance. "
                    "Exit 0 when valid, 1 when it violates the instance, 2 on bad input.")
    parser.add_argument("path", metavar="PATH", help="instance: MiniMalloc .csv or optplan .json")
    parser.add_argument("solution", metavar="SOLUTION.csv")
    add_problem_argument(parser, problems=RECORD_PROBLEMS)
    parser.add_argument("--alignment", type=positive_int, metavar="A")
    parser.add_argument("--inplace", action="store_true",
                        help="let declared in-place pairs share memory")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)


def run(args) -> int:
    problem = Problem.parse(args.problem)
    instance = load_instance(args.path, alignment=args.alignment)
    if not args.inplace:
        instance = instance.without_inplace()
    solution = read_solution_csv(instance, problem, args.solution)
    violations = validate(instance, problem, solution)
    report = {"problem": problem.value, "valid": not violations,
              "objective": objective_value(instance, problem, solution),
              "lower_bound": lower_bound(instance, problem),
              "violations": [str(v) for v in violations]}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{'valid' if report['valid'] else 'INVALID'}: objective {report['objective']}, "
              f"lower bound {report['lower_bound']}, {len(violations)} violation(s)")
        for violation in violations:
            print(f"  {violation}")
    return 0 if report["valid"] else EXIT_INVALID
