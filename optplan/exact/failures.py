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

from optplan.exact._search_core import PREORDERS, Prepared, SearchParams, decide, jittered

__all__ = ["Learner", "replay_learned", "BOOST", "DECAY", "PREORDER", "SCORE_DIGITS"]

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


class Learner:
    """The section weights learned from one stream of probes of ``prep``."""

    def __init__(self, prep: Prepared):
        self.prep = prep
        self.weights = np.zeros(prep.num_sections)

    def counter(self) -> np.ndarray:
        """A fresh ``stats["failures"]`` array for one probe."""
        return np.zeros(self.prep.num_sections, dtype=np.int64)

    def learn(self, failures: np.ndarray) -> None:
        """Fold in one probe's failed checks per section (see :data:`DECAY`)."""
        total = int(failures.sum())
        self.weights *= DECAY
        if total:
            self.weights += failures / total

    def scores(self) -> list[float]:
        """Each buffer's largest section weight over its lifetime, divided by the largest
        weight of all (0 for every buffer before any failure)."""
        top = float(self.weights.max()) if len(self.weights) else 0.0
        if top <= 0:
            return [0.0] * len(self.prep.sizes)
        prep, weights = self.prep, self.weights / top
        return [float(weights[prep.section_start[b]:prep.section_end[b]].max())
                for b in range(len(prep.sizes))]

    def order(self, rng: random.Random, scores: list[float] | None = None) -> Prepared:
        """The next order: ``prep`` jittered by ``rng`` with each buffer's width boosted by
        ``exp(BOOST * score)`` (``scores``, default :meth:`scores`); the same ``rng`` state
        and scores give the same order."""
        scores = self.scores() if scores is None else scores
        return jittered(self.prep, rng, boosts=[BOOST * score for score in scores])

    def probe(self, capacity: int, rng: random.Random, params: SearchParams,
              deadline: float | None, stop: bytearray | None = None):
        """Decide ``capacity`` (scaled units) in the next order (:meth:`order`, its scores
        rounded to :data:`SCORE_DIGITS` decimals), searched with ``params`` but the preorder
        :data:`PREORDER` alone, until ``deadline``; then learn from its failed checks.
        Returns :func:`~optplan.exact._search_core.decide`'s answer, the probe's nodes and
        the scores the order was drawn with."""
        scores = [round(score, SCORE_DIGITS) for score in self.scores()]
        stats = {"nodes": 0, "failures": self.counter()}
        answer = decide(self.order(rng, scores), capacity,
                        dataclasses.replace(params, round_robin=False), deadline, stats,
                        stop=stop)
        self.learn(stats["failures"])
        return answer, stats["nodes"], scores


def replay_learned(prep: Prepared, seed: int, draw: int, scores: list[float]) -> Prepared:
    """The ``draw``-th learned order (counting from 1) of a stream of orders drawn from
    ``random.Random(seed)``, drawn with the buffers' ``scores`` as a record keeps them: each
    order before it drew one number per buffer from the stream, whatever its scores."""
    rng = random.Random(seed)
    for _ in range(draw - 1):
        jittered(prep, rng)
    return Learner(prep).order(rng, scores)
