"""optplan's plans measured inside the runtimes: ExecuTorch and TensorFlow Lite Micro.

For every network of optplan's torch zoo (ExecuTorch, portable kernels) and every ``.tflite``
model of the MediaPipe 0.10.21 wheel (TFLite Micro), one row: the runtime's own planner bytes
(ExecuTorch's ``non_const_buffer_sizes``, TFLM's planned head), optplan's (the same, with
optplan's plan inside the runtime), the lower bound, the solver status, and whether the outputs
with optplan's plan equal those with the runtime's over ``--inputs`` random inputs (max |diff|
otherwise). A model the runtime cannot run gives a row with its one-line error (the op).

Each row runs in a fresh process; rows are appended (flushed) to ``OUT/runtimes.jsonl`` as they
finish and a rerun skips the rows already there, so an interrupted run loses nothing.
``OUT/manifest.json`` records each session's versions, commit and machine. Timings on a loaded
machine are not final.

    python bench/runtimes.py --out paper/results/runtimes            # everything
    python bench/runtimes.py --runtime tflm --models iris_landmark   # one model
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import sys
import time
import zipfile
from datetime import datetime, timezone
from pathlib import Path

MEDIAPIPE = "mediapipe==0.10.21"
RUNTIME_PACKAGES = ("torch", "executorch", "tflite-micro", "transformers")


def executorch_networks() -> list[str]:
    from optplan.torch.models import model_names

    return model_names()


def mediapipe_models() -> dict[str, str]:
    """Model name → ``wheel:`` source of every ``.tflite`` in the MediaPipe wheel."""
    from optplan.importers.sources import _cache_dir, resolve_source

    # resolving one member fetches (once) and caches the wheel
    resolve_source(f"wheel:{MEDIAPIPE}/mediapipe/modules/iris_landmark/iris_landmark.tflite")
    wheel = next((_cache_dir() / MEDIAPIPE.replace("==", "-")).glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".tflite"))
    return {Path(n).stem: f"wheel:{MEDIAPIPE}/{n}" for n in names}


def run_row(runtime: str, name: str, source: str, options: dict) -> dict:
    """One row, in a worker process."""
    from optplan.errors import InputError, OptplanError

    start = time.perf_counter()
    row = {"runtime": runtime, "network": name, "source": source}
    try:
        if runtime == "executorch":
            from optplan.runtimes.executorch import compare
            comparison = compare(name, **options)
        else:
            from optplan.importers.sources import resolve_source
            from optplan.runtimes.tflite_micro import compare
            comparison = compare(resolve_source(source), **options)
    except InputError as error:     # named by its source: no machine path in the results
        row["error"] = str(InputError(error.message, file=source, field=error.field))
    except OptplanError as error:
        row["error"] = str(error)
    else:
        row.update(comparison.summary(), plan_source=comparison.source,
                   method=comparison.method, time_limit=comparison.time_limit,
                   plan_wall_time_s=round(comparison.wall_time_s, 3),
                   inputs=comparison.inputs)
    row.update(workers=options.get("workers"), seed=options.get("seed"),
               wall_time_s=round(time.perf_counter() - start, 3))
    return row


def _versions() -> dict:
    from optplan.experiments.manifest import package_versions

    return dict(package_versions(RUNTIME_PACKAGES), mediapipe_wheel=MEDIAPIPE.split("==")[1])


def write_manifest(out: Path, args, started: str, rows: int) -> None:
    """Add this session (command, settings, times, versions, commit, machine) to
    ``OUT/manifest.json``; a resumed or partial run adds a session."""
    from optplan.experiments.manifest import provenance

    path = out / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {
        "format": "optplan-bench-runtimes", "version": 1, "sessions": []}
    manifest["sessions"].append({
        "command": ["python", "bench/runtimes.py", *sys.argv[1:]],
        "settings": {"runtime": args.runtime, "models": args.models, "method": args.method,
                     "time_limit": args.time_limit, "workers": args.workers,
                     "seed": args.seed, "inputs": args.inputs},
        "started_at": started,
        "ended_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "rows_run": rows, "runtimes": _versions(), "provenance": provenance()})
    path.write_text(json.dumps(manifest, indent=1) + "\n")


def _line(row: dict) -> str:
    if "error" in row:
        return f"{row['runtime']:<10} {row['network']:<34} cannot run: {row['error']}"
    saved = row["runtime_planner_bytes"] - row["optplan_bytes"]
    share = saved / row["runtime_planner_bytes"] if row["runtime_planner_bytes"] else 0.0
    return (f"{row['runtime']:<10} {row['network']:<34} {row['runtime_planner_bytes']:>12} "
            f"{row['optplan_bytes']:>12} {row['lower_bound']:>12} {share:>7.1%} "
            f"{row['status']:<9} {str(row['outputs_equal']):<6} {row['max_abs_diff']:<8g} "
            f"{row['wall_time_s']:>7.1f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", choices=("executorch", "tflm", "all"), default="all")
    parser.add_argument("--models", nargs="*", help="only these networks/models")
    parser.add_argument("--method", default="search")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--inputs", type=int, default=3)
    parser.add_argument("--out", type=Path, help="directory for runtimes.jsonl + manifest.json")
    args = parser.parse_args(argv)

    jobs = []
    if args.runtime in ("executorch", "all"):
        jobs += [("executorch", name, name) for name in executorch_networks()]
    if args.runtime in ("tflm", "all"):
        jobs += [("tflm", name, source) for name, source in mediapipe_models().items()]
    if args.models:
        jobs = [job for job in jobs if job[1] in args.models]
    done = set()
    results = None
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        results = args.out / "runtimes.jsonl"
        if results.exists():
            done = {(row["runtime"], row["network"])
                    for row in map(json.loads, results.read_text().splitlines())}
    jobs = [job for job in jobs if job[:2] not in done]
    options = {"method": args.method, "time_limit": args.time_limit, "inputs": args.inputs,
               "workers": args.workers, "seed": args.seed}
    started = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    print(f"{'runtime':<10} {'network':<34} {'runtime B':>12} {'optplan B':>12} "
          f"{'lower bd':>12} {'saved':>7} {'status':<9} {'equal':<6} {'max|d|':<8} "
          f"{'wall s':>7}", flush=True)
    context = multiprocessing.get_context("spawn")
    for runtime, name, source in jobs:
        # one process per row: native runtimes keep memory, and a crash takes only its row
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            row = pool.submit(run_row, runtime, name, source, options).result()
        print(_line(row), flush=True)
        if results is not None:
            with results.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
    if args.out:
        write_manifest(args.out, args, started, len(jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
