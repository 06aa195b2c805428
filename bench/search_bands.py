"""A packing of a MiniMalloc instance lowered by band or skyline repacking or layer search;
not a test.

Starts from a packing (``--start``: a CSV of MiniMalloc's buffer ``id`` and its ``offset``
in bytes, as ``paper/results/search/`` keeps them) and lowers it for ``--seconds``, by

* ``--repack bands`` (the default), :func:`optplan.exact.bands.repack_bands`: each step frees
  the buffers that meet a random band of offsets up to ``--band`` bytes tall (and those above
  the target), and CP-SAT (``--workers``, at most ``--step-seconds`` a step, seeds drawn from
  ``--seed``) places them to minimise their overflow above a target one granule below the
  arena;
* ``--repack skyline``, :func:`optplan.exact.skyline.repack_skyline`: each step keeps the
  buffers below a random level and re-packs the others at that target by a beam (one of
  ``--widths`` wide, at most ``--beam-seconds``, seeds drawn from ``--seed``; one thread);
* ``--repack layers``, :func:`optplan.exact.layers.repack_layers`: each step changes the
  buffers at offset 0 and packs the others above them by a beam (the same options; widths
  250 by default).

Prints
one row per target reached (arena in bytes, seconds, step), then the best arena and its gap
to the max breadth; ``--write`` keeps that packing as the same kind of CSV. Every packing
goes through the independent validator. An interrupted run (SIGINT or SIGTERM, taken once
the step in progress ends) prints and writes what it found, and exits 130.

    python bench/search_bands.py --instances J --start paper/results/search/J.998400.offsets.csv
    python bench/search_bands.py --instances J --start J.csv --seconds 600 --write J.best.csv
    python bench/search_bands.py --instances J --start J.csv --repack skyline --seconds 900
    python bench/search_bands.py --instances J --start J.csv --repack layers --seconds 900
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from optplan.errors import InputError
from optplan.exact import layers, skyline
from optplan.exact.bands import BAND, repack_bands
from optplan.formats.solution_csv import read_solution_csv

from search import (suite_files, suite_instances, suite_parser,  # bench/search.py
                    write_packing)
from search_windows import checked_offsets

REPACKS = {"bands": repack_bands, "skyline": skyline.repack_skyline,
           "layers": layers.repack_layers}
"""The ways to move buffers, by name (the beam repackings' default widths in
``WIDTHS``)."""
WIDTHS = {"skyline": skyline.WIDTHS, "layers": layers.WIDTHS}


def parse_args(argv=None):
    parser = suite_parser(__doc__, "J")
    parser.add_argument("--start", type=Path, required=True,
                        help="the packing to lower: CSV of id,offset (bytes)")
    parser.add_argument("--seconds", type=float, default=1800.0,
                        help="time for the whole run (default: %(default)s)")
    parser.add_argument("--band", type=int,
                        help=f"tallest band in bytes (default: {BAND} granules of the sizes)")
    parser.add_argument("--step-seconds", type=float, default=15.0,
                        help="CP-SAT's time per step at most (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2,
                        help="CP-SAT workers (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the bands and of CP-SAT's seeds (default: %(default)s)")
    parser.add_argument("--repack", choices=tuple(REPACKS), default="bands",
                        help="how each step moves buffers (default: %(default)s)")
    parser.add_argument("--widths", help="skyline, layers: beam widths a step draws from "
                        "(default: " + "; ".join(f"{name} {','.join(map(str, widths))}"
                                                  for name, widths in WIDTHS.items()) + ")")
    parser.add_argument("--beam-seconds", type=float, default=60.0,
                        help="skyline, layers: a beam's time at most (default: %(default)s)")
    parser.add_argument("--write", type=Path, help="write the best packing here (CSV)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    files = suite_files(args)
    if not files:
        return 0
    if len(files) != 1:
        print("--instances: expected one instance (the packing belongs to it)", file=sys.stderr)
        return 2
    try:
        widths = ([int(width) for width in args.widths.split(",")] if args.widths else
                  list(WIDTHS.get(args.repack, ())))
    except ValueError:
        widths = [0]
    if min(widths, default=1) <= 0:
        print(f"--widths {args.widths}: expected positive integers, comma-separated",
              file=sys.stderr)
        return 2
    for flag, value in (("--seconds", args.seconds), ("--step-seconds", args.step_seconds),
                        ("--workers", args.workers), ("--band", args.band),
                        ("--beam-seconds", args.beam_seconds)):
        if value is not None and value <= 0:
            print(f"{flag} {value:g}: expected a positive number", file=sys.stderr)
            return 2
    [(name, instance, prep, breadth, step)] = suite_instances(files)
    try:
        start = read_solution_csv(instance, "offsets", args.start)
    except InputError as error:
        print(error, file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{args.start}: {error.strerror}", file=sys.stderr)
        return 2
    checked_offsets(instance, start.offsets, start.arena_size)
    scale = prep.scale
    if any(offset % (scale * prep.alignment) for offset in start.offsets):
        print(f"{args.start}: offset: expected multiples of {scale * prep.alignment} bytes",
              file=sys.stderr)
        return 2
    band = BAND if args.band is None else max(1, args.band // scale)
    interrupted = []

    def interrupt(signum, frame):
        interrupted.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, interrupt)
    if args.repack == "bands":
        print(f"from {args.start.name}: {start.arena_size:,} bytes; bands up to "
              f"{band * scale:,} bytes, CP-SAT {args.workers} workers, {args.step_seconds:g} s "
              f"a step, seed {args.seed}")
    else:
        print(f"from {args.start.name}: {start.arena_size:,} bytes; {args.repack} beams "
              f"{','.join(map(str, widths))} wide, {args.beam_seconds:g} s each at most, "
              f"seed {args.seed}")
    print(f"{'bytes':>12} {'seconds':>9} {'step':>6}")

    def on_packing(result):
        offsets = [offset * scale for offset in result.offsets]
        checked_offsets(instance, offsets, result.capacity * scale)
        row = result.packings[-1]
        print(f"{row['capacity'] * scale:>12,} {row['seconds']:>9.1f} {row['step']:>6}",
              flush=True)

    began = time.perf_counter()
    scaled = [offset // scale for offset in start.offsets]
    common = dict(floor=breadth, deadline=began + args.seconds, seed=args.seed,
                  on_packing=on_packing, stop=lambda: bool(interrupted))
    if args.repack == "bands":
        result = repack_bands(prep, scaled, band=band, step_seconds=args.step_seconds,
                              workers=args.workers, **common)
    else:
        result = REPACKS[args.repack](prep, scaled, widths=widths,
                                      beam_seconds=args.beam_seconds, **common)
    seconds = time.perf_counter() - began
    offsets = [offset * scale for offset in result.offsets]
    checked_offsets(instance, offsets, result.capacity * scale)
    best, bound = result.capacity * scale, breadth * scale
    print(f"\n{name}: {best:,} bytes after {result.steps} steps in {seconds:.1f} s; max breadth "
          f"{bound:,} (gap {100 * (best - bound) / bound:.2f} %)"
          + ("; optimal" if best == bound else ""))
    if args.write:
        write_packing(args.write, instance, offsets)
    if args.jsonl:
        how = ({"band": band * scale, "step_seconds": args.step_seconds,
                "workers": args.workers} if args.repack == "bands" else
               {"widths": widths, "beam_seconds": args.beam_seconds, "workers": 1})
        row = {"instance": name, "repack": args.repack, "start": args.start.name,
               "start_bytes": start.arena_size, "best_bytes": best, "max_breadth": bound,
               "steps": result.steps, "seconds": round(seconds, 3)} | how | {
               "seed": args.seed, "time_limit": args.seconds, "interrupted": bool(interrupted),
               "packings": [row | {key: row[key] * scale for key in ("capacity", "level")
                                   if key in row} for row in result.packings]}
        with args.jsonl.open("a") as out:
            out.write(json.dumps(row) + "\n")
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
