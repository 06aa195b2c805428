"""Benchmark of ``search`` on MiniMalloc's challenging suite; not a test.

By default the 11 instances of ``$OPTPLAN_SHARED/peer/minimalloc/challenging`` (default
``../shared``; skipped cleanly when absent) at 60 s each, before (the pure-Python search, one
worker) and after (the compiled core, ``--workers`` 2): one row per instance with status,
objective, proven bound, time and nodes of each; then the nodes per second of both engines
on the same probe (the compiled core's bar is 50x). When ``MINIMALLOC_BIN`` names a
MiniMalloc binary *you built yourself* (never built or vendored here), the same instances go
through it too, driven by the issue's bisection: probe the capacity in the file name, then
the lower bound, then bisect on multiples of the sizes' gcd, at most 15 s a probe.
Each run's row in ``--jsonl`` keeps its probes and its anytime trajectory; ``--packings DIR``
also writes each run's best packing there, validated, as ``paper/results/search/`` keeps them
(``INSTANCE.RUN.BYTES.offsets.csv``: MiniMalloc's buffer ``id`` and its ``offset``), so that
a long run's packing is its certificate.

    python bench/search.py --instances A,B --time-limit 60
    python bench/search.py --instances J --runs after --rate-seconds 0 --time-limit 2400 \
        --jsonl long.jsonl --packings packings
    python bench/search.py --runs after --rate-seconds 0       # the compiled search alone
    MINIMALLOC_BIN=~/minimalloc/build/minimalloc python bench/search.py
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from optplan import Problem, lower_bound, solve
from optplan.exact._search_core import ENGINES, TIMEOUT, SearchParams, decide, prepare
from optplan.exact.offsets_bound import breadth_capacity, granule
from optplan.formats.minimalloc_csv import read_minimalloc_csv

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("OPTPLAN_SHARED", REPO.parent / "shared"))
SUITE = SHARED / "peer" / "minimalloc" / "challenging"
PROBE_LIMIT = 15.0


def suite_parser(doc: str, instances: str | None = None,
                 line_per: str = "instance") -> argparse.ArgumentParser:
    """The argument parser of a script over MiniMalloc's suite (described by ``doc``'s first
    paragraph): ``--suite``, ``--instances`` (default ``instances``, else all) and
    ``--jsonl`` (one JSON line per ``line_per``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=SUITE,
                        help="folder of MiniMalloc CSVs (default: %(default)s)")
    parser.add_argument("--instances", default=instances,
                        help="comma-separated names, e.g. A,B (default: "
                             + (instances or "all") + ")")
    parser.add_argument("--jsonl", type=Path,
                        help=f"also append one JSON line per {line_per} here")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    parser = suite_parser(__doc__, line_per="run")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance")
    parser.add_argument("--switch", action="append", default=[], metavar="NAME=BOOL",
                        help="a SearchParams switch, e.g. --switch dominance=false")
    parser.add_argument("--workers", type=int, default=2,
                        help="workers of the compiled run (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the search's random orders (default: %(default)s)")
    parser.add_argument("--runs", default="before,after",
                        help="which runs: before (python), after (compiled); default both")
    parser.add_argument("--rate-seconds", type=float, default=10.0,
                        help="seconds per engine for the nodes-per-second probe (0: skip)")
    parser.add_argument("--packings", type=Path, metavar="DIR",
                        help="also write each run's best packing here (CSV of id,offset)")
    return parser.parse_args(argv)


def write_packing(path: Path, instance, offsets) -> None:
    """``offsets`` (bytes) of ``instance``'s buffers as a CSV of their ``id`` and
    ``offset``."""
    path.write_text("id,offset\n" + "".join(f"{record.id},{offset}\n"
                                            for record, offset in zip(instance.records,
                                                                      offsets)))


def suite_files(args) -> list[Path]:
    """The files of ``--instances`` in ``--suite``; when there are none, says so (the script
    then skips cleanly)."""
    files = sorted(args.suite.glob("*.csv")) if args.suite.is_dir() else []
    if args.instances:
        wanted = {name.strip() for name in args.instances.split(",") if name.strip()}
        files = [f for f in files if f.name.split(".")[0] in wanted]
    if not files:
        print(f"no MiniMalloc instances found under {args.suite}: skipped")
    return files


