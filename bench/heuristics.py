"""Time every registered records heuristic on generated instances of growing size.

    python bench/heuristics.py                       # random_dag, 1e3 / 1e4 / 1e5 tensors
    python bench/heuristics.py --kinds random_dag minimalloc --sizes 1000 10000
    python bench/heuristics.py --gaps data/networks data/examples  # mean gaps to the bound

Each run happens in a forked child with a hard time limit (``--timeout``), so a planner that
is quadratic in networkx cannot stall the table; methods bounded by the conflict graph (the
colourings and the hill climb, which materialise it) are skipped when the instance has more
than ``--max-edges`` conflicting pairs. The table lists planner, problem, instance kind,
size, seconds, the objective's gap to the combinatorial lower bound, and whether the
independent validator accepted the plan (``valid``; checked in the parent process, outside
the timed region; every rejected plan is named below the table and the script exits 1); the
``reference`` column says whether the reference algorithm is sub-quadratic (the bar: every
such heuristic on a 100,000-tensor instance in seconds) or quadratic (:data:`QUADRATIC` says
why).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

from optplan.bounds import lower_bound
from optplan.generators import generate
from optplan.heuristics._placement import conflict_degrees
from optplan.problems import Problem
from optplan.registry import methods
from optplan.solve import objective_value, solve
from optplan.validate import validate

GRAPH_BOUNDED_PREFIXES = ("coloring_", "usmp_hill_climb")
RECORD_PROBLEMS = (Problem.SHARED_OBJECTS, Problem.OFFSETS)

QUADRATIC = {
    "greedy_by_size": "TFLite scans every unassigned tensor (shared objects) or every earlier "
                      "allocation (offsets) per tensor: O(n^2)",
    "greedy_best": "runs greedy_by_size: O(n^2)",
    "min_cost_flow": "a flow network with O(n^2) edges",
    "tflite_arena": "SimpleMemoryArena::Allocate scans every earlier allocation: O(n^2)",
    "usmp_hill_climb": "500 greedy passes: O(500 (n + E))",
}
"""Heuristics whose *reference* algorithm is quadratic (or a long local search), and why;
every other one is O(n log n + n k log k) or O(n log n + E) (k tensors live at once, E
conflicting pairs) and is held to the bar "a 100,000-tensor instance in seconds". Our
implementations of some of these are faster than their references; they are timed all the
same."""


def reference_class(name: str) -> str:
    return "quadratic" if name in QUADRATIC else "sub-quadratic"


def records_heuristics(selected: list[str] | None) -> list[tuple[str, object]]:
    """(name, problem) of every registered heuristic that runs on usage records."""
    pairs = []
    for name, info in methods(builtin_only=True).items():
        if info.kind != "heuristic" or info.input != "records":
            continue
        if selected and not any(token in name for token in selected):
            continue
        pairs.extend((name, problem) for problem in info.problems if problem in RECORD_PROBLEMS)
    return pairs


def _child(connection, instance, name, problem) -> None:
    func = methods()[name].implementations[problem]
    start = time.perf_counter()
    solution = func(instance)
    seconds = time.perf_counter() - start
    connection.send((seconds, solution))
    connection.close()


def timed_run(instance, name, problem, timeout: float):
    """``(seconds, solution)`` (the timed call's answer, ``None`` when it found none), or
    ``(None, reason)`` on a timeout or a crash."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, instance, name, problem))
    child.start()
    sender.close()
    if receiver.poll(timeout):
        try:
            result = receiver.recv()
        except EOFError:
            result = (None, "crashed")
    else:
        result = (None, f"timeout > {timeout:g} s")
    child.join(1)
    if child.is_alive():
        child.terminate()
        child.join()
    elif result[0] is None and child.exitcode not in (0, None) and result[1] == "crashed":
        result = (None, f"crashed (exit {child.exitcode})")
    return result


def scaling_table(kinds, sizes, selected, timeout: float, max_edges: int) -> int:
    """Print the scaling table; returns how many timed plans the validator rejected."""
    pairs = records_heuristics(selected)
    print(f"{'planner':36s} {'problem':15s} {'reference':14s} {'kind':12s} {'tensors':>8s} "
          f"{'seconds':>9s} {'gap to LB':>10s} {'valid':>5s}")
    rejected = []
    for kind in kinds:
        given_up: set[tuple[str, object]] = set()
        for size in sizes:
            instance = generate(kind, size, seed=0)
            edges = int(conflict_degrees(instance).sum()) // 2
            bounds = {problem: lower_bound(instance, problem) for _, problem in pairs}
            for name, problem in pairs:
                valid = ""
                if (name, problem) in given_up:
                    cell, gap = "skipped", "(slower size timed out)"
                elif name.startswith(GRAPH_BOUNDED_PREFIXES) and edges > max_edges:
                    cell, gap = "skipped", f"(conflict graph: {edges:.2e} edges)"
                else:
                    seconds, solution = timed_run(instance, name, problem, timeout)
                    if seconds is None:
                        given_up.add((name, problem))
                        cell, gap = "-", f"({solution})"
                    elif solution is None:
                        cell, gap, valid = f"{seconds:9.3f}", "(no plan)", "-"
                    else:
                        cell = f"{seconds:9.3f}"
                        objective = objective_value(instance, problem, solution)
                        bound = bounds[problem]
                        gap = f"{(objective - bound) / bound:10.2%}" if bound else "-"
                        violations = validate(instance, problem, solution)
                        valid = "NO" if violations else "yes"
                        if violations:
                            rejected.append(f"{name} {problem.value} {kind} {size}: "
                                            f"{violations[0]}")
                print(f"{name:36s} {problem.value:15s} {reference_class(name):14s} {kind:12s} "
                      f"{size:8d} {cell:>9s} {gap:>10s} {valid:>5s}".rstrip(), flush=True)
    for line in rejected:
        print(f"INVALID plan: {line}")
    return len(rejected)


def gap_table(directories: list[Path], selected) -> None:
    """Each planner's mean relative gap to the lower bound over the usage-record instances in
    some folders (files of other problems, e.g. preload instances, are skipped)."""
    from optplan.errors import InputError
    from optplan.formats import load_instance
    instances = []
    for directory in directories:
        for path in sorted(p for p in directory.rglob("*") if p.suffix in (".json", ".csv")):
            try:
                instances.append(load_instance(path))
            except InputError as error:
                print(f"skipped {path}: {error}")
    print(f"{len(instances)} instances from {', '.join(map(str, directories))}")
    print(f"{'planner':36s} {'problem':15s} {'mean gap':>9s} {'max gap':>9s} {'at LB':>6s}")
    for name, problem in records_heuristics(selected):
        gaps = []
        for instance in instances:
            result = solve(instance, name, problem)
            if not result.valid:
                raise SystemExit(f"{name} {problem.value} invalid on {instance.name}: "
                                 f"{result.violations[:1]}")
            gaps.append(result.gap)
        print(f"{name:36s} {problem.value:15s} {statistics.mean(gaps):9.2%} {max(gaps):9.2%} "
              f"{sum(g == 0 for g in gaps):3d}/{len(gaps)}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["random_dag"],
                        help="generator kinds (random_dag, chain_skip, transformer, minimalloc)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1_000, 10_000, 100_000])
    parser.add_argument("--methods", nargs="*", help="only methods whose name contains these")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--max-edges", type=int, default=20_000_000,
                        help="skip graph-bounded methods above this many conflicting pairs")
    parser.add_argument("--gaps", type=Path, nargs="+",
                        help="report mean gaps over the instances in these folders")
    args = parser.parse_args(argv)
    if args.gaps:
        gap_table(args.gaps, args.methods)
        return 0
    rejected = scaling_table(args.kinds, args.sizes, args.methods, args.timeout, args.max_edges)
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
