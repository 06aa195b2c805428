"""Wall time against the time limit for every exact method (issue 16, item 7); a benchmark,
not a timed test.

The issue's case: a generated 50,000-tensor transformer instance
(``optplan.generators.generate("transformer", 50000, seed=1)``), 60 s and 2 workers per run
(``--workers``; the solvers' seed is their default, 0). Prints one row per exact method and
problem of the records problems: status, objective, bound, the workers the method used, the
method's wall time (set-up, warm start, model building and solving), the whole ``solve()``
call's (validation and the combinatorial bound included), and the overrun beyond the limit.

    python bench/time_limits.py                       # the issue's case (about 10 minutes)
    python bench/time_limits.py --tensors 5000 --time-limit 10 --methods cpsat
    python bench/time_limits.py --instance data/networks/gpt2_train_torch_seq128.json \
        --time-limit 15 --problems shared-objects
"""

from __future__ import annotations

import argparse
import time

from optplan import load_instance, methods, problems, solve
from optplan.errors import InputError
from optplan.exact.budget import MARGIN_SECONDS
from optplan.generators import generate


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", help="an instance file instead of a generated one")
    parser.add_argument("--kind", default="transformer", help="generator (default: %(default)s)")
    parser.add_argument("--tensors", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=1, help="the generator's seed")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="workers per run (default 2)")
    parser.add_argument("--methods", help="comma-separated exact methods (default: every one)")
    parser.add_argument("--problems", default="offsets,shared-objects")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.instance:
        instance = load_instance(args.instance)
        print(f"# {instance.name}: {len(instance)} tensors, time limit {args.time_limit:g} s, "
              f"{args.workers} workers")
    else:
        instance = generate(args.kind, args.tensors, seed=args.seed)
        print(f"# {args.kind} {args.tensors} tensors (seed {args.seed}), time limit "
              f"{args.time_limit:g} s, {args.workers} workers")
    wanted = None if args.methods is None else set(args.methods.split(","))
    print(f"# the documented margin: {MARGIN_SECONDS:g} s (optplan.exact.budget)")
    header = ("method", "problem", "status", "objective", "bound", "workers", "method_s",
              "total_s", "overrun_s", "in_margin")
    print("  ".join(f"{h:>14}" for h in header))
    for problem in args.problems.split(","):
        problem = problems()[problem].name
        for name, info in methods(builtin_only=True).items():
            if info.kind != "exact" or problem not in info.implementations:
                continue
            if wanted is not None and name not in wanted:
                continue
            start = time.perf_counter()
            try:
                result = solve(instance, name, problem, time_limit=args.time_limit,
                               workers=args.workers)
            except InputError as error:
                print(f"{name:>14}  {problem:>14}  refused: {error}")
                continue
            total = time.perf_counter() - start
            overrun = max(0.0, result.wall_time_s - args.time_limit)
            cells = (name, problem, result.status.value, result.objective, result.best_bound,
                     result.info.get("workers"), f"{result.wall_time_s:.1f}", f"{total:.1f}",
                     f"{overrun:.1f}", "yes" if overrun <= MARGIN_SECONDS else "NO")
            print("  ".join(f"{str(c):>14}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