def suite_instances(files: list[Path], sections: bool = False):
    """Each of ``files`` read and prepared for the search, after printing its header line
    (name, tensors, with ``sections`` the section count, max breadth in bytes): yields
    ``(name, instance, prep, breadth, step)``, the max breadth and the granule in scaled
    units."""
    for path in files:
        instance = read_minimalloc_csv(path)
        name = path.name.split(".")[0]
        prep = prepare(instance.first_ops, instance.last_ops, instance.sizes,
                       instance.alignment)
        breadth, step = breadth_capacity(instance, prep), granule(prep)
        counted = f"{prep.num_sections} sections, " if sections else ""
        print(f"\n{name}: {len(instance)} tensors, {counted}max breadth "
              f"{breadth * prep.scale:,} bytes")
        yield name, instance, prep, breadth, step


def file_capacity(path: Path) -> int | None:
    """The capacity MiniMalloc names in the file name (``A.1048576.csv``)."""
    parts = path.name.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def switches(args) -> dict:
    result = {}
    for text in args.switch:
        name, _, value = text.partition("=")
        if value.lower() not in ("true", "false"):
            sys.exit(f"--switch {text}: expected NAME=true or NAME=false")
        result[name] = value.lower() == "true"
    return result


# -- MiniMalloc, side by side ---------------------------------------------------------------
def minimalloc_probe(binary: str, path: Path, capacity: int, limit: float):
    """Run the binary at ``capacity``: ('feasible', arena) / ('infeasible'|'timeout', None)."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.csv"
        start = time.perf_counter()
        try:
            done = subprocess.run([binary, f"--capacity={capacity}", f"--input={path}",
                                   f"--output={output}", f"--timeout={limit}s"],
                                  capture_output=True, text=True, timeout=limit + 10)
        except subprocess.TimeoutExpired:
            return "timeout", None
        elapsed = time.perf_counter() - start
        if done.returncode != 0:  # MiniMalloc exits 1 on both; tell them apart by the clock
            return ("timeout" if elapsed >= 0.95 * limit else "infeasible"), None
        _, solution = read_minimalloc_csv(output, with_offsets=True)
        return "feasible", solution.arena_size


def run_minimalloc(binary: str, path: Path, time_limit: float) -> dict:
    """The issue's protocol: capacity, then lower bound, then bisection (granule = gcd)."""
    instance = read_minimalloc_csv(path)
    granule = math.gcd(*(r.size for r in instance.records))
    bound = lower_bound(instance, Problem.OFFSETS)  # proven
    low = bound  # where the next probes start (timeouts prove nothing)
    best = None
    queue = [file_capacity(path), bound]
    probes = []
    start = time.perf_counter()
    while True:
        left = time_limit - (time.perf_counter() - start)
        high = None if best is None else best - granule
        if left <= 0 or (high is not None and low > high):
            break
        if queue:
            capacity = queue.pop(0)
            if capacity is None or capacity < low or (high is not None and capacity > high):
                continue
        elif high is None:
            break
        else:
            capacity = low + (high - low) // 2 // granule * granule
        result, arena = minimalloc_probe(binary, path, capacity, min(PROBE_LIMIT, left))
        probes.append((capacity, result))
        if result == "feasible":
            best = arena if best is None else min(best, arena)
        elif result == "infeasible":
            bound = low = capacity + granule
        else:
            low = capacity + granule
    status = "OPTIMAL" if best is not None and best <= bound else (
        "FEASIBLE" if best is not None else "UNKNOWN")
    return {"status": status, "objective": best, "bound": bound,
            "time": time.perf_counter() - start, "probes": probes}


# -- nodes per second, the two engines on the same probe ---------------------------------------
def nodes_per_second(instance, seconds: float) -> dict:
    """Each engine on the same probe (capacity = max breadth) for at most ``seconds``: both
    search the same tree, so a finished probe has the same node count in both."""
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    capacity = breadth_capacity(instance, prep)
    rates = {}
    for engine in ENGINES:
        stats = {"nodes": 0}
        start = time.perf_counter()
        result = decide(prep, capacity, SearchParams(), start + seconds, stats, engine=engine)
        elapsed = time.perf_counter() - start
        rates[engine] = {"nodes": stats["nodes"], "seconds": elapsed,
                         "finished": result is not TIMEOUT,
                         "nodes_per_second": stats["nodes"] / elapsed if elapsed else 0.0}
    return rates


# -- the table ------------------------------------------------------------------------------
RUNS = {"before": {"engine": "python", "workers": 1}, "after": {"engine": "compiled"}}
"""``before``: the pure-Python search (one worker); ``after``: the compiled core with the
``--workers`` given (default 2)."""


