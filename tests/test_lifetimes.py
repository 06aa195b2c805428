"""Lifetime analysis on small hand-drawn graphs whose records can be checked on paper."""

import pytest

from optplan.errors import InputError
from optplan.graph import Graph, Op, Tensor, lifetimes


def _tensor(name, size=16):
    return Tensor(name, (size // 4,), "float32", size)


def _graph(ops, inputs=("x",), outputs=None, sizes=None):
    """Ops as (name, type, inputs, outputs[, inplace]); every tensor 16 bytes unless sized."""
    sizes = sizes or {}
    names = list(inputs) + [name for op in ops for name in op[3]]
    tensors = {name: _tensor(name, sizes.get(name, 16)) for name in names}
    built = tuple(Op(o[0], o[1], o[2], o[3], inplace=o[4] if len(o) > 4 else ()) for o in ops)
    return Graph("hand", built, tensors, tuple(inputs),
                 tuple(outputs if outputs is not None else ops[-1][3]))


def _intervals(instance):
    return {r.id: (r.first_op, r.last_op) for r in instance.records}


def test_diamond():
    # x -> a -> (b, c) -> d
    graph = _graph([("a", "CONV_2D", ["x"], ["ta"]), ("b", "CONV_2D", ["ta"], ["tb"]),
                    ("c", "CONV_2D", ["ta"], ["tc"]), ("d", "ADD", ["tb", "tc"], ["td"])])
    assert _intervals(lifetimes(graph)) == {"x": (0, 0), "ta": (0, 2), "tb": (1, 3),
                                            "tc": (2, 3), "td": (3, 3)}


def test_residual_block():
    # x -> conv1 -> relu -> conv2 -> add(x-path, conv2) : the block input lives across the block
    graph = _graph([("stem", "CONV_2D", ["x"], ["s"]), ("conv1", "CONV_2D", ["s"], ["c1"]),
                    ("relu", "RELU", ["c1"], ["r"], [("c1", "r")]),
                    ("conv2", "CONV_2D", ["r"], ["c2"]), ("add", "ADD", ["s", "c2"], ["y"])])
    instance = lifetimes(graph)
    assert _intervals(instance)["s"] == (0, 4)
    assert _intervals(instance)["c1"] == (1, 2)
    ids = [r.id for r in instance.records]
    assert [(ids[a], ids[b]) for a, b in instance.inplace_pairs] == [("c1", "r")]


def test_inplace_chain_is_kept():
    graph = _graph([("conv", "CONV_2D", ["x"], ["a"]), ("r1", "RELU", ["a"], ["b"], [("a", "b")]),
                    ("r2", "RELU", ["b"], ["c"], [("b", "c")]),
                    ("r3", "RELU", ["c"], ["d"], [("c", "d")])])
    instance = lifetimes(graph)
    ids = [r.id for r in instance.records]
    assert [(ids[a], ids[b]) for a, b in instance.inplace_pairs] == [("a", "b"), ("b", "c"),
                                                                     ("c", "d")]


def test_inplace_pair_refused_when_input_is_read_later():
    graph = _graph([("conv", "CONV_2D", ["x"], ["a"]), ("relu", "RELU", ["a"], ["b"], [("a", "b")]),
                    ("add", "ADD", ["a", "b"], ["y"])])
    instance = lifetimes(graph)
    assert _intervals(instance)["a"] == (0, 2)
    assert instance.inplace_pairs == ()


def test_inplace_pair_refused_when_output_is_larger():
    graph = _graph([("conv", "CONV_2D", ["x"], ["a"]), ("pad", "PAD", ["a"], ["b"], [("a", "b")])],
                   sizes={"b": 32})
    assert lifetimes(graph).inplace_pairs == ()


def test_multi_output_op_with_an_unused_output():
    graph = _graph([("split", "SPLIT", ["x"], ["left", "right"]),
                    ("conv", "CONV_2D", ["left"], ["y"]), ("tail", "RELU", ["y"], ["z"])])
    intervals = _intervals(lifetimes(graph))
    assert intervals["left"] == (0, 1)
    assert intervals["right"] == (0, 0)      # written by the split, never read
    assert intervals["z"] == (2, 2)


def test_graph_output_read_internally_lives_to_the_end():
    graph = _graph([("a", "CONV_2D", ["x"], ["y"]), ("b", "CONV_2D", ["y"], ["u"]),
                    ("c", "CONV_2D", ["u"], ["v"]), ("d", "CONV_2D", ["v"], ["w"])],
                   outputs=("y", "w"))
    intervals = _intervals(lifetimes(graph))
    assert intervals["y"] == (0, 3)
    assert intervals["u"] == (1, 2)


def test_graph_input_read_late_lives_from_op_zero():
    graph = _graph([("a", "CONV_2D", ["x"], ["u"]), ("b", "CONV_2D", ["u"], ["v"]),
                    ("c", "ADD", ["v", "k"], ["w"])], inputs=("x", "k"))
    assert _intervals(lifetimes(graph))["k"] == (0, 2)


def test_views_copy_versus_alias():
    graph = _graph([("conv", "CONV_2D", ["x"], ["a"]),
                    ("reshape", "RESHAPE", ["a"], ["a_flat"], [("a", "a_flat")]),
                    ("fc", "FULLY_CONNECTED", ["a_flat"], ["logits"]),
                    ("softmax", "SOFTMAX", ["logits"], ["p"])])
    copy = lifetimes(graph, views="copy")
    assert _intervals(copy)["a"] == (0, 1) and _intervals(copy)["a_flat"] == (1, 2)
    assert len(copy.inplace_pairs) == 1
    alias = lifetimes(graph, views="alias")
    assert "a_flat" not in _intervals(alias)
    assert _intervals(alias)["a"] == (0, 2)
    assert alias.inplace_pairs == ()
    assert len(alias) == len(copy) - 1


def test_aliased_graph_output_extends_its_base():
    graph = _graph([("conv", "CONV_2D", ["x"], ["a"]), ("flat", "FLATTEN", ["a"], ["y"]),
                    ("other", "CONV_2D", ["x2"], ["z"])], inputs=("x", "x2"), outputs=("y", "z"))
    assert _intervals(lifetimes(graph, views="alias"))["a"] == (0, 2)


def test_zero_byte_tensors_get_no_record():
    graph = _graph([("a", "CONV_2D", ["x"], ["empty"]), ("b", "CONV_2D", ["x"], ["y"])],
                   outputs=("y",), sizes={"empty": 0})
    assert "empty" not in _intervals(lifetimes(graph))


def test_unknown_view_setting_is_an_input_error():
    graph = _graph([("a", "CONV_2D", ["x"], ["y"])])
    with pytest.raises(InputError, match="views"):
        lifetimes(graph, views="share")


def test_graph_is_kept_in_provenance_and_sizes_are_bytes():
    graph = _graph([("a", "CONV_2D", ["x"], ["y"])], sizes={"y": 400})
    instance = lifetimes(graph)
    assert instance.provenance["graph"]["ops"][0]["type"] == "CONV_2D"
    assert {r.id: r.size for r in instance.records} == {"x": 16, "y": 400}
    assert "graph" not in lifetimes(graph, keep_graph=False).provenance
