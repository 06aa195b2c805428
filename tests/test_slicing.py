"""FlexNN's layer slicing as an instance transformation: the data it needs (model, JSON, cost
model), what it does to a layer, its errors, and every preload method on sliced instances."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optplan.cli import main
from optplan.errors import InputError
from optplan.graph.model import Graph, Op, Tensor, Weight
from optplan.preload import (Layer, PlanEntry, PreloadInstance, PreloadPlan, PreloadTensor,
                             budget_lower_bound, instance_from_dict, instance_to_dict,
                             latency_lower_bound, plan_from_dict, plan_latency, plan_to_dict,
                             read_preload_instance, validate_plan)
from optplan.preload.bounds import must_live_breadths
from optplan.preload.costmodel import load_profile, preload_instance_from_graph
from optplan.preload.flexnn import flexnn
from optplan.preload.model import KernelCost, LayerOp, LayerSlicing, SliceCosts
from optplan.preload.slicing import (DEFAULT_SLICE_COSTS, apply_slicing, layer_peak,
                                     sliced_budget_lower_bound, slice_layer, slicing_options)
from optplan.registry import methods
from optplan.solve import solve
from optplan.validate import ViolationKind
from slicing_factories import activation, conv_fc, sliceable_instances, tiny_conv, tiny_fc

REPO = Path(__file__).resolve().parents[1]


def summary(instance):
    return ([(layer.name, layer.compute_us) for layer in instance.layers],
            {t.id: (t.kind, t.size, t.first_op, t.last_op, t.load_us) for t in instance.tensors})


# --- what slicing does to a layer, by hand ------------------------------------------------

def test_weight_slicing_splits_the_weight_rows_into_sub_layers():
    instance = conv_fc()
    assert must_live_breadths(instance) == [32, 38, 4]
    sliced = slice_layer(instance, 1, "weight", 2)
    layers, tensors = summary(sliced)
    assert layers == [("conv", 12), ("fc[1/2]", 4), ("fc[2/2]", 4 + 3), ("softmax", 2)]
    assert tensors == {"x": ("activation", 4, 0, 0, 0), "c": ("activation", 4, 0, 2, 0),
                       "conv/w": ("weight", 8, 0, 0, 4), "conv/im2col": ("scratch", 16, 0, 0, 0),
                       "fc/w[1/2]": ("weight", 16, 1, 1, 8), "fc/w[2/2]": ("weight", 16, 2, 2, 8),
                       "y": ("activation", 2, 1, 3, 0), "z": ("activation", 2, 3, 3, 0)}
    assert must_live_breadths(sliced) == [32, 22, 22, 4]
    assert layer_peak(instance, LayerSlicing(1, "weight", 2)) == 22


def test_input_slicing_splits_the_flattened_input_and_merges_partial_outputs():
    sliced = slice_layer(conv_fc(), 0, "input", 4)
    layers, tensors = summary(sliced)
    assert layers == [("conv[1/4]", 3), ("conv[2/4]", 3 + 1), ("conv[3/4]", 3 + 1),
                      ("conv[4/4]", 3 + 1), ("fc", 8), ("softmax", 2)]
    for j in range(4):
        assert tensors[f"conv/w[{j + 1}/4]"] == ("weight", 2, j, j, 1)
        assert tensors[f"conv/im2col[{j + 1}/4]"] == ("scratch", 4, j, j, 0)
    for j in range(1, 4):
        assert tensors[f"conv/partial[{j + 1}/4]"] == ("scratch", 4, j, j, 0)   # c's size
    assert tensors["x"] == ("activation", 4, 0, 3, 0)       # the input, read by every slice
    assert tensors["c"] == ("activation", 4, 0, 4, 0)       # the output, from the first
    assert must_live_breadths(sliced) == [14, 18, 18, 18, 38, 4]


def test_weight_slicing_keeps_the_flattened_input_over_the_sub_layers():
    sliced = slice_layer(conv_fc(), 0, "weight", 2)
    tensors = summary(sliced)[1]
    assert tensors["conv/im2col"] == ("activation", 16, 0, 1, 0)   # made once, read by both
    assert tensors["conv/w[1/2]"] == ("weight", 4, 0, 0, 2)


def test_kernel_selection_swaps_time_weights_and_scratch():
    sliced = apply_slicing(conv_fc(), [LayerSlicing(0, kernel="direct")])
    layers, tensors = summary(sliced)
    assert layers[0] == ("conv", 30) and "conv/im2col" not in tensors
    assert tensors["conv/w"] == ("weight", 8, 0, 0, 4)
    assert sliced.layers[0].op.kernel == "direct" and sliced.layers[0].op.kernels == ()
    with pytest.raises(InputError, match="input-sliced"):      # direct has no flattened input
        apply_slicing(conv_fc(), [LayerSlicing(0, "input", 2, "direct")])


def test_slicing_two_layers_counts_layers_of_the_original():
    both = apply_slicing(conv_fc(), [LayerSlicing(1, "weight", 4), LayerSlicing(0, "input", 2)])
    one_by_one = slice_layer(slice_layer(conv_fc(), 1, "weight", 4), 0, "input", 2)
    assert summary(both) == summary(one_by_one)
    assert both.num_layers == 3 + 3 + 1
    assert both.provenance["slicing"] == [
        {"layer": 0, "kind": "input", "slices": 2, "kernel": None},
        {"layer": 1, "kind": "weight", "slices": 4, "kernel": None}]


def test_the_options_of_a_layer_follow_the_menu_and_the_threshold():
    options = [(o.kernel, o.kind, o.slices) for o in slicing_options(conv_fc(), 0)]
    assert options == [(None, None, 1), (None, "weight", 2), (None, "input", 2),
                       (None, "input", 4),                 # 8, 16 exceed 4 flattened channels
                       ("direct", None, 1), ("direct", "weight", 2)]
    assert [(o.kind, o.slices) for o in slicing_options(conv_fc(), 1)] == [
        (None, 1), ("weight", 2), ("weight", 4)]
    assert slicing_options(conv_fc(), 2) == (LayerSlicing(2),)
    # conv: least peak 12 with the direct kernel in 2 weight slices; fc: 14 in 4 slices.
    assert sliced_budget_lower_bound(conv_fc()) == 14
    assert budget_lower_bound(conv_fc()) == 38


@pytest.mark.parametrize("layer, kind, count, field, message", [
    (1, "weight", 3, "slicing.slices", "3 slices do not divide its 4 weight rows"),
    (1, "weight", 8, "slicing.slices", "8 slices exceed its 4 weight rows"),
    (0, "input", 3, "slicing.slices", "3 slices do not divide its 4 flattened input channels"),
    (0, "input", 8, "slicing.slices", "threshold of 4 input slices"),
    (1, "input", 2, "slicing.kind", "FULLY_CONNECTED layer with kernel gemm cannot be "
                                    "input-sliced"),
    (2, "weight", 2, "slicing.kind", "SOFTMAX layer with kernel direct cannot be weight-sliced"),
    (5, "weight", 2, "slicing.layer", "layer 5 does not exist"),
    (1, "rows", 2, "slicing.kind", "must be one of weight, input"),
])
def test_bad_slicing_is_a_one_line_error_naming_the_field(layer, kind, count, field, message):
    with pytest.raises(InputError, match=message) as error:
        slice_layer(conv_fc(), layer, kind, count)
    assert error.value.field == field and "\n" not in str(error.value)


def test_layers_without_operator_facts_cannot_be_sliced():
    plain = PreloadInstance((Layer("a", 1),), (PreloadTensor("w", "weight", 8, 0, 0, 1),))
    with pytest.raises(InputError, match="no operator facts") as error:
        slice_layer(plain, 0, "weight", 2)
    assert error.value.field == "slicing.kind"
    with pytest.raises(InputError, match="no kernel 'winograd'"):
        apply_slicing(conv_fc(), [LayerSlicing(0, kernel="winograd")])
    with pytest.raises(InputError, match="sliced twice"):
        apply_slicing(conv_fc(), [LayerSlicing(1, "weight", 2), LayerSlicing(1, "weight", 4)])


def test_instance_data_checks_name_the_field():
    with pytest.raises(InputError, match="faster than the layer's") as error:
        PreloadInstance((Layer("a", 10, LayerOp("CONV_2D", "im2col",
                                                kernels=(KernelCost("fast", 5, 1, 1),))),), ())
    assert error.value.field == "layers[0].op.kernels.compute_us"
    with pytest.raises(InputError, match="not an activation written by layer 0"):
        PreloadInstance((Layer("a", 1, LayerOp("FULLY_CONNECTED", "gemm", output="y")),),
                        (activation("x", 0, 0, 4),))
    with pytest.raises(InputError, match="a kind goes with more than one slice"):
        LayerSlicing(0, "weight", 1)
    with pytest.raises(InputError) as error:
        SliceCosts(-1, 4)
    assert error.value.field == "slice_costs.overhead_us"


# --- properties over random sliceable instances -------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sliceable_instances(), st.data())
def test_slicing_keeps_bytes_and_shifts_lifetimes(instance, data):
    layer = data.draw(st.integers(0, instance.num_layers - 1))
    choice = data.draw(st.sampled_from(slicing_options(instance, layer)))
    sliced = apply_slicing(instance, [choice])
    parts = choice.slices
    assert sliced.num_layers == instance.num_layers + parts - 1
    breadths, before = must_live_breadths(sliced), must_live_breadths(instance)
    assert breadths[:layer] == before[:layer]
    assert breadths[layer + parts:] == before[layer + 1:]
    assert max(breadths[layer:layer + parts]) == layer_peak(instance, choice)
    # Slicing never beats the latency bound, and only adds its documented costs.
    assert latency_lower_bound(sliced) >= latency_lower_bound(instance)
    op = instance.layers[layer].op
    if choice.kernel is None and parts > 1:
        extra = sliced.slice_costs.overhead_us if choice.kind == "weight" else op.merge_us
        assert latency_lower_bound(sliced) == latency_lower_bound(instance) + (parts - 1) * extra
        weights = [(t.size, t.load_us) for t in instance.tensors if t.is_weight]
        sliced_weights = [(t.size, t.load_us) for t in sliced.tensors if t.is_weight]
        assert sum(s for s, _ in sliced_weights) == sum(s for s, _ in weights)
        assert sum(d for _, d in sliced_weights) == sum(d for _, d in weights)
    # A plan of the sliced instance is a plan of the instance with its slicing.
    budget = data.draw(st.integers(budget_lower_bound(sliced), 2 * budget_lower_bound(sliced)))
    plan = flexnn(sliced.with_budget(budget))
    if plan is not None:
        assert validate_plan(sliced.with_budget(budget), plan) == []
        with_slicing = PreloadPlan(plan.entries, plan.latency_us, plan.peak, (choice,))
        assert validate_plan(instance.with_budget(budget), with_slicing) == []
        assert plan_latency(instance, with_slicing) == plan.latency_us


# --- every preload method on sliced instances ---------------------------------------------

SLICED = {"fc_by_weight": lambda: slice_layer(tiny_fc(), 0, "weight", 2),
          "conv_by_input": lambda: slice_layer(tiny_conv(), 0, "input", 2)}


def preload_methods() -> list[str]:
    return sorted(name for name, info in methods().items()
                  if any(p.cli_name == "preload" for p in info.implementations))


def test_the_preload_methods_include_the_existing_ones():
    assert {"flexnn", "no_preload", "cpsat", "milp_highs", "brute_force", "lower_bound",
            "flexnn_sliced"} <= set(preload_methods())


@pytest.mark.parametrize("name", sorted(SLICED))
@pytest.mark.parametrize("method", preload_methods())
def test_every_preload_method_runs_on_sliced_instances(name, method):
    pytest.importorskip("ortools")
    sliced = SLICED[name]()
    low = budget_lower_bound(sliced)
    optimum = {}
    for budget in (low - 1, low, low + 4, None):
        result = solve(sliced, method, "preload", budget=budget, time_limit=20, workers=1,
                       seed=0)
        if result.solution is not None:
            assert result.valid, result.violations
            assert result.objective >= latency_lower_bound(sliced)
        if budget == low - 1:
            assert result.solution is None
        exact = solve(sliced, "brute_force", "preload", budget=budget)
        optimum[budget] = exact.objective
        if method in ("cpsat", "milp_highs"):
            assert (result.objective, result.status) == (exact.objective, exact.status)
        elif result.solution is not None:
            assert result.objective >= exact.objective
    assert optimum[low] is not None


# --- plans with slicing, JSON ------------------------------------------------------------

def test_a_plan_with_slicing_is_checked_on_the_sliced_instance():
    instance = tiny_fc(budget=8)
    sliced = slice_layer(instance, 0, "weight", 2)
    plan = flexnn(sliced)
    assert plan is not None and budget_lower_bound(instance) == 12 > 8
    with_slicing = PreloadPlan(plan.entries, plan.latency_us, plan.peak,
                               (LayerSlicing(0, "weight", 2),))
    assert validate_plan(instance, with_slicing) == []
    assert solve(instance, "lower_bound", "preload").lower_bound == 13
    without = validate_plan(instance, PreloadPlan(plan.entries, plan.latency_us, plan.peak))
    assert ViolationKind.MISSING_TENSOR in {v.kind for v in without}
    wrong = PreloadPlan(plan.entries, plan.latency_us, plan.peak, (LayerSlicing(0, "weight", 4),))
    [violation] = validate_plan(instance, wrong)
    assert violation.kind is ViolationKind.BAD_PRELOAD and "4 slices exceed" in violation.message


def test_instance_and_plan_json_round_trip_with_slicing_data():
    instance = conv_fc(budget=40)
    data = instance_to_dict(instance)
    assert data["layers"][0]["op"] == {
        "type": "CONV_2D", "kernel": "im2col", "rows": 2, "channels": 4, "output": "c",
        "merge_us": 1, "kernels": [{"name": "direct", "compute_us": 30, "weight_bytes": 8,
                                    "load_us": 4, "scratch_bytes": 0}]}
    assert data["slice_costs"] == {"overhead_us": 3, "max_input_slices": 4}
    assert instance_from_dict(json.loads(json.dumps(data))) == instance
    plan = PreloadPlan((PlanEntry("a", 0, 1), PlanEntry("b", 4, None, True)), 10, 8,
                       (LayerSlicing(1, "weight", 4), LayerSlicing(0, None, 1, "direct")))
    plan_data = plan_to_dict(instance, plan)
    assert plan_data["slicing"] == [{"layer": 1, "kind": "weight", "slices": 4},
                                    {"layer": 0, "kernel": "direct"}]
    assert plan_from_dict(json.loads(json.dumps(plan_data))) == plan


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["layers"][0]["op"].update(rows=0), "layers[0].op.rows"),
    (lambda d: d["layers"][0]["op"].update(kernel=7), "layers[0].op.kernel"),
    (lambda d: d["layers"][0]["op"]["kernels"][0].pop("load_us"), "layers[0].op.kernels[0].load_us"),
    (lambda d: d["layers"][1]["op"].update(output="x"), "layers[1].op.output"),
    (lambda d: d["slice_costs"].update(max_input_slices=0), "slice_costs.max_input_slices"),
])
def test_bad_slicing_data_in_instance_json_names_the_field(edit, field):
    data = instance_to_dict(conv_fc())
    edit(data)
    with pytest.raises(InputError) as error:
        instance_from_dict(data)
    assert error.value.field == field


def test_bad_plan_slicing_json_names_the_field():
    with pytest.raises(InputError) as error:
        plan_from_dict({"latency_us": 1, "peak": 1, "tensors": [],
                        "slicing": [{"layer": 0, "kind": "rows", "slices": 2}]})
    assert error.value.field == "slicing[0].kind"


@pytest.mark.parametrize("path", sorted((REPO / "data" / "preload").glob("*.json")),
                         ids=lambda p: p.name)
def test_committed_preload_instances_load_and_write_back_unchanged(path, tmp_path):
    from optplan.preload import write_preload_instance

    instance = read_preload_instance(path)
    write_preload_instance(instance, tmp_path / path.name)
    assert (tmp_path / path.name).read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    if path.stem.endswith("_kernels"):
        assert instance.slice_costs is not None and all(l.op for l in instance.layers)
    else:
        assert instance.slice_costs is None and not any(l.op for l in instance.layers)


# --- the cost model with kernels ----------------------------------------------------------

def graph_of(*ops_and_tensors) -> Graph:
    ops, tensors = ops_and_tensors
    names = {name for op in ops for name in op.inputs + op.outputs}
    produced = {name for op in ops for name in op.outputs}
    return Graph("g", ops, {t.name: t for t in tensors if t.name in names},
                 tuple(sorted(names - produced)), (ops[-1].outputs[0],))


def f32(name, shape):
    return Tensor(name, shape, "float32", 4 * math.prod(shape))


def test_cost_model_prices_each_kernel():
    """NHWC, 8x8: a 3x3 stride-1 conv (3 -> 8), a 3x3 stride-2 conv (8 -> 4), a 1x1 conv
    (4 -> 6), a depthwise conv, an FC layer (96 -> 10)."""
    tensors = [f32("in", (1, 8, 8, 3)), f32("a", (1, 8, 8, 8)), f32("b", (1, 4, 4, 4)),
               f32("c", (1, 4, 4, 6)), f32("d", (1, 4, 4, 6)), f32("e", (1, 10))]
    ops = (Op("wino", "CONV_2D", ("in",), ("a",), (Weight("w1", (8, 3, 3, 3), "float32", 864),
                                                   Weight("b1", (8,), "float32", 32)),
              {"kernel": [3, 3]}),
           Op("strided", "CONV_2D", ("a",), ("b",), (Weight("w2", (4, 3, 3, 8), "float32",
                                                            1152),),
              {"kernel": [3, 3], "stride": [2, 2]}),
           Op("point", "CONV_2D", ("b",), ("c",), (Weight("w3", (6, 1, 1, 4), "float32", 96),),
              {"kernel": [1, 1]}),
           Op("dw", "DEPTHWISE_CONV_2D", ("c",), ("d",),
              (Weight("w4", (1, 3, 3, 6), "float32", 216),), {"kernel": [3, 3]}),
           Op("fc", "FULLY_CONNECTED", ("d",), ("e",), (Weight("w5", (10, 96), "float32",
                                                               3840),)))
    profile = load_profile("embedded")           # 5000 FLOP/µs, 80 bytes/µs
    instance = preload_instance_from_graph(graph_of(ops, tensors), profile, kernels=True)
    assert instance.slice_costs == SliceCosts(50, 8) and instance.name == "g_embedded_kernels"
    ops_by_name = {layer.name: layer for layer in instance.layers}
    sizes = {t.id: (t.kind, t.size, t.load_us) for t in instance.tensors if t.kind != "activation"}
    # Winograd F(6,3): 64/9 of the 3x3 kernel (bias unchanged); tiles (3+8)*64*(2*2) floats.
    flops = 2 * 27 * 8 * 64
    wino = ops_by_name["wino"]
    assert (wino.op.kernel, wino.op.rows, wino.op.channels, wino.op.output) == (
        "winograd", 8, 27, "a")
    assert wino.compute_us == math.ceil(flops / 10000)           # speed-up 2
    assert sizes["wino/weights"] == ("weight", 864 * 64 // 9 + 32, math.ceil(6176 / 80))
    assert sizes["wino/winograd"] == ("scratch", 11 * 64 * 4 * 4, 0)
    assert wino.op.kernels == (KernelCost("im2col", math.ceil(flops / 5000), 896,
                                          math.ceil(896 / 80), 27 * 64 * 4),)
    assert wino.op.merge_us == math.ceil(512 / 5000)
    strided = ops_by_name["strided"]                 # im2col only: 72 channels x 16 outputs
    assert (strided.op.kernel, strided.op.channels, strided.op.kernels) == ("im2col", 72, ())
    assert sizes["strided/im2col"] == ("scratch", 72 * 16 * 4, 0)
    assert (ops_by_name["point"].op.kernel, ops_by_name["point"].op.rows) == ("gemm", 6)
    assert "point/gemm" not in sizes and "point/im2col" not in sizes
    assert ops_by_name["dw"].op.kernel == "direct" and ops_by_name["dw"].op.rows is None
    assert (ops_by_name["fc"].op.kernel, ops_by_name["fc"].op.rows) == ("gemm", 10)
    plain = preload_instance_from_graph(graph_of(ops, tensors), profile)
    assert plain.slice_costs is None and not any(layer.op for layer in plain.layers)
    assert [t.id for t in plain.tensors if t.kind == "scratch"] == []


def test_profile_file_sets_the_slicing_parameters(tmp_path):
    path = tmp_path / "board.json"
    path.write_text(json.dumps({"gflops": 1.0, "storage_mb_per_s": 10.0,
                                "slice_overhead_us": 7, "max_input_slices": 2,
                                "winograd_speedup": 3.0}))
    profile = load_profile(str(path))
    assert (profile.slice_costs, profile.winograd_speedup) == (SliceCosts(7, 2), 3.0)
    path.write_text(json.dumps({"gflops": 1.0, "storage_mb_per_s": 10.0,
                                "max_input_slices": 0}))
    with pytest.raises(InputError, match="max_input_slices"):
        load_profile(str(path))
    assert DEFAULT_SLICE_COSTS == load_profile("phone").slice_costs


# --- the command line ---------------------------------------------------------------------

def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def conv_fc_file(tmp_path):
    from optplan.preload import write_preload_instance

    path = tmp_path / "conv_fc.json"
    write_preload_instance(conv_fc(), path)
    return path


def test_slice_command_lists_options_and_writes_the_sliced_instance(capsys, conv_fc_file,
                                                                   tmp_path):
    code, out, err = run_cli(capsys, "slice", conv_fc_file, "--json")
    assert code == 0 and err == "" and out.count("\n") == 1
    listing = json.loads(out)
    assert [entry["layer"] for entry in listing["layers"]] == [0, 1]
    assert listing["layers"][1]["options"][2] == {"kernel": "gemm", "kind": "weight",
                                                   "slices": 4, "peak": 14}
    output = tmp_path / "sliced.json"
    code, out, err = run_cli(capsys, "slice", conv_fc_file, "--slice", "1:weight:2",
                             "--slice", "0:input:2", "--kernel", "0:im2col", "--output", output)
    assert code == 0 and err == ""
    sliced = read_preload_instance(output)
    expected = apply_slicing(conv_fc(), [LayerSlicing(0, "input", 2), LayerSlicing(1, "weight",
                                                                                    2)])
    assert summary(sliced) == summary(expected)
    code, out, err = run_cli(capsys, "solve", output, "--problem", "preload", "--method",
                             "flexnn", "--budget", "30", "--json")
    assert code == 0 and json.loads(out)["valid"] is True


@pytest.mark.parametrize("argv, field", [
    (["--slice", "1:weight:3"], "slicing.slices"),
    (["--slice", "1:input:2"], "slicing.kind"),
    (["--slice", "2:weight:2"], "slicing.kind"),
    (["--slice", "0:input:8"], "slicing.slices"),
    (["--slice", "9:weight:2"], "slicing.layer"),
    (["--slice", "1:weight"], "--slice"),
    (["--kernel", "0:winograd"], "slicing.kernel"),
])
def test_slice_command_bad_input_exits_2_with_one_line(capsys, conv_fc_file, argv, field):
    code, out, err = run_cli(capsys, "slice", conv_fc_file, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"conv_fc.json: {field}: " in err


def test_the_docstring_example_holds():
    import doctest

    import optplan.preload.slicing as module

    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
