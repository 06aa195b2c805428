"""What every exact method of every problem guarantees (issue 16, items 1, 6 and 7), and
that its result names the version of the solver library that produced it.

* OPTIMAL only with an exact proof: never above the true optimum, never a best bound above it,
  at any size the input check admits (sizes up to 2^62) — or a clear refusal (an InputError)
  when the sizes exceed the solver's range.
* Never worse than the warm start it was given.
* The time limit is a wall-clock limit over everything the method does: once the budget is
  spent (here: a fake clock jumps past it), no solver starts and the method reports what it
  has. Checked with an injected clock, not with timed runs.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from factories import tiny_instances, tiny_preload_instances
from minimalloc_standin import write_standin_binary
from optplan import (Instance, Problem, Status, __version__, get_method, load_instance, methods,
                     problems, solve)
from optplan.errors import InputError, SolverRangeError
from optplan.exact import budget as budget_module
from optplan.experiments.manifest import solver_versions
from optplan.heuristics.constructions import stacked_objects, stacked_offsets
from optplan.preload import Layer, PreloadInstance, PreloadTensor, budget_lower_bound
from optplan.preload.flexnn import no_preload, pin_all
from schedule_graphs import two_branches
from slicing_factories import tiny_fc

REPO = Path(__file__).resolve().parents[1]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def exact_methods(problem: str) -> list[str]:
    return [name for name, info in methods(builtin_only=True).items()
            if info.kind == "exact" and problem in info.implementations]


def test_every_problem_has_exact_methods_and_a_brute_force_oracle():
    for problem in ("shared-objects", "offsets", "preload"):
        assert problem in problems()
        assert "brute_force" in exact_methods(problem)
        assert len(exact_methods(problem)) >= 3


# --- 16.1: no OPTIMAL above the optimum ------------------------------------------------------

AUDIT_CASE = ([(3, 3, 1000), (1, 3, 10**8), (3, 3, 7), (3, 4, 7)], ((1, 3),))
BIG = 2**31
AUDIT_CASE_2_31 = ([(3, 3, BIG + 1000), (1, 3, 3 * BIG + 10**8), (3, 3, BIG + 7), (3, 4, 7)],
                   ((1, 3),))


@pytest.mark.parametrize("case", [AUDIT_CASE, AUDIT_CASE_2_31], ids=["1e8", "2^31"])
@pytest.mark.parametrize("method", ["milp_cbc", "milp_highs", "cpsat"])
def test_the_audit_case_gets_no_optimum_above_the_true_one(case, method):
    instance = Instance.from_tuples(case[0], inplace_pairs=case[1])
    truth = solve(instance, "brute_force", "offsets", inplace=True)
    assert truth.status is Status.OPTIMAL
    result = solve(instance, method, "offsets", inplace=True, time_limit=20)
    assert result.valid
    assert result.objective >= truth.objective
    assert result.best_bound <= truth.objective
    if result.status is Status.OPTIMAL:
        assert result.objective == truth.objective


SCALES = [2**31 - 1, 2**31 + 3, 2**40, 2**53 + 1, 2**59, 2**61]


def scaled_records(instance: Instance, scale: int, jitter: list[int]) -> Instance:
    """Sizes times ``scale`` plus a small jitter (so that gcd scaling cannot undo the scale),
    each capped so that they sum to at most 2^62, the largest total the input check admits."""
    cap = 2**62 // max(1, len(instance.records))
    triples = [(r.first_op, r.last_op, min(cap, r.size * scale + jitter[i % len(jitter)]))
               for i, r in enumerate(instance.records)]
    pairs = [(a, b) for a, b in instance.inplace_pairs if triples[b][2] <= triples[a][2]]
    return Instance.from_tuples(triples, alignment=instance.alignment, inplace_pairs=pairs)


def scaled_preload(instance: PreloadInstance, scale: int, jitter: list[int]
                   ) -> PreloadInstance:
    """Sizes and times times ``scale`` plus a jitter, each capped so that the sizes, and the
    compute and load times, sum to at most 2^62 (the totals the input check admits)."""
    cap = 2**62 // (len(instance.layers) + len(instance.tensors))

    def big(value: int, k: int) -> int:
        return min(cap, value * scale + jitter[k % len(jitter)]) if value else 0

    layers = tuple(Layer(layer.name, big(layer.compute_us, k))
                   for k, layer in enumerate(instance.layers))
    tensors = tuple(PreloadTensor(t.id, t.kind, big(t.size, k), t.first_op, t.last_op,
                                  big(t.load_us, k + 1))
                    for k, t in enumerate(instance.tensors))
    return PreloadInstance(layers, tensors, instance.name, instance.window)


def check_against_the_truth(result, truth, label) -> None:
    """Valid; objective >= optimum; every bound <= optimum; OPTIMAL only at the optimum."""
    assert result.valid is not False, (label, result.violations)
    if truth.status is Status.INFEASIBLE:
        assert result.status in (Status.INFEASIBLE, Status.UNKNOWN), label
        return
    assert result.lower_bound <= truth.objective, label
    if result.best_bound is not None:
        assert result.best_bound <= truth.objective, (label, result.best_bound, truth.objective)
    if result.objective is not None:
        assert result.objective >= truth.objective, label
    if result.status is Status.OPTIMAL:
        assert result.objective == truth.objective, (label, result.objective, truth.objective)


def variants(method: str, problem: str) -> list[dict]:
    """The method as it comes, and (when it has them) with the models forced to run: no
    warm start, no stop at the combinatorial bound."""
    implementation = get_method(method, problem).implementations[Problem.parse(problem)]
    if "stop_at_bound" not in inspect.signature(implementation).parameters:
        return [{}]
    return [{}, {"warm_start": False, "stop_at_bound": False}]


def solve_or_refuse(*args, **kwargs):
    """The result, or ``None`` when the method refuses the sizes (a SolverRangeError) or
    in-place pairs it does not support, with a clear one-line error. Any other refusal, a
    refused parameter included, fails the test."""
    try:
        return solve(*args, **kwargs)
    except InputError as error:
        assert isinstance(error, SolverRangeError) or error.field == "inplace", str(error)
        assert "\n" not in str(error)
        return None


@settings(max_examples=12, **SETTINGS)
@given(instance=tiny_instances(max_tensors=5), scale=st.sampled_from(SCALES),
       jitter=st.lists(st.integers(0, 999), min_size=1, max_size=5))
def test_large_sizes_every_exact_records_method(instance, scale, jitter):
    instance = scaled_records(instance.with_alignment(1), scale, jitter)
    for inplace in (False, True):
        case = instance if inplace else instance.without_inplace()
        for problem in ("shared-objects", "offsets"):
            truth = solve(case, "brute_force", problem, inplace=inplace)
            assert truth.status is Status.OPTIMAL
            for method in exact_methods(problem):
                for params in variants(method, problem):
                    result = solve_or_refuse(case, method, problem, inplace=inplace,
                                             time_limit=10, **params)
                    if result is not None:
                        check_against_the_truth(result, truth, (method, problem, params))


@settings(max_examples=8, **SETTINGS)
@given(instance=tiny_preload_instances(), scale=st.sampled_from(SCALES),
       jitter=st.lists(st.integers(0, 999), min_size=1, max_size=5),
       position=st.sampled_from([0.0, 0.5, 1.0]))
def test_large_sizes_every_exact_preload_method(instance, scale, jitter, position):
    instance = scaled_preload(instance, scale, jitter)
    low, high = budget_lower_bound(instance), pin_all(instance).peak
    budget = low + round(position * (high - low))
    assume(budget <= 2**62)   # the largest budget the input check admits
    truth = solve(instance, "brute_force", "preload", budget=budget)
    for method in exact_methods("preload"):
        result = solve_or_refuse(instance, method, "preload", budget=budget, time_limit=10)
        if result is not None:
            check_against_the_truth(result, truth, method)


def test_preload_sizes_whose_domains_overflow_cpsat_are_refused_in_one_line():
    # Found by the property test above on a fresh clone: each number within CP-SAT's range,
    # their domains summed over the variables beyond int64 (CP-SAT's MODEL_INVALID).
    tiny = PreloadInstance(
        (Layer("l0", 0), Layer("l1", 2), Layer("l2", 20), Layer("l3", 20)),
        (PreloadTensor("w0", "weight", 1, 0, 0, 1), PreloadTensor("w1", "weight", 1, 0, 0, 28),
         PreloadTensor("w2", "weight", 2, 0, 0, 30), PreloadTensor("s", "scratch", 1, 1, 1, 0)),
        "tiny")
    instance = scaled_preload(tiny, 2**53 + 1, [0])
    budget = budget_lower_bound(instance)
    truth = solve(instance, "brute_force", "preload", budget=budget)
    for method in exact_methods("preload"):
        result = solve_or_refuse(instance, method, "preload", budget=budget, time_limit=10)
        if result is not None:
            check_against_the_truth(result, truth, method)


# --- 16.6: never worse than the warm start -----------------------------------------------------

def test_cpsat_is_not_worse_than_greedy_by_size_on_the_audit_network():
    # The audit's case (there with 15 s): the warm start's heuristics ran out of their share
    # before greedy_by_size answered, and CP-SAT returned a worse partition.
    instance = load_instance(REPO / "data" / "networks" / "gpt2_train_torch_seq128.json")
    greedy = solve(instance, "greedy_by_size", "shared-objects")
    result = solve(instance, "cpsat", "shared-objects", time_limit=15)
    assert result.valid and result.objective <= greedy.objective


RECORDS = Instance.from_tuples([(0, 1, 32), (1, 4, 28), (2, 5, 36), (3, 5, 16), (4, 5, 8),
                                (5, 7, 64), (6, 8, 10), (7, 8, 40)], name="paper_example")


def stacked(instance: Instance, problem: str):
    """A valid, poor solution: every record in its own object, or stacked."""
    return stacked_objects(instance) if problem == "shared-objects" else stacked_offsets(instance)


PRELOAD = PreloadInstance(
    (Layer("a", 10), Layer("b", 10), Layer("c", 10)),
    (PreloadTensor("x", "activation", 4, 0, 1), PreloadTensor("y", "activation", 4, 1, 2),
     PreloadTensor("w1", "weight", 6, 1, 1, 25), PreloadTensor("w2", "weight", 6, 2, 2, 25)),
    "three_layers", budget=20)


def cases():
    for problem in ("shared-objects", "offsets", "preload"):
        for method in exact_methods(problem):
            yield problem, method


def instance_and_poor_start(problem: str):
    if problem == "preload":
        return PRELOAD, no_preload(PRELOAD)
    return RECORDS, stacked(RECORDS, problem)


@pytest.mark.parametrize(("problem", "method"), list(cases()))
def test_never_worse_than_a_given_initial_solution(problem, method):
    instance, start = instance_and_poor_start(problem)
    optimum = solve(instance, "brute_force", problem).objective
    spec = problems()[problem]
    start_objective = spec.objective(instance, start)
    assert start_objective > optimum   # a start the method can and should improve
    result = solve(instance, method, problem, initial_solution=start, warm_start=False,
                   time_limit=20)
    assert result.valid and result.objective <= start_objective


# --- 16.7: the time limit covers set-up, warm start and model building ------------------------

class FakeClock:
    """Real time plus a jump that the test controls."""

    def __init__(self):
        self.jump = 0.0

    def __call__(self) -> float:
        import time
        return time.perf_counter() + self.jump


@pytest.mark.parametrize(("problem", "method"), list(cases()))
def test_nothing_runs_after_the_warm_start_spent_the_budget(problem, method, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(budget_module, "clock", clock)
    instance, poor = instance_and_poor_start(problem)
    spec = problems()[problem]

    def slow_heuristic(candidate_instance):
        clock.jump += 1000.0      # the heuristic took 1000 s of a 10 s limit
        return poor

    result = solve(instance, method, problem, warm_start=[slow_heuristic], time_limit=10)
    assert result.valid
    # Nothing ran after the budget was spent: the answer is the warm start, not proven.
    assert result.objective == spec.objective(instance, poor)
    assert result.status is Status.FEASIBLE
    assert result.info.get("stopped") == "time limit"


def test_budget_shares_never_exceed_what_is_left(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(budget_module, "clock", clock)
    budget = budget_module.Budget(10.0)
    assert budget.share(0.3) == pytest.approx(3.0, abs=0.01)
    clock.jump = 9.0
    assert budget.share(0.3) <= 1.0 + 1e-6
    assert budget.remaining() <= 1.0 + 1e-6
    clock.jump = 11.0
    assert budget.exhausted() and budget.share(0.3) == 0.0 and budget.remaining() == 0.0
    unlimited = budget_module.Budget(None)
    assert unlimited.remaining() is None and not unlimited.exhausted()


def test_a_solver_overrun_is_kept_free_in_later_stages(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(budget_module, "clock", clock)
    budget = budget_module.Budget(10.0)
    first = budget.solver_seconds(4.0)
    assert first == pytest.approx(4.0)
    clock.jump = 6.0                      # CP-SAT's presolve ran 2 s past its limit
    budget.solver_ran(first, 6.0)
    assert budget.solver_seconds() == pytest.approx(10.0 - 6.0 - 2.0, abs=0.01)
    clock.jump = 8.5
    assert budget.solver_seconds() == 0.0   # not worth starting: it would overrun again


BUILDERS = [("cpsat", "shared-objects", "optplan.exact.cpsat", "build_shared_objects_colour_model"),
            ("cpsat", "offsets", "optplan.exact.cpsat", "build_offsets_model"),
            ("milp_highs", "shared-objects", "optplan.exact.milp", "build_shared_objects_milp"),
            ("milp_cbc", "offsets", "optplan.exact.milp", "build_offsets_milp"),
            ("cpsat", "preload", "optplan.preload.exact_cpsat", "build_cpsat_model"),
            ("milp_highs", "preload", "optplan.preload.exact_milp", "build_milp")]


@pytest.mark.parametrize(("method", "problem", "module", "builder"), BUILDERS)
def test_no_solver_starts_after_a_model_build_spent_the_budget(method, problem, module, builder,
                                                               monkeypatch):
    import importlib

    clock = FakeClock()
    monkeypatch.setattr(budget_module, "clock", clock)
    home = importlib.import_module(module)
    real = getattr(home, builder)

    def slow_build(*args, **kwargs):
        built = real(*args, **kwargs)
        clock.jump += 1000.0      # building the model took 1000 s of a 10 s limit
        return built

    monkeypatch.setattr(home, builder, slow_build)
    instance, poor = instance_and_poor_start(problem)
    if problem != "preload":   # greedy constructions find 21, the optimum (= the bound) is 16
        instance = Instance.from_tuples([(2, 3, 8), (2, 4, 8), (5, 5, 8), (4, 6, 5)])
        poor = None
    result = solve(instance, method, problem, warm_start=False, initial_solution=poor,
                   time_limit=10)
    assert result.valid
    # Nothing improved on the start: no solver ran after the build spent the budget.
    assert result.objective == result.info["warm_start_objective"] > result.lower_bound
    assert result.status is Status.FEASIBLE and result.info.get("stopped") == "time limit"


# --- every result names its solver library's version ------------------------------------------

MANIFEST_SOLVERS = {"cpsat": "cpsat", "milp_highs": "highs", "milp_cbc": "cbc"}
"""The exact methods whose solver library the run manifest names (``provenance()["solvers"]``):
their results must name the same version. optplan's own solvers name optplan's version."""
OWN_SOLVERS = ("brute_force", "dynamic_program", "search")


def every_exact_method():
    """``(method, problem)`` for every registered exact method, peers included."""
    for name, info in methods().items():
        if info.kind == "exact":
            yield from ((name, problem.cli_name) for problem in info.problems)


def version_runs(method: str, problem: str):
    """``(instance, params)`` of the runs checked: the method as it comes; with its model
    forced to run when it can stop at the bound (no shortcut); with layer slicing when it
    has that option."""
    instance = {"shared-objects": RECORDS, "offsets": RECORDS, "preload": PRELOAD}.get(problem)
    instance = two_branches() if instance is None else instance
    yield instance, {}
    parameters = inspect.signature(get_method(method, problem).implementations[
        problems()[problem].problem]).parameters
    if "stop_at_bound" in parameters:
        yield instance, {"warm_start": False, "stop_at_bound": False}
    if "slicing" in parameters:
        yield tiny_fc(budget=8), {"slicing": True, "menu": (1, 2)}


@pytest.mark.parametrize(("method", "problem"), list(every_exact_method()))
def test_every_exact_result_names_its_solver_version(method, problem, tmp_path, monkeypatch):
    if method == "minimalloc":   # not on PyPI: its wrapper runs the stand-in binary
        monkeypatch.setenv("MINIMALLOC_BIN", str(write_standin_binary(tmp_path)))
    manifest = solver_versions()
    expected = (manifest[MANIFEST_SOLVERS[method]] if method in MANIFEST_SOLVERS
                else __version__ if method in OWN_SOLVERS else None)
    for instance, params in version_runs(method, problem):
        result = solve(instance, method, problem, time_limit=10, workers=1, **params)
        assert result.valid, (method, problem, params, result.violations)
        assert result.solver_version, (method, problem, params)
        if expected is not None:
            assert result.solver_version == expected, (method, problem, params)
