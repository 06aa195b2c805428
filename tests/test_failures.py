"""Failure-directed orders (:mod:`optplan.exact.failures`): what they learn, how they order,
that they replay, and that they answer as every other order does."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan import Instance
from optplan.bounds import max_breadth
from optplan.exact._search_core import SearchParams, decide, jittered, prepare
from optplan.exact.failures import BOOST, DECAY, PATH_PROBES, PREFIX_SHARE, Learner
from optplan.exact.search import replay_learned


def prepared(triples):
    instance = Instance.from_tuples(triples)
    return instance, prepare(instance.first_ops, instance.last_ops, instance.sizes)


# Three tensors in section 0, one in section 1, two over both.
TRIPLES = [(0, 0, 3), (0, 0, 2), (0, 0, 1), (1, 1, 4), (0, 1, 1), (0, 1, 2)]


def test_weights_decay_and_add_each_probes_share_of_its_failures():
    _, prep = prepared(TRIPLES)
    learner = Learner(prep)
    assert learner.scores() == [0.0] * len(TRIPLES)  # nothing learned: no boost
    learner.learn(np.array([3, 1]))
    assert np.allclose(learner.weights, [0.75, 0.25])
    learner.learn(np.array([0, 0]))  # a probe that failed no check only decays them
    assert np.allclose(learner.weights, [0.75 * DECAY, 0.25 * DECAY])
    learner.learn(np.array([0, 2]))
    assert np.allclose(learner.weights, [0.75 * DECAY ** 2, 0.25 * DECAY ** 2 + 1])
    # A buffer's score: its sections' largest weight over the largest of all.
    top = learner.weights.max()
    expected = [learner.weights[0] / top] * 3 + [1.0, 1.0, 1.0]
    assert np.allclose(learner.scores(), expected)


def test_an_unboosted_order_is_the_plain_random_order_and_a_boost_moves_buffers_forward():
    # (lifetimes a hundred ops long, so that the widths' rounding stays small)
    _, prep = prepared([(100 * first, 100 * last + 99, size) for first, last, size in TRIPLES])
    learner = Learner(prep)
    assert learner.order(random.Random(7)).width == jittered(prep, random.Random(7)).width
    scores = [0.0, 0.0, 0.0, 1.0, 0.0, 0.5]
    plain = jittered(prep, random.Random(7)).width
    boosted = learner.order(random.Random(7), scores).width
    for width, boost, score in zip(plain, boosted, scores):
        assert math.isclose(boost / width, math.exp(BOOST * score), rel_tol=0.01)


def test_a_learned_order_replays_from_its_seed_draw_and_scores():
    # The round draws one number per buffer for each order, whatever the scores: the k-th
    # order is rebuilt from the seed, k and the scores it was drawn with.
    _, prep = prepared(TRIPLES)
    learner, rng = Learner(prep), random.Random(11)
    orders = []
    for failures in ([1, 0], [0, 3], [2, 2], [0, 1]):
        scores = [round(score, 6) for score in learner.scores()]
        orders.append((learner.order(rng, scores), scores))
        learner.learn(np.array(failures))
    for draw, (order, scores) in enumerate(orders, start=1):
        assert replay_learned(prep, 11, draw, scores).width == order.width


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_learned_order_decides_the_same_question_and_learns_from_its_failures(rng):
    # Sound like every static rank: a learned order (keeping a prefix of the deepest path
    # so far, when it draws one) packs exactly the capacities the plain one does; one below
    # the max breadth fails a check in some section, which it learns.
    triples = []
    for _ in range(rng.randint(2, 9)):
        first = rng.randint(0, 6)
        triples.append((first, first + rng.randint(0, 3), rng.randint(1, 6)))
    instance = Instance.from_tuples(triples)
    prep = prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)
    learner, orders = Learner(prep), random.Random(rng.random())
    breadth = max_breadth(instance) // prep.scale
    for capacity in range(breadth - 1, breadth + 3):
        stats = {"nodes": 0, "failures": learner.counter(), "deepest": []}
        learned = decide(learner.order(orders, None, learner.prefix()), capacity,
                         SearchParams(round_robin=False), None, stats)
        plain = decide(prep, capacity, SearchParams(), None, {})
        assert (learned is None) == (plain is None)
        if capacity < breadth:  # (a tensor above the capacity is refuted before any check)
            assert learned is None
            assert stats["failures"].sum() >= (max(prep.sizes) <= capacity)
        learner.learn(stats["failures"], stats["deepest"])


def test_a_prefixed_order_ranks_the_prefix_first_in_its_order_and_replays():
    _, prep = prepared([(100 * first, 100 * last + 99, size) for first, last, size in TRIPLES])
    learner = Learner(prep)
    scores, prefix = [0.0, 0.0, 0.0, 1.0, 0.0, 0.5], [4, 1, 5]
    order = learner.order(random.Random(3), scores, prefix)
    plain = learner.order(random.Random(3), scores)
    by_width = sorted(range(len(TRIPLES)), key=lambda b: -order.width[b])
    assert by_width[:3] == prefix  # widths above every other, in the prefix's order
    assert [order.width[b] for b in (0, 2, 3)] == [plain.width[b] for b in (0, 2, 3)]
    assert replay_learned(prep, 3, 1, scores, prefix).width == order.width


def test_the_learner_keeps_the_deepest_path_until_it_goes_stale():
    _, prep = prepared(TRIPLES)
    learner, none = Learner(prep, seed=5), np.zeros(2, dtype=np.int64)
    assert learner.prefix() == []  # nothing kept yet
    learner.learn(none, [2, 0])
    learner.learn(none, [1])  # shallower: the deeper path stays
    assert learner.path == [2, 0]
    learner.learn(none, [1, 3])  # as deep: the newer replaces it
    assert learner.path == [1, 3] and learner.stale == 3
    learner.learn(none, [1, 3, 0])  # deeper: kept, and fresh again
    assert learner.path == [1, 3, 0] and learner.stale == 1
    prefixes = [learner.prefix() for _ in range(400)]
    assert all(p == [1, 3, 0][:len(p)] and len(p) < 3 for p in prefixes)  # one dropped at least
    share = sum(bool(p) for p in prefixes) / len(prefixes)
    assert 0.2 < share < PREFIX_SHARE  # some orders keep a prefix, some start afresh
    for _ in range(PATH_PROBES):
        learner.learn(none, [0])
    assert learner.path == []  # gone stale: the next probe starts afresh
    learner.learn(none, [2, 0])
    learner.learn(none, list(range(len(TRIPLES))))  # a packing: not kept
    assert learner.path == []
    without = Learner(prep, prefixes=False)
    without.learn(none, [2, 0])
    assert without.path == [2, 0] and not any(without.prefix() for _ in range(50))
