"""Preload-aware planning: model, formats, simulator/validator, cost model, heuristics.

The exact solvers' cross-checks are in tests/test_preload_exact.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan.errors import InputError
from optplan.graph.model import Graph, Op, Tensor, Weight
from optplan.preload import (Layer, PlanEntry, PreloadInstance, PreloadPlan, PreloadTensor,
                             budget_lower_bound, latency_lower_bound, plan_latency, read_plan,
                             read_preload_instance, schedule, validate_plan, write_plan,
                             write_preload_instance)
from optplan.preload.costmodel import (PROFILES, load_profile, op_flops,
                                       preload_instance_from_graph)
from optplan.preload.flexnn import flexnn, no_preload, pin_all
from optplan.preload.pareto import budget_sweep, pareto_front
from optplan.solve import solve
from optplan.validate import ViolationKind

REPO = Path(__file__).resolve().parents[1]


def weight(id, layer, size, load):
    return PreloadTensor(id, "weight", size, layer, layer, load)


def activation(id, first, last, size):
    return PreloadTensor(id, "activation", size, first, last)


def stairs(budget=None, window=None) -> PreloadInstance:
    """Three layers (10, 10, 5 µs); x on [0,1], y on [1,2] (4 bytes each); w1 (8 bytes, 12 µs)
    for layer 1, w2 (8 bytes, 30 µs) for layer 2, a 2-byte scratch in layer 1."""
    return PreloadInstance(
        (Layer("a", 10), Layer("b", 10), Layer("c", 5)),
        (activation("x", 0, 1, 4), activation("y", 1, 2, 4), weight("w1", 1, 8, 12),
         weight("w2", 2, 8, 30), PreloadTensor("s", "scratch", 2, 1, 1)),
        "stairs", window, budget)


def plan(instance, offsets: dict, decisions: dict, latency=None, peak=None) -> PreloadPlan:
    entries = []
    for t in instance.tensors:
        step = decisions.get(t.id, "none")
        if step == "pin":
            entries.append(PlanEntry(t.id, offsets[t.id], None, True))
        elif step == "none":
            entries.append(PlanEntry(t.id, offsets[t.id]))
        else:
            entries.append(PlanEntry(t.id, offsets[t.id], step))
    result = PreloadPlan(tuple(entries), 0, 0)
    true_peak = max(offsets[t.id] + t.size for t in instance.tensors)
    return PreloadPlan(result.entries, plan_latency(instance, result) if latency is None
                       else latency, true_peak if peak is None else peak)


# --- the timing recurrences, by hand ---------------------------------------------------------

def test_schedule_no_preload_by_hand():
    # w1 loads after layer 0 (E_0 = 10): 10..22, layer 1 22..32; w2 after E_1: 32..62; 62..67.
    instance = stairs()
    timing = schedule(instance, {2: 1, 3: 2})
    assert timing.loads == {2: (10, 22), 3: (32, 62)}
    assert timing.layer_end == (10, 32, 67)


def test_schedule_preload_and_pin_by_hand():
    instance = stairs()
    # Both preloaded at 0: w1 0..12, w2 12..42; layer 1 starts 12, ends 22; layer 2 42..47.
    assert schedule(instance, {2: 0, 3: 0}).layer_end == (10, 22, 47)
    # w1 pinned, w2 preloaded at 1: waits for E_0 = 10, 10..40; layer 2 40..45.
    timing = schedule(instance, {2: None, 3: 1})
    assert timing.loads == {3: (10, 40)}
    assert timing.latency_us == 45
    # Everything pinned: the unlimited-memory bound.
    assert schedule(instance, {2: None, 3: None}).latency_us == latency_lower_bound(instance)


def test_loader_is_sequential_in_layer_then_id_order():
    # Two weights of layer 1 preloaded at 0: "a" loads first although it is listed second.
    instance = PreloadInstance((Layer("l0", 1), Layer("l1", 1)),
                               (weight("b", 1, 1, 5), weight("a", 1, 1, 7)))
    timing = schedule(instance, {0: 0, 1: 0})
    assert timing.loads == {1: (0, 7), 0: (7, 12)}
    assert timing.latency_us == 13


# --- the validator ---------------------------------------------------------------------------

def good_plan(instance):
    return plan(instance, {"x": 0, "y": 16, "w1": 4, "w2": 0, "s": 12}, {"w1": 0, "w2": 2})


def test_valid_plan_passes():
    instance = stairs(budget=20)
    assert validate_plan(instance, good_plan(instance)) == []
    assert plan_latency(instance, good_plan(instance)) == 57


@pytest.mark.parametrize("change, kind", [
    (lambda e: e[:-1], ViolationKind.MISSING_TENSOR),
    (lambda e: e + (PlanEntry("ghost", 0),), ViolationKind.MISSING_TENSOR),
    (lambda e: (PlanEntry("x", -1),) + e[1:], ViolationKind.NEGATIVE_OFFSET),
    (lambda e: (PlanEntry("x", 17),) + e[1:], ViolationKind.OVER_BUDGET),
    (lambda e: (PlanEntry("x", 4),) + e[1:], ViolationKind.OVERLAP),
    (lambda e: e[:2] + (PlanEntry("w1", 4, 2),) + e[3:], ViolationKind.BAD_PRELOAD),
    (lambda e: e[:2] + (PlanEntry("w1", 4, 0, True),) + e[3:], ViolationKind.BAD_PRELOAD),
    (lambda e: (PlanEntry("x", 0, 0),) + e[1:], ViolationKind.BAD_PRELOAD),
])
def test_validator_names_each_violation(change, kind):
    instance = stairs(budget=20)
    base = good_plan(instance)
    broken = PreloadPlan(change(base.entries), base.latency_us, base.peak)
    kinds = {v.kind for v in validate_plan(instance, broken)}
    assert kind in kinds


def test_validator_checks_window_and_stated_values():
    instance = stairs(budget=20, window=0)
    base = good_plan(instance)   # w1 preloaded one step early: outside a window of 0
    assert {v.kind for v in validate_plan(instance, base)} == {ViolationKind.BAD_PRELOAD}
    instance = stairs(budget=20)
    wrong = PreloadPlan(base.entries, base.latency_us - 1, base.peak + 1)
    assert {v.kind for v in validate_plan(instance, wrong)} == {
        ViolationKind.LATENCY_MISSTATED, ViolationKind.PEAK_MISSTATED}
    assert [v.kind for v in validate_plan(instance, object())] == [ViolationKind.WRONG_TYPE]


def test_pinned_weight_conflicts_at_every_step():
    instance = stairs()
    # w2 pinned at offset 0 overlaps x at step 0 (it would not if preloaded at 2).
    pinned = plan(instance, {"x": 0, "y": 16, "w1": 4, "w2": 0, "s": 12}, {"w1": 0, "w2": "pin"})
    assert ViolationKind.OVERLAP in {v.kind for v in validate_plan(instance, pinned)}


# --- data and formats ------------------------------------------------------------------------

@pytest.mark.parametrize("build, field", [
    (lambda: PreloadTensor("w", "weight", 4, 0, 1, 3), "last_op"),
    (lambda: PreloadTensor("s", "scratch", 4, 0, 1), "last_op"),
    (lambda: PreloadTensor("a", "activation", 0, 0, 1), "size"),
    (lambda: PreloadTensor("a", "activation", 4, 0, 1, 5), "load_us"),
    (lambda: PreloadTensor("a", "buffer", 4, 0, 1), "kind"),
    (lambda: PreloadInstance((Layer("a", 1),), (activation("x", 0, 1, 4),)), "last_op"),
    (lambda: PreloadInstance((Layer("a", 1),), (activation("x", 0, 0, 4),) * 2), "id"),
    (lambda: PreloadInstance((), ()), "layers"),
    (lambda: Layer("a", -1), "compute_us"),
])
def test_bad_data_is_rejected_naming_the_field(build, field):
    with pytest.raises(InputError) as error:
        build()
    assert field in str(error.value)


def test_instance_and_plan_round_trip(tmp_path):
    instance = stairs(budget=20, window=1)
    path = tmp_path / "stairs.json"
    write_preload_instance(instance, path)
    assert read_preload_instance(path) == instance
    data = json.loads(path.read_text())
    assert set(data) == {"name", "layers", "tensors", "window", "budget"}
    assert data["tensors"][2] == {"id": "w1", "kind": "weight", "size": 8, "first_op": 1,
                                  "last_op": 1, "load_us": 12}
    result = good_plan(instance)
    write_plan(instance, result, tmp_path / "plan.json")
    written = json.loads((tmp_path / "plan.json").read_text())
    assert set(written) == {"latency_us", "peak", "tensors"}
    assert written["tensors"][2] == {"id": "w1", "offset": 4, "preload_op": 0}
    assert read_plan(tmp_path / "plan.json") == result


@pytest.mark.parametrize("text, field", [
    ('{"layers": [{"name": "a", "compute_us": 1}], "tensors": [{"id": "w", "kind": "weight",'
     ' "size": 4, "first_op": 0, "last_op": 0}]}', "tensors[0].load_us"),
    ('{"layers": [{"name": "a", "compute_us": 1.5}], "tensors": []}', "layers[0].compute_us"),
    ('{"layers": [{"name": "a", "compute_us": 1}], "tensors": [{"id": "x", "kind": "act", '
     '"size": 4, "first_op": 0, "last_op": 0}]}', "tensors[0].kind"),
    ('{"layers": [], "tensors": []}', "layers"),
    ('{"layers": [{"name": "a", "compute_us": 1}], "tensors": [], "budget": -1}', "budget"),
    ('{"layers": [', "column"),
])
def test_bad_files_name_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_preload_instance(path)
    message = str(error.value)
    assert str(path) in message and field in message and "\n" not in message


# --- bounds ----------------------------------------------------------------------------------

def test_bounds_by_hand():
    instance = stairs()
    assert latency_lower_bound(instance) == 25
    assert budget_lower_bound(instance) == 4 + 4 + 8 + 2   # step 1: x, y, w1, s


# --- cost model ------------------------------------------------------------------------------

def tiny_graph() -> Graph:
    """NHWC: conv 3x3 (3 -> 8 channels, 8x8 out), depthwise 3x3, FC 512 -> 10, max pool."""
    f32 = "float32"
    tensors = {name: Tensor(name, shape, f32, 4 * math.prod(shape)) for name, shape
               in [("in", (1, 8, 8, 3)), ("c", (1, 8, 8, 8)), ("d", (1, 8, 8, 8)),
                   ("p", (1, 4, 4, 8)), ("r", (1, 128)), ("fc", (1, 10)), ("sum", (1, 10))]}
    ops = (
        Op("conv", "CONV_2D", ("in",), ("c",),
           (Weight("conv/w", (8, 3, 3, 3), f32, 864), Weight("conv/b", (8,), f32, 32)),
           {"kernel": [3, 3], "activation": "RELU6"}),
        Op("dw", "DEPTHWISE_CONV_2D", ("c",), ("d",), (Weight("dw/w", (1, 3, 3, 8), f32, 288),),
           {"kernel": [3, 3]}),
        Op("pool", "MAX_POOL_2D", ("d",), ("p",), (), {"kernel": [2, 2]}),
        Op("flat", "RESHAPE", ("p",), ("r",)),
        Op("fc", "FULLY_CONNECTED", ("r",), ("fc",), (Weight("fc/w", (10, 128), f32, 5120),)),
        Op("add", "ADD", ("fc", "fc"), ("sum",)),
    )
    return Graph("tiny", ops, tensors, ("in",), ("sum",))


def test_flops_per_op_type():
    graph = tiny_graph()
    flops = {op.name: op_flops(graph, op) for op in graph.ops}
    assert flops == {"conv": 2 * 3 * 3 * 3 * 8 * 8 * 8 + 512,   # + fused RELU6 per element
                     "dw": 2 * 3 * 3 * 1 * 8 * 8 * 8,
                     "pool": 128 * 4, "flat": 0, "fc": 2 * 1 * 10 * 128, "add": 10}


def test_flops_nchw_layout_matches_nhwc():
    f32 = "float32"
    tensors = {"in": Tensor("in", (1, 3, 8, 8), f32, 768), "c": Tensor("c", (1, 8, 8, 8), f32,
                                                                     2048)}
    op = Op("conv", "CONV_2D", ("in",), ("c",), (Weight("w", (8, 3, 3, 3), f32, 864),),
            {"layout": "NCHW", "groups": 1})
    graph = Graph("nchw", (op,), tensors, ("in",), ("c",))
    assert op_flops(graph, op) == 2 * 3 * 3 * 3 * 8 * 8 * 8


def test_instance_from_graph_rounds_times_up():
    instance = preload_instance_from_graph(tiny_graph(), "embedded")
    # embedded: 5000 FLOP/µs, 80 bytes/µs.
    assert instance.compute_us == (-(-28160 // 5000), -(-9216 // 5000), 1, 0, 1, 1)
    weights = {t.id: (t.layer, t.size, t.load_us) for t in instance.tensors if t.is_weight}
    assert weights == {"conv/weights": (0, 896, 12), "dw/weights": (1, 288, 4),
                       "fc/weights": (4, 5120, 64)}
    assert [t.id for t in instance.tensors if t.kind == "activation"] == [
        "in", "c", "d", "p", "r", "fc", "sum"]
    assert instance.provenance["cost_model"]["profile"] == "embedded"


def test_measured_profile_file(tmp_path):
    path = tmp_path / "board.json"
    path.write_text(json.dumps({"name": "board", "gflops": 1.0, "storage_mb_per_s": 10.0,
                                "compute_us": {"conv": 77}}))
    profile = load_profile(str(path))
    instance = preload_instance_from_graph(tiny_graph(), profile)
    assert instance.compute_us[0] == 77 and instance.compute_us[1] == -(-9216 // 1000)
    path.write_text(json.dumps({"gflops": 0}))
    with pytest.raises(InputError, match="gflops"):
        load_profile(str(path))
    with pytest.raises(InputError, match="profile"):
        load_profile("no-such-profile")
    assert PROFILES["phone"].load_time(1001) == 2


def test_cost_model_on_committed_mobilenet_v2():
    path = REPO / "data" / "networks" / "mobilenet_v2_fused_tflite_224.json"
    if not path.is_file():
        pytest.skip("network not committed")
    from optplan.preload.costmodel import preload_instance_from_network
    instance = preload_instance_from_network(path, "phone")
    # MobileNet v2 (224, width 1.0): ~300 M multiply-adds, 3.5 M parameters (Sandler et al.).
    assert 0.55e9 <= sum(instance.compute_us) * 50e3 <= 0.70e9
    weight_bytes = sum(t.size for t in instance.tensors if t.is_weight)
    assert 3.3e6 * 4 <= weight_bytes <= 3.6e6 * 4
    assert sum(t.load_us for t in instance.tensors if t.is_weight) >= weight_bytes / 1000


# --- heuristics ------------------------------------------------------------------------------

def test_flexnn_on_stairs():
    assert flexnn(stairs(budget=17)) is None                      # below the must-live bound
    result = solve(stairs(), "flexnn", "preload", budget=20)
    assert result.valid and result.objective == 55 and result.lower_bound == 25   # w1 pinned
    assert solve(stairs(), "no_preload", "preload", budget=20).objective == 67
    assert solve(stairs(), "flexnn", "preload").objective == 25   # unlimited: everything pinned


@st.composite
def small_instances(draw, max_layers=6, max_weights=4):
    layers = draw(st.integers(1, max_layers))
    compute = draw(st.lists(st.integers(0, 30), min_size=layers, max_size=layers))
    tensors = []
    for k in range(draw(st.integers(0, layers + 1))):
        first = draw(st.integers(0, layers - 1))
        last = draw(st.integers(first, min(layers - 1, first + 2)))
        tensors.append(activation(f"a{k}", first, last, draw(st.integers(1, 9))))
    for k in range(draw(st.integers(0, max_weights))):
        tensors.append(weight(f"w{k}", draw(st.integers(0, layers - 1)),
                              draw(st.integers(1, 9)), draw(st.integers(0, 40))))
    if draw(st.booleans()):
        step = draw(st.integers(0, layers - 1))
        tensors.append(PreloadTensor("s", "scratch", draw(st.integers(1, 5)), step, step))
    window = draw(st.one_of(st.none(), st.integers(0, 2)))
    return PreloadInstance(tuple(Layer(f"l{i}", c) for i, c in enumerate(compute)),
                           tuple(tensors), "random", window)


@settings(max_examples=60, deadline=None)
@given(small_instances(), st.integers(0, 40))
def test_heuristic_plans_pass_the_simulator(instance, extra):
    budget = budget_lower_bound(instance) + extra
    bound = latency_lower_bound(instance)
    for method in ("flexnn", "no_preload"):
        result = solve(instance, method, "preload", budget=budget)
        if result.solution is None:
            continue
        assert result.valid, result.violations
        assert result.objective >= bound
    full = pin_all(instance)
    assert full.latency_us == bound and validate_plan(instance, full) == []
    generous = instance.with_budget(sum(t.size for t in instance.tensors))
    assert no_preload(generous) is not None and flexnn(generous).latency_us == bound


# --- Pareto helpers --------------------------------------------------------------------------

def test_budget_sweep_and_front():
    assert budget_sweep(10, 80, 8) == [10, 20, 30, 40, 50, 60, 70, 80]
    with pytest.raises(InputError):
        budget_sweep(5, 4, 8)
    rows = [{"method": "m", "budget": b, "latency_us": l}
            for b, l in [(10, 50), (20, 50), (30, 40), (40, None), (50, 30)]]
    assert pareto_front(rows, "m") == [(10, 50), (30, 40), (50, 30)]


def test_cli_solve_writes_the_plan_json(tmp_path, capsys):
    from optplan.cli import main

    instance_path, plan_path = tmp_path / "stairs.json", tmp_path / "plan.json"
    write_preload_instance(stairs(), instance_path)
    code = main(["solve", str(instance_path), "--problem", "preload", "--method", "flexnn",
                 "--budget", "20", "--output", str(plan_path), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["valid"] and summary["objective"] == 55
    written = read_plan(plan_path)
    assert validate_plan(stairs(budget=20), written) == []
    assert written.latency_us == 55
