"""The decision procedure behind ``search``: is there a packing with arena <= C?

A depth-first search over *canonical* packings, after MiniMalloc (Moffitt, ASPLOS'23,
``google/minimalloc`` ``src/solver.cc``, ``src/sweeper.cc``); the code is ours, the semantics
are theirs. Each node picks the next buffer, and places it at its *lowest feasible offset*:
the highest top among the placed buffers it overlaps in time, rounded up to the alignment.

Why every rule is sound: if a packing within C exists, take one P of least total offset. No
buffer of P can move down (that would lower the total), so listing P's buffers by
(offset, static rank) gives a sequence S in which each buffer, when its turn comes, sits
exactly at its lowest feasible offset. The search tries candidates in (offset, rank) order,
and no rule of :class:`SearchParams` cuts S: S is canonical by construction; every section
bound is a necessary condition; dominance would mean some unplaced u could move down into
the gap below, which P forbids; a candidate b with no unplaced neighbour keeps its offset for
ever, so S, which has b before every later sibling, runs through b or an earlier sibling.
The table of failed nodes (``transposition``) cuts a node only when a node with the same
part and the same lowest offsets failed with a canonical limit no higher: the subtree below
a node is a function of that state, and S, passing through the later node, would pass
through the earlier one's subtree too (its keys exceed both limits).

Two engines run this search (:data:`ENGINES`): the C extension ``_search_ext`` (built by
``pip install``; the default) and the Python code below. The Python code stays as the
reference: it is the readable statement of the algorithm, and the tests check that the C
code searches exactly its tree (same answer, same offsets, same node count, every switch),
which catches a slip in the C code that the answers alone could hide. It is 20-80x slower.

Time is cut into *sections*: the maximal time spans on which the set of live buffers does not
change. Everything here works in scaled integers (sizes and alignment divided by their gcd).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import random
import sys
import time
from dataclasses import dataclass, fields

import numpy as np

from optplan.errors import SolverRangeError
from optplan.exact.scaling import offset_unit

__all__ = ["SearchParams", "Prepared", "prepare", "decide", "jittered", "with_widths",
           "stack_height", "TIMEOUT", "PREORDERS", "ENGINES"]

PREORDERS = ("WAT", "TAW", "TWA")
"""Static preorders tried round-robin, MiniMalloc's defaults: each letter is a key, compared
largest first: ``W`` lifetime width, ``A`` area (width × size), ``T`` the largest sum of
unplaced sizes over the buffer's sections. Ties go to the lower buffer index."""


class _Timeout:
    """The marker a probe returns when it ran out of time (it proves nothing)."""

    def __repr__(self) -> str:
        return "TIMEOUT"


TIMEOUT = _Timeout()


@dataclass(frozen=True)
class SearchParams:
    """The search techniques; each can be switched off (all on by default).

    Every combination gives the same answer; the switches exist to measure what each one buys
    (MiniMalloc's ``SolverParams`` does the same).
    """

    canonical: bool = True
    """Generate each packing once: placements non-decreasing in offset, ties by static rank
    (MiniMalloc ``canonical_only``; also lifts every section floor to the current offset,
    MiniMalloc ``monotonic_floor``)."""
    section_inference: bool = True
    """Prune when some section's floor + its unplaced sizes exceeds C (``section_inference``)."""
    unplaced_floor: bool = True
    """Raise a section's floor to the least lowest-feasible-offset of its unplaced buffers
    (``unallocated_floor``)."""
    dominance: bool = True
    """Never place a buffer at or above min over unplaced u of lowest-offset(u) + size(u):
    u would fit in the gap below (``check_dominance``)."""
    sibling_pruning: bool = True
    """After a buffer that overlaps no unplaced buffer fails, fail the node: no later sibling
    can ever place it."""
    dynamic_decomposition: bool = True
    """Split into independent subproblems when no unplaced buffer crosses a section boundary
    (``dynamic_decomposition``)."""
    transposition: bool = True
    """Remember failed nodes (not in MiniMalloc): a node whose part and lowest offsets equal
    those of a node that failed, with a canonical lower limit at least as high, fails too.
    Different orders of stacking the same buffers reach the same state; the subtree below
    is a function of the state, so it fails again (see :data:`TABLE_MIN_NODES`)."""
    round_robin: bool = True
    """Run the preorders of :data:`PREORDERS` round-robin, :data:`SLICE_NODES` nodes at a
    time, each resuming where it paused; the first to finish answers (off: the first preorder
    alone). MiniMalloc restarts each preorder with doubling node limits instead; resuming
    does the same fair split without redoing work (2-3x fewer nodes on B and E)."""
    beams: bool = True
    """Let ``search`` run beams (:mod:`optplan.exact.beam`; not in MiniMalloc): half the
    improve loop's time after its first sweep and, with two workers and a time limit, the
    prove loop's time after its share of refuting (off: depth-first probes only, the prove
    loop refutes to the deadline). A run-level switch: a single decision (:func:`decide`)
    is a depth-first search either way."""
    repack: bool = True
    """Let ``search`` repack its best packing once a run has searched for
    ``REPACK_AFTER`` seconds (:meth:`optplan.exact.search._Progress.repack`: layer search,
    skyline and band repacking in turn; compiled engine only; not in MiniMalloc). A run-level
    switch, like ``beams``."""
    chains: bool = True
    """Let ``search``'s probes in random orders search the instance with its chains merged
    (:mod:`optplan.exact.chains`: each run of equal buffers, one live from the op after the
    last dies, at one offset; a restriction: its packings are packings, its refutations
    prove nothing; not in MiniMalloc). A run-level switch, like ``beams``."""

    @classmethod
    def switch_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


