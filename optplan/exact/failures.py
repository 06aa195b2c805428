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

import math
import random

import numpy as np

from optplan.exact._search_core import RANK_JITTER, Prepared, with_widths

__all__ = ["Learner", "BOOST", "DECAY", "PREORDER"]

BOOST = 4.0
"""How far a buffer of the most failing section moves forward: its width is scaled by
``exp(BOOST)`` on top of the jitter. Chosen in a scratch comparison on J's chained instance 2 %
above its max breadth (400 orders of 0.1 s, preorder ``WAT``, seed 1): 7 packed without the
boost, 35, 47 and 34 with boosts 2, 4 and 8."""
DECAY = 0.9
"""Each probe's weights are the last probe's times this, plus its own failures' shares (in
the same scratch comparison 1 % above J's max breadth, 1,200 orders: 9 packed with 0.9, 5
with 0.7 and 4 with 0.99)."""
PREORDER = "WAT"
"""The static preorder of learned orders (lifetime width first, where the weights act)."""


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
        """The next order: ``prep`` with its widths jittered by ``rng`` and boosted by
        ``scores`` (default: :meth:`scores`); the same ``rng`` state and scores give the
        same order."""
        scores = self.scores() if scores is None else scores
        widths = []
        for width, score in zip(self.prep.width, scores):
            factor = round(1024 * math.exp(rng.gauss(0.0, RANK_JITTER) + BOOST * score))
            widths.append(min(max(1, width * factor // 1024), 1 << 62))
        return with_widths(self.prep, tuple(widths))
