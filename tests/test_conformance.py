"""The TFLite reference test vectors (shared/conformance) must reproduce exactly."""

from __future__ import annotations

import json

import pytest

from conftest import CONFORMANCE
from optplan import Instance, lower_bound, positional_maximums, solve

if not CONFORMANCE.is_file():
    pytest.skip(f"conformance vectors not found at {CONFORMANCE}", allow_module_level=True)

DATA = json.loads(CONFORMANCE.read_text())
METHOD_NAMES = {"MINCOSTFLOW": "min_cost_flow"}


def _instance(records, alignment=1) -> Instance:
    return Instance.from_tuples([(r["first_op"], r["last_op"], r["size"]) for r in records],
                                alignment=alignment)


def _case_id(case) -> str:
    return f"{case['name']}-{case['problem']}-{case['strategy']}"


@pytest.mark.parametrize("case", DATA["cases"], ids=_case_id)
def test_case_reproduces_exactly(case):
    instance = _instance(case["records"], case.get("alignment", 1))
    method = METHOD_NAMES.get(case["strategy"], case["strategy"].lower())
    result = solve(instance, method, case["problem"])
    assert result.valid, result.violations
    expected = case["expected"]
    if case["problem"] == "shared_objects":
        assert list(result.solution.object_ids) == expected["object_ids"]
        assert list(result.solution.object_sizes) == expected["object_sizes"]
        assert result.objective == sum(expected["object_sizes"])
    else:
        assert list(result.solution.offsets) == expected["offsets"]
        assert result.solution.arena_size == expected["total_size"]


def _named_records(name):
    return next(c["records"] for c in DATA["cases"] if c["name"] == name)


@pytest.mark.parametrize("name", sorted(DATA["positional_maximums"]))
def test_positional_maximums(name):
    assert positional_maximums(_instance(_named_records(name))) == DATA["positional_maximums"][name]


@pytest.mark.parametrize("name", sorted(DATA["lower_bounds"]))
def test_lower_bounds(name):
    instance = _instance(_named_records(name))
    expected = DATA["lower_bounds"][name]
    assert lower_bound(instance, "shared_objects") == expected["shared_objects"]
    assert lower_bound(instance, "offsets") == expected["offsets"]


def test_every_tflite_strategy_is_covered():
    strategies = {c["strategy"] for c in DATA["cases"]}
    assert {"NAIVE", "EQUALITY", "GREEDY_IN_ORDER", "GREEDY_BY_BREADTH", "GREEDY_BY_SIZE",
            "GREEDY_BEST", "MINCOSTFLOW"} <= strategies
