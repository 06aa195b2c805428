"""Exact schedule methods: the downset program, CP-SAT and MILP against brute force over
every topological order; decomposition; honest statuses; the keyword contract."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from optplan import instances
from optplan.errors import InputError
from optplan.result import Status
from optplan.schedule import (ScheduleSolution, arena_of, load_instance, lower_bound,
                              offsets_lower_bound, peak_of, prepare, validate_schedule,
                              validate_schedule_offsets)
from optplan.schedule.brute_force import (brute_force_schedule, brute_force_schedule_offsets,
                                          topological_orders)
from optplan.schedule.cpsat import (cpsat_joint, cpsat_schedule, cpsat_schedule_offsets,
                                    cpsat_segment)
from optplan.schedule.dag import dag_of, peak
from optplan.schedule.decompose import expand, free_ops, reduce_dag, segments, trailing_ops
from optplan.schedule.dp import downset_dp, dynamic_program
from optplan.schedule.heuristics import heuristic_orders, original_order_offsets
from optplan.schedule.milp import (milp_cbc_schedule, milp_highs_schedule,
                                   milp_highs_schedule_offsets, milp_joint, milp_segment,
                                   relaxation_bound)

from schedule_graphs import build, inplace_chain, schedule_instances, two_branches

FLAGS = {"workers": 1, "seed": 0}
QUIET = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.filter_too_much])


def ignore(*_):
    pass


def test_brute_force_by_hand():
    instance = two_branches()
    assert len(list(topological_orders(instance))) == 6
    outcome = brute_force_schedule(instance)
    assert (outcome.status, outcome.best_bound) == (Status.OPTIMAL, 12)
    assert peak_of(instance, outcome.solution.order) == 12
    plan = brute_force_schedule_offsets(instance)
    assert plan.best_bound == 12 and not validate_schedule_offsets(instance, plan.solution)


def test_brute_force_refuses_large_graphs():
    with pytest.raises(InputError):
        brute_force_schedule(load_instance(instances.data_dir()
                                           / "mobilenet_v1_fused_tflite_224.json"))


@settings(max_examples=200, **QUIET)
@given(schedule_instances(max_ops=7))
def test_downset_program_equals_brute_force(instance):
    dag = dag_of(instance)
    optimum = brute_force_schedule(instance).best_bound
    result = downset_dp(dag, lower_bound=lower_bound(instance))
    assert result.proven and result.peak == optimum == peak(dag, result.order)
    assert lower_bound(instance) <= optimum
    for _, order in heuristic_orders(dag):
        assert optimum <= peak(dag, order)
        pruned = downset_dp(dag, upper_bound=peak(dag, order))
        assert pruned.proven and (pruned.peak if pruned.order else peak(dag, order)) == optimum


@settings(max_examples=150, **QUIET)
@given(schedule_instances(max_ops=7))
def test_dynamic_program_method_equals_brute_force(instance):
    optimum = brute_force_schedule(instance).best_bound
    for decompose in (True, False):
        outcome = dynamic_program(instance, decompose=decompose)
        assert outcome.status is Status.OPTIMAL and outcome.best_bound == optimum
        assert not validate_schedule(instance, outcome.solution)
        assert peak_of(instance, outcome.solution.order) == optimum


@settings(max_examples=200, **QUIET)
@given(schedule_instances(max_ops=8))
def test_peak_splits_exactly_along_segments(instance):
    """With the free and trailing ops set aside, any order's peak is the largest peak of its
    sub-orders on the segments, and putting the free and trailing ops back raises no step
    above it (trailing ops: above the graph outputs they end with)."""
    dag = dag_of(instance)
    reduction = reduce_dag(dag)
    kept = reduction.kept
    parts = segments(kept.dag)
    tail = sum(size for b, size in enumerate(dag.sizes) if dag.output[b])
    for _, order in heuristic_orders(dag):
        position = {v: s for s, v in enumerate(order)}
        sub_orders = [sorted(range(len(part.ops)), key=lambda k, part=part:
                             position[kept.ops[part.ops[k]]]) for part in parts]
        kept_order = [part.ops[k] for part, sub in zip(parts, sub_orders) for k in sub]
        joined = expand(dag, reduction, kept_order)
        assert not validate_schedule(instance, ScheduleSolution(
            tuple(dag.op_names[v] for v in joined)))
        parts_peak = max((peak(p.dag, sub) for p, sub in zip(parts, sub_orders)), default=0)
        assert parts_peak == peak(kept.dag, kept_order)
        expected = max(parts_peak, tail) if reduction.trailing else parts_peak
        assert peak(dag, joined) == expected or (not kept_order and not reduction.trailing)


def test_free_ops_are_set_aside():
    # A view of a weight read at the end: it writes nothing, and "late" reads w after it.
    instance = build("free", [("view", ["w"], ["wt"], "RESHAPE"), ("a", ["x"], ["y"]),
                              ("late", ["y", "wt"], ["out"])],
                     dict(w=6, wt=6, x=2, y=3, out=1), inputs=["w", "x"], outputs=["out"],
                     views="alias")
    dag = dag_of(instance)
    assert free_ops(dag) == [0]
    reduction = reduce_dag(dag)
    assert reduction.kept.dag.op_names == ("a", "late")
    assert expand(dag, reduction, [0, 1]) == [1, 0, 2]


def test_cut_ops_split_two_blocks():
    # stem -> two branches -> join -> two branches -> join2: cut ops stem, join, join2.
    instance = build("blocks", [("stem", [], ["s"]), ("a", ["s"], ["A"]), ("b", ["s"], ["B"]),
                                ("join", ["A", "B"], ["j"]), ("c", ["j"], ["C"]),
                                ("d", ["j"], ["D"]), ("join2", ["C", "D"], ["out"])],
                     dict(s=4, A=3, B=5, j=2, C=7, D=1, out=1), outputs=["out"])
    parts = segments(dag_of(instance))
    assert [[p.dag.op_names[k] for k in range(len(p.ops))] for p in parts] == [
        ["stem"], ["a", "b"], ["join"], ["c", "d"], ["join2"]]
    assert parts[1].dag.output == (False, True, True)   # s read inside; A, B read later


def test_trailing_ops_run_last():
    # A batch-norm counter update: reads nothing, writes a graph output nothing reads.
    instance = build("counter", [("count", [], ["n"]), ("a", [], ["x"]), ("b", ["x"], ["y"])],
                     dict(n=8, x=10, y=1), outputs=["n", "y"])
    dag = dag_of(instance)
    assert trailing_ops(dag) == [0]
    outcome = dynamic_program(instance)
    assert outcome.solution.order == ("a", "b", "count")
    assert outcome.best_bound == brute_force_schedule(instance).best_bound == 11


@settings(max_examples=60, **QUIET)
@given(schedule_instances(max_ops=6))
def test_cpsat_and_milp_order_models_equal_brute_force(instance):
    """The order models alone (no warm start below the optimum, target 0) prove the
    brute-force optimum."""
    dag = dag_of(instance)
    optimum = brute_force_schedule(instance).best_bound
    start = list(dag.topological)
    found = [cpsat_segment(dag, start, 0, 30, ignore, solver_params={}, **FLAGS),
             milp_segment("milp_highs", dag, start, 0, 30, ignore, params={}, **FLAGS)]
    for outcome in found:
        assert outcome.proven and outcome.bound <= optimum == outcome.objective
        order = outcome.order if outcome.order is not None else start
        assert peak(dag, order) == optimum


@settings(max_examples=40, **QUIET)
@given(schedule_instances(max_ops=5, max_size=6, max_buffers=7, alignment=True))
def test_joint_models_equal_brute_force(instance):
    """The joint order and placement models prove the least arena over every order, each
    packed optimally by the fixed-order brute force."""
    dag = dag_of(instance)
    optimum = brute_force_schedule_offsets(instance).best_bound
    start = original_order_offsets(instance)
    found = [cpsat_joint(instance, dag, start, 0, 30, ignore, solver_params={}, **FLAGS),
             milp_joint("milp_highs", instance, dag, start, 0, 30, ignore, params={}, **FLAGS)]
    for outcome in found:
        assert outcome.proven
        if outcome.order is None:
            assert arena_of(instance, start) == optimum
            continue
        plan = ScheduleSolution(tuple(dag.op_names[v] for v in outcome.order), outcome.offsets)
        assert not validate_schedule_offsets(instance, plan)
        assert arena_of(instance, plan) == outcome.objective == optimum
    assert offsets_lower_bound(instance) <= optimum


@settings(max_examples=25, **QUIET)
@given(schedule_instances(max_ops=5, max_size=6, max_buffers=7))
def test_schedule_offsets_methods_equal_brute_force(instance):
    optimum = brute_force_schedule_offsets(instance).best_bound
    for method in (cpsat_schedule_offsets, milp_highs_schedule_offsets):
        outcome = method(instance, **FLAGS)
        assert outcome.status is Status.OPTIMAL and outcome.best_bound == optimum
        assert not validate_schedule_offsets(instance, outcome.solution)
        assert arena_of(instance, outcome.solution) == optimum


@settings(max_examples=25, **QUIET)
@given(schedule_instances(max_ops=7))
def test_schedule_methods_equal_brute_force(instance):
    optimum = brute_force_schedule(instance).best_bound
    for method in (cpsat_schedule, milp_highs_schedule, milp_cbc_schedule):
        outcome = method(instance, warm_start=False, **FLAGS)
        assert outcome.status is Status.OPTIMAL and outcome.best_bound == optimum
        assert peak_of(instance, outcome.solution.order) == optimum


def test_a_segment_target_above_its_optimum_is_no_bound():
    """Found by the property above: ``op3`` reads and writes graph outputs only, so it runs
    last (a trailing op) and the rest is solved on its own with the whole's must-live bound,
    3 bytes, as its target. The rest's sizes are multiples of 2 and its optimum is 2 (``op2``
    first); a target rounded up to the 2-byte unit made the models' floor 4, so every order
    up to 4 looked optimal and 4 was reported as a proven bound (cpsat and cbc)."""
    instance = build("segment_target", [("op0", [], ["t0"]), ("op1", ["t0"], ["t1"]),
                                        ("op2", [], ["t2"]), ("op3", ["t0", "t1"], ["t3"])],
                     {"t0": 2, "t1": 0, "t2": 2, "t3": 1}, outputs=["t3", "t0"])
    assert brute_force_schedule(instance).best_bound == 3
    for method in (cpsat_schedule, milp_highs_schedule, milp_cbc_schedule):
        outcome = method(instance, warm_start=False, **FLAGS)
        assert outcome.info["trailing_ops"] == 1, outcome.info
        assert (outcome.status, outcome.best_bound) == (Status.OPTIMAL, 3), method.__name__
        assert peak_of(instance, outcome.solution.order) == 3


def test_relaxation_bound_is_a_bound():
    instance = two_branches()
    assert lower_bound(instance) <= relaxation_bound(instance) <= 12


# --- statuses and the keyword contract -------------------------------------------------------

def test_exact_methods_improve_on_the_engine_order():
    instance = two_branches()
    for method in (dynamic_program, cpsat_schedule, milp_highs_schedule):
        outcome = method(instance, warm_start=False, time_limit=10, **FLAGS)
        assert outcome.status is Status.OPTIMAL and outcome.best_bound == 12
        assert outcome.info["warm_start"] == "original_order"
        assert outcome.info["warm_start_objective"] == 21
        assert outcome.info["time_limit"] == 10 and outcome.info["workers"] == 1
        assert outcome.trajectory[1][1:] == (21, 11) and outcome.trajectory[-1][1:] == (12, 12)


def test_warm_start_candidates_and_initial_solution():
    instance = two_branches()
    best = ScheduleSolution(("b1", "b2", "a1", "a2", "join"))
    outcome = cpsat_schedule(instance, warm_start=False, initial_solution=best, **FLAGS)
    assert outcome.info["warm_start"] == "initial_solution"
    outcome = dynamic_program(instance, warm_start=[lambda inst: best])
    assert outcome.info["warm_start_objective"] == 12 and outcome.status is Status.OPTIMAL
    broken = ScheduleSolution(("join", "a1", "a2", "b1", "b2"))
    outcome = dynamic_program(instance, warm_start=False, initial_solution=broken)
    assert outcome.info["warm_start"] == "original_order"


def test_solver_parameters_pass_straight_through():
    with pytest.raises(InputError) as error:
        cpsat_schedule(two_branches(), warm_start=False, no_such_parameter=1)
    assert error.value.field == "no_such_parameter"
    outcome = cpsat_schedule(two_branches(), warm_start=False, log_search_progress=False,
                             **FLAGS)
    assert outcome.status is Status.OPTIMAL


def test_giving_up_is_feasible_with_a_bound():
    """The downset program out of states reports its level bound, never OPTIMAL."""
    instance = two_branches()
    outcome = dynamic_program(instance, warm_start=False, max_states=1)
    assert outcome.status is Status.FEASIBLE
    assert peak_of(instance, outcome.solution.order) == 21
    assert lower_bound(instance) <= outcome.best_bound < 12
    assert outcome.info["part_info"][0]["states"] > 1


def test_training_graphs_split_once_counters_run_last():
    """MobileNet v2 training: the batch-norm counter updates (trailing) and five views (free)
    set aside, the graph splits into 158 parts and the program proves 81,115,556 bytes (the
    engine order: 86,230,852)."""
    instance = load_instance(instances.data_dir() / "mobilenet_v2_train_torch_224.json")
    outcome = dynamic_program(instance, time_limit=60)
    assert outcome.status is Status.OPTIMAL and outcome.best_bound == 81_115_556
    assert outcome.info["parts"] == 158 and outcome.info["trailing_ops"] == 54
    assert outcome.info["free_ops"] == 5
    assert peak_of(instance, outcome.solution.order) == 81_115_556
    assert peak_of(instance, instance.op_names) == 86_230_852


def test_inplace_optimum_uses_the_pair():
    for method in (dynamic_program, cpsat_schedule, milp_highs_schedule):
        assert method(inplace_chain(inplace=True), warm_start=False).best_bound == 12
        assert method(inplace_chain(), warm_start=False).best_bound == 16


PAPER = ["mobilenet_v1_fused_tflite_224", "mobilenet_v2_fused_tflite_224",
         "deeplab_v3_fused_tflite_257", "inception_v3_fused_tflite_299",
         "posenet_fused_tflite_257", "blazeface_fused_tflite_128"]


@pytest.mark.parametrize("name", PAPER)
def test_paper_networks_are_proven(name):
    for inplace in (False, True):
        instance = prepare(load_instance(instances.data_dir() / f"{name}.json"),
                           inplace=inplace)
        outcome = dynamic_program(instance, time_limit=60)
        assert outcome.status is Status.OPTIMAL
        assert outcome.best_bound == peak_of(instance, outcome.solution.order)
        assert outcome.best_bound <= peak_of(instance, instance.op_names)
