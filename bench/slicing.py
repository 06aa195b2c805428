"""Benchmark of FlexNN's layer slicing (issue 21); a benchmark, not a timed test.

The machine is shared: run it niced (``nice -n 10 python bench/slicing.py``); its timings are
indicative, not final.

For each network (default: MobileNet v2, ResNet-50, VGG-19, fused) under a cost-model profile
(default ``phone``):

1. The minimum feasible budget, bracketed (lower bound .. the best packing found, see
   :mod:`optplan.preload.sliced_search`): ``today`` is the instance without kernels (no
   scratch buffers, nothing to slice); the others are the kernel-aware instance (the kernels'
   scratch buffers, FlexNN's pre-transformed Winograd weights): ``kernels`` as made (every
   layer on its fastest kernel), ``selection`` with kernel selection, ``slicing`` with kernel
   selection and slicing from the menu 1, 2, 4, 8, 16. ``exact slicing`` is the exact minimum
   over every slicing (:func:`optplan.preload.pareto.minimum_budget` with ``slicing=True``,
   CP-SAT, ``--time-limit``): proven or bracketed, with its solve time. ``flexnn_sliced`` is
   the smallest budget at which the method finds a plan (bisection to 0.1 %).
2. A sweep of ``--steps`` budgets spaced geometrically from the minimum with slicing to the
   kernel-aware instance's no-pressure budget (every weight pinned), plus today's minimum
   budget. At every budget: FlexNN on today's instance, FlexNN on the kernel-aware instance
   (no slicing), ``flexnn_sliced``, the number of layers it slices and its time, and the exact
   method with slicing (``cpsat``, ``slicing=True``, ``--time-limit`` seconds, 2 workers):
   its latency, status (``*``: proven optimal), proven bound and time; every plan validated
   (``-``: the method finds no plan there).

``--make-instances`` writes the kernel-aware instances to
``data/preload/<network>_<profile>_kernels.json`` and exits.

    nice -n 10 python bench/slicing.py
    nice -n 10 python bench/slicing.py --networks vgg19_fused_onnx_224 --steps 12
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from optplan.errors import OptplanError
from optplan.preload import budget_lower_bound, write_preload_instance
from optplan.preload.costmodel import preload_instance_from_network
from optplan.preload.flexnn import pin_all
from optplan.preload.pareto import budget_sweep, minimum_budget
from optplan.preload.sliced_search import minimum_budget_sliced, packed_plan
from optplan.preload.slicing import SLICE_MENU
from optplan.result import Status
from optplan.solve import solve

REPO = Path(__file__).resolve().parents[1]
NETWORKS = ("mobilenet_v2_fused_tflite_224", "resnet50_fused_onnx_224", "vgg19_fused_onnx_224")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", default=",".join(NETWORKS),
                        help="comma-separated names in data/networks (default: %(default)s)")
    parser.add_argument("--profile", default="phone",
                        help="phone, embedded or a profile JSON file (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=8, help="budgets per sweep (default 8)")
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="seconds for each exact solve (default 30)")
    parser.add_argument("--make-instances", action="store_true",
                        help="write data/preload/<network>_<profile>_kernels.json and exit")
    return parser.parse_args(argv)


def instances(network: str, profile: str):
    """Today's instance and the kernel-aware one (the committed file when there is one)."""
    path = REPO / "data" / "networks" / f"{network}.json"
    today = preload_instance_from_network(path, profile)
    committed = REPO / "data" / "preload" / f"{network}_{Path(profile).stem}_kernels.json"
    if committed.is_file():
        from optplan.preload import read_preload_instance
        return today, read_preload_instance(committed)
    return today, preload_instance_from_network(path, profile, kernels=True)


def feasible(instance, budget: int) -> bool:
    result = solve(instance, "flexnn_sliced", "preload", budget=budget)
    return result.solution is not None and result.valid


