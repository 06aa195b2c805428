"""The configuration LP of shared objects (optplan.exact.colgen): exact pricing, a bound that
never exceeds the optimum (converged or stopped early), and partitions that validate."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from optplan import Instance, Problem, Status, load_instance, solve
from optplan.exact.colgen import Pricer, configuration_bound
from optplan.bounds import shared_objects_bound
from optplan.exact.scaling import scaling
from optplan.heuristics.constructions import decreasing_size_objects as greedy_shared_objects
from optplan.model import SharedObjectsSolution
from optplan.validate import validate

from factories import tiny_instances

SETTINGS = dict(deadline=None, max_examples=120)


def may_share(instance: Instance, members) -> bool:
    """The SO(-IP) rule, by definition: pairwise disjoint lifetimes, except in-place pairs."""
    records = instance.records
    for i, j in itertools.combinations(members, 2):
        if records[i].conflicts_with(records[j]) and (i, j) not in instance.inplace_set \
                and (j, i) not in instance.inplace_set:
            return False
    return True


@settings(**SETTINGS)
@given(instance=tiny_instances(), data=st.data())
def test_pricing_finds_the_heaviest_configuration(instance, data):
    pricer = Pricer(instance, [r.size for r in instance.records])
    if not pricer.exact:
        return
    weights = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 7.0]),
                                 min_size=len(instance), max_size=len(instance)))
    for cap in sorted({r.size for r in instance.records}):
        weight, members = pricer.heaviest(weights, cap)
        assert all(instance.records[i].size <= cap for i in members)
        assert abs(weight - sum(weights[i] for i in members)) < 1e-9
        best = max(sum(weights[i] for i in subset)
                   for k in range(len(instance) + 1)
                   for subset in itertools.combinations(range(len(instance)), k)
                   if may_share(instance, subset)
                   and all(instance.records[i].size <= cap for i in subset))
        assert weight >= best - 1e-9          # no configuration is ever missed: a sound bound
        if not instance.inplace_pairs:        # and without pairs pricing is exact
            assert may_share(instance, members)
            assert abs(weight - best) < 1e-9


def test_pricing_relaxes_a_chain_through_a_single_op_record():
    """1 -> 0 -> 2 through the single-op record 0: 1 and 2 are both live at op 0 and not a
    pair, so no object holds all three; the pricer's chain may (a sound superset)."""
    instance = Instance.from_tuples([(0, 0, 2), (0, 0, 3), (0, 0, 1)],
                                    inplace_pairs=[(1, 0), (0, 2)])
    pricer = Pricer(instance, [r.size for r in instance.records])
    weight, members = pricer.heaviest([1.0, 1.0, 1.0], 3)
    assert weight == 3.0 and not may_share(instance, members)
    scale = scaling(instance, with_alignment=False)
    found = configuration_bound(instance, scale.sizes, [0, 1, 2])
    optimum = solve(instance, "brute_force", Problem.SHARED_OBJECTS, inplace=True).objective
    assert found.bound <= optimum
    if found.object_ids is not None:
        partition = SharedObjectsSolution.from_object_ids(instance, found.object_ids)
        assert not validate(instance, Problem.SHARED_OBJECTS, partition)


@settings(**SETTINGS)
@given(instance=tiny_instances())
def test_bound_never_exceeds_the_optimum_and_partitions_validate(instance):
    for case in (instance.without_inplace(), instance):
        optimum = solve(case, "brute_force", Problem.SHARED_OBJECTS,
                        inplace=bool(case.inplace_pairs)).objective
        scale = scaling(case, with_alignment=False)
        start = greedy_shared_objects(case)
        found = configuration_bound(case, scale.sizes, start.object_ids)
        assert found.bound * scale.unit <= optimum
        if found.object_ids is not None:
            partition = SharedObjectsSolution.from_object_ids(case, found.object_ids)
            assert not validate(case, Problem.SHARED_OBJECTS, partition)
            assert partition.total_size >= optimum


def test_a_bound_stopped_early_is_still_valid():
    instance = load_instance("data/networks/inception_v3_fused_tflite_299.json")
    scale = scaling(instance, with_alignment=False)
    start = greedy_shared_objects(instance)
    early = configuration_bound(instance, scale.sizes, start.object_ids, time_limit=0.05)
    optimum = solve(instance, "cpsat", Problem.SHARED_OBJECTS, time_limit=60).objective
    assert early.bound * scale.unit <= optimum


@settings(**SETTINGS)
@given(instance=tiny_instances())
def test_converged_bound_dominates_the_positional_maximums(instance):
    """Every size threshold's largest clique needs that many columns of at least that cost,
    so integrating over thresholds gives the positional-maximums bound."""
    case = instance.without_inplace()
    scale = scaling(case, with_alignment=False)
    found = configuration_bound(case, scale.sizes, greedy_shared_objects(case).object_ids)
    assert found.converged
    assert found.bound * scale.unit >= shared_objects_bound(case)


def test_training_graph_is_proven_by_the_configuration_lp():
    # No time limit: the proof is the point, not its speed (bench/exact.py times it), so the
    # test does not depend on how loaded the machine is.
    instance = load_instance("data/networks/resnet50_train_torch_224.json")
    result = solve(instance, "cpsat", Problem.SHARED_OBJECTS, time_limit=None, workers=2,
                   seed=0)
    assert result.status is Status.OPTIMAL and result.valid
    assert result.info["configuration_lp_converged"]
    assert result.best_bound == result.objective > result.info["combinatorial_bound"]
