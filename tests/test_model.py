"""Construction of records and instances rejects bad data with a specific error."""

from __future__ import annotations

import pytest

from optplan import Instance, InputError, UsageRecord
from optplan.bounds import lower_bound, max_breadth, positional_maximums
from optplan.profiles import breadths, compressed_times, operator_profiles

from factories import named


@pytest.mark.parametrize("kwargs, field", [
    (dict(id="a", first_op=0, last_op=1, size=0), "size"),
    (dict(id="a", first_op=0, last_op=1, size=-5), "size"),
    (dict(id="a", first_op=3, last_op=1, size=4), "last_op"),
    (dict(id="a", first_op=-1, last_op=1, size=4), "first_op"),
    (dict(id="a", first_op=0, last_op=1, size=2.5), "size"),
    (dict(id="a", first_op="0", last_op=1, size=4), "first_op"),
    (dict(id="a", first_op=0, last_op=1, size=True), "size"),
    (dict(id="", first_op=0, last_op=1, size=4), "id"),
    (dict(id="a", first_op=0, last_op=1, size=2**70), "size"),
    (dict(id="a", first_op=0, last_op=2**63, size=4), "last_op"),
])
def test_bad_record_is_rejected_naming_the_field(kwargs, field):
    with pytest.raises(InputError) as error:
        UsageRecord(**kwargs)
    assert error.value.field == field
    assert "\n" not in str(error.value)


def test_duplicate_ids_are_rejected():
    with pytest.raises(InputError, match="duplicate id 'a'"):
        Instance((UsageRecord("a", 0, 1, 4), UsageRecord("a", 2, 3, 4)))


@pytest.mark.parametrize("pairs, message", [
    ([(0, 2)], "last_op 1 != .*first_op 3"),  # not adjacent in time
    ([(1, 0)], "last_op"),                     # backwards
    ([(0, 1), (0, 1)], "duplicate"),
    ([(0, 5)], "does not name two records"),
    ([(2, 3)], "size 16 > .*size 8"),          # b larger than a
])
def test_bad_inplace_pairs_are_rejected(pairs, message):
    triples = [(0, 1, 8), (1, 2, 8), (3, 4, 8), (4, 5, 16)]
    with pytest.raises(InputError, match=message):
        Instance.from_tuples(triples, inplace_pairs=pairs)


def test_alignment_must_be_positive():
    with pytest.raises(InputError, match="alignment"):
        Instance.from_tuples([(0, 1, 4)], alignment=0)


def test_profiles_and_breadths_of_the_paper_example():
    instance = named("paper_example")
    profiles = operator_profiles(instance)
    assert profiles[3] == [1, 2, 3]            # ops 0..8 are all endpoints: no compression
    assert breadths(instance).tolist()[3] == 28 + 36 + 16
    assert max_breadth(instance) == 124
    assert positional_maximums(instance) == [64, 40, 16, 8]


def test_sparse_time_axis_is_compressed_to_endpoints():
    instance = named("sparse")
    first, last, count = compressed_times(instance)
    assert count == len({0, 999, 1000, 4999, 500, 1500, 5000, 2**20})
    assert max_breadth(instance) == 64 + 16  # ops 500..999: the first and third tensors
    assert len(operator_profiles(instance)) == count


def test_bounds_of_an_empty_instance_are_zero():
    empty = Instance(())
    assert lower_bound(empty, "offsets") == 0
    assert lower_bound(empty, "shared_objects") == 0


def test_offsets_bound_is_rounded_up_to_the_alignment():
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 5)], alignment=8)
    assert max_breadth(instance) == 15
    assert lower_bound(instance, "offsets") == 16
