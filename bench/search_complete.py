"""A window's packing completed to more of the instance by CP-SAT; not a test.

A subset of an instance's buffers that packs within a capacity is a partial answer: here, the
buffers live in a window of consecutive sections (``--window FIRST:END``, sections as the
search cuts time), packed at the max breadth (or ``--capacity``) by beams of the search
(widths and seeds as a run of ``search`` takes them, for up to ``--beam-seconds``). The
packing is then extended towards ``--extend-to`` (a section left or right of the window) by
CP-SAT, ``--step`` sections at a time: each step packs the buffers live in the grown window
with the far side of the last packing fixed (buffers that begin ``--margin`` sections or more
right of the new first section, extending leftward; that end that far left of the new end,
extending rightward) and the rest of it given as a hint (new buffers get none). A step that
CP-SAT does not pack in ``--cpsat-seconds`` is tried again with the next seed of ``--seeds``
(unless CP-SAT refuted it: the fixed part does not fit), then with twice the margin, and so
on until nothing is fixed, then the same with half the step, down to one section; when none
packs, the extension stops there. Every packing goes through the independent validator.
CP-SAT runs with 2 workers (:data:`WORKERS`). An interrupted run (SIGINT or SIGTERM, taken
once the CP-SAT try in progress ends) prints and writes what it packed, and exits 130.

    python bench/search_complete.py --instances J --window 116:212 --extend-to 84 --step 32 \
        --margin 96
    python bench/search_complete.py --instances J --window 116:212 --extend-to 0 --step 8
"""

from __future__ import annotations

import json
import signal
import sys

from optplan.exact._search_core import prepare
from optplan.exact.budget import Budget
from optplan.exact.cpsat_solve import cp_model, solve_model
from optplan.model import Instance

from search import suite_instances, suite_parser  # bench/search.py (on sys.path)
from search_windows import (beams_on, checked_offsets, live_in_window, part_of,
                            suite_options)

WORKERS = 2
"""CP-SAT workers of every step (recorded in the JSON line)."""


def parse_args(argv=None):
    parser = suite_parser(__doc__, "J")
    parser.add_argument("--window", default="116:212",
                        help="the first window, sections FIRST:END (default: %(default)s)")
    parser.add_argument("--extend-to", type=int, default=84,
                        help="the section to extend to: 0 to FIRST (leftward) or END to the "
                             "section count (rightward; default: %(default)s)")
    parser.add_argument("--capacity", type=int,
                        help="arena in bytes (default: the max breadth)")
    parser.add_argument("--beam-seconds", type=float, default=300.0,
                        help="beams' time for the first window (default: %(default)s)")
    parser.add_argument("--step", type=int, default=32,
                        help="sections added per step at most (default: %(default)s)")
    parser.add_argument("--margin", type=int, default=64,
                        help="sections between the new edge and the fixed buffers "
                             "(default: %(default)s)")
    parser.add_argument("--cpsat-seconds", type=float, default=60.0,
                        help="CP-SAT's time per try (default: %(default)s)")
    parser.add_argument("--seeds", type=int, default=2,
                        help="CP-SAT seeds tried per step and margin (default: %(default)s)")
    return parser.parse_args(argv)


def validated(instance: Instance, packing: dict, capacity: int) -> dict:
    """``packing`` (buffer: offset in bytes) after the independent validator passed it on the
    part of ``instance`` it places, within ``capacity`` bytes."""
    chosen = sorted(packing)
    checked_offsets(part_of(instance, chosen), [packing[i] for i in chosen], capacity)
    return packing


def beam_window(instance: Instance, chosen: list[int], capacity: int, seconds: float):
    """Beams on the buffers ``chosen`` at ``capacity`` bytes for up to ``seconds`` as
    :func:`search_windows.beams_on` runs them: the packing (buffer: offset in bytes,
    validated) or None, how many beams ran and their seconds."""
    part = part_of(instance, chosen)
    sub = prepare(part.first_ops, part.last_ops, part.sizes, part.alignment)
    row, offsets = beams_on(part, sub, capacity, seconds)
    packing = (None if offsets is None else
               {i: offset * sub.scale for i, offset in zip(chosen, offsets)})
    return packing, row["beams"], row["beam_seconds"]


