"""Subset relaxations of MiniMalloc's suite as offsets lower bounds; not a test.

Any packing of an instance packs each subset of its buffers, so a subset that no packing fits
within a capacity refutes that capacity for the whole instance. This script measures two
families of subsets a bound could use cheaply, each probed by the search's decision procedure
at the whole instance's max breadth for at most ``--probe-seconds``:

* time windows: for each window of consecutive sections (``--widths``, starting every half
  width, and one ending at the last section), the buffers live in it;
* tight sections: for each slack ``--slacks`` (percent of the max breadth), the buffers live
  in some section whose breadth is within that slack of the max breadth, the sections where
  a packing at the max breadth has the least room.

A subset it packs gives nothing; a subset it refutes raises the bound one granule above max
breadth. A subset the depth-first probe leaves open may still pack: with ``--beam-seconds``
it then gets beams of the search (:mod:`optplan.exact.beam`, widths and seeds as a run of
``search`` takes them) for up to that long, and a beam's packing (validated) counts as
packed, with its width and seed in the row (the row keeps how many beams ran and for how
long either way; the tables' seconds include them). The tables say, per width, how many windows
packed (how many by a beam), were refuted, or stayed open, and per slack what its subset did.

    python bench/search_windows.py --instances D,J
    python bench/search_windows.py --instances D --widths 48,56,64 --probe-seconds 30
    python bench/search_windows.py --instances J --slacks 5,6,7 --widths 8
    python bench/search_windows.py --instances D,J --beam-seconds 120
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from optplan.exact._search_core import TIMEOUT, decide, prepare
from optplan.exact.beam import beam
from optplan.exact.search import beam_width
from optplan.model import Instance, OffsetsSolution
from optplan.validate import validate_offsets

from search import (  # bench/search.py: the script's folder is on sys.path
    suite_files, suite_instances, suite_parser)

RESULTS = ("packed", "refuted", "open")


def parse_args(argv=None) -> argparse.Namespace:
    parser = suite_parser(__doc__, "D,J")
    parser.add_argument("--widths", default="8,16,32,48,64,96,128",
                        help="window widths in sections (default: %(default)s)")
    parser.add_argument("--slacks", default="0,2,4,5,6,8",
                        help="tight-section slacks in percent of the max breadth "
                             "(default: %(default)s)")
    parser.add_argument("--probe-seconds", type=float, default=3.0,
                        help="time limit of each subset's probe (default: %(default)s)")
    parser.add_argument("--beam-seconds", type=float, default=0.0,
                        help="time for beams on each subset the probe leaves open "
                             "(default: %(default)s, no beams)")
    return parser.parse_args(argv)


def checked_packing(part: Instance, sub, offsets, capacity_bytes: int) -> None:
    """Raise unless the scaled ``offsets`` of ``sub`` (``part`` prepared for the search) pack
    ``part`` within ``capacity_bytes`` (:func:`checked_offsets`)."""
    checked_offsets(part, [o * sub.scale for o in offsets], capacity_bytes)


def checked_offsets(part: Instance, offsets, capacity_bytes: int) -> None:
    """Raise unless ``offsets`` (bytes) pack ``part`` within ``capacity_bytes`` (the
    independent validator)."""
    solution = OffsetsSolution.from_offsets(part, list(offsets))
    problems = validate_offsets(part, solution)
    if problems or solution.arena_size > capacity_bytes:
        raise RuntimeError(f"an invalid packing: {problems or solution.arena_size}")


def beams_on(part: Instance, sub, capacity_bytes: int, seconds: float) -> tuple[dict, list]:
    """Beams on ``sub`` at ``capacity_bytes`` for up to ``seconds``, the k-th (from 0)
    :func:`~optplan.exact.search.beam_width` wide with tie-order seed k, as a run of
    ``search`` has them, until one packs: how many ran (``beams``) and their
    ``beam_seconds``, and the ``beam_width`` and ``beam_seed`` of the one that packed, if one
    did; and its scaled offsets (validated), or None."""
    began = time.perf_counter()
    deadline, k, packed, offsets = began + seconds, 0, {}, None
    while not packed and time.perf_counter() < deadline:
        width = beam_width(k)
        found = beam(sub, capacity_bytes // sub.scale, width, seed=k, deadline=deadline)
        if isinstance(found.offsets, list):
            checked_packing(part, sub, found.offsets, capacity_bytes)
            packed, offsets = {"beam_width": width, "beam_seed": k}, found.offsets
        k += 1
    return {"beams": k, "beam_seconds": round(time.perf_counter() - began, 4)} | packed, offsets


def part_of(instance: Instance, chosen: list[int]) -> Instance:
    """The buffers ``chosen`` of ``instance`` (whole lifetimes) as an instance of their own."""
    return Instance.from_tuples([(instance.first_ops[i], instance.last_ops[i],
                                  instance.sizes[i]) for i in chosen],
                                alignment=instance.alignment)


def probe_buffers(instance, chosen: list[int], capacity_bytes: int, seconds: float,
                  beam_seconds: float = 0.0) -> dict:
    """The buffers ``chosen`` of ``instance`` (whole lifetimes) decided at ``capacity_bytes``:
    packed, refuted or open (time limit), with tensors, time and nodes; a subset left open
    gets beams for up to ``beam_seconds`` (:func:`beams_on`: the row gains their count and
    seconds, and a packing found so makes it ``packed``, with the beam's width and seed)."""
    part = part_of(instance, chosen)
    sub = prepare(part.first_ops, part.last_ops, part.sizes, part.alignment)
    stats = {"nodes": 0}
    began = time.perf_counter()
    # Tops of lowest-offset packings are sums of sizes, multiples of the subset's scale.
    answer = decide(sub, capacity_bytes // sub.scale, deadline=began + seconds, stats=stats)
    result = "open" if answer is TIMEOUT else "refuted" if answer is None else "packed"
    row = {"tensors": len(chosen), "result": result,
           "seconds": round(time.perf_counter() - began, 4), "nodes": stats["nodes"]}
    if result == "packed":
        checked_packing(part, sub, answer, capacity_bytes)
    elif result == "open" and beam_seconds > 0:
        row |= beams_on(part, sub, capacity_bytes, beam_seconds)[0]
        if "beam_width" in row:
            row["result"] = "packed"
    return row


def window_starts(sections: int, width: int) -> list[int]:
    """First sections of the windows of ``width`` (at most ``sections``): every half width
    from 0, and the window that ends at the last section, so that every section is in one.

    >>> window_starts(212, 64), window_starts(8, 4), window_starts(3, 3)
    ([0, 32, 64, 96, 128, 148], [0, 2, 4], [0])
    """
    starts = list(range(0, sections - width + 1, max(1, width // 2)))
    return starts if starts[-1] == sections - width else starts + [sections - width]


def live_in(prep, sections) -> list[int]:
    """The buffers of ``prep`` live in at least one of ``sections`` (a set of indices)."""
    return [i for i in range(len(prep.sizes))
            if any(k in sections for k in range(prep.section_start[i], prep.section_end[i]))]


def live_in_window(prep, first: int, end: int) -> list[int]:
    """The buffers of ``prep`` live in sections ``[first, end)``."""
    return [i for i in range(len(prep.sizes))
            if prep.section_start[i] < end and first < prep.section_end[i]]


def probe_window(instance, prep, start: int, width: int, capacity_bytes: int,
                 seconds: float, beam_seconds: float = 0.0) -> dict:
    """The buffers live in sections ``[start, start + width)`` of ``prep``."""
    chosen = live_in_window(prep, start, start + width)
    return {"start": start, "width": width} | probe_buffers(instance, chosen, capacity_bytes,
                                                            seconds, beam_seconds)


def section_breadths(prep) -> list[int]:
    """Each section's breadth in scaled units (the sum of its members' sizes)."""
    return [sum(prep.sizes[i] for i in members) for members in prep.section_members]


def probe_tight(instance, prep, slack_percent: float, capacity_bytes: int,
                seconds: float, beam_seconds: float = 0.0) -> dict:
    """The buffers live in the sections whose breadth is within ``slack_percent`` of the max
    breadth (all in scaled units)."""
    breadths = section_breadths(prep)
    least = max(breadths) * (1 - slack_percent / 100)
    sections = {k for k, breadth in enumerate(breadths) if breadth >= least}
    return {"slack_percent": slack_percent, "sections": len(sections)} | probe_buffers(
        instance, live_in(prep, sections), capacity_bytes, seconds, beam_seconds)


def row_seconds(row: dict) -> float:
    """A subset's probe and beam seconds."""
    return row["seconds"] + row.get("beam_seconds", 0.0)


def numbers(text: str, convert, valid) -> list | None:
    """The comma-separated values of ``text`` converted, or None when one is not valid."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        values = [convert(part) for part in parts]
    except ValueError:
        return None
    return values if values and all(valid(value) for value in values) else None


def checked(*options) -> list | None:
    """Each option ``(flag, text, convert, valid, expected)`` parsed by :func:`numbers`, or
    None after printing the one-line complaint about the first one that is not valid."""
    values = []
    for flag, text, convert, valid, expected in options:
        parsed = numbers(text, convert, valid)
        if parsed is None:
            print(f"{flag} {text}: expected {expected}", file=sys.stderr)
            return None
        values.append(parsed)
    return values


def probe_seconds_option(seconds: float) -> tuple:
    """The :func:`checked` option of ``--probe-seconds``: a positive time limit."""
    return ("--probe-seconds", f"{seconds:g}", float, lambda limit: limit > 0,
            "a positive time limit")


def suite_options(args, *options) -> tuple[list, list | None]:
    """The files of ``--instances`` (:func:`suite_files`; none: the script skips) and, when
    there are some, ``options`` parsed by :func:`checked` (None after its complaint)."""
    files = suite_files(args)
    return files, (checked(*options) if files else [])


def main(argv=None) -> int:
    args = parse_args(argv)
    files, options = suite_options(
        args,
        ("--widths", args.widths, int, lambda width: width > 0,
         "positive section counts, e.g. 8,16"),
        ("--slacks", args.slacks, float, lambda slack: 0 <= slack <= 100,
         "percents from 0 to 100, e.g. 0,2.5"),
        probe_seconds_option(args.probe_seconds),
        ("--beam-seconds", f"{args.beam_seconds:g}", float, lambda limit: limit >= 0,
         "a time limit >= 0"))
    if not files or options is None:
        return 2 if files else 0
    widths, slacks, _, _ = options
    beam_seconds = args.beam_seconds
    print(f"subset relaxations at max breadth, at most {args.probe_seconds:g} s per subset"
          + (f", then beams for at most {beam_seconds:g} s" if beam_seconds else ""))
    for name, instance, prep, breadth, step in suite_instances(files, sections=True):
        capacity = breadth * prep.scale
        step *= prep.scale  # bytes between arenas worth probing
        windows = []
        print(f"{'width':>6} {'windows':>8} {'packed':>7} {'beam':>5} {'refuted':>8} "
              f"{'open':>5} {'tensors':>8} {'seconds':>8}")
        # widths beyond the instance are the whole instance: probe it once
        for width in sorted({min(width, prep.num_sections) for width in widths}):
            starts = window_starts(prep.num_sections, width)
            rows = [probe_window(instance, prep, start, width, capacity, args.probe_seconds,
                                 beam_seconds) for start in starts]
            windows += rows
            counts = {result: sum(row["result"] == result for row in rows) for result in RESULTS}
            by_beam = sum("beam_width" in row for row in rows)
            print(f"{width:6} {len(rows):8} {counts['packed']:7} {by_beam:5} "
                  f"{counts['refuted']:8} {counts['open']:5} "
                  f"{max(row['tensors'] for row in rows):8} "
                  f"{sum(map(row_seconds, rows)):8.1f}", flush=True)
        print(f"\n{'slack%':>6} {'sections':>8} {'tensors':>8} {'result':>8} {'beam':>10} "
              f"{'seconds':>8}")
        tight = []
        for slack in sorted(set(slacks)):
            row = probe_tight(instance, prep, slack, capacity, args.probe_seconds, beam_seconds)
            tight.append(row)
            by = (f"{row['beam_width']}/{row['beam_seed']}" if "beam_width" in row else "-")
            print(f"{slack:6g} {row['sections']:8} {row['tensors']:8} {row['result']:>8} "
                  f"{by:>10} {row_seconds(row):8.1f}", flush=True)
        refuted = [row for row in windows + tight if row["result"] == "refuted"]
        bound = capacity + step if refuted else capacity
        print(f"\nbound: {bound:,} bytes ("
              + (f"{len(refuted)} subset(s) refute max breadth" if refuted else
                 "no subset refutes max breadth") + ")")
        if args.jsonl:
            with args.jsonl.open("a") as handle:
                handle.write(json.dumps({"instance": name, "tensors": len(instance),
                                         "sections": prep.num_sections,
                                         "max_breadth": capacity, "bound": bound,
                                         "probe_seconds": args.probe_seconds,
                                         "beam_seconds": beam_seconds,
                                         "windows": windows, "tight": tight}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
