"""The free-order problems' files and validator: plans, instances, violations, the peak."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from optplan import instances
from optplan.bounds import inplace_max_breadth, max_breadth
from optplan.errors import InputError
from optplan.schedule import (ScheduleSolution, arena_of, load_instance, peak_of, prepare,
                              read_solution, validate_schedule, validate_schedule_offsets,
                              write_solution)
from optplan.schedule.dag import dag_of, peak, step_breadths
from optplan.schedule.validate import ScheduleViolationKind, induced_instance, inplace_saving
from optplan.validate import ViolationKind

from schedule_graphs import build, inplace_chain, schedule_instances, two_branches

NETWORKS = instances.data_dir()


def kinds(violations):
    return [violation.kind for violation in violations]


# --- files -----------------------------------------------------------------------------------

def test_plan_round_trip(tmp_path):
    plan = ScheduleSolution(("a1", "a2"), {"X1": 0, "Y1": 10})
    path = tmp_path / "plan.json"
    write_solution(None, plan, path)
    assert json.loads(path.read_text()) == {"order": ["a1", "a2"], "offsets": {"X1": 0, "Y1": 10}}
    assert read_solution(None, path) == plan
    write_solution(None, plan.without_offsets(), path)
    assert json.loads(path.read_text()) == {"order": ["a1", "a2"]}


@pytest.mark.parametrize("text, field", [
    ('{"order": "a1"}', "order"),
    ('{"order": ["a1", 3]}', "order[1]"),
    ('{"order": ["a1"], "offsets": [1]}', "offsets"),
    ('{"order": ["a1"], "offsets": {"X1": 1.5}}', "offsets.X1"),
    ('{"order": ["a1"], "offsets": {"X1": true}}', "offsets.X1"),
])
def test_bad_plans_name_the_field(tmp_path, text, field):
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_solution(None, path)
    assert error.value.field == field and error.value.file == str(path)


def test_malformed_plan_names_file_and_line(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text('{"order":\n [1,,]}')
    with pytest.raises(InputError) as error:
        read_solution(None, path)
    assert error.value.file == str(path) and error.value.line == 2


def test_load_network_instance_keeps_settings():
    instance = load_instance(NETWORKS / "gpt2_raw_torch_seq128.json")
    assert instance.views == "alias" and not instance.inplace and instance.alignment == 1
    assert load_instance(NETWORKS / "gpt2_raw_torch_seq128.json", alignment=64).alignment == 64


def test_load_bare_graph(tmp_path):
    data = json.loads((NETWORKS / "mobilenet_v1_fused_tflite_224.json").read_text())["graph"]
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(data))
    instance = load_instance(path)
    assert instance.num_ops == 31 and instance.views == "copy"


@pytest.mark.parametrize("text, field", [
    ('{"records": []}', "graph"),
    ('{"graph": {"ops": [], "inputs": []}}', "graph.tensors"),
    ('{"graph": {"tensors": [], "ops": [{"name": "a", "type": "ADD", "inputs": ["x"], '
     '"outputs": []}], "inputs": [], "outputs": []}}', "ops[0] (a).inputs"),
])
def test_bad_instances_name_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_instance(path)
    assert error.value.file == str(path) and error.value.field == field


def test_bad_alignment_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as error:
        load_instance(NETWORKS / "mobilenet_v1_fused_tflite_224.json", alignment=0)
    assert error.value.field == "alignment"


# --- the validator ---------------------------------------------------------------------------

def test_two_branches_peaks_by_hand():
    instance = two_branches()
    assert peak_of(instance, instance.op_names) == 21        # X1 + X2 + Y1 at a2
    assert peak_of(instance, ("a1", "a2", "b1", "b2", "join")) == 12
    assert not validate_schedule(instance, ScheduleSolution(("b1", "b2", "a1", "a2", "join")))


def test_order_violations_have_reasons():
    instance = two_branches()
    found = validate_schedule(instance, ScheduleSolution(("a2", "a1", "b1", "b1", "zz")))
    assert kinds(found) == [ScheduleViolationKind.DUPLICATE_OP, ScheduleViolationKind.UNKNOWN_OP,
                            ScheduleViolationKind.MISSING_OP, ScheduleViolationKind.MISSING_OP]
    assert "'zz'" in str(found[1]) and "b2" in str(found[2])
    found = validate_schedule(instance, ScheduleSolution(("a2", "a1", "b1", "join", "b2")))
    assert kinds(found) == [ScheduleViolationKind.NOT_TOPOLOGICAL] * 2
    assert "op a2 at step 0 reads X1, which op a1 produces later, at step 1" in str(found[0])


def test_placement_violations():
    instance = two_branches()
    order = ("a1", "a2", "b1", "b2", "join")
    good = {"X1": 0, "Y1": 10, "X2": 0, "Y2": 11, "out": 0}
    assert not validate_schedule_offsets(instance, ScheduleSolution(order, good))
    assert arena_of(instance, ScheduleSolution(order, good)) == 12
    clash = dict(good, X2=5)        # X2 [5, 15) on steps 2-3 covers Y1 and Y2
    found = validate_schedule_offsets(instance, ScheduleSolution(order, clash))
    assert kinds(found) == [ViolationKind.OVERLAP] * 2 and "X2" in str(found[0])
    missing = {k: v for k, v in good.items() if k != "out"} | {"ghost": 3}
    assert kinds(validate_schedule_offsets(instance, ScheduleSolution(order, missing))) == [
        ScheduleViolationKind.MISSING_OFFSET, ScheduleViolationKind.UNKNOWN_TENSOR]
    assert kinds(validate_schedule_offsets(instance, ScheduleSolution(order))) == [
        ScheduleViolationKind.MISSING_OFFSET]
    aligned = prepare(two_branches(alignment=4))
    assert kinds(validate_schedule_offsets(aligned, ScheduleSolution(order, good))) == [
        ViolationKind.MISALIGNED, ViolationKind.MISALIGNED]


def test_inplace_pair_saves_at_the_junction_only_when_honoured():
    plain, honoured = inplace_chain(), inplace_chain(inplace=True)
    assert peak_of(plain, plain.op_names) == 16             # x and r at relu
    assert peak_of(honoured, honoured.op_names) == 12       # conv: in + x
    records = induced_instance(honoured, honoured.op_names)
    assert [(records.records[a].id, records.records[b].id)
            for a, b in records.inplace_pairs] == [("x", "r")]
    plan = ScheduleSolution(honoured.op_names, {"in": 0, "x": 4, "r": 4, "out": 0})
    assert not validate_schedule_offsets(honoured, plan)
    assert kinds(validate_schedule_offsets(plain, plan)) == [ViolationKind.OVERLAP]


def test_one_source_lends_its_memory_once():
    assert inplace_saving([("a", "b", 5), ("a", "c", 7)]) == 7
    assert inplace_saving([("a", "c", 5), ("b", "c", 5)]) == 5
    assert inplace_saving([("a", "b", 5), ("c", "d", 2)]) == 7
    assert inplace_saving([("a", "b", 5), ("a", "c", 4), ("d", "c", 4)]) == 9


@pytest.mark.parametrize("name", instances.names())
def test_engine_order_reproduces_the_committed_records(name):
    """The induced records of the engine order are the importers' records, and the peak is
    their max breadth (over the in-place-trimmed profiles with --inplace)."""
    committed = instances.load(name)
    instance = load_instance(NETWORKS / f"{name}.json")
    assert induced_instance(instance, instance.op_names).records == committed.records
    honoured = prepare(instance, inplace=True)
    assert induced_instance(honoured, instance.op_names).inplace_pairs == committed.inplace_pairs
    assert peak_of(instance, instance.op_names) == max_breadth(committed)
    assert peak_of(honoured, instance.op_names) == inplace_max_breadth(committed)
    dag = dag_of(honoured)
    assert peak(dag, dag.topological) == inplace_max_breadth(committed)


@settings(max_examples=150, deadline=None)
@given(schedule_instances(max_ops=7))
def test_index_form_peak_equals_the_validator(instance):
    """The solvers' live bytes (index form) equal the validator's (importers' lifetimes) on
    every step of random topological orders."""
    from optplan.schedule.heuristics import PRIORITIES, list_order

    dag = dag_of(instance)
    for priority in PRIORITIES:
        order = list_order(dag, priority=priority, tie_break="depth_first")
        names = [dag.op_names[v] for v in order]
        assert not validate_schedule(instance, ScheduleSolution(names))
        assert peak(dag, order) == peak_of(instance, names)
        assert len(step_breadths(dag, order)) == instance.num_ops


def test_empty_graph():
    instance = build("empty", [], {}, inputs=[])
    assert peak_of(instance, ()) == 0 and not validate_schedule(instance, ScheduleSolution(()))