def complete(instance: Instance, prep, chosen: list[int], fixed: dict, hint: dict,
             capacity: int, seconds: float, seed: int):
    """CP-SAT on the buffers ``chosen`` within ``capacity`` bytes, those in ``fixed`` at their
    offsets (bytes) and ``hint`` offsets hinted; time is the search's sections, offsets are in
    ``prep``'s scaled units. Returns the packing (validated) or None, CP-SAT's status name and
    its wall seconds."""
    model = cp_model().CpModel()
    scale, variables, times, spans = prep.scale, {}, [], []
    for i in chosen:
        size = prep.sizes[i]
        times.append(model.new_fixed_size_interval_var(
            prep.section_start[i], prep.section_end[i] - prep.section_start[i], f"t{i}"))
        if i in fixed:
            offset = fixed[i] // scale
        else:
            offset = variables[i] = model.new_int_var(0, capacity // scale - size, f"u{i}")
            if i in hint:
                model.add_hint(offset, hint[i] // scale)
        spans.append(model.new_fixed_size_interval_var(offset, size, f"m{i}"))
    model.add_no_overlap_2d(times, spans)
    run = solve_model(model, variables, budget=Budget(seconds), workers=WORKERS, seed=seed,
                      solver_params=None)
    if not run.has_solution:
        return None, run.status, run.wall_time
    packing = {i: fixed[i] if i in fixed else run.values[i] * scale for i in chosen}
    return validated(instance, packing, capacity), run.status, run.wall_time


def halvings(step: int) -> list[int]:
    """``step``, half of it, and so on down to one section.

    >>> halvings(8), halvings(3)
    ([8, 4, 2, 1], [3, 1])
    """
    return [step >> k for k in range(step.bit_length())]


def margins(margin: int, width: int) -> list[int]:
    """``margin``, twice it, and so on while less than ``width`` (the grown window's
    sections), then ``width``: the last try fixes nothing.

    >>> margins(16, 100), margins(200, 100)
    ([16, 32, 64, 100], [100])
    """
    wider = []
    while margin < width:
        wider.append(margin)
        margin *= 2
    return wider + [width]


def grow(instance: Instance, prep, packing: dict, first: int, end: int, leftward: bool,
         args, capacity: int, report) -> dict | None:
    """One step: the buffers live in ``[first, end)`` (grown ``leftward`` or rightward)
    packed with the far side of ``packing`` fixed, trying every margin (:func:`margins`) and
    seed in turn (a refutation of one fixed part ends its seeds: another seed cannot pack
    it); the packing or None. ``report(row)`` is called after each try."""
    chosen = live_in_window(prep, first, end)
    for margin in margins(args.margin, end - first):
        far = ((lambda i: prep.section_start[i] >= first + margin) if leftward else
               (lambda i: prep.section_end[i] <= end - margin))
        fixed = {i: packing[i] for i in chosen if i in packing and far(i)}
        hint = {i: packing[i] for i in chosen if i in packing and i not in fixed}
        for seed in range(args.seeds):
            found, status, seconds = complete(instance, prep, chosen, fixed, hint, capacity,
                                              args.cpsat_seconds, seed)
            report({"first": first, "end": end, "tensors": len(chosen), "fixed": len(fixed),
                    "hinted": len(hint), "margin": margin, "seed": seed, "status": status,
                    "seconds": round(seconds, 3)})
            if found is not None:
                return found
            if status == "INFEASIBLE":
                break
    return None


def extend(instance: Instance, prep, packing: dict, first: int, end: int, target: int,
           args, capacity: int, report, reached: dict) -> None:
    """Grow the window ``[first, end)`` packed by ``packing`` towards ``target`` (see the
    module's description) by :func:`grow` steps, keeping the last packing and its window in
    ``reached`` (``packing``, ``first``, ``end``) after each step, so that an interrupted
    run keeps what it packed."""
    leftward = target < first
    while (first > target) if leftward else (end < target):
        windows = dict.fromkeys(  # the steps clipped at the target grow the same window once
            (max(target, first - step), end) if leftward else (first, min(target, end + step))
            for step in halvings(args.step))
        for new_first, new_end in windows:
            found = grow(instance, prep, packing, new_first, new_end, leftward, args,
                         capacity, report)
            if found is not None:
                packing, first, end = found, new_first, new_end
                reached |= {"packing": packing, "first": first, "end": end}
                break
        else:
            return


def window_option(text: str, sections: int) -> tuple[int, int] | None:
    """``FIRST:END`` as two sections with ``0 <= FIRST < END <= sections``, else None.

    >>> window_option("116:212", 212), window_option("5:5", 212), window_option("x", 9)
    ((116, 212), None, None)
    """
    first, _, end = text.partition(":")
    try:
        first, end = int(first), int(end)
    except ValueError:
        return None
    return (first, end) if 0 <= first < end <= sections else None


def interrupt(signum, frame):
    """SIGTERM as SIGINT: the run stops between two CP-SAT tries and writes what it has."""
    raise KeyboardInterrupt


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, interrupt)
    args = parse_args(argv)
    files, options = suite_options(
        args,
        ("--step", str(args.step), int, lambda step: step > 0, "a positive section count"),
        ("--margin", str(args.margin), int, lambda margin: margin > 0,
         "a positive section count"),
        ("--seeds", str(args.seeds), int, lambda seeds: seeds > 0, "a positive count"),
        ("--cpsat-seconds", f"{args.cpsat_seconds:g}", float, lambda limit: limit > 0,
         "a positive time limit"),
        ("--beam-seconds", f"{args.beam_seconds:g}", float, lambda limit: limit > 0,
         "a positive time limit"))
    if not files or options is None:
        return 2 if files else 0
    for name, instance, prep, breadth, _ in suite_instances(files, sections=True):
        window = window_option(args.window, prep.num_sections)
        first, end = window or (0, 0)
        target_valid = 0 <= args.extend_to <= first or end <= args.extend_to <= prep.num_sections
        capacity = breadth * prep.scale if args.capacity is None else args.capacity
        if window is None or not target_valid or capacity < breadth * prep.scale:
            print(f"--window {args.window} --extend-to {args.extend_to} --capacity {capacity}: "
                  f"expected FIRST:END within 0:{prep.num_sections}, a section from 0 to "
                  f"FIRST or from END to {prep.num_sections}, and a capacity of at least the "
                  f"max breadth ({breadth * prep.scale})", file=sys.stderr)
            return 2
        chosen = live_in_window(prep, first, end)
        try:
            packing, beams, beam_seconds = beam_window(instance, chosen, capacity,
                                                       args.beam_seconds)
        except KeyboardInterrupt:
            print(f"interrupted in the beams of window {first}:{end}: nothing packed",
                  file=sys.stderr)
            return 130
        print(f"window {first}:{end} ({len(chosen)} tensors) at {capacity:,} bytes: "
              + ("packed" if packing else "open") + f" by {beams} beam(s), {beam_seconds:.1f} s")
        steps = []

        def report(row):
            steps.append(row)
            print(f"{row['first']:5}:{row['end']:<4} {row['tensors']:7} {row['fixed']:6} "
                  f"{row['hinted']:6} {row['margin']:6} {row['seed']:4} {row['status']:>10} "
                  f"{row['seconds']:8.1f}", flush=True)

        reached = {"packing": packing, "first": first, "end": end}
        interrupted = False
        if packing:
            print(f"{'window':>10} {'tensors':>7} {'fixed':>6} {'hinted':>6} {'margin':>6} "
                  f"{'seed':>4} {'status':>10} {'seconds':>8}")
            try:
                extend(instance, prep, packing, first, end, args.extend_to, args, capacity,
                       report, reached)
            except KeyboardInterrupt:  # (or SIGTERM): keep the steps and what they packed
                interrupted = True
            packing = reached["packing"]
            print(f"\n{'interrupted; ' if interrupted else ''}packed sections "
                  f"{reached['first']}:{reached['end']}, {len(packing)} of "
                  f"{len(instance)} tensors, at {capacity:,} bytes")
        if args.jsonl:
            with args.jsonl.open("a") as handle:
                handle.write(json.dumps({
                    "instance": name, "tensors": len(instance), "sections": prep.num_sections,
                    "capacity": capacity, "window": [first, end], "extend_to": args.extend_to,
                    "beams": beams, "beam_seconds": round(beam_seconds, 3),
                    "step": args.step, "margin": args.margin, "seeds": args.seeds,
                    "cpsat_seconds": args.cpsat_seconds, "workers": WORKERS,
                    "steps": steps, "interrupted": interrupted,
                    "reached": [reached["first"], reached["end"]] if packing else None,
                    "packed": len(packing) if packing else 0}) + "\n")
        if interrupted:
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
