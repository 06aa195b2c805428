"""The graph model: validation, JSON round trip, networkx view, fusion, re-typing, alignment."""

import json

import networkx as nx
import pytest

from optplan.errors import InputError
from optplan.formats.instance_json import instance_from_dict, instance_to_dict
from optplan.graph import (Graph, Op, Tensor, Weight, align_sizes, fuse, graph_from_dict,
                           graph_of_instance, graph_to_dict, lifetimes, retype)
from optplan.model import Instance


def _t(name, shape=(1, 4, 4, 8), dtype="float32"):
    count = 1
    for d in shape:
        count *= d
    return Tensor(name, shape, dtype, count * {"float32": 4, "int32": 4}[dtype])


def _w(name, shape):
    count = 1
    for d in shape:
        count *= d
    return Weight(name, shape, "float32", 4 * count)


def conv_bn_relu_graph():
    """x -> conv -> bn -> relu -> conv2(+bias add) -> add(x) -> relu2 -> dropout -> y"""
    tensors = {n: _t(n) for n in ["x", "c", "b", "r", "c2", "c2b", "s", "r2", "y"]}
    ops = (
        Op("conv", "CONV_2D", ["x"], ["c"], [_w("conv/w", (8, 3, 3, 8))],
           {"kernel": [3, 3], "stride": [1, 1], "groups": 1}),
        Op("bn", "BATCH_NORM", ["c"], ["b"], [_w("bn/scale", (8,)), _w("bn/offset", (8,))],
           inplace=[("c", "b")]),
        Op("relu", "RELU", ["b"], ["r"], inplace=[("b", "r")]),
        Op("conv2", "CONV_2D", ["r"], ["c2"], [_w("conv2/w", (8, 1, 1, 8))]),
        Op("bias", "ADD", ["c2"], ["c2b"], [_w("bias/b", (8,))]),
        Op("add", "ADD", ["c2b", "x"], ["s"]),
        Op("relu2", "RELU", ["s"], ["r2"], inplace=[("s", "r2")]),
        Op("dropout", "DROPOUT", ["r2"], ["y"]),
    )
    return Graph("toy", ops, tensors, ("x",), ("y",), {"source": "hand-drawn"})


def test_json_round_trip_is_exact():
    graph = conv_bn_relu_graph()
    data = json.loads(json.dumps(graph_to_dict(graph)))
    again = graph_from_dict(data)
    assert again == graph
    assert again.ops[0].attributes == {"kernel": [3, 3], "stride": [1, 1], "groups": 1}


def test_instance_json_keeps_the_graph():
    instance = lifetimes(conv_bn_relu_graph())
    data = json.loads(json.dumps(instance_to_dict(instance)))
    loaded = instance_from_dict(data)
    assert loaded == instance
    assert graph_of_instance(loaded) == conv_bn_relu_graph()
    assert graph_of_instance(Instance.from_tuples([(0, 1, 4)])) is None


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["ops"][1].update(inputs=["nowhere"]), "unknown tensor"),
    (lambda d: d["ops"].reverse(), "used before"),
    (lambda d: d["ops"][1].update(outputs=["c"]), "produced twice"),
    (lambda d: d["ops"][2].update(inplace=[["x", "r"]]), "in-place"),
    (lambda d: d.update(outputs=["ghost"]), "outputs"),
    (lambda d: d["tensors"][0].update(bytes=-1), "bytes"),
    (lambda d: d["tensors"][0].update(shape="4x4"), "shape"),
    (lambda d: d["ops"][0].pop("type"), "type"),
])
def test_malformed_graphs_are_input_errors(mutate, field):
    data = graph_to_dict(conv_bn_relu_graph())
    mutate(data)
    with pytest.raises(InputError, match=field):
        graph_from_dict(data)


