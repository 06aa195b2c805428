"""MiniMalloc CSV and optplan JSON: exact conversion, round trips, one-line errors."""

from __future__ import annotations


import pytest
from hypothesis import given, settings

from optplan import InputError, Instance, load_instance
from optplan.formats import (read_json_instance, read_minimalloc_csv, read_solution_csv,
                             write_json_instance, write_minimalloc_csv, write_solution_csv)
from optplan.model import OffsetsSolution, SharedObjectsSolution

from factories import instances, named


def test_minimalloc_upper_is_exclusive(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text("id,lower,upper,size\nb1,0,3,4\nb2,3,9,8\n")
    instance = read_minimalloc_csv(path)
    assert [(r.id, r.first_op, r.last_op, r.size) for r in instance.records] == [
        ("b1", 0, 2, 4), ("b2", 3, 8, 8)]
    # [0, 3) and [3, 9) do not overlap: the closed records [0, 2] and [3, 8] do not conflict.
    assert not instance.records[0].conflicts_with(instance.records[1])


@settings(max_examples=60, deadline=None)
@given(instances(max_tensors=10, min_tensors=1))  # an instance file holds a tensor at least
def test_minimalloc_round_trip(tmp_path_factory, instance):
    path = tmp_path_factory.mktemp("csv") / "x.csv"
    offsets = OffsetsSolution.from_offsets(instance, [3 * i for i in range(len(instance))])
    write_minimalloc_csv(instance, path, offsets)
    again, solution = read_minimalloc_csv(path, with_offsets=True)
    assert again.records == instance.records
    assert solution == offsets


@settings(max_examples=60, deadline=None)
@given(instances(max_tensors=10, alignment=True, inplace=True, min_tensors=1))
def test_json_round_trip(tmp_path_factory, instance):
    path = tmp_path_factory.mktemp("json") / "x.json"
    write_json_instance(instance, path)
    again = read_json_instance(path)
    assert (again.records, again.alignment, again.inplace_pairs) == (
        instance.records, instance.alignment, instance.inplace_pairs)


def test_minimalloc_peer_example_reads(minimalloc_dir):
    instance = load_instance(minimalloc_dir / "input.12.csv")
    assert len(instance) == 5 and instance.records[0].id == "b1"
    assert instance.records[0].last_op == 2


@pytest.mark.parametrize("text, line, field", [
    ("id,lower,upper,size\nb1,0,3,x\n", 2, "size"),
    ("id,lower,upper,size\nb1,0,3,4\nb2,5,5,4\n", 3, "upper"),
    ("id,lower,upper,size\nb1,0,3,-4\n", 2, "size"),
    ("id,lower,upper,size\nb1,0,3,0\n", 2, "size"),
    ("id,lower,upper,size\nb1,-2,3,4\n", 2, "lower"),
    ("id,lower,upper,size\nb1,0,3,4\nb1,4,5,4\n", 3, "id"),
    ("id,lower,upper\nb1,0,3\n", 1, "size"),
    ("id,lower,upper,size\nb1,0,3\n", 2, None),
    ("", 1, None),
])
def test_malformed_csv_gives_one_line_naming_file_line_field(tmp_path, text, line, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_minimalloc_csv(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: ")
    assert error.value.field == field


@pytest.mark.parametrize("text, field", [
    ("{not json", None),
    ("[]", None),
    ('{"records": 3}', "records"),
    ('{"records": [{"id": "a", "first_op": 0, "last_op": 1}]}', "records[0]"),
    ('{"records": [{"id": "a", "first_op": 0, "last_op": 1, "size": -1}]}', "records[0].size"),
    ('{"records": [{"id": "a", "first_op": 2, "last_op": 1, "size": 1}]}', "records[0].last_op"),
    ('{"records": [{"id": "a", "first_op": 0, "last_op": 1, "size": 1}], "inplace": [["a", "z"]]}',
     "inplace[0]"),
    ('{"records": [{"id": "a", "first_op": 0, "last_op": 1, "size": 1}], "alignment": 0}',
     "alignment"),
    ('{"records": []}', "records"),
    ('{"format": "other", "records": []}', "format"),
])
def test_malformed_json_names_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_json_instance(path)
    assert str(error.value).startswith(str(path))
    assert error.value.field == field


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="unknown instance format"):
        load_instance(tmp_path / "x.txt")
    with pytest.raises(InputError, match="cannot read"):
        load_instance(tmp_path / "missing.csv")


@pytest.mark.parametrize("problem, solution", [
    ("offsets", OffsetsSolution((0, 32, 64, 100, 116, 0, 104, 64), 124)),
    ("shared_objects", SharedObjectsSolution((0, 1, 2, 3, 4, 0, 1, 2), (64, 28, 40, 16, 8))),
])
def test_solution_csv_round_trip(tmp_path, problem, solution):
    instance = named("paper_example")
    path = tmp_path / "solution.csv"
    write_solution_csv(instance, problem, solution, path)
    again = read_solution_csv(instance, problem, path)
    if problem == "offsets":
        assert again == solution
    else:
        assert again.object_ids == solution.object_ids


def test_solution_csv_errors(tmp_path):
    instance = Instance.from_tuples([(0, 1, 4), (1, 2, 4)])
    path = tmp_path / "s.csv"
    path.write_text("id,offset\n0,0\n")
    with pytest.raises(InputError, match="no row for tensor '1'"):
        read_solution_csv(instance, "offsets", path)
    path.write_text("id,offset\n0,0\n7,4\n")
    with pytest.raises(InputError, match="unknown tensor id '7'"):
        read_solution_csv(instance, "offsets", path)
    path.write_text("id,first_op,last_op,size,offset\n0,0,1,8,0\n1,1,2,4,4\n")
    with pytest.raises(InputError, match="disagrees") as error:
        read_solution_csv(instance, "offsets", path)
    assert error.value.line == 2 and error.value.field == "size"
