"""``optplan solve PATH --problem P --method M``: run one method on one instance."""

from __future__ import annotations

import json

import contextlib
import sys

from optplan.commands._common import (add_exact_options, add_problem_argument, add_progress_flag,
                                      add_solver_flags, heartbeat, instance_options,
                                      method_parameters, objective_unit, positive_int,
                                      time_limit_of)
from optplan.errors import InputError, about_file
from optplan.formats.paths import check_output_file
from optplan.problems import get_problem
from optplan.registry import get_method
from optplan.result import Status
from optplan.solve import solve


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "solve", help="run one method on one instance",
        description="Run one method on a MiniMalloc CSV or optplan JSON instance, validate the "
                    "solution, and print the result. Exit 0 with a valid solution (or none, "
                    "with its status), 1 when the validator rejects the method's solution, 2 "
                    "for bad input.")
    parser.add_argument("path", metavar="PATH", help="instance: MiniMalloc .csv or optplan .json "
                        "(preload: a preload instance .json; schedule, schedule-offsets: an "
                        "optplan .json with a graph, or a bare graph .json)")
    add_problem_argument(parser)
    parser.add_argument("--method", required=True, metavar="NAME",
                        help="method name (see 'optplan methods')")
    parser.add_argument("--alignment", type=positive_int, metavar="A",
                        help="offset alignment in bytes (overrides the instance's)")
    parser.add_argument("--inplace", action="store_true",
                        help="let declared in-place pairs share memory (schedule: the "
                             "graph's declared pairs, where the order makes them hold)")
    parser.add_argument("--budget", type=positive_int, metavar="BYTES",
                        help="preload: the memory budget (default: the instance's, else none)")
    parser.add_argument("--slicing", action="store_true",
                        help="preload, exact methods (cpsat, milp_highs): choose every layer's "
                             "slicing and kernel too (FlexNN's layer slicing)")
    add_solver_flags(parser)
    add_exact_options(parser)
    add_progress_flag(parser)
    parser.add_argument("--output", metavar="OUT",
                        help="write the solution: a CSV of the instance's columns plus offset/"
                             "object, in input order (preload: the plan JSON; schedule, "
                             "schedule-offsets: {\"order\": [...], \"offsets\": {...}})")
    parser.add_argument("--json", action="store_true",
                        help="print exactly one JSON object on one line")
    parser.set_defaults(run=run)


def run(args) -> int:
    spec = get_problem(args.problem)
    if args.output:
        check_output_file(args.output, "--output")
    load, options = instance_options(spec, alignment=args.alignment, budget=args.budget)
    params = method_parameters(args) | options
    if args.slicing:
        if spec.name != "preload":
            raise InputError("layer slicing applies to --problem preload only",
                             field="--slicing")
        params["slicing"] = True
    instance = spec.load_instance(args.path, **load)
    if "budget" in spec.options:
        _check_budget(instance, args)
    with about_file(args.path, unless_fields=("time_limit", "workers", "seed", "budget")), \
            contextlib.redirect_stdout(sys.stderr), heartbeat(args):  # a method's prints
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
            if key in ("objective", "lower_bound", "best_bound") and value is not None:
                value = f"{value} {objective_unit(spec.name)}"
            elif key == "status" and get_method(args.method).kind == "bound":
                value = f"{value} (a bound method: it computes a bound, not a solution)"
            print(f"{key:<{width}}  {value}")
        reason = result.info.get("reason") or result.info.get("proof")
        if result.status is Status.INFEASIBLE and reason:   # why no plan exists
            print(f"{'reason':<{width}}  {reason}")
        for violation in result.violations:
            print(f"violation  {violation}")
    if result.valid is False:  # a method's wrong answer is never a success
        print(f"optplan: error: {args.method} returned a solution the validator rejects: "
              f"{result.violations[0]}", file=sys.stderr)
        return 1
    return 0


def _check_budget(instance, args) -> None:
    """A budget below what every plan keeps resident at some step, whatever its layer slicing,
    admits no plan: bad input on the command line (the Python API answers INFEASIBLE)."""
    from optplan.preload.bounds import budget_lower_bound
    from optplan.preload.slicing import sliced_budget_lower_bound

    budget = args.budget if args.budget is not None else instance.budget
    needed = (min(budget_lower_bound(instance), sliced_budget_lower_bound(instance))
              if budget is not None else 0)
    if budget is not None and budget < needed:
        where = {"field": "--budget"} if args.budget is not None else {"file": args.path,
                                                                        "field": "budget"}
        raise InputError(f"{budget} bytes admit no plan: {needed} bytes are resident at once "
                         "under every plan and layer slicing", **where)
