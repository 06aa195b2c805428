"""Keep committed run directories small: what the paper reads, nothing else.

Usage::

    python paper/prune.py paper/results/paper paper/results/minimalloc ... [--dry-run]

In every given run directory (``make paper-runs`` names the paper's runs): writes ``failures.csv`` (the failure mode of
every heuristic plan above the proven optimum on the real networks,
:func:`optplan.analysis.failures.failure_table`) while the solution files are there, unless
it exists; removes ``results.parquet``, ``results.csv`` (``results.jsonl`` holds every row),
``logs/`` and the lock file; and keeps only the solution files the layout figure reads: on the
real networks (plain, first repetition), greedy by size's offsets plans above the optimum and
the fastest proven-optimal offsets plan of the same networks.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optplan.analysis.failures import FAILURES_FILE, failure_table  # noqa: E402
from optplan.analysis.load import load_results, optimum_table  # noqa: E402

__all__ = ["kept_solutions", "prune"]


def kept_solutions(run_dir: Path, method: str = "greedy_by_size") -> set[str]:
    """Job ids whose solution file the layout figure reads (module docstring)."""
    rows = load_results([run_dir])
    if rows.empty:
        return set()
    rows = rows[(rows["suite"] == "networks") & ~rows["inplace"].astype(bool)
                & (rows["problem"] == "offsets") & (rows["valid"] == True)]  # noqa: E712
    optima = optimum_table(rows).dropna(subset=["optimum"]).set_index("instance")["optimum"]
    heuristic = rows[(rows["method"] == method) & (rows["repetition"].fillna(0) == 0)]
    failing = heuristic[heuristic["instance"].isin(optima.index)]
    failing = failing[failing["objective"].to_numpy() > optima.loc[failing["instance"]].to_numpy()]
    proofs = rows[(rows["status"] == "OPTIMAL") & rows["instance"].isin(set(failing["instance"]))]
    proofs = proofs.sort_values("wall_time_s").drop_duplicates("instance")
    return set(failing["job_id"]) | set(proofs["job_id"])


def prune(run_dirs, dry_run: bool = False) -> tuple[int, int]:
    """Prune the run directories ``run_dirs``; return (files kept, removed)."""
    kept = removed = 0
    for run_dir in map(Path, run_dirs):
        for name in ("results.parquet", "results.csv", ".lock"):
            path = run_dir / name
            if path.exists():
                removed += 1
                if not dry_run:
                    path.unlink()
        if (run_dir / "logs").is_dir() and not dry_run:
            shutil.rmtree(run_dir / "logs")
        if not (run_dir / FAILURES_FILE).exists() and not dry_run:
            table = failure_table(load_results([run_dir]), [run_dir])
            if len(table):
                table.to_csv(run_dir / FAILURES_FILE, index=False)
        keep = kept_solutions(run_dir)
        for path in sorted((run_dir / "solutions").glob("*")):
            if path.stem in keep:
                kept += 1
            else:
                removed += 1
                if not dry_run:
                    path.unlink()
    return kept, removed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="run directories")
    parser.add_argument("--dry-run", action="store_true", help="only count")
    args = parser.parse_args(argv)
    missing = [str(d) for d in args.runs if not (d / "results.jsonl").is_file()]
    if missing:
        print(f"not a run directory (no results.jsonl): {', '.join(missing)}", file=sys.stderr)
        return 2
    kept, removed = prune(args.runs, args.dry_run)
    print(f"kept {kept} solution files, removed {removed} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
