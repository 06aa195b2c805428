"""Seeded synthetic generators: determinism, validity, structure, scale."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan.bounds import lower_bound
from optplan.errors import InputError
from optplan.generators import (GENERATORS, generate, generate_graph, random_dag,
                                random_dag_graph)
from optplan.graph import lifetimes

KINDS = sorted(GENERATORS)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_instance_other_seed_other_instance(kind):
    assert generate(kind, 300, seed=7) == generate(kind, 300, seed=7)
    assert generate(kind, 300, seed=7) != generate(kind, 300, seed=8)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), count=st.integers(1, 200), seed=st.integers(0, 2**31))
def test_every_instance_is_well_formed(kind, count, seed):
    instance = generate(kind, count, seed=seed)   # Instance() itself checks records and pairs
    assert len(instance) == count
    assert instance.num_ops <= max(count, 2)
    assert (instance.sizes > 0).all()
    assert instance.provenance["generator"] == kind and instance.provenance["seed"] == seed


@pytest.mark.parametrize("kind", ["random_dag", "chain_skip", "transformer"])
def test_network_like_kinds_have_one_producer_per_op(kind):
    instance = generate(kind, 500, seed=2)
    assert sorted(instance.first_ops.tolist()) == list(range(500))
    # every tensor but the last is read by a later op
    assert all(r.last_op > r.first_op for r in instance.records[:-1])


@pytest.mark.parametrize("kind", ["random_dag", "chain_skip", "transformer"])
@pytest.mark.parametrize("count", [1, 2, 15, 16, 400])
def test_graph_lifetimes_give_the_generated_records(kind, count):
    graph = generate_graph(kind, count, seed=5)
    from_graph = lifetimes(graph, keep_graph=False)
    generated = generate(kind, count, seed=5)
    assert from_graph.records[0].id == "input"
    assert from_graph.records[1:] == generated.records
    shifted = tuple((a - 1, b - 1) for a, b in from_graph.inplace_pairs)
    assert shifted == generated.inplace_pairs


def test_random_dag_graph_is_the_random_dag_generator():
    assert random_dag_graph(50, seed=2) == generate_graph("random_dag", 50, seed=2)
    assert lifetimes(random_dag_graph(50, seed=2)).records[1:] == random_dag(50, seed=2).records


def test_graph_generator_rejects_record_only_kinds():
    with pytest.raises(InputError, match="random_dag, chain_skip, transformer"):
        generate_graph("minimalloc", 10)


def test_chain_skip_has_residual_skips():
    instance = generate("chain_skip", 200, seed=0)
    long_lived = [r for r in instance.records if r.last_op - r.first_op >= 2]
    assert len(long_lived) >= 200 // 5


def test_transformer_declares_softmax_and_gelu_in_place():
    instance = generate("transformer", 1 + 14 * 3, seed=0)
    assert len(instance.inplace_pairs) == 6
    for a, b in instance.inplace_pairs:
        assert instance.records[a].last_op == instance.records[b].first_op == a + 1


def test_minimalloc_style_sizes_are_kibibyte_multiples():
    instance = generate("minimalloc", 1000, seed=1)
    assert (instance.sizes % 1024 == 0).all()
    assert 5 <= lower_bound(instance, "offsets") / instance.sizes.mean() <= 200


def test_unknown_kind_lists_the_valid_kinds():
    with pytest.raises(InputError, match="random_dag, chain_skip, transformer, minimalloc"):
        generate("grid", 10)


@pytest.mark.parametrize("count", [0, -3, 2.5])
def test_bad_counts_are_input_errors(count):
    with pytest.raises(InputError, match="num_tensors"):
        generate("random_dag", count)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_hundred_thousand_tensors_in_seconds(kind):
    start = time.perf_counter()
    instance = generate(kind, 100_000, seed=0)
    assert len(instance) == 100_000
    assert time.perf_counter() - start < 5.0
