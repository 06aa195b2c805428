"""Exact planning over the slicing choice (issue 21 items 3 and 4): ``cpsat`` and
``milp_highs`` with ``slicing=True``, the sub-step grid, the joint model, its fluid relaxation,
the minimum budget with slicing, and the sliced budget sweep of the experiment runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from optplan.cli import main
from optplan.errors import InputError
from optplan.exact.cpsat_solve import solve_model
from optplan.exact.budget import Budget
from optplan.preload import latency_lower_bound, read_preload_instance, validate_plan
from optplan.preload.flexnn import pin_all
from optplan.preload.flexnn_sliced import flexnn_sliced
from optplan.preload.pareto import budget_sweep, minimum_budget
from optplan.preload.sliced_grid import slicing_grid
from optplan.preload.sliced_model import build_fluid_relaxation, build_sliced_cpsat
from optplan.preload.sliced_search import (brute_force_sliced,
                                           brute_force_sliced_minimum_budget)
from optplan.preload.slicing import all_slicings, apply_slicing, sliced_budget_lower_bound
from optplan.result import Status
from optplan.solve import solve
from slicing_factories import conv_fc, sliceable_instances, tiny_conv, tiny_fc

REPO = Path(__file__).resolve().parents[1]
VGG = REPO / "data" / "preload" / "vgg19_fused_onnx_224_phone_kernels.json"
MENU = (1, 2)
FLAGS = {"time_limit": 30, "workers": 1, "seed": 0}


def small_enough(instance) -> bool:
    return all(len(apply_slicing(instance, s)) <= 8 for s in all_slicings(instance, MENU))


def sliced(method: str, instance, **params):
    return solve(instance, method, "preload", slicing=True, menu=MENU, **FLAGS, **params)


def optimum_of(built) -> int:
    answer = solve_model(built.model, {}, budget=Budget(30), workers=1, seed=0,
                         solver_params={}, objective=built.objective)
    assert answer.status == "OPTIMAL"
    return answer.objective


# --- named cases ----------------------------------------------------------------------------

def test_slicing_makes_a_budget_feasible_and_is_proven():
    # tiny_fc at 8 bytes: nothing fits whole (12 bytes must live), two weight slices do.
    instance = tiny_fc(budget=8)
    assert solve(instance, "cpsat", "preload", **FLAGS).status is Status.INFEASIBLE
    for method in ("cpsat", "milp_highs"):
        result = sliced(method, instance)
        assert result.status is Status.OPTIMAL and result.valid
        assert result.objective == brute_force_sliced(instance, MENU).best_bound == 27
        assert [(c.kind, c.slices) for c in result.solution.slicing] == [("weight", 2)]
        assert result.params["slicing"] is True and result.info["slicing"] is True


class _RanOutBudget(Budget):
    """A stage whose time runs out just after its loop looked: ``exhausted`` says no once,
    then yes; every share of it is 0 s."""

    def __init__(self, seconds):
        super().__init__(seconds)
        self.looked = False

    def exhausted(self) -> bool:
        looked, self.looked = self.looked, True
        return looked

    def share(self, fraction: float) -> float:
        return 0.0


def test_a_slicing_search_whose_stage_ran_out_returns_what_it_has(monkeypatch):
    # The stage ran out between the search loop's check and the next slicing's solve: the
    # slicing keeps its latency bound unsolved, no solver starts with a 0 s limit.
    monkeypatch.setattr(Budget, "part", lambda self, seconds: _RanOutBudget(seconds))
    result = solve(tiny_fc(budget=8), "cpsat", "preload", slicing=True, **FLAGS)
    assert result.valid and result.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert result.objective >= 27


def test_below_every_slicing_is_infeasible_with_the_reason():
    instance = conv_fc(budget=sliced_budget_lower_bound(conv_fc()) - 1)
    for method in ("cpsat", "milp_highs"):
        result = solve(instance, method, "preload", slicing=True, **FLAGS)
        assert result.status is Status.INFEASIBLE and result.solution is None
        assert "under every layer slicing" in result.info["proof"]


def test_unlimited_memory_meets_the_latency_bound():
    result = solve(conv_fc(), "cpsat", "preload", slicing=True, **FLAGS)
    assert result.status is Status.OPTIMAL
    assert result.objective == latency_lower_bound(conv_fc())


def test_the_keyword_contract_with_slicing():
    instance = tiny_conv(budget=15)
    result = sliced("cpsat", instance, warm_start=["flexnn_sliced"])
    assert result.valid and {"time_limit", "workers", "seed"} <= set(result.info)
    assert result.info["warm_start"] == "flexnn_sliced"
    start = brute_force_sliced(instance, MENU).solution
    again = sliced("cpsat", instance, warm_start=False, initial_solution=start)
    assert again.objective == start.latency_us and again.status is Status.OPTIMAL
    samples = again.trajectory
    assert samples and all(a[0] <= b[0] for a, b in zip(samples, samples[1:]))
    with pytest.raises(InputError, match="no_such_parameter"):
        sliced("cpsat", instance, no_such_parameter=1)
    with pytest.raises(InputError, match="menu"):
        solve(instance, "cpsat", "preload", slicing=True, menu=[0, 2], **FLAGS)


def test_the_search_over_slicings_proves_conv_fc_at_every_budget():
    low = sliced_budget_lower_bound(conv_fc())
    for budget in range(low, pin_all(conv_fc()).peak + 1, 3):
        result = solve(conv_fc(), "cpsat", "preload", slicing=True, budget=budget, **FLAGS)
        assert result.status is Status.OPTIMAL and result.valid
        flexnn = solve(conv_fc(), "flexnn_sliced", "preload", budget=budget)
        assert flexnn.objective is None or flexnn.objective >= result.objective


# --- against brute force on random tiny instances -------------------------------------------

@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(max_layers=2), st.integers(0, 6))
def test_cpsat_equals_milp_equals_brute_force_with_slicing(instance, slack):
    assume(small_enough(instance))
    minimum = brute_force_sliced_minimum_budget(instance, menu=MENU)
    budgeted = instance.with_budget(minimum + slack)
    truth = brute_force_sliced(budgeted, MENU)
    cpsat, milp = sliced("cpsat", budgeted), sliced("milp_highs", budgeted)
    assert cpsat.valid and milp.valid
    assert cpsat.status is Status.OPTIMAL and milp.status is Status.OPTIMAL
    assert cpsat.objective == milp.objective == truth.best_bound
    unsliced = solve(budgeted, "cpsat", "preload", **FLAGS)
    if unsliced.objective is not None:     # slicing never makes the optimum worse
        assert cpsat.objective <= unsliced.objective
    below = sliced("cpsat", instance.with_budget(minimum - 1))
    assert below.status is Status.INFEASIBLE


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(max_layers=2), st.integers(0, 6))
def test_the_joint_model_and_its_fluid_relaxation_against_brute_force(instance, slack):
    assume(small_enough(instance))
    budget = brute_force_sliced_minimum_budget(instance, menu=MENU) + slack
    truth = brute_force_sliced(instance.with_budget(budget), MENU).best_bound
    grid = slicing_grid(instance, MENU, budget)
    assert optimum_of(build_sliced_cpsat(grid, budget=budget)) == truth
    assert optimum_of(build_fluid_relaxation(grid, budget=budget)) <= truth


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(max_layers=3), st.floats(0, 1))
def test_every_plan_maps_to_the_grid_and_back(instance, fraction):
    low, high = sliced_budget_lower_bound(instance), pin_all(instance).peak
    budgeted = instance.with_budget(low + int(fraction * max(0, high - low)))
    plan = flexnn_sliced(budgeted)
    assume(hasattr(plan, "entries"))
    grid = slicing_grid(budgeted, budget=budgeted.budget)
    again = grid.plan(grid.solution_of(plan))
    assert validate_plan(budgeted, again) == []
    assert again.latency_us == plan.latency_us and again.peak <= plan.peak
    assert again.slicing == plan.slicing


# --- the minimum budget with slicing --------------------------------------------------------

@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(max_layers=2))
def test_minimum_budget_with_slicing_equals_brute_force(instance):
    assume(small_enough(instance))
    truth = brute_force_sliced_minimum_budget(instance, menu=MENU)
    for method in ("cpsat", "milp_highs"):
        outcome = minimum_budget(instance, method=method, slicing=True, menu=MENU,
                                 time_limit=30, workers=1)
        assert outcome.status is Status.OPTIMAL and outcome.budget == truth
        assert validate_plan(instance.with_budget(truth), outcome.plan) == []


def test_budget_sweep_spacing():
    assert budget_sweep(10, 1000, 3, "geometric") == [10, 100, 1000]
    assert budget_sweep(10, 20, 3) == [10, 15, 20]
    with pytest.raises(InputError, match="spacing"):
        budget_sweep(10, 20, 3, "cubic")


# --- a real network -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vgg():
    return read_preload_instance(VGG)


def test_vgg19_far_below_its_minimum_without_slicing(vgg):
    budget = 100_000_000                      # 411 MB must live without slicing
    result = solve(vgg, "cpsat", "preload", slicing=True, budget=budget, time_limit=20,
                   workers=2, seed=0)
    heuristic = solve(vgg, "flexnn_sliced", "preload", budget=budget)
    assert result.valid and result.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert result.objective <= heuristic.objective
    assert latency_lower_bound(vgg) <= result.best_bound <= result.objective
    assert result.info["slicings_solved"] >= 1
    assert solve(vgg, "cpsat", "preload", budget=budget, **FLAGS).status is Status.INFEASIBLE


def test_solve_command_slicing_flag(capsys, tmp_path):
    path = tmp_path / "tiny_fc.json"
    from optplan.preload import write_preload_instance
    write_preload_instance(tiny_fc(), path)
    code = main(["solve", str(path), "--problem", "preload", "--method", "cpsat",
                 "--budget", "8", "--slicing", "--time-limit", "20", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and out.count("\n") == 1
    assert json.loads(out)["status"] == "OPTIMAL" and json.loads(out)["objective"] == 27
    code = main(["solve", str(path), "--problem", "offsets", "--method", "cpsat",
                 "--slicing", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "--slicing" in err


@pytest.mark.parametrize("extra, field", [
    (["--method", "flexnn", "--budget", "8"], "slicing"),          # a heuristic: no such option
    (["--method", "lower_bound", "--budget", "8"], "slicing"),
    (["--method", "cpsat", "--budget", "7"], "--budget"),          # below every slicing
    (["--method", "milp_highs", "--budget", "7"], "--budget"),
    (["--method", "cpsat", "--budget", "8", "--param", "menu=[1,0]"], "menu"),
    (["--method", "cpsat", "--budget", "8", "--param", "menu=2"], "menu"),
])
def test_solve_command_bad_slicing_exits_2_with_one_line(capsys, tmp_path, extra, field):
    path = tmp_path / "tiny_fc.json"
    from optplan.preload import write_preload_instance
    write_preload_instance(tiny_fc(), path)
    code = main(["solve", str(path), "--problem", "preload", "--slicing", "--time-limit", "5",
                 *extra])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and field in err


def test_solve_command_infeasible_with_slicing_says_why(capsys, tmp_path):
    # A menu whose counts the FC layer does not admit: nothing slices, 12 bytes must live.
    path = tmp_path / "tiny_fc.json"
    from optplan.preload import write_preload_instance
    write_preload_instance(tiny_fc(), path)
    code = main(["solve", str(path), "--problem", "preload", "--method", "cpsat", "--budget",
                 "8", "--slicing", "--param", "menu=[3]", "--time-limit", "5"])
    out, _ = capsys.readouterr()
    assert code == 0 and "INFEASIBLE" in out
    assert "reason" in out and "under every layer slicing" in out
