"""How often one random order of the search packs an instance near its bound; not a test.

After its first sweep, ``search``'s improve loop probes capacities below its incumbent in
fresh random static orders (``jittered``), each for a short time (0.1 s for the first 60 s
of them). Whether a probe packs is heavy-tailed in the order, so what decides how far the
loop gets in a time limit is the chance that one such probe packs at a capacity. This script
measures that chance: for each instance and each capacity (``--above``: percents above the
max breadth, rounded down to the granule), it decides the capacity in ``--probes`` random
orders drawn from ``--seed`` (the same orders at every capacity), each for at most
``--probe-seconds``, and prints how many packed, the rate with its 95 % Wilson upper bound,
the median nodes of the probes that packed and the probe time spent per packing; its JSON
line also says which orders packed (``packing_draws``, counting from 1, as
:func:`optplan.exact.search.replay_order` rebuilds them) and in how many nodes. Every
packing goes through the validator. With ``--chains`` the orders are those of the instance
with its chains merged (:mod:`optplan.exact.chains`), as ``search``'s random probes draw
them; a probe of it that finds nothing proves nothing and counts as not packed. With
``--learn`` the orders are failure-directed (:mod:`optplan.exact.failures`, preorder
``WAT`` alone), as the search's rounds at the bound draw them: each learns from the failed
section checks of the orders before it at the same capacity; with ``--prefixes`` as well,
most orders also keep a prefix of the deepest path the orders before reached
(:meth:`optplan.exact.failures.Learner.prefix`), as the search's rounds draw them. With
``--window FIRST:END`` it samples the buffers live in those sections alone (whole
lifetimes), at the same capacities, above the whole instance's max breadth: where in time an
instance's packings get hard. With ``--complete SECONDS`` as well, CP-SAT (2 workers) then
tries, for at most that long, to place the instance's other buffers around each packing of
the window, kept where it is: a completion is a packing of the whole instance (validated),
CP-SAT's refutation says that this packing of the window extends to none. On MiniMalloc's
J, whose two max-breadth sections are 201 and 202, the chained buffers of sections 0-195 pack at its max breadth in about one order in a
hundred, and those of sections 0-196 in none; the whole of J packs at its max breadth in 2
of 15,000 (``paper/results/search/orders.jsonl``).

    python bench/search_orders.py --instances D,J
    python bench/search_orders.py --instances D --above 0,1,2 --probes 400 --jsonl orders.jsonl
    python bench/search_orders.py --instances J --above 0,1,2,3 --chains
    python bench/search_orders.py --instances J --above 0,1 --chains --window 0:196
    python bench/search_orders.py --instances J --above 0 --chains --window 0:189 --complete 5
    python bench/search_orders.py --instances J --above 0 --chains --learn --probes 3000
    python bench/search_orders.py --instances J --above 0 --chains --learn --prefixes
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time

from optplan.exact._search_core import RANK_JITTER, SearchParams, decide, jittered, prepare
from optplan.exact.chains import chained
from optplan.exact.failures import PREORDER, Learner
from optplan.exact.search import IMPROVE_SLICE
from optplan.model import OffsetsSolution
from optplan.validate import validate_offsets

from search import (  # bench/search.py: the script's folder is on sys.path
    suite_instances, suite_parser)
from search_complete import complete, window_option
from search_windows import live_in_window, part_of, probe_seconds_option, suite_options

Z95 = 1.959964


def parse_args(argv=None) -> argparse.Namespace:
    parser = suite_parser(__doc__, "D,J")
    parser.add_argument("--above", default="0,0.5,1,1.5,2,3",
                        help="capacities in percent above the max breadth "
                             "(default: %(default)s)")
    parser.add_argument("--probes", type=int, default=100,
                        help="random orders per capacity (default: %(default)s)")
    parser.add_argument("--probe-seconds", type=float, default=IMPROVE_SLICE,
                        help="time limit of each probe (default: %(default)s, the improve "
                             "loop's first probe length)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random orders (default: %(default)s)")
    parser.add_argument("--chains", action="store_true",
                        help="search the instance with its chains merged, as the search's "
                             "random probes do (optplan.exact.chains)")
    parser.add_argument("--learn", action="store_true",
                        help="failure-directed orders (optplan.exact.failures): each order "
                             "learns from the failed section checks of the ones before, "
                             "preorder WAT alone, as the search's rounds at the bound drew them "
                             "before they kept prefixes")
    parser.add_argument("--prefixes", action="store_true",
                        help="with --learn: orders that also keep a prefix of the deepest "
                             "path reached so far, as the search's rounds at the bound draw "
                             "them")
    parser.add_argument("--window", metavar="FIRST:END",
                        help="only the buffers live in sections FIRST..END-1 (whole "
                             "lifetimes), at capacities above the whole instance's max breadth")
    parser.add_argument("--complete", type=float, metavar="SECONDS",
                        help="with --window: CP-SAT's time to place the other buffers around "
                             "each packing of the window (default: no completion)")
    return parser.parse_args(argv)


def wilson_upper(successes: int, trials: int, z: float = Z95) -> float:
    """The upper end of the Wilson score interval of a rate of ``successes`` in ``trials``."""
    rate = successes / trials
    spread = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials))
    return min(1.0, (rate + z * z / (2 * trials) + spread) / (1 + z * z / trials))


def capacity_above(breadth: int, percent: float, step: int) -> int:
    """The largest multiple of ``step`` above ``breadth`` by at most ``percent`` (scaled
    units; ``breadth`` is one)."""
    return breadth + int(breadth * percent / 100) // step * step


def above_option(text: str) -> tuple:
    """The :func:`search_windows.checked` option of ``--above``: percents from 0 to 100."""
    return ("--above", text, float, lambda percent: 0 <= percent <= 100,
            "percents from 0 to 100, e.g. 0,0.5")


def probe_orders(instance, prep, capacity: int, probes: int, seconds: float,
                 seed: int, chains=None, completion=None, learn: bool = False,
                 prefixes: bool = False) -> dict:
    """``capacity`` (scaled units) decided in ``probes`` random orders drawn from ``seed``,
    of the chained instance when ``chains`` (:func:`optplan.exact.chains.chained`) is given;
    with ``learn``, failure-directed orders (:class:`optplan.exact.failures.Learner`, one
    per capacity, preorder :data:`~optplan.exact.failures.PREORDER` alone), keeping
    prefixes of the deepest path with ``prefixes``.
    ``completion``, when given, is called with each packing (offsets in bytes) and the
    order's draw and answers ``"completed"``, ``"refuted"`` or ``"open"`` and its wall
    seconds: the entry counts each outcome and lists the seconds."""
    rng = random.Random(seed)
    packed, nodes, spent, packing_nodes, packing_draws = 0, 0, 0.0, [], []
    completions, completing = dict.fromkeys(COMPLETIONS, 0), []
    base = prep if chains is None else chains.prep
    learner = Learner(base, seed, prefixes) if learn else None
    for draw in range(1, probes + 1):
        stats = {"nodes": 0}
        began = time.perf_counter()
        if learn:
            answer, stats["nodes"], *_ = learner.probe(capacity, rng, SearchParams(),
                                                       began + seconds)
        else:
            answer = decide(jittered(base, rng), capacity, deadline=began + seconds,
                            stats=stats)
        spent += time.perf_counter() - began
        nodes += stats["nodes"]
        if answer is None and chains is None:
            raise SystemExit(f"capacity {capacity * prep.scale} refuted: no packing fits it, "
                             "so the optimum lies above it and there is nothing to sample")
        if isinstance(answer, list):
            answer = answer if chains is None else chains.expand(answer)
            solution = OffsetsSolution.from_offsets(
                instance, tuple(offset * prep.scale for offset in answer))
            violations = validate_offsets(instance, solution)
            if violations or solution.arena_size > capacity * prep.scale:
                raise SystemExit(f"a packing at {capacity * prep.scale} failed validation: "
                                 f"{violations[:3]}")
            packed += 1
            packing_nodes.append(stats["nodes"])
            packing_draws.append(draw)
            if completion is not None:
                outcome, wall = completion(solution.offsets, draw)
                completions[outcome] += 1
                completing.append(round(wall, 3))
    return {"capacity": capacity * prep.scale, "probes": probes, "packed": packed,
            "seconds": round(spent, 3), "nodes": nodes, "packing_nodes": packing_nodes,
            "packing_draws": packing_draws} | (
        {"completions": completions, "completion_seconds": completing}
        if completion is not None else {})


COMPLETIONS = ("completed", "refuted", "open")
"""What CP-SAT made of a window's packing (``--complete``): a packing of the whole instance
around it, a proof that there is none, or neither in its time."""


def completer(instance, whole_prep, chosen: list[int], capacity_bytes: int, seconds: float):
    """The ``completion`` of :func:`probe_orders` for the buffers ``chosen`` of ``instance``
    (the window's, in :func:`windowed`'s order): CP-SAT places every other buffer around a
    packing of them (offsets in bytes), kept fixed, within ``capacity_bytes``, for at most
    ``seconds``, seeded by the order's draw; a completion is validated."""
    everything = list(range(len(whole_prep.sizes)))

    def complete_around(offsets, draw: int) -> str:
        fixed = dict(zip(chosen, offsets))
        packing, status, wall = complete(instance, whole_prep, everything, fixed, {},
                                         capacity_bytes, seconds, draw)
        if packing is not None:
            return "completed", wall
        return ("refuted" if status == "INFEASIBLE" else "open"), wall

    return complete_around


