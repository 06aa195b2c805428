"""``optplan validate PATH SOLUTION --problem P``: check a solution file."""

from __future__ import annotations

import json

from optplan.commands._common import add_problem_argument, instance_options, positive_int
from optplan.problems import get_problem
from optplan.validate import validate

EXIT_INVALID = 1


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate", help="check a solution file against an instance",
        description="Check a solution file (a CSV with columns id and offset/object; a "
                    "preload plan JSON; a schedule plan JSON {\"order\": [...], "
                    "\"offsets\": {...}}) against an instance: every violation with its "
                    "reason. Exit 0 when valid, 1 when it "
                    "violates the instance, 2 on bad input.")
    parser.add_argument("path", metavar="PATH", help="instance: MiniMalloc .csv or optplan .json")
    parser.add_argument("solution", metavar="SOLUTION")
    add_problem_argument(parser)
    parser.add_argument("--alignment", type=positive_int, metavar="A")
    parser.add_argument("--inplace", action="store_true",
                        help="let declared in-place pairs share memory")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)


def run(args) -> int:
    spec = get_problem(args.problem)
    load, _ = instance_options(spec, alignment=args.alignment)
    instance = spec.prepared(spec.load_instance(args.path, **load), inplace=args.inplace)
    solution = spec.read_solution(instance, args.solution)
    violations = validate(instance, spec.name, solution)
    try:
        objective = spec.objective(instance, solution)
    except Exception:  # noqa: BLE001 -- an invalid plan may have no objective (no order)
        if not violations:
            raise
        objective = None
    report = {"problem": spec.problem.value, "valid": not violations,
              "objective": objective,
              "lower_bound": spec.lower_bound(instance),
              "violations": [str(v) for v in violations]}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{'valid' if report['valid'] else 'INVALID'}: objective {report['objective']}, "
              f"lower bound {report['lower_bound']}, {len(violations)} violation(s)")
        for violation in violations:
            print(f"  {violation}")
    return 0 if report["valid"] else EXIT_INVALID