def test_networkx_view_is_bipartite_and_ordered():
    graph = conv_bn_relu_graph()
    digraph = graph.to_networkx()
    assert nx.is_directed_acyclic_graph(digraph)
    ops = [n for n in digraph if n[0] == "op"]
    assert len(ops) == graph.num_ops
    assert all(digraph.nodes[n]["kind"] == "tensor" for op in ops for n in digraph.succ[op])
    order = [n[1] for n in nx.topological_sort(digraph) if n[0] == "op"]
    position = {index: rank for rank, index in enumerate(order)}
    for tensor, readers in graph.consumer_indices().items():
        if tensor in graph.producer_index():
            assert all(position[graph.producer_index()[tensor]] < position[r] for r in readers)


def test_fusion_folds_like_tflite():
    fused = fuse(conv_bn_relu_graph())
    assert [op.type for op in fused.ops] == ["CONV_2D", "CONV_2D", "ADD"]
    conv, conv2, add = fused.ops
    assert conv.attributes["fused"] == ["BATCH_NORM", "RELU"]
    assert conv.outputs == ("r",)
    assert [w.name for w in conv.weights] == ["conv/w", "conv/bias"]   # BN became a bias
    assert conv2.attributes["fused"] == ["ADD"] and conv2.outputs == ("c2b",)
    assert add.attributes["activation"] == "RELU" and fused.outputs == ("r2",)
    assert set(fused.tensors) == {"x", "r", "c2b", "r2"}
    assert fuse(fused) == fused


def test_fusion_keeps_a_tensor_with_two_readers():
    tensors = {n: _t(n) for n in ["x", "c", "r", "y"]}
    ops = (Op("conv", "CONV_2D", ["x"], ["c"], [_w("w", (8, 1, 1, 8))]),
           Op("relu", "RELU", ["c"], ["r"]), Op("add", "ADD", ["r", "c"], ["y"]))
    graph = Graph("two_readers", ops, tensors, ("x",), ("y",))
    assert fuse(graph) == graph


def test_fusion_does_not_fold_batch_norm_after_an_activation():
    tensors = {n: _t(n) for n in ["x", "c", "b"]}
    ops = (Op("conv", "CONV_2D", ["x"], ["c"], [_w("w", (8, 1, 1, 8))], {"activation": "RELU"}),
           Op("bn", "BATCH_NORM", ["c"], ["b"], [_w("s", (8,))]))
    graph = Graph("bn_after_relu", ops, tensors, ("x",), ("b",))
    # the batch-norm stays, lowered the way TFLite emits it: MUL by the scale, ADD of the offset
    assert [op.type for op in fuse(graph).ops] == ["CONV_2D", "MUL", "ADD"]
    assert fuse(fuse(graph)) == fuse(graph)


def test_fused_records_are_a_subset_of_raw_records():
    raw = lifetimes(conv_bn_relu_graph())
    fused = lifetimes(fuse(conv_bn_relu_graph()))
    assert {r.id for r in fused.records} < {r.id for r in raw.records}
    assert fused.num_ops == 3 and raw.num_ops == 8


def test_retype_scales_float_tensors_and_weights():
    graph = conv_bn_relu_graph()
    half = retype(graph, "float16")
    assert all(t.bytes * 2 == graph.tensors[n].bytes for n, t in half.tensors.items())
    assert half.weight_bytes * 2 == graph.weight_bytes
    assert retype(graph, "int8").tensors["x"].bytes == 128
    ints = Graph("ints", (), {"i": _t("i", (3,), "int32")}, ("i",), ("i",))
    assert retype(ints, "float16").tensors["i"].bytes == 12
    with pytest.raises(InputError, match="dtype"):
        retype(graph, "float12")


def test_align_sizes_rounds_up_and_keeps_pairs():
    instance = Instance.from_tuples([(0, 1, 10), (1, 2, 9), (2, 3, 64)], inplace_pairs=[(0, 1)])
    aligned = align_sizes(instance, 64)
    assert list(aligned.sizes) == [64, 64, 64]
    assert aligned.alignment == 64 and aligned.inplace_pairs == ((0, 1),)
    with pytest.raises(InputError, match="alignment"):
        align_sizes(instance, 0)