def flexnn_sliced_minimum(instance, low: int, high: int) -> int | None:
    """The smallest budget in ``[low, high]`` at which flexnn_sliced plans (bisection; its
    feasibility is not guaranteed monotone, so this is the bisection's answer)."""
    if not feasible(instance, high):
        return None
    if feasible(instance, low):
        return low
    while high - low > max(1, low // 1000):
        middle = (low + high) // 2
        low, high = (low, middle) if feasible(instance, middle) else (middle, high)
    return high


def fmt(value) -> str:
    return "-" if value is None else f"{value:,}"


def exact_minimum(kernel_aware, time_limit: float) -> None:
    """The exact minimum budget over every slicing, proven or bracketed."""
    start = time.perf_counter()
    outcome = minimum_budget(kernel_aware, slicing=True, time_limit=time_limit, workers=2,
                             seed=0)
    seconds = time.perf_counter() - start
    if outcome.status is Status.OPTIMAL:
        text = f"{fmt(outcome.budget):>14} (proven)"
    else:
        text = f"{fmt(outcome.best_bound):>14} .. {fmt(outcome.budget):>14}"
    print(f"  minimum budget {'exact slicing':<10} {text}  {seconds:.2f} s", flush=True)


def minimum_budgets(today, kernel_aware) -> dict:
    brackets = {"today": minimum_budget_sliced(today, (1,)),
                "selection": minimum_budget_sliced(kernel_aware, (1,)),
                "slicing": minimum_budget_sliced(kernel_aware, SLICE_MENU)}
    as_made = budget_lower_bound(kernel_aware)
    rows = {"today": (brackets["today"].lower_bound, brackets["today"].budget),
            "kernels": (as_made, packed_plan(kernel_aware).peak),
            "selection": (brackets["selection"].lower_bound, brackets["selection"].budget),
            "slicing": (brackets["slicing"].lower_bound, brackets["slicing"].budget)}
    for name, (low, high) in rows.items():
        proven = " (proven)" if low == high else ""
        print(f"  minimum budget {name:<10} {fmt(low):>14} .. {fmt(high):>14}{proven}")
    return rows


def sweep(today, kernel_aware, rows: dict, steps: int, time_limit: float) -> None:
    low = rows["slicing"][1]
    high = max(pin_all(kernel_aware).peak, pin_all(today).peak)
    budgets = set(budget_sweep(low, high, steps, "geometric"))
    budgets.add(rows["today"][1])
    header = ["budget", "flexnn_today_us", "flexnn_kernels_us", "flexnn_sliced_us",
              "sliced_layers", "sliced_s", "exact_sliced_us", "exact_bound_us", "exact_s"]
    widths = [14, 16, 18, 17, 14, 9, 16, 15, 8]
    print("  " + "  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for budget in sorted(budgets):
        results = {"flexnn_today": solve(today, "flexnn", "preload", budget=budget),
                   "flexnn_kernels": solve(kernel_aware, "flexnn", "preload", budget=budget),
                   "flexnn_sliced": solve(kernel_aware, "flexnn_sliced", "preload",
                                          budget=budget),
                   "exact_sliced": solve(kernel_aware, "cpsat", "preload", budget=budget,
                                         slicing=True, time_limit=time_limit, workers=2,
                                         seed=0)}
        for label, result in results.items():
            if result.solution is not None and not result.valid:
                raise SystemExit(f"invalid plan from {label} at {budget}: "
                                 f"{result.violations[:3]}")
        sliced, exact = results["flexnn_sliced"], results["exact_sliced"]
        count = len(sliced.solution.slicing) if sliced.solution is not None else None
        proven = "*" if exact.status is Status.OPTIMAL else ""
        cells = [fmt(budget)] + [fmt(results[k].objective) for k in
                                 ("flexnn_today", "flexnn_kernels", "flexnn_sliced")] + [
            fmt(count), f"{sliced.wall_time_s:.2f}", fmt(exact.objective) + proven,
            fmt(exact.best_bound), f"{exact.wall_time_s:.1f}"]
        print("  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths)), flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    networks = args.networks.split(",")
    if args.make_instances:
        for network in networks:
            instance = preload_instance_from_network(
                REPO / "data" / "networks" / f"{network}.json", args.profile, kernels=True)
            path = REPO / "data" / "preload" / f"{instance.name}.json"
            write_preload_instance(instance, path)
            print(f"wrote {path.relative_to(REPO)}")
        return 0
    print("# timings on a shared machine (run niced): indicative, not final", flush=True)
    try:
        for network in networks:
            start = time.perf_counter()
            today, kernel_aware = instances(network, args.profile)
            print(f"# {kernel_aware.name}: {kernel_aware.num_layers} layers, "
                  f"{len(kernel_aware)} tensors", flush=True)
            rows = minimum_budgets(today, kernel_aware)
            exact_minimum(kernel_aware, args.time_limit)
            smallest = flexnn_sliced_minimum(kernel_aware, rows["slicing"][0],
                                             pin_all(kernel_aware).peak)
            print(f"  minimum budget {'flexnn_sliced':<10} {fmt(smallest):>14}", flush=True)
            sweep(today, kernel_aware, rows, args.steps, args.time_limit)
            print(f"  ({time.perf_counter() - start:.1f} s)", flush=True)
    except OptplanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
