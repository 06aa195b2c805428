"""What ``optplan executorch`` and ``optplan tflm`` share: their flags and their report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from optplan.commands._common import add_solver_flags, positive_int
from optplan.errors import InputError


def add_runtime_flags(parser: argparse.ArgumentParser, out_help: str) -> None:
    parser.add_argument("--method", default="search",
                        help="any offsets method (optplan methods); default search")
    parser.add_argument("--out", type=Path, required=True, help=out_help)
    parser.add_argument("--inputs", type=positive_int, default=3,
                        help="random inputs the two plans are compared on; default 3")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_solver_flags(parser)


def solver_params(args) -> dict:
    """The solver flags given, for :func:`optplan.solve`; checks ``--out`` first (before a long
    run)."""
    if not args.out.parent.is_dir():
        raise InputError("no such directory", file=str(args.out.parent), field="--out")
    return {key: value for key, value in (("workers", args.workers), ("seed", args.seed))
            if value is not None}


def report(comparison, args) -> int:
    """Print the comparison (``--json``: its binding keys on one line); exit status 0 when the
    outputs with optplan's plan equal those with the runtime's, 1 otherwise."""
    summary = comparison.summary()
    if args.json:
        print(json.dumps(summary))
    else:
        saved = comparison.runtime_planner_bytes - comparison.optplan_bytes
        share = saved / comparison.runtime_planner_bytes if comparison.runtime_planner_bytes \
            else 0.0
        rows = dict(summary, saved_bytes=f"{saved} ({share:.1%})",
                    plan=f"{comparison.source} ({comparison.method})", written=str(args.out))
        width = max(map(len, rows))
        for key, value in rows.items():
            print(f"{key:<{width}}  {value}")
    return 0 if comparison.outputs_equal else 1
