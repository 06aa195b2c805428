"""``search``: a dedicated exact method for the offsets problem, after MiniMalloc.

MiniMalloc (Moffitt, "MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated
Machine Learning", ASPLOS'23; ``google/minimalloc``) decides "is there a packing with arena
<= C?" by a depth-first search over canonical packings (see
:mod:`optplan.exact._search_core`). This module adds the optimisation on top: refute
capacities upward from the lower bound, and sweep short probes downward from the best
heuristic; with two workers both at once. A probe that finds no packing proves the bound
C + one granule; a probe that runs out of time proves nothing. A run that has probed for a
minute without closing the gap goes on in rounds that repack its best packing or probe the
bound in random orders, in turn (:meth:`_Progress.repack`); with two workers and a time
limit the prove loop starts those rounds after its share of refuting, the bound's first.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import threading
import time

from optplan import __version__
from optplan.errors import InputError
from optplan.exact import layers, skyline
from optplan.exact._search_core import (ENGINES, PREORDERS, TIMEOUT, Prepared, SearchParams,
                                        decide, jittered, prepare)
from optplan.exact.bands import repack_bands
from optplan.exact.beam import beam
from optplan.exact.chains import chained
from optplan.exact.failures import PREORDER, Learner, replay_learned
from optplan.exact.budget import SPLIT
from optplan.exact.offsets_bound import breadth_capacity, granule, refute_upward
from optplan.exact.run import ExactRun
from optplan.heuristics.constructions import stacked_offsets
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["search", "pack", "SearchParams", "TIMEOUT", "PREORDERS", "random_draw", "replay_order",
           "replay_probe", "replay_learned", "beam_width", "luby"]

SOLVER = "optplan-search"
IMPROVE_SLICE = 0.1
"""Seconds of the first probes below the incumbent (see :meth:`_Progress.improve`). Shorter
probes find more packings per second only far from the bound: on J's chained instance,
orders of 0.003 s pack 3 % above its max breadth three times as often per second as orders
of 0.1 s, and none of 6,000 packs within 1 % (``paper/results/search/orders.jsonl``)."""
BEAM_WIDTH = 250
"""States per level of the narrowest beams (:mod:`optplan.exact.beam`): the k-th beam of a
run is ``BEAM_WIDTH * luby(k + 1)`` wide (:func:`luby`), each in its own seeded order of ties,
so that every width gets about as much time as every other. Which width packs soonest
depends on the instance: at MiniMalloc's D's max breadth 8 of 150 beams of width 200 pack
(8.4 s of beams per packing), 5 of 6 of width 2000 (about 21 s per packing), and J, 1 %
above its max breadth, needs width 2000 (``bench/search_beam.py``;
``paper/results/search/beam.jsonl``)."""
RANDOM_LEVEL_SECONDS = 60.0
"""The improve loop's random probes last :data:`IMPROVE_SLICE` seconds for their first
``RANDOM_LEVEL_SECONDS`` seconds, then twice as long for twice as long, and so on."""

REPACK_AFTER = 60.0
"""Seconds of probing after which a run's improve loop stops probing and goes on in the
rounds of the last stage instead (:meth:`_Progress.repack`; switch ``repack``): the
60-second runs of ``bench/search.py`` never get there."""
REPACK_STALL = 300.0
"""Seconds a round of repacking may go without reaching a lower arena before the next
round takes over; a round at the bound lasts this long unless it decides the bound."""
REPACKS = {"layers": layers.repack_layers, "skyline": skyline.repack_skyline,
           "bands": functools.partial(repack_bands, workers=1)}
"""The repackings a run takes in turn, by name: layer search changes the bottom layer,
skyline repacking rebuilds the top, band repacking (CP-SAT, one worker: the other loop has
the other core) moves a band across all of time. On MiniMalloc's J each did a part of the
chain to the optimum that the others did not (``paper/results/search/layers.jsonl``)."""
BOUND_ROUND = "bound"
"""The loop name of a round of the last stage that probes the proven bound itself in random
orders (:meth:`_Progress.bound_round`); every other round of the stage is one."""


def _params(switches: dict) -> SearchParams:
    valid = SearchParams.switch_names()
    for name, value in switches.items():
        if name not in valid:
            raise InputError(f"unknown switch {name!r} of method 'search'; valid: "
                             + ", ".join(valid), field=name)
        if not isinstance(value, bool):
            raise InputError(f"switch {name!r} must be true or false, got {value!r}", field=name)
    return SearchParams(**switches)


def _prepare(instance: Instance) -> Prepared:
    if instance.inplace_pairs:
        raise InputError(f"method 'search' does not support in-place pairs (instance "
                         f"{instance.name!r} has {len(instance.inplace_pairs)})",
                         field="inplace")
    return prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)


def pack(instance: Instance, capacity: int, params: SearchParams = SearchParams(),
         deadline: float | None = None, *, stats: dict | None = None,
         engine: str = "compiled"):
    """Decide whether ``instance`` packs with arena ``<= capacity`` (bytes).

    Parameters
    ----------
    instance : Instance
        Without in-place pairs.
    capacity : int
        The largest allowed ``offset + size``.
    params : SearchParams
        The search techniques to use.
    deadline : float, optional
        A :func:`time.perf_counter` value after which the search gives up.
    stats : dict, optional
        ``stats["nodes"]`` accumulates the search nodes.
    engine : str
        ``"compiled"`` or ``"python"`` (see :data:`~optplan.exact._search_core.ENGINES`).

    Returns
    -------
    tuple of int, None or TIMEOUT
        Offsets (multiples of the alignment) of a packing, ``None`` when none exists (proven),
        or :data:`TIMEOUT` when the deadline passed first (nothing proven).

    Examples
    --------
    >>> tetris = Instance.from_tuples([(0, 1, 2), (1, 2, 1), (2, 3, 2)])
    >>> pack(tetris, 3), pack(tetris, 2)
    ((0, 2, 0), None)
    """
    prep = _prepare(instance)
    result = decide(prep, capacity // prep.scale, params, deadline, stats, engine=engine)
    if result is None or result is TIMEOUT:
        return result
    return tuple(offset * prep.scale for offset in result)


def luby(i: int) -> int:
    """The i-th term (from 1) of Luby's restart sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ...:
    the powers of two, each as often in total (weighted by its value) as every smaller one.

    >>> [luby(i) for i in range(1, 16)]
    [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
    """
    if i < 1:
        raise ValueError(f"Luby's sequence starts at 1, got {i}")
    while True:
        k = i.bit_length()
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


def beam_width(k: int) -> int:
    """States per level of the k-th beam of a run (from 0): ``BEAM_WIDTH * luby(k + 1)``.

    >>> [beam_width(k) // BEAM_WIDTH for k in range(7)]
    [1, 1, 2, 1, 1, 2, 4]
    """
    return BEAM_WIDTH * luby(k + 1)


def _answer(result, chains) -> tuple[str, list[int] | None]:
    """A depth-first probe's ``result`` as its record's outcome and the instance's offsets:
    ``"feasible"`` and the packing (expanded, when the probe searched the chained instance
    ``chains``), ``"timeout"``, or, with no packing, ``"infeasible"`` for the instance itself
    and ``"emptied"`` for its chained instance (which proves nothing)."""
    if result is TIMEOUT:
        return "timeout", None
    if result is None:
        return ("infeasible" if chains is None else "emptied"), None
    return "feasible", (result if chains is None else chains.expand(result))


class _Progress:
    """The probes of one run and the state its probing loops share (one thread each with two
    workers): the incumbent and the proven bound live in the :class:`ExactRun`; ``bound`` is
    that bound in scaled units. Capacities are in scaled units."""

    def __init__(self, run: ExactRun, prep: Prepared, bound: int, beam_seed: int = 0):
        self.run, self.prep, self.bound = run, prep, bound
        self.beam_seed, self.beams, self.rounds = beam_seed, 0, 0
        self.probes: list[dict] = []
        self.stop = bytearray(1)  # set once the incumbent meets the bound: stops the other loop
        # What the rounds at the bound learn (optplan.exact.failures), kept from round to
        # round: made by the first round (a run's rounds share its switches).
        self.learner: Learner | None = None
        self.lock = threading.Lock()
        run.raise_bound(min(bound * prep.scale, run.objective))
        if run.meets_bound():
            self.stop[0] = 1

    @functools.cached_property
    def chains(self):
        """The run's chained instance (:func:`optplan.exact.chains.chained`), built once for
        the improve loop's random probes and every round at the bound; ``None`` without
        chains."""
        return chained(self.prep)

    def high(self) -> int:
        """The largest capacity that would improve on the incumbent (a multiple of the
        granule)."""
        step = granule(self.prep)
        return (self.run.objective - 1) // self.prep.scale // step * step

    def record(self, loop: str, capacity: int, result: str, seconds: float, nodes: int,
               offsets, jittered: bool = False, **replay) -> None:
        """Book one probe: a packing is a candidate incumbent, a refutation raises the bound.
        ``replay`` (a beam's ``width`` and ``seed``) is kept in the probe's record."""
        scale, run = self.prep.scale, self.run
        with self.lock:
            if result == "feasible":
                run.offer(OffsetsSolution.from_offsets(
                    run.instance, tuple(offset * scale for offset in offsets)))
            elif result == "infeasible":
                self.bound = max(self.bound, capacity + granule(self.prep))
            run.raise_bound(min(self.bound * scale, run.objective))
            self.probes.append({"capacity": capacity * scale, "result": result,
                                "seconds": round(seconds, 6), "nodes": nodes, "loop": loop,
                                "jittered": jittered} | replay)
            if run.meets_bound():
                self.stop[0] = 1

    def beam(self, deadline: float | None) -> float:
        """One beam (:mod:`optplan.exact.beam`, loop ``"beam"``); returns its seconds. The
        k-th beam of the run (from 0, over both loops) aims at the bound when k is even (a
        packing there closes the gap) and at the middle of the gap when k is odd (a packing
        there halves it), takes ties in the order of seed ``beam_seed + k`` and is
        :func:`beam_width` states wide. A beam that empties
        proves nothing (result ``"emptied"``). Its probe record keeps its ``width`` and
        ``seed``: the beam is deterministic given those and the capacity, so the record
        replays it (:func:`replay_probe`)."""
        with self.lock:
            k = self.beams
            self.beams += 1
        step, low = granule(self.prep), self.bound
        capacity = low if k % 2 == 0 else max(low, (low + self.high()) // 2 // step * step)
        width, seed = beam_width(k), self.beam_seed + k
        found = beam(self.prep, capacity, width, seed=seed, deadline=deadline, stop=self.stop)
        outcome = ("feasible" if isinstance(found.offsets, list) else
                   "timeout" if found.offsets is TIMEOUT else "emptied")
        self.record("beam", capacity, outcome, found.seconds, found.children,
                    found.offsets if outcome == "feasible" else None, width=width, seed=seed)
        return found.seconds

    def beams_to(self, deadline: float) -> None:
        """Beams (:meth:`beam`) until ``deadline`` or until the gap closes."""
        while not self.stop[0] and time.perf_counter() < deadline and (
                self.bound <= self.high()):
            self.beam(deadline)

    def packing(self) -> list[int] | None:
        """The incumbent's offsets in scaled units, or None when it has none there (a warm
        start whose offsets are not multiples of the scaled alignment)."""
        unit = self.prep.scale * self.prep.alignment
        solution = self.run.solution
        if solution is None or any(offset % unit for offset in solution.offsets):
            return None
        return [offset // self.prep.scale for offset in solution.offsets]

    def repack(self, deadline: float | None, params: SearchParams = SearchParams()) -> None:
        """The last stage: rounds until ``deadline``, until the gap closes or until the other
        loop stops the run. Round k (over both loops, from 0) has seed ``beam_seed + k``;
        when k is even it probes the bound (:meth:`bound_round`), when k is odd it repacks
        the incumbent of the moment by the ((k - 1) / 2)-th repacking of :data:`REPACKS` in
        turn (loop ``"repack"``), until it has gone :data:`REPACK_STALL` seconds without a
        lower arena. Every arena a repacking round reaches is booked as a packing
        (``method``, ``seed`` and the round's ``steps`` so far in its record; ``nodes`` 0: a
        step is a beam or a CP-SAT solve, not a node); a round that reaches none is booked
        once, as ``"unchanged"``. Repacking closes the gap from above, a probe at the bound
        closes it at once where the optimum is the bound: a run knows neither which its
        instance needs, so the two take turns. ``params`` are the bound rounds' switches."""
        while not self.stop[0] and self.bound <= self.high() and (
                deadline is None or time.perf_counter() < deadline):
            start = self.packing()
            if start is None:
                return
            with self.lock:
                k = self.rounds
                self.rounds += 1
            seed = self.beam_seed + k
            if k % 2 == 0:
                self.bound_round(params, seed, deadline)
                continue
            name = list(REPACKS)[k // 2 % len(REPACKS)]
            began = last = time.perf_counter()

            def reached(result):  # called within this round only: no late binding
                nonlocal last
                last = time.perf_counter()
                self.record("repack", result.capacity, "feasible", last - began, 0,
                            result.offsets, method=name, seed=seed, steps=result.steps)

            def stalled() -> bool:
                return bool(self.stop[0]) or time.perf_counter() - last > REPACK_STALL

            found = REPACKS[name](self.prep, start, floor=self.bound, deadline=deadline,
                                  seed=seed, on_packing=reached, stop=stalled)
            if not found.packings:
                self.record("repack", found.capacity, "unchanged",
                            time.perf_counter() - began, 0, None, method=name, seed=seed,
                            steps=found.steps)

    def bound_round(self, params: SearchParams, seed: int, deadline: float | None) -> None:
        """Probe the proven bound (loop :data:`BOUND_ROUND`) in fresh failure-directed orders
        (:class:`optplan.exact.failures.Learner`: random orders drawn from
        ``random.Random(seed)`` that move forward the buffers of the sections where the
        probes before failed, and most of which keep a prefix of the deepest path the probes
        before reached; preorder :data:`~optplan.exact.failures.PREORDER` alone; one learner
        per run, kept from round to round), of
        the instance with its chains merged when it has any and the switch ``chains`` is on
        (a packing there is a packing, a search that finds none proves nothing), each for
        :data:`IMPROVE_SLICE` seconds, until one decides the bound, :data:`REPACK_STALL`
        seconds pass, ``deadline`` comes or the other loop stops the run. Booked once, as
        the round's last probe: ``"feasible"`` (the gap is closed), ``"infeasible"`` (a
        search of the instance itself refuted the bound: it rises a granule), or
        ``"timeout"``; with the round's ``seconds`` and ``nodes``, its ``seed``, the orders it
        drew (``draws``; the last one decided, if one did), the nodes of the last
        (``last_nodes``), its preorder, and the buffers' ``scores`` and the ``prefix`` it was
        drawn with: :func:`replay_probe` searches that order again.
        On MiniMalloc's J, whose optimum is its max breadth, 2 of 15,000 plain random orders
        of 0.1 s pack it, about one failure-directed order in a thousand does, and 8 of 1,200
        that also keep prefixes do (``bench/search_orders.py``;
        ``paper/results/search/orders.jsonl``), where the repackings stop about 1 % above it.
        In its 60 s runs (two workers) the prove loop's round, begun after 6 s of refuting,
        packed J with its 31st to 242nd order at seeds 0-3 (9.1-30.7 s into the run) and
        drew 528 orders without a packing at seed 4
        (``paper/results/search/minimalloc_before_after.jsonl``, ``seeds.jsonl``)."""
        rng, capacity = random.Random(seed), self.bound
        chains = self.chains if params.chains else None
        base = self.prep if chains is None else chains.prep
        if self.learner is None:
            self.learner = Learner(base, self.beam_seed)
        learner = self.learner
        began = time.perf_counter()
        stop_at = began + REPACK_STALL
        stop_at = stop_at if deadline is None else min(stop_at, deadline)
        draws, nodes, outcome, found, scores, prefix, last = 0, 0, "timeout", None, [], [], 0
        while not self.stop[0] and time.perf_counter() < stop_at:
            result, last, scores, prefix = learner.probe(
                capacity, rng, params, min(time.perf_counter() + IMPROVE_SLICE, stop_at),
                self.stop)
            draws, nodes = draws + 1, nodes + last
            answer, found = _answer(result, chains)
            if answer in ("feasible", "infeasible"):  # the order decided the bound
                outcome = answer
                break
        if draws:
            self.record(BOUND_ROUND, capacity, outcome, time.perf_counter() - began, nodes,
                        found, jittered=True, seed=seed, draws=draws, last_nodes=last,
                        preorder=PREORDER, scores=scores, prefix=prefix,
                        **({"chains": True} if chains is not None else {}))

    def improve(self, params: SearchParams, deadline: float | None, engine: str,
                alone: bool, rng: random.Random) -> None:
        """Sweep capacities downward from one granule below the incumbent with short probes;
        a packing restarts the sweep below the new incumbent. A timed-out or emptied probe
        steps down one granule (or 1/16 of the way to the bound, when that is more); a sweep
        that reaches the bound restarts at the top. Once only the bound itself is left,
        ``alone`` says whether to probe it (no other loop does), to the deadline.

        The first sweep searches the plain static orders. After it, on the compiled engine,
        the loop spends half its time on beams (:meth:`beam`; switch ``beams``; compiled
        only, so a run on the Python reference stays pure Python). Every other probe searches a
        fresh random order (:func:`jittered`, drawn from ``rng``), of the instance with its
        chains merged when it has any (:mod:`optplan.exact.chains`; switch ``chains``): a
        packing there is a packing, one that finds none proves nothing (result
        ``"emptied"``, as an empty beam's). On MiniMalloc's J, of 400 random orders of 0.1 s,
        13 pack the chained instance within 2 % of the bound and 45 within 3 %, none J
        itself within 3 % (``bench/search_orders.py``). After
        :data:`REPACK_AFTER` seconds of this loop, on the compiled engine, it goes on in the
        last stage's rounds to the deadline instead (:meth:`repack`; switch ``repack``).
        Probes last :data:`IMPROVE_SLICE` seconds; random probes double in length after
        :data:`RANDOM_LEVEL_SECONDS` seconds of them, again after twice as long, and so on
        (by time, not by sweeps: near the bound a sweep is a few probes, and a length that
        doubled per sweep would soon be minutes). The search's run time is heavy-tailed in
        the capacity and in the order:
        on MiniMalloc's D (in KiB) the plain order packs 995 in 0.9 s while 996-999 run for
        minutes, and no plain probe packed below 984 in 2400 s, yet of 400 random orders
        searched for 0.1 s each, 8 pack 991 and 1 packs 982; searched for 1 s each, 7 and 2
        of 100 do; 2 of 15,000 orders of 0.1 s pack the bound 963 itself
        (``bench/search_orders.py``; ``paper/results/search/orders.jsonl``). Per
        second of probing, many short probes in many orders find more packings than fewer
        long ones; the slow doubling still lets probes grow as long as a packing needs."""
        step, began = granule(self.prep), time.perf_counter()
        capacity, sweeps, random_seconds = None, 0, 0.0
        beam_seconds = 0.0
        chains = self.chains if params.chains else None
        while not self.stop[0]:
            high, low = self.high(), self.bound
            now = time.perf_counter()
            if low > high or (low == high and not alone) or (
                    deadline is not None and now >= deadline):
                break
            if engine == "compiled" and params.repack and (
                    now - began >= REPACK_AFTER and self.packing() is not None):
                self.repack(deadline, params)
                break
            if sweeps and engine == "compiled" and params.beams and (
                    beam_seconds <= random_seconds):
                beam_seconds += self.beam(deadline)
                continue
            if capacity is None or capacity > high:
                capacity = high
            elif capacity < low:  # the sweep reached the bound
                capacity, sweeps = high, sweeps + 1
            randomized = bool(sweeps) and low < high
            restricted = randomized and chains is not None
            prep = (jittered(chains.prep if restricted else self.prep, rng) if randomized
                    else self.prep)
            level = int(1 + random_seconds / RANDOM_LEVEL_SECONDS).bit_length() - 1
            seconds = IMPROVE_SLICE * 2 ** level
            probe_deadline = now + seconds if low < high else None
            if deadline is not None:
                probe_deadline = deadline if probe_deadline is None else min(probe_deadline,
                                                                              deadline)
            stats = {"nodes": 0}
            result = decide(prep, capacity, params, probe_deadline, stats, engine=engine,
                            stop=self.stop)
            outcome, found = _answer(result, chains if restricted else None)
            spent = time.perf_counter() - now
            random_seconds += spent if randomized else 0.0
            self.record("improve", capacity, outcome, spent, stats["nodes"], found,
                        jittered=randomized,
                        **({"chains": True} if restricted else {}))
            if outcome in ("timeout", "emptied"):
                capacity -= max(step, (capacity - low) // 16 // step * step)
            else:
                capacity = None


def random_draw(probes: list[dict], index: int) -> int | None:
    """Which order from the run's seed ``probes[index]`` searched (``probes``: a run's
    ``info["probes"]``): ``n`` for the improve loop's n-th random order (counting from 1),
    ``None`` for a probe in the plain orders. :meth:`_Progress.improve` draws one order per
    random probe, so :func:`replay_order` rebuilds it, and the search in one order is
    deterministic: deciding the probe's capacity in it again, without a time limit, searches
    the same nodes."""
    def in_random_order(probe: dict) -> bool:
        return probe["loop"] == "improve" and bool(probe.get("jittered"))

    if not in_random_order(probes[index]):
        return None
    return sum(map(in_random_order, probes[:index + 1]))


def replay_order(prep: Prepared, seed: int, draw: int) -> Prepared:
    """The ``draw``-th random order (counting from 1) of a run of ``prep`` with ``seed``, as
    :meth:`_Progress.improve` drew it (see :func:`random_draw`)."""
    rng = random.Random(seed)
    for _ in range(draw):
        order = jittered(prep, rng)
    return order


def replay_probe(prep: Prepared, seed: int, probes: list[dict], index: int,
                 params: SearchParams = SearchParams()) -> tuple[object, int]:
    """Search ``probes[index]`` of a run of ``prep`` with ``seed`` (``probes``: the run's
    ``info["probes"]``, switches ``params``) again, without a time limit: returns what it
    finds (scaled offsets, ``None`` for a refutation) and its nodes, which equal the
    record's for a probe that ended before its time did. A beam replays from its recorded
    width and seed, a probe in the plain orders in them, a random-order one in the order
    :func:`replay_order` rebuilds (of the chained instance, :mod:`optplan.exact.chains`, when
    its record says ``chains``: a run of an instance with chains draws every random order
    for its chained instance; a packing comes back as the instance's offsets, and ``None``
    says only that the chained instance has none). A round at the bound
    (:meth:`_Progress.bound_round`) replays its last order, drawn from the round's own seed;
    its nodes are the record's ``last_nodes``. A probe that ran out of time may run for
    long."""
    probe = probes[index]
    capacity = probe["capacity"] // prep.scale
    if probe["loop"] == "beam":
        found = beam(prep, capacity, probe["width"], seed=probe["seed"])
        return found.offsets, found.children
    seed, draw = ((probe["seed"], probe["draws"]) if probe["loop"] == BOUND_ROUND
                  else (seed, random_draw(probes, index)))
    stats = {"nodes": 0}
    chains = chained(prep) if probe.get("chains") else None
    base = prep if chains is None else chains.prep
    if "scores" in probe:  # a failure-directed order (a round at the bound)
        order = replay_learned(base, seed, draw, probe["scores"], probe.get("prefix", []))
        params = dataclasses.replace(params, round_robin=False)
    else:
        order = base if draw is None else replay_order(base, seed, draw)
    found = decide(order, capacity, params, None, stats)
    if chains is None:
        return found, stats["nodes"]
    return (chains.expand(found) if isinstance(found, list) else found), stats["nodes"]


@register("search", Problem.OFFSETS, kind="exact",
          reference="MiniMalloc (Moffitt, ASPLOS'23), google/minimalloc src/solver.cc")
def search(instance: Instance, *, time_limit: float | None = None, workers: int | None = None,
           seed: int | None = None, warm_start=True, initial_solution=None,
           engine: str = "compiled", **solver_params) -> SolverOutcome:
    """Minimise the arena by MiniMalloc-style depth-first searches at varying capacities.

    Two probing loops (capacities in granules of the gcd of the sizes and the alignment):
    *prove* refutes capacities upward from the max breadth
    (:func:`~optplan.exact.offsets_bound.refute_upward`; a refuted C proves the bound
    C + 1 granule, a packing at C closes the gap); *improve* sweeps short probes downward
    from one granule below the incumbent (the warm start's at first; see
    :meth:`_Progress.improve`). A timed-out probe proves nothing. With one worker the loops
    run one after the other, *prove* for ``SPLIT.first_probe`` of the time
    (:data:`optplan.exact.budget.SPLIT`); with two
    (compiled engine) they run side by side in two threads until the incumbent meets the
    bound or time runs out, and with a time limit *prove* refutes for
    ``SPLIT.search_refute`` of it, then goes on in the last stage's rounds, the first of
    which probes the bound in failure-directed orders (:meth:`_Progress.repack`,
    :meth:`_Progress.bound_round`; with switch ``repack`` off it beam-searches for packings
    at and above the bound instead, :meth:`_Progress.beam`, as the improve loop does after
    its first sweep; with ``beams`` off it refutes to the deadline). The improve loop goes on in
    those rounds once it has probed for :data:`REPACK_AFTER` seconds without closing the gap
    (compiled engine).

    Parameters
    ----------
    instance : Instance
        An offsets instance without in-place pairs.
    time_limit : float, optional
        Seconds for the whole run, warm start included (``None``: until proven).
    workers : int, optional
        1 (default): the loops in turn, deterministic; 2 or more: side by side (the compiled
        engine only; which loop finds what first then depends on timing).
    seed : int, optional
        Seeds the random orders of the improve loop's later sweeps (default 0; see
        :meth:`_Progress.improve`). With one worker and no time limit the run is
        deterministic; probes are cut by time, so a time limit makes it depend on speed.
    warm_start, initial_solution
        The warm start (:mod:`optplan.warm_start`): the first incumbent.
    engine : str
        ``"compiled"`` (default, the C extension) or ``"python"`` (the reference, the same
        search node for node, 20-80x slower).
    **solver_params : bool
        Fields of :class:`SearchParams` (all ``True`` by default), e.g. ``dominance=False``.

    Returns
    -------
    SolverOutcome
        ``OPTIMAL`` only when the incumbent's arena (rounded up to the alignment) equals the
        proven bound; otherwise ``FEASIBLE`` with the proven bound. ``info`` holds ``nodes``,
        ``probes`` (loop, capacity, result, seconds, nodes each; a beam's width and seed
        too; a repacking round's method, seed and steps; a round at the bound's seed, draws
        and last order's nodes), ``time_limit``, ``workers``,
        ``engine`` and the switches.

    Examples
    --------
    >>> outcome = search(Instance.from_tuples([(0, 1, 2), (1, 2, 1), (2, 3, 2)]))
    >>> outcome.status, outcome.solution.arena_size, outcome.best_bound
    (<Status.OPTIMAL: 'OPTIMAL'>, 3, 3)
    """
    params = _params(solver_params)
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} of method 'search'; valid: "
                         + ", ".join(ENGINES), field="engine")
    prep = _prepare(instance)
    run = ExactRun(instance, Problem.OFFSETS, solver=SOLVER, version=__version__,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    run.start(warm_start, initial_solution, fallback=stacked_offsets)
    deadline = run.budget.deadline()
    progress = _Progress(run, prep, breadth_capacity(instance, prep), beam_seed=run.seed << 20)
    rng = random.Random(run.seed)
    improve = functools.partial(progress.improve, params, deadline, engine, rng=rng)

    def prove(prove_deadline):
        refute_upward(prep, progress.bound, progress.high(), prove_deadline, params=params,
                      engine=engine, stop=progress.stop,
                      on_probe=functools.partial(progress.record, "prove"))

    if run.workers >= 2 and engine == "compiled":
        failures: list[BaseException] = []

        def prove_in_thread():
            try:
                if deadline is None or not params.beams:
                    prove(deadline)
                else:  # refute the bound for a share of the time, then try to pack it
                    now = time.perf_counter()
                    prove(now + (deadline - now) * SPLIT.search_refute)
                    if params.repack:  # the last stage's rounds, the bound's first
                        progress.repack(deadline, params)
                    progress.beams_to(deadline)
            except BaseException as error:  # re-raised by the caller's thread below
                failures.append(error)
                progress.stop[0] = 1

        prover = threading.Thread(target=prove_in_thread, name="search-prove")
        prover.start()
        try:
            improve(alone=False)
        except BaseException:
            progress.stop[0] = 1  # (an interrupt, say): the prover stops too
            raise
        finally:
            prover.join()
        if failures:
            raise failures[0]
    else:
        now = time.perf_counter()
        prove(None if deadline is None else now + (deadline - now) * SPLIT.first_probe)
        improve(alone=True)

    if not run.meets_bound():
        run.out_of_time()  # info["stopped"] says whether the budget ran out
    run.info |= {"nodes": sum(probe["nodes"] for probe in progress.probes),
                 "probes": progress.probes, "engine": engine,
                 "granule": granule(prep) * prep.scale, "switches": dataclasses.asdict(params)}
    return run.outcome()