def run_cell(instance, name: str, args, options, which: str) -> tuple[str, dict]:
    settings = dict(RUNS[which])
    settings.setdefault("workers", args.workers)
    result = solve(instance, "search", "offsets", time_limit=args.time_limit, seed=args.seed,
                   **settings, **options)
    cell = f"{result.status.value:9} {result.objective:10} {result.best_bound:10} " \
           f"{result.wall_time_s:7.1f} {result.info['nodes']:10}"
    if not result.valid:
        cell += "  INVALID: " + "; ".join(result.violations)
    row = {**result.summary(), "nodes": result.info["nodes"], **settings,
           "time_limit": args.time_limit, "seed": args.seed, "probes": result.info["probes"],
           "trajectory": [list(sample) for sample in result.trajectory]}
    if args.packings and result.valid and result.solution is not None:
        path = args.packings / f"{name}.{which}.{result.objective}.offsets.csv"
        write_packing(path, instance, result.solution.offsets)
        row["packing"] = path.name
    return cell, row


def main(argv=None) -> int:
    args = parse_args(argv)
    files = suite_files(args)
    if not files:
        return 0
    if args.packings:
        args.packings.mkdir(parents=True, exist_ok=True)
    binary = os.environ.get("MINIMALLOC_BIN")
    options = switches(args)
    runs = [which for which in RUNS if which in args.runs]
    columns = f"{'status':9} {'objective':>10} {'bound':>10} {'time s':>7} {'nodes':>10}"
    header = f"{'instance':9} {'n':>4} " + " | ".join(f"{columns}" for _ in runs)
    if binary:
        header += f" | {'minimalloc':10} {'objective':>10} {'bound':>10} {'time s':>7}"
    print(f"search, {args.time_limit:g} s per instance; " + "; ".join(
        f"{which}: {RUNS[which]['engine']} engine, "
        f"{RUNS[which].get('workers', args.workers)} worker(s)" for which in runs)
        + (f"; MiniMalloc: {binary}" if binary else ""))
    print(header)
    print("-" * len(header))
    solved = dict.fromkeys(runs, 0)
    rates = []
    for path in files:
        instance = read_minimalloc_csv(path)
        name = path.name.split(".")[0]
        row = {"instance": name, "tensors": len(instance)}
        cells = []
        for which in runs:
            cell, row[which] = run_cell(instance, name, args, options, which)
            solved[which] += row[which]["status"] == "OPTIMAL"
            cells.append(cell)
        line = f"{name:9} {len(instance):4} " + " | ".join(cells)
        if binary:
            peer = run_minimalloc(binary, path, args.time_limit)
            line += f" | {peer['status']:10} {peer['objective'] or '-':>10} " \
                    f"{peer['bound']:10} {peer['time']:7.1f}"
            row["minimalloc"] = peer
        print(line, flush=True)
        if args.rate_seconds > 0:
            row["rates"] = nodes_per_second(instance, args.rate_seconds)
            row["rate_seconds"] = args.rate_seconds
            rates.append((name, row["rates"]))
        if args.jsonl:
            with args.jsonl.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
    print("proven optimal: " + ", ".join(f"{which} {solved[which]} of {len(files)}"
                                         for which in runs))
    if rates:
        print(f"\nnodes per second on the same probe (capacity = max breadth, at most "
              f"{args.rate_seconds:g} s per engine; a finished probe counts the same nodes in "
              f"both)")
        print(f"{'instance':9} {'nodes':>9} {'python/s':>10} {'nodes':>10} {'compiled/s':>11} "
              f"{'speed-up':>9}")
        for name, rate in rates:
            python, compiled = rate["python"], rate["compiled"]
            print(f"{name:9} {python['nodes']:9} {python['nodes_per_second']:10.0f} "
                  f"{compiled['nodes']:10} {compiled['nodes_per_second']:11.0f} "
                  f"{compiled['nodes_per_second'] / python['nodes_per_second']:8.1f}x")
        nodes = {engine: sum(r[engine]["nodes"] for _, r in rates) for engine in ENGINES}
        speed = {engine: nodes[engine] / sum(r[engine]["seconds"] for _, r in rates)
                 for engine in ENGINES}
        print(f"{'all':9} {nodes['python']:9} {speed['python']:10.0f} {nodes['compiled']:10} "
              f"{speed['compiled']:11.0f} {speed['compiled'] / speed['python']:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
