"""Failure-directed orders: random search orders that learn where the search fails.

A probe in a random order (:func:`optplan.exact._search_core.jittered`) that finds nothing
leaves a trace: the sections whose check failed (section inference, counted per section by
:func:`~optplan.exact._search_core.decide` in ``stats["failures"]``). :class:`Learner`
keeps a decaying weight per section, each probe adding the share of its failed checks that
fell in it, and draws the next order with the buffers of the heavily failing sections moved
forward: each lifetime width, the first key of the preorder ``WAT``, is scaled by
``exp(N(0, RANK_JITTER) + BOOST * w)``, where ``w`` is the largest weight over the buffer's
sections divided by the largest weight of all. A buffer earlier in the static order goes
first among the candidates at an offset, so the buffers that crowd the failing sections are
placed before the others that compete for the same offsets (the failure-directed variable
ordering of constraint programming, *dom/wdeg*, applied to the static order between
restarts). Every static rank is sound, so a learned order answers exactly as any other; only
the time to a packing changes.

A probe also leaves the longest sequence of placements it made on one path
(``stats["deepest"]``). The learner keeps the deepest such path of its probes, and most of
its orders put a random prefix of it first (:meth:`Learner.prefix`): the depth-first search,
which places the candidate of least (offset, rank), then follows that prefix before it goes
its own way, so the next probe searches below a partial packing that got far instead of
from the bottom again. Within 0.1 s a probe backtracks only over the last few placements of
its first dive (in four scratch probes of J in plain random orders, dives died 31-164
placements deep and backtracked at most 8 placements), so a probe from the bottom revises an
early placement only by redoing every later one, where one that keeps a prefix redoes only
the part of a dive that got far beyond it: a large-neighbourhood search over the dive, in
the static order. On J's chained instance at its max breadth 8 of 1,200 such orders
pack it, where 5 of 6,000 failure-directed orders without prefixes do (about eight times the
rate per order), and D's in 4 of 1,200 (``bench/search_orders.py --learn --prefixes``).

On MiniMalloc's J with its chains merged, at its max breadth, 5 of 6,000 such orders of 0.1 s
pack it (2 and 3 of 3,000 at seeds 0 and 1), where 2 of 15,000 plain random orders do; D's
chained instance packs in 3 of 3,000 (``bench/search_orders.py --learn``;
``paper/results/search/orders.jsonl``): about six times J's rate, still about two minutes of
probing per packing on one core. ``search`` draws them
in its rounds at the bound (:meth:`optplan.exact.search._Progress.bound_round`). Why
``WAT`` alone: in a scratch run with the three preorders round-robin (two of which rank by
tightness first, where the weights do not reach), 1 of 3,000 learned orders packed J.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from optplan.exact._search_core import (PREORDERS, Prepared, SearchParams, decide, jittered,
                                        with_widths)

__all__ = ["Learner", "replay_learned", "BOOST", "DECAY", "PREORDER", "SCORE_DIGITS",
           "PREFIX_SHARE", "PATH_PROBES"]

BOOST = 4.0
"""How far a buffer of the most failing section moves forward: its width is scaled by
``exp(BOOST)`` on top of the jitter. Chosen in a scratch comparison on J's chained instance 2 %
above its max breadth (400 orders of 0.1 s, preorder ``WAT``, seed 1): 7 packed without the
boost, 35, 47 and 34 with boosts 2, 4 and 8."""
DECAY = 0.9
"""Each probe's weights are the last probe's times this, plus its own failures' shares (in
the same scratch comparison 1 % above J's max breadth, 1,200 orders: 9 packed with 0.9, 5
with 0.7 and 4 with 0.99)."""
PREORDER = PREORDERS[0]
"""The static preorder of learned orders, ``WAT`` (lifetime width first, where the weights
act): the one a search runs with ``round_robin`` off."""
SCORE_DIGITS = 6
"""Decimals each score is rounded to before it boosts an order, so that the scores a record
keeps rebuild that very order (:func:`replay_learned`)."""
PREFIX_SHARE = 0.8
"""The share of orders that keep a prefix of the deepest path (:meth:`Learner.prefix`); the
others start afresh."""
PATH_PROBES = 100
"""Probes a deepest path is kept for without a deeper one; then the next probe starts
afresh and its path is the new one. Scratch figures on J at its max breadth (chained, 0.1 s
orders, seeds 1 and 2, 1,200 orders each): 8 of 2,400 orders packed keeping a path for 30
probes, 15 for 100."""


class Learner:
    """The section weights learned from one stream of probes of ``prep``."""

    def __init__(self, prep: Prepared, seed: int = 0, prefixes: bool = True):
        self.prep, self.prefixes = prep, prefixes
        self.weights = np.zeros(prep.num_sections)
        self.path: list[int] = []  # the deepest path of the probes (see :meth:`learn`)
        self.stale = 0  # probes since the path last grew
        self.choices = random.Random(seed)  # which prefix of it the next order keeps

    def counter(self) -> np.ndarray:
        """A fresh ``stats["failures"]`` array for one probe."""
        return np.zeros(self.prep.num_sections, dtype=np.int64)

    def learn(self, failures: np.ndarray, deepest: list[int] | None = None) -> None:
        """Fold in one probe's failed checks per section (see :data:`DECAY`) and its
        ``deepest`` path (``stats["deepest"]`` of :func:`decide`): a path at least as long as
        the kept one replaces it; a kept path that has not grown for :data:`PATH_PROBES`
        probes is dropped, and so is the path of a packing (it places every buffer)."""
        total = int(failures.sum())
        self.weights *= DECAY
        if total:
            self.weights += failures / total
        if deepest is None:
            return
        if len(deepest) == len(self.prep.sizes):  # a packing: the next orders start afresh
            self.path, self.stale = [], 0
            return
        if len(deepest) >= len(self.path):
            if len(deepest) > len(self.path):
                self.stale = 0
            self.path = list(deepest)
        self.stale += 1
        if self.stale > PATH_PROBES:
            self.path, self.stale = [], 0

    def prefix(self) -> list[int]:
        """The placements the next order keeps: with probability :data:`PREFIX_SHARE`, the
        kept path with a random number of its last placements dropped (between one and the
        number of buffers, so that short prefixes and none come often too); else, and
        always for a learner made with ``prefixes=False``, none."""
        if not self.prefixes or not self.path or self.choices.random() >= PREFIX_SHARE:
            return []
        drop = self.choices.randint(1, len(self.prep.sizes))
        return self.path[:max(0, len(self.path) - drop)]

    def scores(self) -> list[float]:
        """Each buffer's largest section weight over its lifetime, divided by the largest
        weight of all (0 for every buffer before any failure)."""
        top = float(self.weights.max()) if len(self.weights) else 0.0
        if top <= 0:
            return [0.0] * len(self.prep.sizes)
        prep, weights = self.prep, self.weights / top
        return [float(weights[prep.section_start[b]:prep.section_end[b]].max())
                for b in range(len(prep.sizes))]

    def order(self, rng: random.Random, scores: list[float] | None = None,
              prefix: list[int] = ()) -> Prepared:
        """The next order: ``prep`` jittered by ``rng`` with each buffer's width boosted by
        ``exp(BOOST * score)`` (``scores``, default :meth:`scores`), and the buffers of
        ``prefix`` first, in its order (widths above all others); the same ``rng`` state,
        scores and prefix give the same order."""
        scores = self.scores() if scores is None else scores
        order = jittered(self.prep, rng, boosts=[BOOST * score for score in scores])
        if not prefix:
            return order
        widths = list(order.width)
        top = max(widths) + len(prefix)
        for rank, buffer in enumerate(prefix):
            widths[buffer] = top - rank
        return with_widths(self.prep, tuple(widths))

    def probe(self, capacity: int, rng: random.Random, params: SearchParams,
              deadline: float | None, stop: bytearray | None = None):
        """Decide ``capacity`` (scaled units) in the next order (:meth:`order`, its scores
        rounded to :data:`SCORE_DIGITS` decimals, its :meth:`prefix`), searched with
        ``params`` but the preorder :data:`PREORDER` alone, until ``deadline``; then learn
        from its failed checks and its deepest path. Returns
        :func:`~optplan.exact._search_core.decide`'s answer, the probe's nodes, and the
        scores and prefix the order was drawn with."""
        scores = [round(score, SCORE_DIGITS) for score in self.scores()]
        prefix = self.prefix()
        stats = {"nodes": 0, "failures": self.counter(), "deepest": []}
        answer = decide(self.order(rng, scores, prefix), capacity,
                        dataclasses.replace(params, round_robin=False), deadline, stats,
                        stop=stop)
        self.learn(stats["failures"], stats["deepest"])
        return answer, stats["nodes"], scores, prefix


def replay_learned(prep: Prepared, seed: int, draw: int, scores: list[float],
                   prefix: list[int] = ()) -> Prepared:
    """The ``draw``-th learned order (counting from 1) of a stream of orders drawn from
    ``random.Random(seed)``, drawn with the buffers' ``scores`` and the ``prefix`` as a
    record keeps them: each order before it drew one number per buffer from the stream,
    whatever its scores and prefix."""
    rng = random.Random(seed)
    for _ in range(draw - 1):
        jittered(prep, rng)
    return Learner(prep).order(rng, scores, prefix)
