"""Benchmark of preload-aware planning (issue 8's bars); a benchmark, not a timed test.

For each network (default: MobileNet v2 and ResNet-50, fused) under a cost-model profile
(default ``phone``):

1. the minimum feasible budget (objective (b) without a target) and the no-pressure point
   (the smallest budget found at which the latency meets the unlimited-memory bound), both
   with CP-SAT;
2. a sweep of ``--steps`` budgets (default 8) from the first to the second (from the second
   alone when the time limit left the first above it);
3. at every budget: FlexNN, the no-preload baseline and exact CP-SAT (``--time-limit`` s each,
   default 300, 2 workers; from the plan found at the smaller budget), every plan validated.

The closing table shows: budget, FlexNN latency, no-preload latency, optimal latency (CP-SAT's
best, its status), CP-SAT's proven bound, FlexNN's gap to the bound, solve time.
``--jsonl`` appends one row per plan: instance, budget, the ``--json`` keys, the time limit,
workers and seed it was solved with (``None`` for the heuristics, which take none) and the
solver's version.
``--quick`` is a smoke run (MobileNet v2, 3 budgets, 10 s). ``--make-instances`` writes the
preload instances to ``data/preload/`` and exits.

    python bench/preload.py --quick
    python bench/preload.py --time-limit 300 --jsonl preload.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from optplan.errors import OptplanError
from optplan.preload import latency_lower_bound, read_preload_instance, write_preload_instance
from optplan.preload.costmodel import preload_instance_from_network
from optplan.preload.pareto import budget_sweep, minimum_budget
from optplan.result import relative_gap
from optplan.solve import solve

REPO = Path(__file__).resolve().parents[1]
NETWORKS = ("mobilenet_v2_fused_tflite_224", "resnet50_fused_onnx_224")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", default=",".join(NETWORKS),
                        help="comma-separated names in data/networks (default: %(default)s)")
    parser.add_argument("--profile", default="phone",
                        help="phone, embedded or a profile JSON file (default: %(default)s)")
    parser.add_argument("--window", type=int, help="preload window in layers (default: none)")
    parser.add_argument("--steps", type=int, default=8, help="budgets per sweep (default 8)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per solve")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jsonl", type=Path, help="also append one JSON line per run here")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: MobileNet v2, 3 budgets, 10 s per solve")
    parser.add_argument("--make-instances", action="store_true",
                        help="write data/preload/<network>_<profile>.json and exit")
    return parser.parse_args(argv)


def load(network: str, profile: str, window: int | None):
    """The committed preload instance when it matches, else one made by the cost model."""
    committed = REPO / "data" / "preload" / f"{network}_{Path(profile).stem}.json"
    if committed.is_file() and window is None:
        return read_preload_instance(committed)
    return preload_instance_from_network(REPO / "data" / "networks" / f"{network}.json",
                                         profile, window=window)


def format_row(cells, widths) -> str:
    return "  ".join(str(cell).rjust(width) for cell, width in zip(cells, widths))


def sweep(instance, args, time_limit: float, steps: int, emit) -> list[list]:
    flags = {"time_limit": time_limit, "workers": args.workers, "seed": args.seed}
    bound = latency_lower_bound(instance)
    start = time.perf_counter()
    low = minimum_budget(instance, **flags)
    high = minimum_budget(instance, bound, **flags)
    print(f"# {instance.name}: {instance.num_layers} layers, {len(instance)} tensors; "
          f"latency bound {bound} µs; minimum budget {low.budget} ({low.status}, bound "
          f"{low.best_bound}); no-pressure budget {high.budget} ({high.status}, bound "
          f"{high.best_bound}); {time.perf_counter() - start:.1f} s", flush=True)
    print(format_row(HEADER, WIDTHS))
    rows = []
    # each search has its own time limit: the plan meeting the bound may fit a smaller budget
    # than the minimum found; the sweep starts at the smaller of the two, from its plan
    smallest = min((low, high), key=lambda outcome: outcome.budget)
    previous = smallest.plan   # the plan at the previous (smaller) budget is valid here too
    for budget in budget_sweep(smallest.budget, high.budget, steps):
        flexnn = solve(instance, "flexnn", "preload", budget=budget)
        baseline = solve(instance, "no_preload", "preload", budget=budget)
        exact = solve(instance, "cpsat", "preload", budget=budget, initial_solution=previous,
                      **flags)
        previous = exact.solution
        for result in (flexnn, baseline, exact):
            if result.solution is not None and not result.valid:
                raise SystemExit(f"invalid plan from {result.method} at {budget}: "
                                 f"{result.violations[:3]}")
            emit({"instance": instance.name, "budget": budget} | result.summary()
                 | {"time_limit": result.time_limit, "workers": result.workers,
                    "seed": result.seed, "solver_version": result.solver_version})
        gap = relative_gap(flexnn.objective, exact.best_bound)
        rows.append([budget, flexnn.objective, baseline.objective, exact.objective,
                     exact.status.value, exact.best_bound,
                     "-" if gap is None else f"{100 * gap:.2f}%", f"{exact.wall_time_s:.1f}"])
        print(format_row(rows[-1], WIDTHS), flush=True)
    return rows


HEADER = ["budget", "flexnn_us", "no_preload_us", "optimal_us", "status", "bound_us",
          "flexnn_gap", "cpsat_s"]
WIDTHS = [10, 10, 13, 10, 10, 10, 10, 8]


def main(argv=None) -> int:
    args = parse_args(argv)
    networks = args.networks.split(",")
    if args.make_instances:
        for network in networks:
            instance = preload_instance_from_network(
                REPO / "data" / "networks" / f"{network}.json", args.profile, window=args.window)
            path = REPO / "data" / "preload" / f"{instance.name}.json"
            write_preload_instance(instance, path)
            print(f"wrote {path.relative_to(REPO)}")
        return 0
    time_limit, steps = (10.0, 3) if args.quick else (args.time_limit, args.steps)
    if args.quick:
        networks = networks[:1]
    sink = args.jsonl.open("a", encoding="utf-8") if args.jsonl else None

    def emit(row: dict) -> None:
        if sink is not None:
            sink.write(json.dumps(row) + "\n")
            sink.flush()

    try:
        for network in networks:
            instance = load(network, args.profile, args.window)
            sweep(instance, args, time_limit, steps, emit)
    except OptplanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        if sink is not None:
            sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
