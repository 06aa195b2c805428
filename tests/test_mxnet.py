"""MXNet's graph planner (``mxnet``) and NNTrainer's in-place mode, on graphs drawn by hand.

Each small graph is written out so that the expected storage blocks can be followed on paper
with the rules of ``optplan/heuristics/mxnet.py``'s docstring.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan import instances, solve
from optplan.errors import InputError
from optplan.generators import generate_graph
from optplan.graph import Graph, Op, Tensor, lifetimes
from optplan.graph.nntrainer_inplace import (InPlaceMode, inplace_modes, nntrainer_inplace,
                                             nntrainer_inplace_instance)
from optplan.heuristics.mxnet import op_colors, plan_storage, reference_counts
from optplan.model import Instance
from optplan.problems import Problem

PROBLEMS = (Problem.SHARED_OBJECTS, Problem.OFFSETS)


def graph(sizes: dict[str, int], ops, *, inputs=("x",), outputs=()) -> Graph:
    """A graph from ``{tensor: bytes}`` and ``(name, type, inputs, outputs[, inplace])``."""
    tensors = {name: Tensor(name, (size,), "uint8", size) for name, size in sizes.items()}
    built = [Op(spec[0], spec[1], spec[2], spec[3], inplace=spec[4] if len(spec) > 4 else ())
             for spec in ops]
    return Graph("hand", built, tensors, inputs, outputs)


def storage_of(instance: Instance, **params) -> dict[str, int]:
    """Record id → shared object of ``mxnet`` through ``solve`` (validated)."""
    result = solve(instance, "mxnet", Problem.SHARED_OBJECTS, **params)
    assert result.valid, result.violations
    return {r.id: obj for r, obj in zip(instance.records, result.solution.object_ids)}


# x(10) -conv-> a(100) -relu, in place-> b(100) -conv-> c(12)
CHAIN = graph({"x": 10, "a": 100, "b": 100, "c": 12},
              [("conv0", "CONV_2D", ["x"], ["a"]),
               ("relu", "RELU", ["a"], ["b"], [("a", "b")]),
               ("conv1", "CONV_2D", ["b"], ["c"])], outputs=("c",))


def test_chain_in_place_shares_the_block():
    instance = lifetimes(CHAIN)
    result = solve(instance, "mxnet", Problem.SHARED_OBJECTS, inplace=True)
    blocks = dict(zip([r.id for r in instance.records], result.solution.object_ids))
    # x: block 0; a: block 1; b over a in place; c grows x's block (freed at conv0) to 12.
    assert blocks == {"x": 0, "a": 1, "b": 1, "c": 0}
    assert result.objective == 112 and result.valid


def test_chain_without_pairs_is_not_in_place():
    # solve() strips the pairs unless inplace=True: b must get a block of its own. The
    # match_range 16 plan takes x's freed 10-byte block and grows it (the largest smaller
    # block): x, b -> block 0 (100), a -> 1, c -> 1: 200 bytes.
    blocks = storage_of(lifetimes(CHAIN), match_range=16)
    assert blocks == {"x": 0, "a": 1, "b": 0, "c": 1}
    assert blocks["a"] != blocks["b"]


@pytest.mark.parametrize("match_range, total", [(1, 222), (2, 212), (4, 212), (8, 212),
                                                (16, 200), (None, 200), (0, 222)])
def test_match_range_on_the_chain(match_range, total):
    # 1: exact sizes only (4 blocks); 2..8: b (100) cannot take x's 10-byte block
    # (10 < 100 // r) but c (12) grows it; 16: b grows x's block (10 >= 100 // 16) and c takes
    # a's (100 <= 12 * 16); None: the best of the sweep; 0: no reuse at all.
    result = solve(lifetimes(CHAIN), "mxnet", Problem.SHARED_OBJECTS, match_range=match_range)
    assert result.objective == total and result.valid


def test_match_range_prefers_the_smallest_block_at_least_as_large():
    # y(64) and z(32) both die at op 2; w (30) at op 3 takes z (32, the smallest >= 30), not y.
    g = graph({"x": 8, "y": 64, "z": 32, "s": 8, "w": 30},
              [("p", "CONV_2D", ["x"], ["y"]), ("q", "CONV_2D", ["x"], ["z"]),
               ("r", "ADD", ["y", "z"], ["s"]), ("t", "CONV_2D", ["s"], ["w"])],
              outputs=("w",))
    blocks = storage_of(lifetimes(g), match_range=4)
    assert blocks["w"] == blocks["z"] != blocks["y"]


# Diamond: a is read by the in-place relu AND by conv2 (the MXNet in-place trap).
DIAMOND = graph({"x": 16, "a": 64, "b": 64, "c": 64, "d": 64},
                [("conv0", "CONV_2D", ["x"], ["a"]),
                 ("relu", "RELU", ["a"], ["b"], [("a", "b")]),
                 ("conv2", "CONV_2D", ["a"], ["c"]),
                 ("add", "ADD", ["b", "c"], ["d"], [("b", "d")])], outputs=("d",))


def test_trap_a_shared_input_is_not_overwritten_in_place():
    sizes = {name: tensor.bytes for name, tensor in DIAMOND.tensors.items()}
    declared = {pair for op in DIAMOND.ops for pair in op.inplace}
    plan = plan_storage(DIAMOND, sizes, inplace_pairs=declared, match_range=16)
    assert reference_counts(DIAMOND)["a"] == 2
    assert plan.storage["b"] != plan.storage["a"]  # conv2 still reads a after the relu
    assert plan.storage["d"] == plan.storage["b"]  # b's last reader is add: in place
    instance = lifetimes(DIAMOND)
    for problem in PROBLEMS:
        assert solve(instance, "mxnet", problem, inplace=True).valid


def test_trap_an_op_reading_its_input_twice_does_not_overwrite_it():
    g = graph({"x": 16, "a": 64, "b": 64},
              [("conv", "CONV_2D", ["x"], ["a"]), ("square", "MUL", ["a", "a"], ["b"],
                                                   [("a", "b")])], outputs=("b",))
    sizes = {name: tensor.bytes for name, tensor in g.tensors.items()}
    plan = plan_storage(g, sizes, inplace_pairs={("a", "b")})
    assert plan.storage["a"] != plan.storage["b"]  # a's count is 2 at the op


# Residual block: a feeds conv1 and the add; the add computes in place over a.
RESIDUAL = graph({"x": 32, "a": 64, "b": 64, "c": 64, "d": 64},
                 [("conv0", "CONV_2D", ["x"], ["a"]),
                  ("conv1", "CONV_2D", ["a"], ["b"]),
                  ("relu", "RELU", ["b"], ["c"], [("b", "c")]),
                  ("add", "ADD", ["a", "c"], ["d"], [("a", "d")])], outputs=("d",))


def test_residual_block():
    instance = lifetimes(RESIDUAL)
    blocks = storage_of(instance, inplace=True)
    assert blocks["c"] == blocks["b"] and blocks["d"] == blocks["a"]
    assert blocks["a"] != blocks["b"]
    plain = storage_of(instance)
    assert len({plain["a"], plain["b"], plain["c"]}) == 3  # all three live at the relu


def test_graph_inputs_are_allocated_at_op_0_and_freed_by_their_last_reader():
    # x dies at conv0, so a (same size, op 1) reuses its block.
    g = graph({"x": 64, "a": 64, "b": 64},
              [("conv0", "CONV_2D", ["x"], ["a"]), ("conv1", "CONV_2D", ["a"], ["b"])],
              outputs=("b",))
    blocks = storage_of(lifetimes(g))
    assert blocks == {"x": 0, "a": 1, "b": 0}


# Two branches from x: the long one (p0, p1, p2, join) and a single op (side).
BRANCHES = graph({"x": 8, "a": 64, "b": 64, "c": 64, "s": 64, "e": 8},
                 [("p0", "CONV_2D", ["x"], ["a"]),
                  ("p1", "CONV_2D", ["a"], ["b"]),
                  ("p2", "CONV_2D", ["b"], ["c"]),
                  ("side", "CONV_2D", ["x"], ["s"]),
                  ("join", "ADD", ["c", "s"], ["e"])], outputs=("e",))


def test_colors_follow_the_longest_path():
    assert op_colors(BRANCHES, 1) == [0, 0, 0, 0, 0]
    assert op_colors(BRANCHES, 2) == [0, 0, 0, 1, 0]
    assert op_colors(BRANCHES, 3) == [0, 0, 0, 1, 0]  # no third path: two colours


def test_colors_forbid_reuse_across_parallel_branches():
    instance = lifetimes(BRANCHES)
    # Without colours, side (op 3) reuses b's block, freed by p2 (op 2; c took a's) ...
    plain = storage_of(instance, match_range=1)
    assert plain["c"] == plain["a"] and plain["s"] == plain["b"]
    # ... but p2 is on the long path (colour 0) and side is not (colour 1).
    colored = storage_of(instance, match_range=1, colors=2)
    assert colored["s"] not in {colored[name] for name in ("x", "a", "b", "c")}
    for problem in PROBLEMS:
        result = solve(instance, "mxnet", problem, colors=2)
        assert result.valid and result.objective >= solve(instance, "mxnet", problem).objective


def test_offsets_are_stacked_blocks_with_alignment():
    instance = lifetimes(CHAIN).with_alignment(64)
    result = solve(instance, "mxnet", Problem.OFFSETS, inplace=True)
    assert result.valid
    offsets = dict(zip([r.id for r in instance.records], result.solution.offsets))
    assert offsets == {"x": 0, "a": 64, "b": 64, "c": 0}  # block 0: 10 bytes rounded to 64
    assert result.objective == 192


@pytest.mark.parametrize("problem", PROBLEMS)
def test_exact_methods_start_from_the_in_place_reuse(problem, monkeypatch):
    """``mxnet`` is the one heuristic that honours in-place pairs, so the exact methods' warm
    start includes it when the instance has pairs: on the chain the pair-blind heuristics
    need 200 bytes (a and b both live at relu), MXNet's reuse 112, the optimum. A MILP too
    large to build returns its warm start, so it shows which one that was."""
    from optplan.exact import milp
    monkeypatch.setattr(milp, "MODEL_TERMS_LIMIT", 0)
    result = solve(lifetimes(CHAIN), "milp_highs", problem, inplace=True, time_limit=30)
    assert result.valid and result.objective == 112
    assert result.info["warm_start"] == "mxnet"
    assert result.info["warm_start_candidates"]["greedy_by_size"] >= 200
    # Without the pairs the pair-blind list is the warm start: MXNet's reuse is not tried.
    plain = solve(lifetimes(CHAIN), "milp_highs", problem, time_limit=30)
    assert plain.valid and "mxnet" not in plain.info["warm_start_candidates"]


def test_missing_graph_is_an_input_error():
    with pytest.raises(InputError, match="mxnet needs the network graph") as error:
        solve(Instance.from_tuples([(0, 1, 8)]), "mxnet", Problem.OFFSETS)
    assert error.value.field == "graph"


def test_records_that_are_not_the_graphs_lifetimes_are_refused():
    instance = lifetimes(CHAIN)
    records = list(instance.records)
    records[0] = type(records[0])(records[0].id, 0, 2, records[0].size)
    changed = Instance(tuple(records), provenance=instance.provenance)
    with pytest.raises(InputError, match="not a tensor lifetime") as error:
        solve(changed, "mxnet", Problem.SHARED_OBJECTS)
    assert error.value.field == "graph"


@pytest.mark.parametrize("params, field", [({"match_range": -1}, "match_range"),
                                           ({"match_range": 2.5}, "match_range"),
                                           ({"colors": 0}, "colors")])
def test_bad_parameters(params, field):
    with pytest.raises(InputError) as error:
        solve(lifetimes(CHAIN), "mxnet", Problem.OFFSETS, **params)
    assert error.value.field == field


@pytest.mark.parametrize("name", ["mobilenet_v1_fused_tflite_224", "squeezenet_raw_onnx_224",
                                  "bert_base_raw_torch_seq128"])
@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("inplace", [False, True])
def test_committed_networks(name, problem, inplace):
    instance = instances.load(name)
    result = solve(instance, "mxnet", problem, inplace=inplace)
    assert result.valid, result.violations
    assert result.objective >= result.lower_bound
    one = solve(instance, "mxnet", problem, inplace=inplace, match_range=1)
    assert result.objective <= one.objective  # the sweep includes match range 1


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["random_dag", "chain_skip", "transformer"]),
       count=st.integers(1, 30), seed=st.integers(0, 1000),
       match_range=st.sampled_from([None, 1, 4]), colors=st.integers(1, 3),
       inplace=st.booleans(), views=st.sampled_from(["copy", "alias"]))
def test_generated_graphs_are_planned_validly(kind, count, seed, match_range, colors, inplace,
                                              views):
    instance = lifetimes(generate_graph(kind, count, seed=seed), views=views)
    for problem in PROBLEMS:
        result = solve(instance, "mxnet", problem, inplace=inplace, match_range=match_range,
                       colors=colors)
        assert result.valid, result.violations
        assert result.objective >= result.lower_bound


# --- NNTrainer's in-place mode --------------------------------------------------------------

# conv, relu, relu, batch-norm, tanh, reshape, relu, add (every op declares a pair).
NNTRAINER = graph({"x": 64, "a": 64, "b": 64, "c": 64, "d": 64, "e": 64, "f": 64, "g": 64,
                   "h": 64},
                  [("conv", "CONV_2D", ["x"], ["a"]),
                   ("relu1", "RELU", ["a"], ["b"], [("a", "b")]),
                   ("relu2", "RELU", ["b"], ["c"], [("b", "c")]),
                   ("bn", "BATCH_NORM", ["c"], ["d"], [("c", "d")]),
                   ("tanh", "TANH", ["d"], ["e"], [("d", "e")]),
                   ("flatten", "RESHAPE", ["e"], ["f"], [("e", "f")]),
                   ("relu3", "RELU", ["f"], ["g"], [("f", "g")]),
                   ("add", "ADD", ["g", "x"], ["h"], [("g", "h")])], outputs=("h",))


def test_nntrainer_modes():
    none, free, restricting = (InPlaceMode.NONE, InPlaceMode.NON_RESTRICTING,
                               InPlaceMode.RESTRICTING)
    # relu2 follows an in-place relu; relu3 follows a reshape that inherits tanh's restriction.
    assert inplace_modes(NNTRAINER) == [none, restricting, none, free, restricting,
                                        restricting, none, none]


def test_nntrainer_keeps_only_its_pairs():
    kept = {op.name: op.inplace for op in nntrainer_inplace(NNTRAINER).ops if op.inplace}
    assert kept == {"relu1": (("a", "b"),), "bn": (("c", "d"),), "tanh": (("d", "e"),),
                    "flatten": (("e", "f"),)}


def test_nntrainer_fan_out_counts_as_multiout():
    # a is read by the relu and by the add (NNTrainer puts a MultiOut layer there).
    kept = nntrainer_inplace(DIAMOND)
    assert all(not op.inplace for op in kept.ops)


def test_nntrainer_instance_runs_any_planner():
    instance = nntrainer_inplace_instance(NNTRAINER)
    pairs = {(instance.records[a].id, instance.records[b].id) for a, b in instance.inplace_pairs}
    assert pairs == {("a", "b"), ("c", "d"), ("d", "e"), ("e", "f")}
    for method in ("mxnet", "greedy_by_size"):
        for problem in PROBLEMS:
            assert solve(instance, method, problem, inplace=True).valid
    blocks = storage_of(instance, inplace=True)
    assert blocks["a"] == blocks["b"] and blocks["b"] != blocks["c"]
    assert blocks["c"] == blocks["d"] == blocks["e"] == blocks["f"]


def test_nntrainer_instance_from_a_committed_network():
    instance = instances.load("mobilenet_v2_raw_keras_224")
    nntrainer = nntrainer_inplace_instance(instance)
    assert nntrainer.records == instance.records
    assert set(nntrainer.inplace_pairs) < set(instance.inplace_pairs)
    for problem in PROBLEMS:
        full = solve(instance, "mxnet", problem, inplace=True)
        restricted = solve(nntrainer, "mxnet", problem, inplace=True)
        assert restricted.valid and restricted.objective >= restricted.lower_bound
        assert restricted.lower_bound >= full.lower_bound


def test_nntrainer_instance_needs_a_graph():
    with pytest.raises(InputError) as error:
        nntrainer_inplace_instance(Instance.from_tuples([(0, 1, 8)]))
    assert error.value.field == "graph"
