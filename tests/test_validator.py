"""The validator catches every kind of violation, with a reason naming the tensors."""

from __future__ import annotations

from optplan import Instance, OffsetsSolution, SharedObjectsSolution, ViolationKind, validate

from factories import named

# a [0,1] 8, b [1,2] 8, c [3,4] 4: a and b conflict, c conflicts with neither.
ABC = Instance.from_tuples([(0, 1, 8), (1, 2, 8), (3, 4, 4)])


def kinds(violations):
    return {v.kind for v in violations}


def test_valid_solutions_have_no_violations():
    assert validate(ABC, "offsets", OffsetsSolution((0, 8, 0), 16)) == []
    assert validate(ABC, "shared_objects", SharedObjectsSolution((0, 1, 0), (8, 8))) == []


def test_overlap_names_both_tensors():
    (violation,) = validate(ABC, "offsets", OffsetsSolution((0, 4, 0), 12))
    assert violation.kind is ViolationKind.OVERLAP
    assert "tensors 0 [0, 1] at [0, 8)" in violation.message and "1 [1, 2]" in violation.message


def test_touching_in_memory_is_not_an_overlap():
    assert validate(ABC, "offsets", OffsetsSolution((8, 0, 0), 16)) == []


def test_arena_misstated():
    assert kinds(validate(ABC, "offsets", OffsetsSolution((0, 8, 0), 20))) == {
        ViolationKind.ARENA_MISSTATED}


def test_negative_and_misaligned_offsets():
    aligned = ABC.with_alignment(8)
    found = kinds(validate(aligned, "offsets", OffsetsSolution((0, 12, -8), 20)))
    assert found == {ViolationKind.MISALIGNED, ViolationKind.NEGATIVE_OFFSET}


def test_wrong_length_and_wrong_type():
    assert kinds(validate(ABC, "offsets", OffsetsSolution((0, 8), 16))) == {
        ViolationKind.WRONG_LENGTH}
    assert kinds(validate(ABC, "offsets", SharedObjectsSolution((0, 1, 0), (8, 8)))) == {
        ViolationKind.WRONG_TYPE}


def test_shared_object_conflict_too_small_and_bad_id():
    assert kinds(validate(ABC, "shared_objects", SharedObjectsSolution((0, 0, 1), (8, 4)))) == {
        ViolationKind.SHARED_CONFLICT}
    assert kinds(validate(ABC, "shared_objects", SharedObjectsSolution((0, 1, 0), (8, 4)))) == {
        ViolationKind.OBJECT_TOO_SMALL}
    assert kinds(validate(ABC, "shared_objects", SharedObjectsSolution((0, 1, 2), (8, 8)))) == {
        ViolationKind.BAD_OBJECT_ID}


def test_inplace_pair_may_share_exactly():
    pair = Instance.from_tuples([(0, 1, 8), (1, 2, 8), (3, 4, 4)], inplace_pairs=[(0, 1)])
    assert validate(pair, "offsets", OffsetsSolution((0, 0, 0), 8)) == []
    assert validate(pair, "shared_objects", SharedObjectsSolution((0, 0, 0), (8,))) == []
    # A partial overlap of the pair is not in place.
    assert kinds(validate(pair, "offsets", OffsetsSolution((0, 4, 0), 12))) == {
        ViolationKind.BAD_INPLACE}
    # Without the pair, sharing is a conflict.
    assert kinds(validate(ABC, "shared_objects", SharedObjectsSolution((0, 0, 0), (8,)))) == {
        ViolationKind.SHARED_CONFLICT}


def test_inplace_chain_shares_one_object():
    chain = Instance.from_tuples([(0, 2, 8), (2, 4, 8), (4, 6, 4)], inplace_pairs=[(0, 1), (1, 2)])
    assert validate(chain, "shared_objects", SharedObjectsSolution((0, 0, 0), (8,))) == []
    assert validate(chain, "offsets", OffsetsSolution((0, 0, 0), 8)) == []


def test_every_overlap_in_a_big_stack_is_reported():
    instance = named("clique")
    violations = validate(instance, "offsets", OffsetsSolution((0, 0, 0, 0), 7))
    assert len(violations) == 6  # every pair of the four live-together tensors