def windowed(instance, prep, window: tuple[int, int]):
    """The buffers of ``instance`` live in sections ``[first, end)`` of ``prep`` (whole
    lifetimes), as an instance, its prepared form and their indices in ``instance``; the
    whole instance when the window is all its sections."""
    chosen = live_in_window(prep, *window)
    if window == (0, prep.num_sections):
        return instance, prep, chosen
    part = part_of(instance, chosen)
    return part, prepare(part.first_ops, part.last_ops, part.sizes, part.alignment), chosen


def main(argv=None) -> int:
    args = parse_args(argv)
    files, options = suite_options(
        args, above_option(args.above),
        ("--probes", str(args.probes), int, lambda count: count >= 1, "a positive count"),
        probe_seconds_option(args.probe_seconds),
        *([] if args.complete is None else [
            ("--complete", f"{args.complete:g}", float, lambda limit: limit > 0,
             "a positive time limit")]))
    if not files or options is None:
        return 2 if files else 0
    if args.prefixes and not args.learn:
        print("--prefixes: needs --learn, whose orders keep them", file=sys.stderr)
        return 2
    if args.complete is not None and args.window is None:
        print("--complete: needs --window, the part whose packings CP-SAT completes",
              file=sys.stderr)
        return 2
    above = options[0]
    print(f"{'learned' if args.learn else 'random'} orders of the search, {args.probes} per "
          f"capacity, at most {args.probe_seconds:g} s each (seed {args.seed}, spread "
          f"{RANK_JITTER:g}" + (", chains merged" if args.chains else "")
          + (f", preorder {PREORDER}" if args.learn else "")
          + (", prefixes kept" if args.learn and args.prefixes else "") + ")")
    for name, whole, whole_prep, breadth, step in suite_instances(files, sections=True):
        window = (0, whole_prep.num_sections) if args.window is None else window_option(
            args.window, whole_prep.num_sections)
        if window is None:
            print(f"--window {args.window}: expected FIRST:END within "
                  f"0:{whole_prep.num_sections}", file=sys.stderr)
            return 2
        instance, prep, chosen = windowed(whole, whole_prep, window)
        if args.window is not None:
            print(f"sections {window[0]}-{window[1] - 1}: {len(instance)} tensors")
        chains = chained(prep) if args.chains else None
        print(f"{'above%':>6} {'capacity':>11} {'probes':>6} {'packed':>6} {'rate':>6} "
              f"{'rate95':>6} {'nodes/pack':>10} {'s/pack':>7}")
        rows = []
        for percent in sorted(set(above)):
            capacity = capacity_above(breadth, percent, step) * whole_prep.scale // prep.scale
            completion = None if args.complete is None else completer(
                whole, whole_prep, chosen, capacity * prep.scale, args.complete)
            row = {"above_percent": percent} | probe_orders(
                instance, prep, capacity, args.probes, args.probe_seconds, args.seed, chains,
                completion, args.learn, args.prefixes)
            rows.append(row)
            packed = row["packed"]
            median = f"{statistics.median(row['packing_nodes']):,.0f}" if packed else "-"
            per_packing = f"{row['seconds'] / packed:.1f}" if packed else "-"
            print(f"{percent:6g} {row['capacity']:11,} {row['probes']:6} {packed:6} "
                  f"{packed / row['probes']:6.3f} {wilson_upper(packed, row['probes']):6.3f} "
                  f"{median:>10} {per_packing:>7}", flush=True)
            if completion is not None:
                print(f"{'':6} completed around them by CP-SAT (at most {args.complete:g} s "
                      "each): " + ", ".join(f"{key} {count}" for key, count
                                            in row["completions"].items())
                      + f"; {sum(row['completion_seconds']):.1f} s in all", flush=True)
        if args.jsonl:
            with args.jsonl.open("a") as handle:
                handle.write(json.dumps({"instance": name, "tensors": len(instance),
                                         "max_breadth": breadth * whole_prep.scale,
                                         "probe_seconds": args.probe_seconds,
                                         "seed": args.seed, "spread": RANK_JITTER,
                                         "chains": args.chains,
                                         "tensors_chained": len(chains.groups) if chains
                                         else len(instance),
                                         "capacities": rows}
                                        | ({"window": list(window)} if args.window else {})
                                        | ({"learn": True, "preorder": PREORDER,
                                            "prefixes": args.prefixes} if args.learn else {})
                                        | ({"complete_seconds": args.complete}
                                           if args.complete is not None else {}))
                            + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
