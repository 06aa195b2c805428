"""Replay torch instances on offsets plans: does the plan run, and how many ops wrote in place?

    python bench/replay.py                                   # the default instances below
    python bench/replay.py gpt2_raw_torch_seq128 --methods greedy_by_size cpsat --corrupt

For every instance (a committed ``raw`` or ``train`` torch instance) and method, the plan is
solved with offsets aligned to 64 bytes, the program is rebuilt from the instance's recorded
builder and seed, and :func:`optplan.torch.replay.replay` runs it. One row per run: tensors, naive
total, both lower bounds, the arena, the solver status, replay pass/fail, max abs diff, ops
written in place through ``out=`` / copied / views, and seconds. ``--corrupt`` adds a row
with two live tensors moved onto each other (it must fail). Needs torch. Timings on a shared
machine are inflated.
"""

from __future__ import annotations

import argparse
import json
import time

from optplan import instances
from optplan.bounds import lower_bound
from optplan.problems import Problem
from optplan.torch.models import capture
from optplan.torch.replay import overlap_live_tensors, replay
from optplan.solve import solve

DEFAULT_INSTANCES = ("mobilenet_v2_raw_torch_224", "gpt2_raw_torch_seq128")


def run_instance(name: str, methods: list[str], *, time_limit: float, corrupt: bool):
    instance = instances.load(name)
    aligned = instance.with_alignment(64)
    source = instance.provenance["source"]
    program = capture(source["builder"], instance.provenance["variant"],
                      seed=int(source.get("seed", 0)))
    base_row = {"instance": name, "tensors": len(instance),
                "naive_bytes": int(instance.sizes.sum()),
                "offsets_lower_bound": lower_bound(instance, Problem.OFFSETS),
                "shared_objects_lower_bound": lower_bound(instance, Problem.SHARED_OBJECTS)}
    for method in methods:
        result = solve(aligned, method, Problem.OFFSETS, time_limit=time_limit, workers=2,
                       seed=0)
        plans = [("plan", result.solution)]
        if corrupt:
            plans.append(("corrupted", overlap_live_tensors(aligned, result.solution)[0]))
        for label, plan in plans:
            started = time.perf_counter()
            report = replay(program, aligned, plan)
            row = dict(base_row, method=method, plan=label, status=result.status.name,
                       arena=plan.arena_size, seconds=round(time.perf_counter() - started, 1),
                       **{k: v for k, v in report.summary().items() if k != "arena_size"})
            print(json.dumps(row), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="*", default=list(DEFAULT_INSTANCES))
    parser.add_argument("--methods", nargs="+", default=["cpsat"])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--corrupt", action="store_true")
    args = parser.parse_args(argv)
    for name in args.instances:
        run_instance(name, args.methods, time_limit=args.time_limit, corrupt=args.corrupt)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
