"""Schedule heuristics: valid orders and plans, named tie-breaks, the must-live bound."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings

from optplan import instances
from optplan.errors import InputError
from optplan.schedule import (arena_of, load_instance, lower_bound, offsets_lower_bound,
                              peak_of, prepare, validate_schedule, validate_schedule_offsets)
from optplan.schedule.bounds import last_step_bytes, must_live_bytes
from optplan.schedule.dag import dag_of
from optplan.schedule.heuristics import (PRIORITIES, TIE_BREAKS, heuristic_orders,
                                         list_scheduling, list_scheduling_offsets,
                                         original_order, original_order_offsets)

from schedule_graphs import build, schedule_instances, two_branches


def test_original_order_is_the_engine_order():
    instance = two_branches()
    assert original_order(instance).order == ("a1", "b1", "a2", "b2", "join")


def test_list_scheduling_finishes_a_branch_before_starting_the_next():
    instance = two_branches()
    solution = list_scheduling(instance)          # net: a2 frees X1 (net -9) before b1 (+10)
    assert solution.order == ("a1", "a2", "b1", "b2", "join")
    assert peak_of(instance, solution.order) == 12


def test_tie_breaks_are_named():
    # Three roots of equal size: the tie-break alone decides.
    instance = build("ties", [("r0", [], ["x0"]), ("r1", [], ["x1"]), ("r2", [], ["x2"]),
                              ("s", ["x0"], ["y0"])], {"x0": 1, "x1": 1, "x2": 1, "y0": 1},
                     outputs=["x1", "x2", "y0"])
    orders = {tie: list_scheduling(instance, priority="allocates_least", tie_break=tie).order
              for tie in TIE_BREAKS}
    assert orders["engine"] == ("r0", "r1", "r2", "s")
    assert orders["depth_first"] == ("r2", "r1", "r0", "s")   # the last readied first
    assert orders["breadth_first"] == ("r0", "r1", "r2", "s")


@pytest.mark.parametrize("parameter, value", [("priority", "largest"),
                                              ("tie_break", "random")])
def test_unknown_rules_are_input_errors(parameter, value):
    with pytest.raises(InputError) as error:
        list_scheduling(two_branches(), **{parameter: value})
    assert error.value.field == parameter


@settings(max_examples=80, deadline=None)
@given(schedule_instances(max_ops=7, alignment=True))
def test_every_heuristic_gives_a_valid_plan_above_the_bound(instance):
    bound = lower_bound(instance)
    for priority, tie in itertools.product(PRIORITIES, TIE_BREAKS):
        solution = list_scheduling(instance, priority=priority, tie_break=tie)
        assert not validate_schedule(instance, solution)
        assert bound <= peak_of(instance, solution.order)
    for plan in (original_order_offsets(instance), list_scheduling_offsets(instance)):
        assert not validate_schedule_offsets(instance, plan)
        assert offsets_lower_bound(instance) <= arena_of(instance, plan)
        assert peak_of(instance, plan.order) <= arena_of(instance, plan)


def test_must_live_bytes_by_hand():
    # X1 and X2 are each live only around their own branch; Y1 must live from a2 to join.
    instance = two_branches()
    dag = dag_of(instance)
    by_op = dict(zip(dag.op_names, must_live_bytes(dag)))
    assert by_op == {"a1": 10, "b1": 10, "a2": 11, "b2": 11, "join": 3}
    assert last_step_bytes(dag) == 1 and lower_bound(instance) == 11


def test_last_step_holds_every_output():
    # Three weight gradients written by independent ops: the last step holds all of them.
    instance = build("gradients", [("g1", [], ["w1"]), ("g2", [], ["w2"]), ("g3", [], ["w3"])],
                     dict(w1=5, w2=6, w3=7), outputs=["w1", "w2", "w3"])
    dag = dag_of(instance)
    assert max(must_live_bytes(dag)) == 7 and last_step_bytes(dag) == 18
    assert lower_bound(instance) == 18 == peak_of(instance, instance.op_names)


@pytest.mark.parametrize("name", ["mobilenet_v2_fused_tflite_224", "inception_v3_fused_tflite_299",
                                  "blazeface_fused_tflite_128", "shufflenet_fused_onnx_224"])
def test_heuristics_on_networks(name):
    for inplace in (False, True):
        instance = prepare(load_instance(instances.data_dir() / f"{name}.json"), inplace=inplace)
        dag = dag_of(instance)
        engine = peak_of(instance, instance.op_names)
        orders = heuristic_orders(dag)
        assert orders[0] == ("original_order", list(range(dag.num_ops)))
        for _, order in orders:
            names = [dag.op_names[v] for v in order]
            assert not validate_schedule(instance, original_order(instance))
            assert lower_bound(instance) <= peak_of(instance, names)
        assert min(peak_of(instance, [dag.op_names[v] for v in order])
                   for _, order in orders) <= engine
