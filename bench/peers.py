"""Peers side by side (issue 19); not a test. In one run, at one time limit and thread count:
optplan's ``search`` and ``cpsat``, MiniMalloc (``minimalloc``: when ``MINIMALLOC_BIN`` names a
binary you built yourself, never built or vendored here), OmniMalloc's SuperMalloc and every
other OmniMalloc allocator, on MiniMalloc's challenging suite (``$OPTPLAN_SHARED``, default
``../shared``; skipped when absent), the committed networks and the training graphs among them.

    nice -n 10 python bench/peers.py --time-limit 60 --workers 2 [--groups minimalloc]
    python bench/peers.py --run paper/results/peers   # the same tables from an `optplan run`

Per group it prints a table (per instance and method: ✓ when the method proved the optimum
itself, else its gap to the proven optimum; seconds) and a summary per method (proven, at the
optimum, mean and largest gap, seconds). Every answer goes through optplan's validator. The
machine may be shared with other jobs: the seconds are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optplan import load_instance, methods, solve  # noqa: E402
from optplan.analysis.load import load_results  # noqa: E402
from optplan.analysis.peers import (GROUPS, PEER_METHODS, peer_group, peer_summary,  # noqa: E402
                                    peer_table, render_peer_markdown, render_summary_markdown)
from optplan.peers import PeerUnavailableError  # noqa: E402
from optplan.peers.minimalloc import find_solver  # noqa: E402

SHARED = Path(os.environ.get("OPTPLAN_SHARED", REPO.parent / "shared"))
SUITE = SHARED / "peer" / "minimalloc" / "challenging"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, nargs="*",
                        help="print the tables of these run directories instead of running")
    parser.add_argument("--groups", default=",".join(GROUPS),
                        help="comma-separated: " + ", ".join(GROUPS) + " (default: all)")
    parser.add_argument("--instances", help="comma-separated instance names (default: all)")
    parser.add_argument("--methods", default=",".join(PEER_METHODS),
                        help="comma-separated methods (default: every side-by-side method)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--workers", type=int, default=2, help="threads per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jsonl", type=Path, help="also append one JSON line per run here")
    return parser.parse_args(argv)


def instance_paths(args) -> list[tuple[str, str, Path]]:
    """``(name, group, path)`` of the chosen instances."""
    groups = {g.strip() for g in args.groups.split(",") if g.strip()}
    wanted = {n.strip() for n in (args.instances or "").split(",") if n.strip()}
    found = [(path.name.split(".")[0], "minimalloc", path)
             for path in (sorted(SUITE.glob("*.csv")) if SUITE.is_dir() else [])]
    found += [(path.stem, peer_group(path.stem, "networks"), path)
              for path in sorted((REPO / "data" / "networks").glob("*.json"))]
    return [item for item in found
            if item[1] in groups and (not wanted or item[0] in wanted)]


def run_one(path: Path, group: str, method: str, args) -> dict:
    """One results row (the columns :func:`peer_table` reads)."""
    instance = load_instance(path)
    row = {"instance": instance.name if group == "minimalloc" else path.stem,
           "suite": "minimalloc" if group == "minimalloc" else "networks",
           "problem": "offsets", "method": method, "inplace": False,
           "num_tensors": len(instance), "time_limit": args.time_limit,
           "workers": args.workers, "seed": args.seed}
    start = time.perf_counter()
    try:
        result = solve(instance, method, "offsets", time_limit=args.time_limit,
                       workers=args.workers, seed=args.seed)
    except Exception as error:  # noqa: BLE001 - a failing peer is a row, not a crash
        return row | {"status": "ERROR", "objective": None, "valid": None,
                      "lower_bound": None, "best_bound": None,
                      "wall_time_s": time.perf_counter() - start,
                      "reason": f"{type(error).__name__}: {error}".splitlines()[0]}
    return row | {**result.summary(), "instance": row["instance"],
                  "solver_version": result.solver_version, "reason": "; ".join(
                      result.violations[:1])}


def run_bench(args) -> pd.DataFrame:
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    registered = methods()
    unknown = [m for m in chosen if m not in registered]
    if unknown:
        sys.exit(f"unknown method {unknown[0]!r}")
    try:  # the peers' package imports matplotlib (1-2 s): not in the first peer's seconds
        import omnimalloc  # noqa: F401
    except ImportError:
        print("omnimalloc is not installed (pip install 'optplan[peers]'): its rows are "
              "ERROR rows")
    try:
        find_solver()
    except PeerUnavailableError as error:
        print(f"MiniMalloc is not available ({error})"
              + ("; its rows are ERROR rows" if "minimalloc" in chosen else ""))
    print(f"{len(chosen)} methods, {args.time_limit:g} s and {args.workers} workers each; "
          f"MINIMALLOC_BIN={'set' if os.environ.get('MINIMALLOC_BIN') else 'unset'}",
          flush=True)
    rows = []
    for name, group, path in instance_paths(args):
        for method in chosen:
            row = run_one(path, group, method, args)
            rows.append(row)
            print(f"{name:32} {method:34} {row['status']:9} {row['objective'] or '-':>12} "
                  f"{row['wall_time_s']:7.2f}s {row.get('reason') or ''}", flush=True)
            if args.jsonl:
                with args.jsonl.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
    return pd.DataFrame(rows)


def print_tables(results: pd.DataFrame, groups) -> None:
    table = peer_table(results)
    methods_shown = table.attrs["methods"]
    for group in groups:
        part = table[table["group"] == group]
        if part.empty:
            continue
        part.attrs["methods"] = methods_shown
        print()
        print(render_peer_markdown(part, methods_shown, GROUPS[group]))
        print(render_summary_markdown(peer_summary(part), f"{GROUPS[group]}: per method"))


def main(argv=None) -> int:
    args = parse_args(argv)
    groups = [g.strip() for g in args.groups.split(",") if g.strip() in GROUPS]
    if args.run:
        results = load_results(args.run)
    else:
        if not instance_paths(args):
            print("no instances chosen (MiniMalloc's suite absent?): nothing to do")
            return 0
        results = run_bench(args)
    print_tables(results, groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
