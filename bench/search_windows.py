"""Time-window relaxations of MiniMalloc's suite as offsets lower bounds; not a test.

Any packing of an instance packs each subset of its buffers, so a subset that no packing fits
within a capacity refutes that capacity for the whole instance. This script measures the
subsets a bound could use cheaply: for each window of consecutive sections (``--widths``,
starting every half width), the buffers live in it, probed by the search's decision procedure
at the whole instance's max breadth for at most ``--probe-seconds``. A window it packs gives
nothing; a window it refutes raises the bound one granule above max breadth. The table says,
per width, how many windows packed, were refuted, or stayed open at the time limit.

    python bench/search_windows.py --instances D,J
    python bench/search_windows.py --instances D --widths 48,56,64 --probe-seconds 30
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from optplan.exact._search_core import TIMEOUT, decide, prepare
from optplan.exact.offsets_bound import breadth_capacity, granule
from optplan.formats.minimalloc_csv import read_minimalloc_csv

from search import SUITE, suite_files  # bench/search.py: the script's folder is on sys.path

RESULTS = ("packed", "refuted", "open")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=SUITE,
                        help="folder of MiniMalloc CSVs (default: %(default)s)")
    parser.add_argument("--instances", default="D,J",
                        help="comma-separated names (default: %(default)s)")
    parser.add_argument("--widths", default="8,16,32,48,64,96,128",
                        help="window widths in sections (default: %(default)s)")
    parser.add_argument("--probe-seconds", type=float, default=3.0,
                        help="time limit of each window's probe (default: %(default)s)")
    parser.add_argument("--jsonl", type=Path, help="also append one JSON line per instance")
    return parser.parse_args(argv)


def probe_window(instance, prep, start: int, width: int, capacity_bytes: int,
                 seconds: float) -> dict:
    """The buffers live in sections ``[start, start + width)`` of ``prep``, decided at
    ``capacity_bytes``: packed, refuted or open (time limit), with tensors, time and nodes."""
    chosen = [i for i in range(len(prep.sizes))
              if prep.section_start[i] < start + width and start < prep.section_end[i]]
    sub = prepare([instance.first_ops[i] for i in chosen], [instance.last_ops[i] for i in chosen],
                  [instance.sizes[i] for i in chosen], instance.alignment)
    stats = {"nodes": 0}
    began = time.perf_counter()
    # Tops of lowest-offset packings are sums of sizes, multiples of the subset's scale.
    answer = decide(sub, capacity_bytes // sub.scale, deadline=began + seconds, stats=stats)
    result = "open" if answer is TIMEOUT else "refuted" if answer is None else "packed"
    return {"start": start, "width": width, "tensors": len(chosen), "result": result,
            "seconds": round(time.perf_counter() - began, 4), "nodes": stats["nodes"]}


def main(argv=None) -> int:
    args = parse_args(argv)
    files = suite_files(args)
    if not files:
        print(f"no MiniMalloc instances found under {args.suite}: skipped")
        return 0
    texts = [text.strip() for text in args.widths.split(",") if text.strip()]
    if not texts or not all(text.isdigit() and int(text) > 0 for text in texts):
        print(f"--widths {args.widths}: expected positive section counts, e.g. 8,16",
              file=sys.stderr)
        return 2
    widths = [int(text) for text in texts]
    if not args.probe_seconds > 0:
        print(f"--probe-seconds {args.probe_seconds:g}: expected a positive time limit",
              file=sys.stderr)
        return 2
    print(f"window relaxations at max breadth, at most {args.probe_seconds:g} s per window")
    for path in files:
        instance = read_minimalloc_csv(path)
        name = path.name.split(".")[0]
        prep = prepare(instance.first_ops, instance.last_ops, instance.sizes,
                       instance.alignment)
        capacity = breadth_capacity(instance, prep) * prep.scale
        step = granule(prep) * prep.scale  # bytes between arenas worth probing
        windows = []
        print(f"\n{name}: {len(instance)} tensors, {prep.num_sections} sections, max breadth "
              f"{capacity:,} bytes")
        print(f"{'width':>6} {'windows':>8} {'packed':>7} {'refuted':>8} {'open':>5} "
              f"{'tensors':>8} {'seconds':>8}")
        # widths beyond the instance are the whole instance: probe it once
        for width in sorted({min(width, prep.num_sections) for width in widths}):
            starts = range(0, prep.num_sections - width + 1, max(1, width // 2))
            rows = [probe_window(instance, prep, start, width, capacity, args.probe_seconds)
                    for start in starts]
            windows += rows
            counts = {result: sum(row["result"] == result for row in rows) for result in RESULTS}
            print(f"{width:6} {len(rows):8} {counts['packed']:7} {counts['refuted']:8} "
                  f"{counts['open']:5} {max(row['tensors'] for row in rows):8} "
                  f"{sum(row['seconds'] for row in rows):8.1f}", flush=True)
        refuted = [row for row in windows if row["result"] == "refuted"]
        bound = capacity + step if refuted else capacity
        print(f"\nbound: {bound:,} bytes ("
              + (f"{len(refuted)} window(s) refute max breadth" if refuted else
                 "no window refutes max breadth") + ")")
        if args.jsonl:
            with args.jsonl.open("a") as handle:
                handle.write(json.dumps({"instance": name, "tensors": len(instance),
                                         "sections": prep.num_sections,
                                         "max_breadth": capacity, "bound": bound,
                                         "probe_seconds": args.probe_seconds,
                                         "windows": windows}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
