"""Sizes and alignments up to the admitted maximum: exact totals, valid plans, JSON results.

An instance's sizes rounded up to its alignment sum to at most 2^62 (``MAX_VALUE``, checked
once when the instance is built). Every plan fits in that sum, so every method computes in
64-bit integers without overflow; one step beyond is refused with an error naming the field.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optplan import Instance, InputError
from optplan.bounds import lower_bound, max_breadth
from optplan.formats import load_instance
from optplan.model import MAX_VALUE, round_up
from optplan.peers import PeerUnavailableError
from optplan.peers.minimalloc import find_solver
from optplan.problems import Problem
from optplan.registry import methods
from optplan.result import relative_gap
from optplan.solve import solve

from cli_checks import assert_one_json_object, assert_one_line_error, cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "examples" / "paper_example.json"
NETWORK = REPO / "data" / "networks" / "squeezenet_fused_onnx_224.json"  # has a graph


def runs_here(method: str) -> bool:
    """Whether ``method`` can run on this machine. Only ``minimalloc`` may not: it needs
    MiniMalloc's solver, which is not on PyPI and never built by the project, so it joins
    these tests only where ``MINIMALLOC_BIN`` or MiniMalloc's module is present (CI has
    neither; ``test_peers.py`` runs it everywhere against a stand-in). Every other method,
    every other peer included, always runs."""
    if method != "minimalloc":
        return True
    try:
        find_solver()
    except PeerUnavailableError:
        return False
    return True


OFFSETS_METHODS = sorted(name for name, info in methods().items()
                         if Problem.OFFSETS in info.implementations and runs_here(name))


def aligned_total(instance: Instance) -> int:
    return sum(round_up(r.size, instance.alignment) for r in instance.records)


@pytest.mark.parametrize("method", OFFSETS_METHODS)
def test_every_offsets_method_at_the_largest_admitted_alignment(capsys, method):
    path = NETWORK if methods()[method].input == "graph" else EXAMPLE
    count = len(load_instance(path))
    largest = MAX_VALUE // count  # every tensor takes one alignment step: the sum is <= 2^62
    argv = ["solve", path, "--problem", "offsets", "--method", method, "--time-limit", "2",
            "--workers", "1", "--json"]
    code, out, err = cli(capsys, argv + ["--alignment", str(largest)])
    if code == 2:  # an exact solver's own range, refused up front (never a wrong answer)
        assert_one_line_error(code, out, err, path, "size")
    else:
        assert code == 0, err
        result = assert_one_json_object(out)
        if methods()[method].kind == "bound":
            assert result["objective"] is None and result["lower_bound"] <= largest * count
        else:
            assert result["valid"] is True
            assert result["lower_bound"] <= result["objective"] <= largest * count
            assert result["objective"] % largest == 0
    code, out, err = cli(capsys, argv + ["--alignment", str(largest + 1)])
    assert_one_line_error(code, out, err, path, "alignment")


def test_two_tensors_of_half_the_limit_live_together_give_exact_figures(capsys, tmp_path):
    path = tmp_path / "halves.json"
    path.write_text(json.dumps({"records": [
        {"id": "a", "first_op": 0, "last_op": 1, "size": 2**61},
        {"id": "b", "first_op": 0, "last_op": 1, "size": 2**61}]}))
    for problem in ("offsets", "shared-objects"):
        code, out, err = cli(capsys, ["solve", path, "--problem", problem, "--method",
                                      "greedy_by_size", "--json"])
        result = assert_one_json_object(out)
        assert code == 0 and result["lower_bound"] == result["objective"] == 2**62
        assert result["gap"] == 0.0


def test_the_issue_reproduction_is_refused_naming_the_field(capsys, tmp_path):
    path = tmp_path / "two_2_62.json"
    path.write_text(json.dumps({"records": [
        {"id": "a", "first_op": 0, "last_op": 1, "size": 2**62},
        {"id": "b", "first_op": 0, "last_op": 1, "size": 2**62}]}))
    code, out, err = cli(capsys, ["solve", path, "--problem", "offsets", "--method",
                                  "greedy_by_size", "--json"])
    assert_one_line_error(code, out, err, path, "size", "2^62")


def test_instances_beyond_the_limit_are_refused_when_built():
    with pytest.raises(InputError) as error:
        Instance.from_tuples([(0, 1, 2**62), (2, 3, 1)])
    assert error.value.field == "size"
    with pytest.raises(InputError) as error:
        Instance.from_tuples([(0, 1, 3), (2, 3, 1)], alignment=2**61 + 1)
    assert error.value.field == "alignment"
    assert len(Instance.from_tuples([(0, 1, 3), (2, 3, 1)], alignment=2**61)) == 2


def test_a_gap_is_never_infinite():
    assert relative_gap(5, 0) is None
    assert relative_gap(0, 0) == 0.0
    assert relative_gap(None, 3) is None


@st.composite
def near_limit(draw) -> Instance:
    """A small random instance scaled up until its aligned sizes nearly fill 2^62."""
    count = draw(st.integers(1, 7))
    triples = []
    for _ in range(count):
        first = draw(st.integers(0, 6))
        triples.append((first, draw(st.integers(first, 7)), draw(st.integers(1, 100))))
    alignment = draw(st.sampled_from([1, 3, 64, 2**20]))
    # Each size s*scale rounds up to at most s*scale + alignment - 1.
    scale = (MAX_VALUE - count * alignment) // sum(s for _, _, s in triples)
    instance = Instance.from_tuples([(a, b, s * scale - draw(st.integers(0, 1)))
                                     for a, b, s in triples], alignment=alignment)
    assert aligned_total(instance) <= MAX_VALUE
    return instance


RECORD_METHODS = [(name, problem) for name, info in methods().items()
                  if info.input == "records" and runs_here(name)
                  for problem in (Problem.OFFSETS, Problem.SHARED_OBJECTS)
                  if problem in info.implementations]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=near_limit())
def test_every_method_is_exact_and_valid_near_the_limit(instance):
    total = aligned_total(instance)
    assert max_breadth(instance) <= total
    for name, problem in RECORD_METHODS:
        try:
            result = solve(instance, name, problem, time_limit=1, workers=1, seed=0)
        except InputError as error:  # an exact solver's range: refused, naming the field
            assert error.field == "size" and "\n" not in str(error)
            continue
        assert result.lower_bound == lower_bound(instance, problem) >= 1
        if result.solution is not None:
            assert result.valid, (name, problem, result.violations[:1])
            assert result.lower_bound <= result.objective <= total, (name, problem)
        assert result.gap is None or math.isfinite(result.gap)
        json.dumps(result.summary(), allow_nan=False)  # never Infinity or NaN