@dataclass(frozen=True)
class Prepared:
    """An instance in the search's own terms (scaled integers, sections, neighbour lists)."""

    sizes: tuple[int, ...]          # scaled sizes
    alignment: int                  # scaled alignment (offsets are multiples of it)
    scale: int                      # original units per scaled unit
    section_start: tuple[int, ...]  # first section of each buffer
    section_end: tuple[int, ...]    # one past its last section
    neighbours: tuple[tuple[int, ...], ...]  # buffers overlapping each buffer in time
    section_members: tuple[tuple[int, ...], ...]
    width: tuple[int, ...]          # lifetime length in ops

    @property
    def num_sections(self) -> int:
        return len(self.section_members)

    @functools.cached_property
    def compiled_arrays(self) -> tuple[np.ndarray, ...]:
        """The int64 arrays the C extension reads, built once per instance (every probe of a
        capacity search shares them): see :func:`_compiled_arrays`."""
        return _compiled_arrays(self)


def prepare(first_ops, last_ops, sizes, alignment: int = 1) -> Prepared:
    """Scale, cut time into sections and list neighbours. O(n^2) time, O(n + edges) memory."""
    first_ops = np.asarray(first_ops, dtype=np.int64)
    last_ops = np.asarray(last_ops, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    n = len(sizes)
    scale, scaled_alignment = offset_unit(sizes.tolist(), alignment)
    points = np.unique(np.concatenate([first_ops, last_ops + 1])) if n else np.zeros(0, int)
    start = np.searchsorted(points, first_ops)
    end = np.searchsorted(points, last_ops + 1)
    num_sections = max(len(points) - 1, 0)
    neighbours = []
    for index in range(n):  # O(n) memory per row: no n x n matrix
        row = (start < end[index]) & (start[index] < end)
        row[index] = False
        neighbours.append(tuple(np.flatnonzero(row).tolist()))
    members: list[list[int]] = [[] for _ in range(num_sections)]
    for index, (lo, hi) in enumerate(zip(start.tolist(), end.tolist())):
        for section in range(lo, hi):
            members[section].append(index)
    return Prepared(sizes=tuple((sizes // scale).tolist()), alignment=scaled_alignment,
                    scale=scale, section_start=tuple(start.tolist()),
                    section_end=tuple(end.tolist()), neighbours=tuple(neighbours),
                    section_members=tuple(tuple(m) for m in members),
                    width=tuple((last_ops - first_ops + 1).tolist()))


_min_reduce = np.minimum.reduce
_max_reduce = np.maximum.reduce
_minimum = np.minimum
_maximum = np.maximum


class _Deadline(Exception):
    """The probe's deadline passed."""


ENGINES = ("compiled", "python")
"""Implementations of :func:`decide`: the C extension ``_search_ext`` (built by ``pip
install``), and the Python reference it is checked against node for node."""


RANK_JITTER = 0.2
"""Spread of :func:`jittered`: each width is scaled by ``exp(N(0, RANK_JITTER))``."""


def jittered(prep: Prepared, rng: random.Random, spread: float = RANK_JITTER,
             boosts=None) -> Prepared:
    """``prep`` with every lifetime width scaled by a random factor ``exp(N(0, spread))``,
    times ``exp(boosts[b])`` for buffer ``b`` when ``boosts`` are given (one number drawn
    from ``rng`` per buffer either way; :mod:`optplan.exact.failures` boosts the buffers
    where the search failed).

    The widths feed only the static preorders (the keys ``W`` and ``A``), so the jittered
    instance is the same packing question searched in another order: every static rank is
    sound (see the module's notes), so a jittered search answers exactly as the plain one.
    What changes is the time to a packing, which is heavy-tailed in the order: on MiniMalloc's
    D, 1 of 400 jittered probes of 0.1 s packs at 982 granules (``bench/search_orders.py``),
    where no probe in the plain orders packed below 984 in 2400 s (``search``'s improve loop
    draws a fresh order for every probe after its first sweep). The compiled arrays are
    shared with ``prep`` except for the widths.
    """
    boosts = itertools.repeat(0.0) if boosts is None else boosts
    factors = [round(1024 * math.exp(rng.gauss(0.0, spread) + boost))
               for _, boost in zip(prep.width, boosts)]
    return with_widths(prep, tuple(min(max(1, width * factor // 1024), 1 << 62)
                                   for width, factor in zip(prep.width, factors)))


def with_widths(prep: Prepared, widths: tuple[int, ...]) -> Prepared:
    """``prep`` with other lifetime widths (the preorders' keys ``W`` and ``A``): the same
    packing question in another search order. Shares ``prep``'s compiled arrays but for the
    widths."""
    result = dataclasses.replace(prep, width=widths)
    arrays = prep.compiled_arrays
    result.__dict__["compiled_arrays"] = (arrays[0], np.array(widths, dtype=np.int64),
                                          *arrays[2:])
    return result


def stack_height(prep: Prepared) -> int:
    """The arena of every buffer stacked on the one before, each size rounded up to the
    alignment (scaled units): every capacity from it up packs.

    >>> stack_height(prepare([0, 0], [0, 0], [2, 1], alignment=4))
    8
    """
    return sum(-(-size // prep.alignment) * prep.alignment for size in prep.sizes)


def decide(prep: Prepared, capacity: int, params: SearchParams = SearchParams(),
           deadline: float | None = None, stats: dict | None = None, *,
           engine: str = "compiled", stop: bytearray | None = None):
    """Search for a packing of ``prep`` with every top <= ``capacity`` (scaled units).

    Returns the scaled offsets (a list), ``None`` when no packing exists (proven), or
    :data:`TIMEOUT` when ``deadline`` (a ``time.perf_counter()`` value) passed first or
    ``stop[0]`` was set (by another thread; both are checked every :data:`SLICE_NODES` nodes).
    ``stats["nodes"]`` accumulates the nodes searched. When ``stats["failures"]`` is given
    (an int64 numpy array, one entry per section), every section check that fails adds one
    at the first section that failed (:mod:`optplan.exact.failures` learns orders from
    them). When ``stats["deepest"]`` is given (a list), it is set to the longest sequence of
    placements that passed the section check on one path of the first preorder's search,
    in the order placed (all the buffers when it packed)
    (the order a failure-directed probe keeps a prefix of). ``engine`` (one of
    :data:`ENGINES`) picks the implementation; both search the same tree and count the same
    nodes, failures and deepest path.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    stats = {} if stats is None else stats
    stats.setdefault("nodes", 0)
    n = len(prep.sizes)
    if n == 0:
        return []
    if max(prep.sizes) > capacity:
        return None
    # Stacking everything fits any capacity above the sum of the sizes (rounded up).
    height = stack_height(prep)
    if height >= _Search.PLACED:
        raise SolverRangeError(f"sizes sum to {height} units of {prep.scale} bytes, "
                               f"beyond the search's range (2^40)", field="size")
    capacity = min(capacity, height)
    if (deadline is not None and time.perf_counter() > deadline) or (
            stop is not None and stop[0]):
        return TIMEOUT
    preorders = PREORDERS if params.round_robin else PREORDERS[:1]
    if engine == "compiled":
        return _decide_compiled(prep, capacity, params, deadline, stats, preorders, stop)
    arrays = _Arrays.build(prep)
    searches = [_Search(prep, arrays, capacity, params, deadline, preorder, stop,
                        stats.get("failures"), stats.get("deepest") if k == 0 else None)
                for k, preorder in enumerate(preorders)]
    # Round robin: each search runs SLICE_NODES nodes in turn and then pauses where it is
    # (the searches are generators), so no work is redone; the first to finish answers.
    running = [(search, search.run()) for search in searches]
    try:
        while True:
            for search, steps in running:
                try:
                    next(steps)
                except StopIteration as finished:
                    return search.solution if finished.value else None
    except _Deadline:
        return TIMEOUT
    finally:
        stats["nodes"] += sum(search.nodes for search in searches)
        for _, steps in running:
            steps.close()


SLICE_NODES = 1024
"""Nodes a search runs before the next preorder's turn (round robin)."""
TABLE_MIN_NODES = 8
"""A failed node is remembered (``transposition``) when its subtree had at least this many
nodes below it: cheap failures are cheaper to redo than to store."""
TABLE_BYTES = 32 << 20
"""Memory for the failed nodes of one search; when the table is full it is emptied and
refilled (both engines count entries the same way, so they stay node for node)."""


def table_entries(n: int) -> int:
    """Failed nodes one search remembers at most: an entry holds a part's members and their
    lowest offsets (at most ``5 + 2n`` int64 words)."""
    return max(256, TABLE_BYTES // (8 * (5 + 2 * n)))


def _compressed(rows) -> tuple[np.ndarray, np.ndarray]:
    """Row pointers and concatenated entries (int64) of a list of index tuples."""
    pointers = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in rows], out=pointers[1:])
    entries = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64,
                          count=int(pointers[-1]))
    return pointers, entries


def _compiled_arrays(prep: Prepared) -> tuple[np.ndarray, ...]:
    """Sizes (padded with 0), widths, section starts and ends, neighbours and section members
    in compressed rows, each section's total and each cut's crossing count: the static input
    of ``_search_ext.decide``, in its argument order."""
    sections = prep.num_sections
    int64 = functools.partial(np.array, dtype=np.int64)
    neighbour_rows, neighbours = _compressed(prep.neighbours)
    member_rows, members = _compressed(prep.section_members)
    sizes = int64(prep.sizes + (0,))
    totals = np.zeros(sections, dtype=np.int64)
    np.add.at(totals, np.repeat(np.arange(sections), np.diff(member_rows)), sizes[members])
    starts, ends = int64(prep.section_start), int64(prep.section_end)
    crossing = np.zeros(max(sections, 1), dtype=np.int64)  # buffers live in k and k + 1
    np.add.at(crossing, starts, 1)
    np.add.at(crossing, ends - 1, -1)
    cuts = np.cumsum(crossing)[:max(sections - 1, 0)]
    return (sizes, int64(prep.width), starts, ends, neighbour_rows, neighbours, member_rows,
            members, totals, cuts)


def _decide_compiled(prep: Prepared, capacity: int, params: SearchParams,
                     deadline: float | None, stats: dict, preorders, stop):
    """:func:`decide` by the C extension (the same search, node for node)."""
    from optplan.exact import _search_ext

    switches = (params.canonical, params.section_inference, params.unplaced_floor,
                params.dominance, params.sibling_pruning, params.dynamic_decomposition,
                params.transposition)
    seconds = -1.0 if deadline is None else max(0.0, deadline - time.perf_counter())
    n = len(prep.sizes)
    deepest = None if stats.get("deepest") is None else np.zeros(n + 1, dtype=np.int64)
    code, offsets, nodes = _search_ext.decide(
        n, prep.num_sections, prep.alignment, *prep.compiled_arrays, capacity, switches,
        tuple(preorders), SLICE_NODES, seconds, stop, table_entries(n), TABLE_MIN_NODES,
        stats.get("failures"), deepest)
    stats["nodes"] += nodes
    if deepest is not None:
        stats["deepest"][:] = deepest[1:1 + deepest[0]].tolist()
    return offsets if code == 1 else None if code == 0 else TIMEOUT


@dataclass(frozen=True)
class _Arrays:
    """The static numpy views of a :class:`Prepared` instance that every search shares."""

    sizes: np.ndarray              # sizes, plus a padding entry 0 at index n
    neighbours: list               # per buffer, an index array of its neighbours
    member_matrix: np.ndarray      # section x member index matrix, padded with n
    totals: np.ndarray             # sum of sizes per section
    cuts: tuple                    # buffers live in both section k and k + 1
    section_starts: np.ndarray     # first section of each buffer
    section_ends: np.ndarray       # one past its last section

    @classmethod
    def build(cls, prep: Prepared) -> "_Arrays":
        n = len(prep.sizes)
        widest = max((len(m) for m in prep.section_members), default=0)
        matrix = np.full((prep.num_sections, max(widest, 1)), n, dtype=np.intp)
        totals = np.zeros(prep.num_sections, dtype=np.int64)
        for section, members in enumerate(prep.section_members):
            matrix[section, :len(members)] = members
            totals[section] = sum(prep.sizes[b] for b in members)
        cuts = [0] * max(prep.num_sections - 1, 0)
        for lo, hi in zip(prep.section_start, prep.section_end):
            for k in range(lo, hi - 1):
                cuts[k] += 1
        return cls(sizes=np.array(prep.sizes + (0,), dtype=np.int64),
                   neighbours=[np.array(nb, dtype=np.intp) for nb in prep.neighbours],
                   member_matrix=matrix, totals=totals, cuts=tuple(cuts),
                   section_starts=np.array(prep.section_start, dtype=np.int64),
                   section_ends=np.array(prep.section_end, dtype=np.int64))


class _Search:
    """One depth-first search with one static preorder, as a generator that pauses every
    :data:`SLICE_NODES` nodes (so that :func:`decide` can run preorders round-robin).

    The state lives in numpy arrays so that a node costs a fixed number of vectorised steps
    instead of Python loops over buffers: ``lowest`` holds each unplaced buffer's lowest
    feasible offset (a placed buffer reads as ``PLACED``, above any capacity), and the
    section check gathers the lowest offsets of each section's members through a padded
    ``section x member`` index matrix.
    """

    PLACED = 1 << 40  # offsets * key_width must stay within int64

    def __init__(self, prep: Prepared, arrays: "_Arrays", capacity: int,
                 params: SearchParams, deadline: float | None, preorder: str,
                 stop: bytearray | None, failures: np.ndarray | None = None,
                 deepest: list | None = None):
        self.prep = prep
        self.failures = failures  # None, or per section: the checks that failed there
        self.deepest = deepest  # None, or the longest path of placements that fit
        self.sequence: list[int] = []  # with deepest: the placements on the current path
        self.capacity = capacity
        self.params = params
        self.deadline = deadline
        self.stop = stop
        self.preorder = preorder
        self.nodes = 0
        n = len(prep.sizes)
        self.solution = [0] * n
        self.sizes = arrays.sizes
        self.neighbours = arrays.neighbours
        self.member_matrix = arrays.member_matrix
        self.section_starts = arrays.section_starts
        self.section_ends = arrays.section_ends
        self.key_width = n + 1  # candidate keys are offset * key_width + rank
        self.lowest = np.zeros(n + 1, dtype=np.int64)
        self.lowest[n] = self.PLACED
        self.floor = np.zeros(prep.num_sections, dtype=np.int64)
        self.total = arrays.totals.copy()  # sum of unplaced sizes per section
        self.cuts = list(arrays.cuts)
        self.failed: dict = {}  # (part, lowest offsets of its members) -> least failed limit
        self.table_entries = table_entries(n)

    # -- entry ---------------------------------------------------------------------------
    def run(self):
        """A generator: pauses every :data:`SLICE_NODES` nodes; returns True when packed."""
        prep = self.prep
        if not self._sections_fit(0, prep.num_sections, 0):
            return False
        everything = list(range(len(prep.sizes)))
        if self.params.dynamic_decomposition:
            parts = self._split(everything, 0, prep.num_sections, [])
        else:
            parts = [(everything, 0, prep.num_sections)]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * len(everything) + 1000))
        try:
            for part in parts:
                if not (yield from self._solve_part(*part)):
                    return False
            return True
        finally:
            sys.setrecursionlimit(limit)

    def _solve_part(self, buffers: list[int], section_lo: int, section_hi: int):
        """Search one part with fresh canonical state and its own static preorder."""
        prep, total = self.prep, self.total.tolist()
        keys = {}
        for b in buffers:
            lo, hi = prep.section_start[b], prep.section_end[b]
            values = {"W": prep.width[b], "A": prep.width[b] * prep.sizes[b],
                      "T": max(total[lo:hi]) if hi > lo else 0}
            keys[b] = tuple(-values[letter] for letter in self.preorder) + (b,)
        order = sorted(buffers, key=keys.__getitem__)
        rank_of = {b: rank for rank, b in enumerate(order)}
        part = _Part(members=np.array(buffers, dtype=np.intp),
                     ranks=np.array([rank_of[b] for b in buffers], dtype=np.int64),
                     sizes=self.sizes[np.array(buffers, dtype=np.intp)],
                     order=order, section_lo=section_lo, section_hi=section_hi)
        return (yield from self._node(part, 0, -1))

    def _split(self, buffers, section_lo, section_hi, cutpoints):
        """The independent parts of ``buffers`` between consecutive cut points."""
        if not cutpoints:
            # Find the boundaries no unplaced buffer crosses.
            cutpoints = [k + 1 for k in range(section_lo, section_hi - 1) if self.cuts[k] == 0]
        bounds = [section_lo] + cutpoints + [section_hi]
        parts = []
        start, end = self.prep.section_start, self.prep.section_end
        lowest, placed = self.lowest, self.PLACED
        unplaced = [b for b in buffers if lowest[b] < placed]
        for lo, hi in zip(bounds, bounds[1:]):
            members = [b for b in unplaced if start[b] < hi and lo < end[b]]
            if members:
                parts.append((members, lo, hi))
        return parts

    # -- the check -----------------------------------------------------------------------
    def _sections_fit(self, section_lo: int, section_hi: int, offset: int) -> bool:
        """Section inference: in every section of the part, the unplaced buffers stack above
        its floor and end at or below C. The floor is the top of the section's placed
        buffers; with ``canonical`` at least the current offset; with ``unplaced_floor`` the
        least lowest feasible offset of its unplaced buffers (never below the placed tops:
        every unplaced member overlaps every placed one). A failure is counted at the first
        section that fails (``failures``)."""
        params, capacity = self.params, self.capacity
        if not params.section_inference:
            return True
        total = self.total[section_lo:section_hi]
        if params.unplaced_floor:
            # (ufuncs called directly: the ndarray.min/np.clip wrappers cost more than the work)
            floor = _min_reduce(self.lowest[self.member_matrix[section_lo:section_hi]], axis=1)
            # a section with nothing unplaced reads PLACED: cap it at C (it adds 0)
            _minimum(floor, capacity, out=floor)
            if params.canonical and offset:
                _maximum(floor, offset, out=floor)
            floor += total
            if _max_reduce(floor) <= capacity:
                return True
            failing = floor > capacity
        else:
            floor = self.floor[section_lo:section_hi]
            if params.canonical and offset:
                floor = np.maximum(floor, offset)
            failing = (floor + total > capacity) & (total > 0)
            if not failing.any():
                return True
        if self.failures is not None:
            self.failures[section_lo + int(failing.argmax())] += 1
        return False

    # -- the search ----------------------------------------------------------------------
    def _node(self, part: "_Part", last_offset: int, last_rank: int):
        """Place one more buffer of ``part``, then recurse; True when the part is packed."""
        self.nodes += 1
        if not self.nodes % SLICE_NODES:
            if (self.deadline is not None and time.perf_counter() > self.deadline) or (
                    self.stop is not None and self.stop[0]):
                raise _Deadline
            yield  # the next preorder's turn
        places = self.lowest[part.members]
        if _min_reduce(places) >= self.PLACED:
            return True
        if not self.params.transposition:
            return (yield from self._expand(part, places, last_offset, last_rank))
        state = (part.section_lo, part.section_hi, part.members.tobytes(), places.tobytes())
        after = last_offset * self.key_width + last_rank if self.params.canonical else 0
        failed = self.failed.get(state)
        if failed is not None and after >= failed:
            return False  # the same state failed with candidates after a lower (or equal) key
        before = self.nodes
        if (yield from self._expand(part, places, last_offset, last_rank)):
            return True
        if self.nodes - before >= TABLE_MIN_NODES:
            failed = self.failed.get(state)
            if failed is None and len(self.failed) >= self.table_entries:
                self.failed.clear()
            self.failed[state] = after if failed is None else min(failed, after)
        return False

    def _expand(self, part: "_Part", places: np.ndarray, last_offset: int, last_rank: int):
        """The candidates of a node (``places``: its members' lowest offsets), in order."""
        params, capacity, PLACED = self.params, self.capacity, self.PLACED
        lowest, width = self.lowest, self.key_width
        # Candidates as keys offset * width + rank: the key order is the (offset, rank) order.
        limit = capacity + 1
        if params.dominance:
            # Dominance: min over unplaced u of lowest(u) + size(u) caps every placement.
            limit = min(limit, int(_min_reduce(places + part.sizes)))
        if params.section_inference and params.canonical:
            # Monotonic floor: each section's unplaced sizes go above this placement.
            limit = min(limit, capacity + 1 - int(
                _max_reduce(self.total[part.section_lo:part.section_hi])))
        keys = places * width
        keys += part.ranks
        if params.canonical:
            keys = keys[(keys < limit * width) & (keys > last_offset * width + last_rank)]
        else:
            keys = keys[keys < limit * width]
        if not len(keys):
            return False
        keys.sort()
        floor, total, neighbours, sizes = self.floor, self.total, self.neighbours, self.sizes
        section_start, section_end = self.prep.section_start, self.prep.section_end
        alignment, order = self.prep.alignment, part.order
        keep_floor = not params.unplaced_floor
        section_starts, section_ends = self.section_starts, self.section_ends
        for key in keys.tolist():
            place, rank = divmod(key, width)
            b = order[rank]
            size = int(sizes[b])
            top = place + size
            if top > capacity:
                continue
            self.solution[b] = place
            lowest[b] = PLACED
            if self.deepest is not None:
                mark = len(self.sequence)
                self.sequence.append(b)
            lifted_to = top if alignment == 1 else -(-top // alignment) * alignment
            around = neighbours[b]
            around_lowest = lowest[around]  # placed neighbours read as PLACED
            raised = around_lowest < lifted_to
            lifted = around[raised]
            before = around_lowest[raised]
            lowest[lifted] = lifted_to
            lo, hi = section_start[b], section_end[b]
            if keep_floor:
                saved_floors = floor[lo:hi].copy()
                floor[lo:hi] = top
            total[lo:hi] -= size
            found = False
            # Only sections holding b or a lifted buffer changed (the others are covered by
            # the parent's check and, for the higher offset, by ``limit``); the lifted buffers
            # all overlap b, so those sections form one span.
            if len(lifted):
                check_lo = min(lo, int(_min_reduce(section_starts[lifted])))
                check_hi = max(hi, int(_max_reduce(section_ends[lifted])))
            else:
                check_lo, check_hi = lo, hi
            if self._sections_fit(check_lo, check_hi, place):
                if self.deepest is not None and len(self.sequence) > len(self.deepest):
                    self.deepest[:] = self.sequence
                if params.dynamic_decomposition:
                    found = yield from self._decompose(b, part, place, rank)
                else:
                    found = yield from self._node(part, place, rank)
            total[lo:hi] += size
            if keep_floor:
                floor[lo:hi] = saved_floors
            lowest[lifted] = before
            lowest[b] = place
            if found:  # a packed part's placements stay in the sequence
                return True
            if self.deepest is not None:
                del self.sequence[mark:]
            # ``b`` overlaps no unplaced buffer: its offset can never change, and every later
            # sibling sorts after it, so no later branch can place it.
            if params.sibling_pruning and (not len(around)
                                           or _min_reduce(around_lowest) >= PLACED):
                return False
        return False

    def _decompose(self, b: int, part: "_Part", place: int, rank: int):
        """Recurse, split into independent parts where no unplaced buffer crosses a boundary
        any more (MiniMalloc's dynamic decomposition)."""
        prep, cuts = self.prep, self.cuts
        lo, hi = prep.section_start[b], prep.section_end[b]
        cutpoints = []
        for k in range(lo, hi - 1):
            cuts[k] -= 1
            if cuts[k] == 0 and part.section_lo <= k < part.section_hi - 1:
                cutpoints.append(k + 1)
        try:
            if not cutpoints:
                return (yield from self._node(part, place, rank))
            parts = self._split(part.members.tolist(), part.section_lo, part.section_hi,
                                cutpoints)
            for sub in parts:
                if not (yield from self._solve_part(*sub)):
                    return False
            return True
        finally:
            for k in range(lo, hi - 1):
                cuts[k] += 1


@dataclass(frozen=True)
class _Part:
    """An independent subproblem: its buffers, their static ranks and sizes, its sections."""

    members: np.ndarray     # buffer indices
    ranks: np.ndarray       # static rank of each member (0 goes first)
    sizes: np.ndarray       # size of each member
    order: list             # order[rank] = buffer
    section_lo: int
    section_hi: int
