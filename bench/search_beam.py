"""How often one beam of the search packs an instance at (or above) its max breadth; not a
test.

``search`` beam-searches its bound (:mod:`optplan.exact.beam`) in seeded tie orders, at a
width that doubles after repeated failures. This script runs, for each instance, each
capacity (``--above``: percents above the max breadth) and each width (``--widths``), one
beam per seed of ``--seeds``, and prints which packed, the seconds each took and the states
it built. Every packing goes through the validator.

    python bench/search_beam.py --instances D
    python bench/search_beam.py --instances D,J --widths 1000,2000,4000 --seeds 0-5
"""

from __future__ import annotations

import json
import sys

from optplan.exact.beam import PER_PARENT, beam

from search import (  # bench/search.py: the script's folder is on sys.path
    suite_instances, suite_parser)
from search_orders import above_option, capacity_above
from search_windows import checked_packing, suite_options


def parse_args(argv=None):
    parser = suite_parser(__doc__, "D")
    parser.add_argument("--above", default="0", help="capacities in percent above the max "
                        "breadth (default: %(default)s)")
    parser.add_argument("--widths", default="2000", help="beam widths (default: %(default)s)")
    parser.add_argument("--seeds", default="0-5", help="seeds of the tie order, a range "
                        "first-last (default: %(default)s)")
    parser.add_argument("--per-parent", type=int, default=PER_PARENT,
                        help="children of one state kept at most (default: %(default)s)")
    return parser.parse_args(argv)


def seed_range(text: str) -> list[int] | None:
    first, _, last = text.partition("-")
    try:
        low, high = int(first), int(last or first)
    except ValueError:
        return None
    return list(range(low, high + 1)) if 0 <= low <= high else None


def main(argv=None) -> int:
    args = parse_args(argv)
    files, options = suite_options(
        args, above_option(args.above),
        ("--widths", args.widths, int, lambda width: width >= 1, "positive widths"),
        ("--per-parent", str(args.per_parent), int, lambda count: count >= 1,
         "a positive count"))
    if not files:
        return 0
    seeds = seed_range(args.seeds)
    if options is None or seeds is None:
        if seeds is None:
            print(f"--seeds {args.seeds}: expected a range first-last of seeds >= 0",
                  file=sys.stderr)
        return 2
    above, widths, (per_parent,) = options
    print(f"beams of the search, seeds {seeds[0]}-{seeds[-1]}, {per_parent} per parent")
    for name, instance, prep, breadth, step in suite_instances(files):
        print(f"{'above%':>6} {'capacity':>11} {'width':>6} {'seed':>4} {'result':>8} "
              f"{'seconds':>8} {'states':>11}")
        for percent in sorted(set(above)):
            capacity = capacity_above(breadth, percent, step)
            for width in widths:
                for seed in seeds:
                    found = beam(prep, capacity, width, per_parent=per_parent, seed=seed)
                    result = "packed" if isinstance(found.offsets, list) else "emptied"
                    if result == "packed":
                        try:
                            checked_packing(instance, prep, found.offsets,
                                            capacity * prep.scale)
                        except RuntimeError as error:
                            print(f"error: {error}", file=sys.stderr)
                            return 1
                    print(f"{percent:6g} {capacity * prep.scale:11,} {width:6} {seed:4} "
                          f"{result:>8} {found.seconds:8.1f} {found.children:11,}",
                          flush=True)
                    if args.jsonl:
                        with args.jsonl.open("a") as handle:
                            handle.write(json.dumps({
                                "instance": name, "capacity": capacity * prep.scale,
                                "above_percent": percent, "width": width, "seed": seed,
                                "per_parent": per_parent, "result": result,
                                "seconds": round(found.seconds, 3),
                                "states": found.children}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
