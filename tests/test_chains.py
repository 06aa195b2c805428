"""Chains (``optplan.exact.chains``): the restriction ``search``'s random probes search."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optplan import Instance, solve, validate
from optplan.bounds import max_breadth
from optplan.exact._search_core import decide, prepare, stack_height
from optplan.exact.chains import chain_groups, chained
from optplan.formats.minimalloc_csv import read_minimalloc_csv
from optplan.formats.solution_csv import read_solution_csv
from optplan.model import OffsetsSolution


@st.composite
def chained_instances(draw) -> Instance:
    """Runs of equal buffers handed on op after op, among buffers of random sizes."""
    triples = []
    for _ in range(draw(st.integers(1, 4))):
        size, op = draw(st.sampled_from([2, 3, 4, 8])), draw(st.integers(0, 6))
        for length in draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)):
            triples.append((op, op + length - 1, size))
            op += length
    for _ in range(draw(st.integers(0, 6))):
        first = draw(st.integers(0, 15))
        triples.append((first, first + draw(st.integers(0, 4)), draw(st.integers(1, 8))))
    order = draw(st.permutations(range(len(triples))))
    return Instance.from_tuples([triples[i] for i in order],
                                alignment=draw(st.sampled_from([1, 1, 2, 4])))


def prepared(instance: Instance):
    return prepare(instance.first_ops, instance.last_ops, instance.sizes, instance.alignment)


def test_a_chain_is_a_run_of_equal_buffers_handed_on_op_after_op():
    # Buffer 0 (ops 0-1) hands on to 1 (ops 2-3), the first of the two equal buffers live
    # from op 2, and 1 to 3 (ops 4-5); 2 is left alone; 4 has another size.
    instance = Instance.from_tuples([(0, 1, 4), (2, 3, 4), (2, 3, 4), (4, 5, 4), (2, 5, 5)])
    assert chain_groups(prepared(instance)) == [[0, 1, 3], [2], [4]]
    assert chained(prepared(Instance.from_tuples([(0, 1, 4), (3, 4, 4)]))) is None  # a gap


@settings(max_examples=150, deadline=None)
@given(chained_instances())
def test_chains_partition_the_buffers_into_maximal_runs(instance):
    prep = prepared(instance)
    groups = chain_groups(prep)
    assert sorted(b for group in groups for b in group) == list(range(len(instance)))
    start, end, sizes = prep.section_start, prep.section_end, prep.sizes
    for group in groups:
        for before, after in zip(group, group[1:]):
            assert sizes[before] == sizes[after] and start[after] == end[before]
    # greedy, so maximal: no chain could go on into another chain's first buffer
    heads = {group[0] for group in groups}
    for group in groups:
        tail = group[-1]
        assert not any(sizes[head] == sizes[tail] and start[head] == end[tail]
                       for head in heads - {group[0]})


@settings(max_examples=150, deadline=None)
@given(chained_instances())
@example(Instance.from_tuples([(0, 0, 2), (0, 0, 2), (1, 1, 2), (0, 0, 1)], alignment=4))
def test_a_packing_of_the_chained_instance_is_a_packing_of_the_instance(instance):
    # The chained instance keeps the max breadth; its packings, each member of a chain at
    # the chain's offset, pass the validator. Its refutations prove nothing: the instance
    # may still pack where the chained one does not, never the other way round.
    prep = prepared(instance)
    chains = chained(prep)
    if chains is None:
        return
    members = chains.prep.section_members
    assert max(sum(chains.prep.sizes[m] for m in section) for section in members) \
        == max_breadth(instance) // prep.scale
    for capacity in range(max_breadth(instance) // prep.scale, stack_height(prep) + 1):
        found = decide(chains.prep, capacity)
        if isinstance(found, list):
            break
        assert found is None
    offsets = [offset * prep.scale for offset in chains.expand(found)]
    solution = OffsetsSolution.from_offsets(instance, offsets)
    assert not validate(instance, "offsets", solution)
    assert solution.arena_size <= capacity * prep.scale
    assert decide(prep, capacity) is not None  # the instance packs wherever the chains do


@pytest.mark.peer
def test_random_probes_search_the_chained_instance_unless_switched_off(minimalloc_dir):
    # MiniMalloc's D (213 buffers, 174 chains) is not proven in 8 s: after the improve
    # loop's first sweep every random order is drawn for the chained instance (records with
    # "chains"; one that finds nothing is "emptied", never a refutation); with the switch
    # off, for the instance. The run's packing passes the validator either way.
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "D.1048576.csv")
    for switch in (True, False):
        result = solve(instance, "search", "offsets", time_limit=8, workers=2, seed=1,
                       chains=switch)
        assert result.valid and result.info["switches"]["chains"] is switch
        randoms = [probe for probe in result.info["probes"] if probe["jittered"]]
        assert randoms and all(probe.get("chains", False) is switch for probe in randoms)
        assert {probe["result"] for probe in randoms} <= (
            {"feasible", "emptied", "timeout"} if switch else
            {"feasible", "infeasible", "timeout"})


@pytest.mark.peer
def test_js_optima_hand_most_of_its_chains_from_one_offset_to_another(minimalloc_dir):
    # Why a chained probe that finds nothing proves nothing, on J itself: its two committed
    # optimal packings keep 25 and 18 of its 81 chain links (a link kept: both buffers at
    # one offset), so neither is a packing of the chained instance.
    results = Path(__file__).resolve().parents[1] / "paper" / "results" / "search"
    instance = read_minimalloc_csv(minimalloc_dir / "challenging" / "J.1048576.csv")
    prep = prepared(instance)
    links = [pair for group in chain_groups(prep) for pair in zip(group, group[1:])]
    assert len(links) == len(instance) - len(chained(prep).groups) == 81
    kept = []
    for name in ("J.989184.offsets.csv", "J.989184.layers.offsets.csv"):
        optimum = read_solution_csv(instance, "offsets", results / name)
        assert not validate(instance, "offsets", optimum)
        assert optimum.arena_size == max_breadth(instance)
        kept.append(sum(optimum.offsets[a] == optimum.offsets[b] for a, b in links))
    assert kept == [25, 18]
