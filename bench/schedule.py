"""Benchmark of free execution order (``schedule``, ``schedule-offsets``); not a timed test.

For every network: the engine order's peak and arena (the fixed-order offsets optimum of its
records, by ``cpsat``), the best heuristic (the engine order and every list-scheduling rule;
for the arena each placed by the best offsets heuristic), and the free-order optimum of each
exact method (status, objective, proven bound, gap, time), with the saving over the engine
order in %. By default the paper's six fused networks and the others (ResNet-50/152,
VGG-19, DenseNet-121, BERT-base, GPT-2, three training graphs), 300 s per run. ``--jsonl``
appends one row per exact run: its result, whether the validator accepted the plan (``valid``),
time limit, workers, seed, the solver's version, and the engine and heuristic references. The
machine is shared: run it under ``nice`` and read its times as taken under load.

    nice -n 10 python bench/schedule.py
    nice -n 10 python bench/schedule.py --quick
    nice -n 10 python bench/schedule.py --only train --methods cpsat --time-limit 60
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from optplan import instances, solve
from optplan.schedule import load_instance, prepare
from optplan.schedule.validate import induced_instance

PAPER = ["mobilenet_v1_fused_tflite_224", "mobilenet_v2_fused_tflite_224",
         "deeplab_v3_fused_tflite_257", "inception_v3_fused_tflite_299",
         "posenet_fused_tflite_257", "blazeface_fused_tflite_128"]
OTHERS = ["resnet50_fused_tflite_224", "resnet152_fused_tflite_224", "vgg19_fused_tflite_224",
          "densenet121_fused_tflite_224", "bert_base_raw_torch_seq128", "gpt2_raw_torch_seq128",
          "mobilenet_v2_train_torch_224", "resnet50_train_torch_224",
          "gpt2_train_torch_seq128"]
HEURISTICS = ("original_order", "best_list_scheduling")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", default="paper,others",
                        help="paper, others, all, or comma-separated catalogue names")
    parser.add_argument("--problems", default="schedule,schedule-offsets")
    parser.add_argument("--methods", default="dynamic_program,cpsat",
                        help="comma-separated exact methods (dynamic_program, cpsat, "
                             "milp_highs, milp_cbc; default: %(default)s)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--fixed-time-limit", type=float, default=60.0,
                        help="seconds for the engine order's fixed-order arena optimum")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--inplace", action="store_true", help="also with in-place pairs")
    parser.add_argument("--only", help="only networks whose name contains this text")
    parser.add_argument("--jsonl", type=Path, help="also append one JSON line per run here")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: two networks, dynamic_program, 10 s")
    return parser.parse_args(argv)


def networks(spec: str) -> list[str]:
    names: list[str] = []
    for item in spec.split(","):
        item = item.strip()
        names += {"paper": PAPER, "others": OTHERS, "all": instances.names()}.get(item, [item])
    return list(dict.fromkeys(name for name in names if name))


def percent(new, old) -> str:
    return "-" if new is None or not old else f"{100 * (old - new) / old:.2f}"


def gap(objective, bound) -> str:
    if objective is None or not bound:
        return "-"
    return f"{100 * (objective - bound) / bound:.2f}"


def engine_and_heuristics(instance, problem: str, fixed_time_limit, workers, seed) -> dict:
    """The engine order's objective (its fixed-order optimum for the arena) and the best
    heuristic's."""
    found = {name: solve(instance, name, problem, inplace=instance.inplace)
             for name in HEURISTICS}
    best = min(found, key=lambda name: found[name].objective)
    reference = {"heuristic": found[best].objective, "heuristic_name": best}
    if problem == "schedule":
        return reference | {"engine": found["original_order"].objective,
                            "engine_status": "OPTIMAL"}
    records = induced_instance(instance, instance.op_names)
    fixed = solve(records, "cpsat", "offsets", inplace=instance.inplace,
                  time_limit=fixed_time_limit, workers=workers, seed=seed)
    return reference | {"engine": fixed.objective, "engine_status": str(fixed.status)}


def run(args) -> None:
    if args.quick:
        args.networks, args.methods, args.time_limit = "posenet_fused_tflite_257," \
            "mobilenet_v2_train_torch_224", "dynamic_program", 10.0
        args.fixed_time_limit = 10.0
    names = [n for n in networks(args.networks) if not args.only or args.only in n]
    problems = [p.strip() for p in args.problems.split(",") if p.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    load = os.getloadavg()
    print(f"# free execution order, {args.time_limit:g} s per exact run, {args.workers} workers,"
          f" seed {args.seed}; load average at start {load[0]:.1f} (shared machine: times are"
          " taken under load)")
    header = ("network", "inplace", "problem", "ops", "engine", "heuristic", "method", "status",
              "free-order", "bound", "gap %", "saving %", "time s")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in names:
        base = load_instance(instances.data_dir() / f"{name}.json")
        for inplace in ((False, True) if args.inplace else (False,)):
            instance = prepare(base, inplace=inplace)
            for problem in problems:
                reference = engine_and_heuristics(instance, problem, args.fixed_time_limit,
                                                  args.workers, args.seed)
                for method in methods:
                    started = time.perf_counter()
                    result = solve(instance, method, problem, inplace=inplace,
                                   time_limit=args.time_limit,
                                   workers=args.workers, seed=args.seed)
                    wall = time.perf_counter() - started
                    objective, status = result.objective, result.status
                    engine = reference["engine"]
                    cells = (name, "yes" if inplace else "no", problem, instance.num_ops,
                             f"{engine}" + ("" if reference["engine_status"] == "OPTIMAL"
                                            else "*"),
                             reference["heuristic"], method, status, objective,
                             result.best_bound, gap(objective, result.best_bound),
                             percent(objective, engine), f"{wall:.1f}")
                    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)
                    if args.jsonl:
                        row = {"network": name, "inplace": inplace, "problem": problem,
                               "ops": instance.num_ops, "method": method,
                               "status": str(status), "objective": objective,
                               "best_bound": result.best_bound, "valid": result.valid,
                               "wall_time_s": round(wall, 3),
                               "time_limit": args.time_limit, "workers": args.workers,
                               "seed": args.seed, "solver_version": result.solver_version,
                               "info": {k: v for k, v in result.info.items()
                                        if k != "part_info"}} | reference
                        with open(args.jsonl, "a", encoding="utf-8") as handle:
                            handle.write(json.dumps(row, default=str) + "\n")
    print("\n* the engine order's fixed-order arena is not proven optimal (its best found); "
          "saving % = (engine - free-order) / engine")


if __name__ == "__main__":
    run(parse_args())
