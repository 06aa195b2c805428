"""Benchmark of the exact solvers (issue 3's bars); a benchmark, not a timed test.

By default:

* offsets on MiniMalloc's challenging suite (``$OPTPLAN_SHARED/peer/minimalloc/challenging``,
  or ``--minimalloc DIR``; skipped cleanly when absent) with ``cpsat``, ``milp_highs`` and
  ``milp_cbc``;
* offsets and shared objects on every JSON instance under ``data/`` (``--inplace`` adds the
  in-place variant of every instance that declares pairs);

60 s per run. Prints one table per instance: method, status, objective, bound, gap, time.
``--jsonl`` appends one row per run: the ``--json`` keys, instance, inplace, the time limit,
workers and seed as the method used them (its default workers when ``--workers`` is not
given), and the solver's version. ``--quick`` is a smoke run: one instance, 5 s.

    python bench/exact.py --quick
    python bench/exact.py --time-limit 60 --jsonl results.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from optplan import Problem, load_instance, solve
from optplan.errors import OptplanError

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("OPTPLAN_SHARED", REPO.parent / "shared"))
DEFAULT_METHODS = ("cpsat", "milp_highs", "milp_cbc")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minimalloc", type=Path,
                        default=SHARED / "peer" / "minimalloc" / "challenging",
                        help="folder of MiniMalloc CSVs (default: %(default)s)")
    parser.add_argument("--data", type=Path, default=REPO / "data",
                        help="folder searched for JSON instances (default: %(default)s)")
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                        help="comma-separated exact methods (default: %(default)s)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--workers", type=int, help="workers per run (default: the method's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="run only instances whose name contains this text")
    parser.add_argument("--no-minimalloc", action="store_true", help="skip the MiniMalloc suite")
    parser.add_argument("--no-data", action="store_true", help="skip the data/ instances")
    parser.add_argument("--problems", default="offsets,shared-objects",
                        help="problems for the data/ instances (default: %(default)s)")
    parser.add_argument("--inplace", action="store_true",
                        help="also run the in-place variant of instances that declare pairs")
    parser.add_argument("--jsonl", type=Path, help="also append one JSON line per run here")
    parser.add_argument("--quick", action="store_true", help="smoke run: one instance, 5 s")
    return parser.parse_args(argv)


def jobs(args) -> list[tuple[str, Path, Problem, bool]]:
    """(label, path, problem, inplace) for every run, MiniMalloc first."""
    result = []
    if not args.no_minimalloc:
        if args.minimalloc.is_dir():
            for path in sorted(args.minimalloc.glob("*.csv")):
                result.append((path.stem, path, Problem.OFFSETS, False))
        else:
            print(f"# MiniMalloc suite not found at {args.minimalloc}: skipped")
    if not args.no_data:
        problems = [Problem.parse(name) for name in args.problems.split(",") if name.strip()]
        for path in sorted(args.data.rglob("*.json")):
            for problem in problems:
                result.append((path.stem, path, problem, False))
                if args.inplace:
                    result.append((path.stem, path, problem, True))
    if args.only:
        result = [job for job in result if args.only in job[0]]
    return result


def format_row(cells, widths) -> str:
    return "  ".join(str(cell).rjust(width) for cell, width in zip(cells, widths))


def main(argv=None) -> int:
    args = parse_args(argv)
    time_limit = 5.0 if args.quick else args.time_limit
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    selected = jobs(args)
    if args.quick:
        selected = selected[:1]
    solved: dict[str, list[int]] = {method: [0, 0] for method in methods}
    header = ("method", "status", "objective", "bound", "gap", "time_s")
    widths = (10, 10, 12, 12, 8, 8)
    for label, path, problem, inplace in selected:
        try:
            instance = load_instance(path)
        except OptplanError as error:
            print(f"\n# {path}: not an instance ({error}); skipped")
            continue
        if inplace and not instance.inplace_pairs:
            continue
        variant = f"{problem.cli_name}{' --inplace' if inplace else ''}"
        print(f"\n## {label} ({len(instance)} tensors, {variant}, {time_limit:g} s)")
        print(format_row(header, widths))
        for method in methods:
            try:
                result = solve(instance, method, problem, inplace=inplace,
                               time_limit=time_limit, workers=args.workers, seed=args.seed)
            except OptplanError as error:
                print(f"{method:>10}  error: {error}")
                continue
            solved[method][0] += result.status.value == "OPTIMAL"
            solved[method][1] += 1
            gap = "-" if result.gap is None else f"{100 * result.gap:.2f}%"
            print(format_row((method, result.status.value, result.objective, result.best_bound,
                              gap, f"{result.wall_time_s:.1f}"), widths), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as handle:
                    row = result.summary() | {
                        "instance": label, "inplace": inplace, "time_limit": time_limit,
                        "workers": result.info.get("workers", args.workers),
                        "seed": result.info.get("seed", args.seed),
                        "solver_version": result.solver_version}
                    handle.write(json.dumps(row) + "\n")
    print("\n## proven optimal")
    for method, (proven, runs) in solved.items():
        print(f"{method:>10}  {proven}/{runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
