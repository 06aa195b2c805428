"""FlexNN's slice-then-plan (method ``flexnn_sliced``), the minimum budget with slicing, and
the brute-force oracles over slicings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from optplan.cli import main
from optplan.preload import (budget_lower_bound, latency_lower_bound, read_plan,
                             read_preload_instance, validate_plan)
from optplan.preload.flexnn import flexnn
from optplan.preload.flexnn_sliced import bottleneck, flexnn_sliced, flexnn_slicing
from optplan.preload.model import LayerSlicing
from optplan.preload.sliced_search import (brute_force_sliced,
                                           brute_force_sliced_minimum_budget,
                                           minimum_budget_sliced)
from optplan.preload.slicing import all_slicings, apply_slicing, sliced_budget_lower_bound
from optplan.result import SolverOutcome, Status
from optplan.solve import solve
from slicing_factories import conv_fc, sliceable_instances, tiny_fc

REPO = Path(__file__).resolve().parents[1]
VGG = REPO / "data" / "preload" / "vgg19_fused_onnx_224_phone_kernels.json"


def decisions(plan) -> list[tuple]:
    return [(c.layer, c.kernel, c.kind, c.slices) for c in plan.slicing]


# --- the procedure on conv_fc (drawn in slicing_factories) --------------------------------

def test_a_budget_that_fits_every_layer_slices_nothing():
    result = solve(conv_fc(), "flexnn_sliced", "preload", budget=38)
    assert result.valid and result.solution.slicing == ()
    assert result.objective == solve(conv_fc(), "flexnn", "preload", budget=38).objective


def test_the_bottleneck_picks_the_slicing_kind_and_count():
    instance = conv_fc()
    assert bottleneck(instance, LayerSlicing(0)) == "input"       # 16 bytes of im2col > 8
    assert bottleneck(instance, LayerSlicing(1)) == "weight"
    assert bottleneck(instance, LayerSlicing(0, kernel="direct")) == "weight"
    # 24 bytes: conv on im2col input-sliced as far as it goes (4, the threshold and its
    # channels), fc weight-sliced as little as fits (2 slices: peak 22).
    choices = flexnn_slicing(instance, 24)
    assert [(c.kind, c.slices) for c in choices.values()] == [("input", 4), ("weight", 2),
                                                             (None, 1)]
    result = solve(instance, "flexnn_sliced", "preload", budget=24)
    assert result.valid and decisions(result.solution) == [(0, None, "input", 4),
                                                           (1, None, "weight", 2)]
    assert result.objective >= latency_lower_bound(apply_slicing(instance,
                                                                 result.solution.slicing))


def test_kernel_selection_switches_when_the_fast_kernel_cannot_fit():
    # 14 bytes: no im2col option of conv fits (least 18); the direct kernel in 2 weight slices
    # does (12), and fc needs 4 slices (14).
    choices = flexnn_slicing(conv_fc(), 14)
    assert (choices[0].kernel, choices[0].kind, choices[0].slices) == ("direct", "weight", 2)
    assert (choices[1].kind, choices[1].slices) == ("weight", 4)
    result = solve(conv_fc(), "flexnn_sliced", "preload", budget=14)
    assert result.valid and decisions(result.solution) == [(0, "direct", "weight", 2),
                                                           (1, None, "weight", 4)]
    # 16 bytes: the direct kernel fits whole (16), the cheaper choice than slicing it.
    result = solve(conv_fc(), "flexnn_sliced", "preload", budget=16)
    assert result.valid and decisions(result.solution)[0] == (0, "direct", None, 1)


def test_a_budget_below_every_slicing_is_infeasible_with_the_reason():
    assert sliced_budget_lower_bound(conv_fc()) == 14
    result = solve(conv_fc(), "flexnn_sliced", "preload", budget=13)
    assert result.status is Status.INFEASIBLE and result.solution is None
    assert result.info["reason"] == ("budget 13 is below what any slicing allows: layer 1 (fc) "
                                     "needs at least 14 bytes")


def test_unlimited_memory_is_flexnn():
    assert flexnn_sliced(conv_fc()) == flexnn(conv_fc())


# --- against the oracles on tiny instances ------------------------------------------------

MENU = (1, 2)


def small_enough(instance) -> bool:
    return all(len(apply_slicing(instance, s)) <= 8 for s in all_slicings(instance, MENU))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(max_layers=2), st.integers(0, 3))
def test_oracles_bound_the_heuristics(instance, slack):
    assume(small_enough(instance))
    lower = sliced_budget_lower_bound(instance, MENU)
    minimum = brute_force_sliced_minimum_budget(instance, menu=MENU)
    bracket = minimum_budget_sliced(instance, MENU)
    assert bracket.lower_bound == lower <= minimum <= bracket.budget
    assert minimum <= budget_lower_bound(instance)
    assert validate_plan(instance.with_budget(bracket.budget), bracket.plan) == []
    budget = minimum + slack
    exact = brute_force_sliced(instance.with_budget(budget), MENU)
    assert exact.status is Status.OPTIMAL
    assert validate_plan(instance.with_budget(budget), exact.solution) == []
    assert exact.best_bound >= latency_lower_bound(instance)
    heuristic = solve(instance, "flexnn_sliced", "preload", budget=budget, menu=MENU)
    if heuristic.solution is not None:
        assert heuristic.valid and heuristic.objective >= exact.best_bound
    below = solve(instance, "flexnn_sliced", "preload", budget=lower - 1, menu=MENU)
    assert below.status is Status.INFEASIBLE and "below what any slicing" in \
        below.info["reason"]
    assert brute_force_sliced(instance.with_budget(minimum - 1), MENU).status \
        is Status.INFEASIBLE


def test_the_oracle_slices_where_no_plan_fits_without():
    instance = tiny_fc(budget=8)                  # must-live 12 unsliced, 8 in 2 weight slices
    assert solve(instance, "brute_force", "preload").status is Status.INFEASIBLE
    outcome = brute_force_sliced(instance, menu=MENU)
    assert isinstance(outcome, SolverOutcome) and outcome.status is Status.OPTIMAL
    assert decisions(outcome.solution) == [(0, None, "weight", 2)]
    assert validate_plan(instance, outcome.solution) == []
    assert brute_force_sliced(tiny_fc(budget=7), menu=MENU).status is Status.INFEASIBLE
    assert brute_force_sliced_minimum_budget(tiny_fc(), menu=MENU) == 8
    assert brute_force_sliced_minimum_budget(tiny_fc(), menu=(1,)) == 12


# --- VGG-19, whose FC layers are the seed's weight-slicing case ----------------------------

@pytest.fixture(scope="module")
def vgg():
    if not VGG.is_file():
        pytest.skip("VGG-19 kernel instance not committed")
    return read_preload_instance(VGG)


def test_vgg19_runs_far_below_its_minimum_budget_without_slicing(vgg):
    without = minimum_budget_sliced(vgg, (1,))
    with_slicing = minimum_budget_sliced(vgg, (1, 2, 4, 8, 16))
    assert without.proven and with_slicing.proven
    assert with_slicing.budget * 8 < without.budget == budget_lower_bound(vgg)
    result = solve(vgg, "flexnn_sliced", "preload", budget=60_000_000)
    assert result.valid and result.objective >= latency_lower_bound(vgg)
    chosen = {c.layer: c for c in result.solution.slicing}
    fc6 = next(i for i, layer in enumerate(vgg.layers) if layer.op.type == "FULLY_CONNECTED")
    # 411 MB of FC weights in 60 MB: 8 slices fit (51 MB each), 4 do not; weights first.
    assert (chosen[fc6].kind, chosen[fc6].slices) == ("weight", 8)
    assert all(c.kind == "input" and c.slices == 16 for c in chosen.values()
               if vgg.layers[c.layer].op.type == "CONV_2D" and c.kind == "input")
    below = solve(vgg, "flexnn_sliced", "preload", budget=with_slicing.budget - 1)
    assert below.status is Status.INFEASIBLE and "layer 1 (n2)" in below.info["reason"]


def test_solve_command_writes_a_plan_with_its_slicing(capsys, vgg, tmp_path):
    output = tmp_path / "plan.json"
    code = main(["solve", str(VGG), "--problem", "preload", "--method", "flexnn_sliced",
                 "--budget", "60000000", "--json", "--output", str(output)])
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and out.count("\n") == 1
    assert json.loads(out)["valid"] is True
    plan = read_plan(output)
    assert plan.slicing and validate_plan(vgg.with_budget(60_000_000), plan) == []
    code = main(["solve", str(VGG), "--problem", "preload", "--method", "flexnn_sliced",
                 "--budget", "1000", "--json"])
    out, err = capsys.readouterr()   # below what any slicing allows: bad input (issue 16)
    assert code == 2 and out == "" and err.count("\n") == 1 and "admit no plan" in err
