"""Plans inside real runtimes: ExecuTorch (extra ``executorch``) and TensorFlow Lite Micro
(extra ``tflm``), end to end on small models, and the refusal of overlapping plans.

``make test`` installs both runtimes; without them the runtime tests skip. The shared step
(:mod:`optplan.runtimes.plan`) and TFLM's planner replica are tested without any runtime.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from optplan import Instance, OffsetsSolution, register
from optplan.cli import main
from optplan.runtimes.plan import PlanRefusedError, checked_plan, plan_offsets


@register("runtimes_test_overlap", "offsets",
          reference="test plugin: every tensor at offset 0 (overlapping)")
def _all_at_zero(instance):
    return OffsetsSolution.from_offsets(instance, [0] * len(instance))


@register("runtimes_test_stack", "offsets", reference="test plugin: tensors end to end")
def _stacked(instance):
    return OffsetsSolution.from_offsets(instance, np.cumsum([0, *instance.sizes[:-1]]))


# Two short tensors side by side, one long tensor above both: optimum 48, breadth 48.
STAIRS = Instance.from_tuples([(0, 1, 16), (2, 3, 16), (0, 3, 32)], name="stairs",
                              alignment=16)


# --- the shared planning step, no runtime ---------------------------------------------------

def test_overlapping_plan_is_refused_with_one_line():
    with pytest.raises(PlanRefusedError) as caught:
        checked_plan(STAIRS, [0, 0, 0], planner="someone")
    message = str(caught.value)
    assert "\n" not in message and "someone's plan is refused" in message
    assert "overlap" in message


def test_method_plan_that_overlaps_is_refused_not_handed_over():
    with pytest.raises(PlanRefusedError, match="runtimes_test_overlap's plan is refused"):
        plan_offsets(STAIRS, [0, 0, 16], method="runtimes_test_overlap", runtime="runtime")


def test_runtime_plan_that_overlaps_means_wrong_lifetimes():
    with pytest.raises(PlanRefusedError, match="runtime's plan is refused"):
        plan_offsets(STAIRS, [0, 0, 0], method="search", runtime="runtime")


def test_optimal_plan_replaces_a_larger_runtime_plan():
    planned = plan_offsets(STAIRS, [0, 16, 32], method="search", runtime="runtime",
                           time_limit=5, workers=1)
    assert planned.source == "optplan"
    assert planned.arena_size == 48 < planned.runtime_solution.arena_size == 64
    assert planned.result.status.value == "OPTIMAL"


def test_runtime_plan_is_kept_when_optplan_is_not_smaller(caplog):
    planned = plan_offsets(STAIRS, [0, 0, 16], method="runtimes_test_stack", runtime="runtime")
    assert planned.source == "runtime" and planned.solution.offsets == (0, 0, 16)
    assert "keeping runtime's" in caplog.text


def test_executorch_storage_backed_specs_stay_inside_their_base():
    """A spec backed by another spec's storage (an in-place result, a chained view) sits at
    its root's offset plus each link's storage_base_offset, in its root's mem_obj_id group;
    zero-byte specs sit at the pool's start."""
    from optplan.runtimes.executorch import MemoryPool, _placements

    class Spec:         # hashable by identity, like ExecuTorch's TensorSpec
        def __init__(self, base, offset):
            self.storage_base, self.storage_base_offset = base, offset

    def spec(base=None, offset=0):
        return Spec(base, offset)

    root_a, root_b, empty = spec(), spec(), spec()
    child = spec(root_a, 16)
    grandchild = spec(child, 32)
    pool = MemoryPool(1, Instance.from_tuples([(0, 3, 64), (4, 5, 32)], alignment=16),
                      (root_a, root_b), base=128, empty=(empty,))
    placed = _placements(pool, (0, 0), [root_a, child, grandchild, root_b, empty])
    assert placed[root_a] == placed[root_b] == (128, 0)       # time-disjoint, one address group
    assert placed[child] == (144, 0) and placed[grandchild] == (176, 0)
    assert placed[empty] == (128, 1)


# --- TFLM's greedy planner and lifetimes, no runtime ------------------------------------------

def test_tflm_greedy_ties_go_last_added_first():
    from optplan.runtimes.tflite_micro import tflm_greedy

    instance = Instance.from_tuples([(0, 2, 32), (1, 3, 32), (3, 4, 16), (2, 2, 16)],
                                    alignment=16)
    offsets = tflm_greedy(instance)
    assert offsets[1] == 0 and offsets[0] == 32      # record 1 was added last of the 32s
    assert offsets[3] == 64                          # live with both 32-byte records
    assert offsets[2] == 32                          # live with record 1 only: above it
    assert checked_plan(instance, offsets, planner="tflm").arena_size == 80


def test_tflm_greedy_takes_the_first_gap_below():
    from optplan.runtimes.tflite_micro import tflm_greedy

    # The second 32-byte record is placed first (ties: last added first), at 0; the first one
    # overlaps it in time and goes above; the 16-byte record is live only with the upper one,
    # so it fits the gap below it.
    instance = Instance.from_tuples([(1, 2, 32), (0, 1, 32), (2, 2, 16)], alignment=16)
    assert tflm_greedy(instance) == (32, 0, 0)


# --- TFLM end to end on hand-built models -------------------------------------------------------

needs_tflm = pytest.mark.skipif(importlib.util.find_spec("tflite_micro") is None,
                                reason="tflite-micro is not installed")


def _tflite_model(ops, tensors, inputs, outputs, constants=None):
    """A one-subgraph .tflite model built with TFLM's schema object API.

    ``tensors``: name → (shape, type code); ``ops``: (builtin or "custom:NAME", inputs,
    outputs[, options]) with options ``{"axis": 1}`` for CONCATENATION; ``constants``: name →
    numpy array stored in a buffer.
    """
    from flatbuffers import Builder

    from optplan.runtimes.tflite_micro import _schema

    schema = _schema()
    constants = constants or {}
    names = list(tensors)
    model = schema.ModelT()
    model.version = 3
    model.buffers = [schema.BufferT()]
    subgraph = schema.SubGraphT()
    subgraph.tensors = []
    for name in names:
        tensor = schema.TensorT()
        tensor.name = name
        tensor.shape, tensor.type = list(tensors[name][0]), tensors[name][1]
        tensor.buffer = 0
        if name in constants:
            buffer = schema.BufferT()
            buffer.data = np.frombuffer(constants[name].tobytes(), dtype=np.uint8)
            model.buffers.append(buffer)
            tensor.buffer = len(model.buffers) - 1
        subgraph.tensors.append(tensor)
    codes, model.operatorCodes, subgraph.operators = {}, [], []
    for kind, op_inputs, op_outputs, *options in ops:
        if kind not in codes:
            code = schema.OperatorCodeT()
            if isinstance(kind, str):
                code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
                code.customCode = kind.split(":", 1)[1]
            else:
                code.builtinCode, code.deprecatedBuiltinCode = kind, min(kind, 127)
            codes[kind] = len(model.operatorCodes)
            model.operatorCodes.append(code)
        op = schema.OperatorT()
        op.opcodeIndex = codes[kind]
        op.inputs = [names.index(n) for n in op_inputs]
        op.outputs = [names.index(n) for n in op_outputs]
        if options:
            op.builtinOptionsType = schema.BuiltinOptions.ConcatenationOptions
            op.builtinOptions = schema.ConcatenationOptionsT()
            op.builtinOptions.axis = options[0]["axis"]
        subgraph.operators.append(op)
    subgraph.inputs = [names.index(n) for n in inputs]
    subgraph.outputs = [names.index(n) for n in outputs]
    model.subgraphs = [subgraph]
    builder = Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


ADD, CONCATENATION, DEQUANTIZE, RELU, DENSIFY = 0, 2, 6, 19, 124
F32, F16 = 0, 1


@pytest.fixture
def small_tflite(tmp_path):
    """x[1,64] -ADD(x, w16→w)-> a -RELU-> r ; CONCATENATION(a, r) -> y[1,128] ; y -RELU-> out.

    ``w`` comes from an fp16 constant through a constant DEQUANTIZE (folded before TFLM)."""
    weights = np.linspace(-1, 1, 64, dtype=np.float16).reshape(1, 64)
    data = _tflite_model(
        [(DEQUANTIZE, ["w16"], ["w"]), (ADD, ["x", "w"], ["a"]), (RELU, ["a"], ["r"]),
         (CONCATENATION, ["a", "r"], ["y"], {"axis": 1}), (RELU, ["y"], ["out"])],
        {"x": ([1, 64], F32), "w16": ([1, 64], F16), "w": ([1, 64], F32),
         "a": ([1, 64], F32), "r": ([1, 64], F32), "y": ([1, 128], F32),
         "out": ([1, 128], F32)},
        ["x"], ["out"], {"w16": weights})
    path = tmp_path / "small.tflite"
    path.write_bytes(data)
    return path


@needs_tflm
def test_tflm_lifetimes_follow_tflm(small_tflite):
    from optplan.runtimes.tflite_micro import (fold_constant_dequantize, load_model,
                                               tflm_records)

    model = load_model(small_tflite)
    assert fold_constant_dequantize(model) == 1
    instance, indices = tflm_records(model)
    by_tensor = {model.subgraph.tensors[i].name: r for i, r in zip(indices, instance.records)}
    name = {k.decode() if isinstance(k, bytes) else k: v for k, v in by_tensor.items()}
    # ops after folding: 1 ADD, 2 RELU, 3 CONCATENATION, 4 RELU
    assert (name["x"].first_op, name["x"].last_op) == (0, 1)          # input from step 0
    assert (name["a"].first_op, name["a"].last_op) == (1, 3)
    assert (name["r"].first_op, name["r"].last_op) == (2, 3)
    assert (name["y"].first_op, name["y"].last_op) == (3, 4)
    assert (name["out"].first_op, name["out"].last_op) == (4, 4)      # output to the end
    assert set(name) == {"x", "a", "r", "y", "out"}                   # constants not planned
    assert all(r.size % 16 == 0 for r in instance.records)


@needs_tflm
def test_tflm_runs_the_offline_plan_and_its_head_is_the_plan(small_tflite, tmp_path):
    """TFLM reads the metadata: a stacked (valid, wasteful) plan makes its head that big."""
    from optplan.runtimes.tflite_micro import (fold_constant_dequantize, load_model, run_model,
                                               tflm_greedy, tflm_records, with_offline_plan)

    model = load_model(small_tflite)
    fold_constant_dequantize(model)
    instance, indices = tflm_records(model)
    plain = model.to_bytes()
    inputs = [[np.random.default_rng(seed).standard_normal((1, 64)).astype(np.float32)]
              for seed in range(3)]
    own = run_model(plain, inputs, arena_size=1 << 20)
    assert own.head_bytes == max(o + r.size for o, r in
                                 zip(tflm_greedy(instance), instance.records))
    stacked = np.cumsum([0, *instance.sizes[:-1]]).tolist()
    with_offline_plan(model, instance, indices, stacked)
    planned = run_model(model.to_bytes(), inputs, arena_size=1 << 20)
    assert planned.head_bytes == int(instance.sizes.sum()) > own.head_bytes
    for ours, theirs in zip(planned.outputs, own.outputs):
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    expected = np.maximum(np.concatenate([inputs[0][0] + np.linspace(-1, 1, 64,
                                                                     dtype=np.float16)] * 2,
                                         axis=1), 0)
    assert np.allclose(own.outputs[0][0], expected)


@needs_tflm
def test_write_offline_plan_metadata_format(small_tflite, tmp_path):
    """int32 [0 (version), 0 (subgraph), number of tensors, offset per tensor]: an offset for
    every tensor TFLM would plan, -1 for the constants."""
    from optplan.runtimes.tflite_micro import METADATA_NAME, load_model, write_offline_plan

    out = tmp_path / "planned.tflite"
    planned = write_offline_plan(small_tflite, out, method="search", time_limit=5, workers=1)
    model = load_model(out)
    [entry] = [m for m in model.model.metadata
               if (m.name.decode() if isinstance(m.name, bytes) else m.name) == METADATA_NAME]
    table = np.frombuffer(np.asarray(model.model.buffers[entry.buffer].data,
                                     dtype=np.uint8).tobytes(), dtype="<i4")
    names = [t.name.decode() if isinstance(t.name, bytes) else t.name
             for t in model.subgraph.tensors]
    assert table[:3].tolist() == [0, 0, len(names)] and len(table) == 3 + len(names)
    offsets = dict(zip(names, table[3:].tolist()))
    assert offsets["w16"] == offsets["w"] == -1                 # constants: TFLM's own
    planned_names = [n for n in names if n not in ("w16", "w")]
    assert [offsets[n] for n in planned_names] == list(planned.solution.offsets)
    assert planned.source == "optplan" and planned.result.status.value == "OPTIMAL"


@needs_tflm
def test_tflm_command_json_keys_and_written_plan(small_tflite, tmp_path, capsys):
    from optplan.runtimes.tflite_micro import METADATA_NAME, load_model

    out = tmp_path / "planned.tflite"
    assert main(["tflm", str(small_tflite), "--method", "search", "--time-limit", "5",
                 "--workers", "1", "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    summary = json.loads(printed[0])
    assert list(summary) == ["network", "runtime", "runtime_planner_bytes", "optplan_bytes",
                             "lower_bound", "status", "outputs_equal", "max_abs_diff"]
    assert summary["network"] == "small" and summary["runtime"] == "tflm"
    assert summary["lower_bound"] <= summary["optplan_bytes"] <= summary["runtime_planner_bytes"]
    assert summary["status"] == "OPTIMAL" and summary["outputs_equal"] is True
    written = load_model(out)
    names = [m.name.decode() if isinstance(m.name, bytes) else m.name
             for m in written.model.metadata]
    assert names.count(METADATA_NAME) == 1


@needs_tflm
def test_tflm_overlapping_plan_is_refused_before_tflm(small_tflite, tmp_path, capsys):
    out = tmp_path / "planned.tflite"
    assert main(["tflm", str(small_tflite), "--method", "runtimes_test_overlap",
                 "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "runtimes_test_overlap's plan is refused" in error
    assert not out.exists()


@needs_tflm
@pytest.mark.parametrize("kind, named", [(DENSIFY, "op DENSIFY"),
                                         ("custom:MyOp", "op CUSTOM:MyOp")])
def test_tflm_cannot_run_op_is_one_line(kind, named, tmp_path, capsys):
    data = _tflite_model([(kind, ["x"], ["y"])], {"x": ([4], F32), "y": ([4], F32)},
                         ["x"], ["y"])
    path = tmp_path / "unsupported.tflite"
    path.write_bytes(data)
    assert main(["tflm", str(path), "--out", str(tmp_path / "o.tflite")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and named in error and "unsupported.tflite" in error


def test_tflm_not_a_model_is_one_line(tmp_path, capsys):
    pytest.importorskip("tflite_micro")
    path = tmp_path / "garbage.tflite"
    path.write_bytes(b"not a flatbuffer")
    assert main(["tflm", str(path), "--out", str(tmp_path / "o.tflite")]) == 2
    assert "garbage.tflite: model: not a TFLite flatbuffer" in capsys.readouterr().err


@needs_tflm
def test_mediapipe_model_in_tflm(mediapipe_model):
    """A shipped MediaPipe model: TFLM's own head equals our replica on our lifetimes (else
    compare raises), the plan is never larger, the outputs are bit-identical."""
    from optplan.runtimes.tflite_micro import compare

    comparison = compare(mediapipe_model, method="search", time_limit=30, workers=1)
    assert comparison.lower_bound <= comparison.optplan_bytes \
        <= comparison.runtime_planner_bytes
    assert comparison.outputs_equal and comparison.max_abs_diff == 0.0


@pytest.fixture
def mediapipe_model(mediapipe_file):
    return mediapipe_file("mediapipe/modules/iris_landmark/iris_landmark.tflite")


# --- ExecuTorch end to end on a small network ------------------------------------------------

needs_executorch = pytest.mark.skipif(importlib.util.find_spec("executorch") is None,
                                      reason="executorch is not installed")


def _small_network():
    import torch

    class Small(torch.nn.Module):
        """Two branches whose outputs are live together, a residual add and a classifier."""

        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.left = torch.nn.Conv2d(8, 16, 1)
            self.right = torch.nn.Conv2d(8, 16, 3, padding=1)
            self.head = torch.nn.Linear(16 * 8 * 8, 10)

        def forward(self, x):
            x = torch.relu(self.stem(x))
            y = torch.relu(self.left(x)) + self.right(x)
            return self.head(torch.flatten(y, 1))

    torch.manual_seed(0)
    return Small().eval(), (torch.randn(1, 3, 8, 8),)


@pytest.fixture(scope="module")
def small_program():
    """The small network lowered with ExecuTorch's planner and with optplan's."""
    from optplan.runtimes.executorch import lower, planner

    module, example = _small_network()
    algo = planner("search", time_limit=10, workers=1)
    return module, example, lower(module, example), lower(module, example, algo), algo


@needs_executorch
def test_executorch_plan_is_validated_optimal_and_never_larger(small_program):
    from optplan.runtimes.executorch import planned_bytes

    _, _, theirs, ours, algo = small_program
    [(pool, planned)] = algo.plans
    assert pool.mem_id == 1 and pool.instance.alignment == 16
    assert planned.result.valid and planned.result.status.value == "OPTIMAL"
    assert planned_bytes(ours) == planned.arena_size <= planned_bytes(theirs)
    assert planned.arena_size == planned.result.lower_bound or planned.source != "optplan"


@needs_executorch
def test_executorch_own_verifier_accepts_the_plan(small_program):
    """ExecuTorch's Verifier: no two specs live together share bytes, and mem_obj_id agrees
    with storage sharing."""
    from executorch.exir.memory_planning import Verifier

    program = small_program[3].exported_program()
    verifier = Verifier(program.graph_module, True, True, True, program.graph_signature)
    verifier.verify_storage_reuse()


@needs_executorch
def test_executorch_runtime_outputs_equal(small_program):
    import torch

    from optplan.runtimes.executorch import run_program

    module, example, theirs, ours, _ = small_program
    inputs = [(torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(s)),)
              for s in range(3)]
    with torch.no_grad():
        eager = [module(*args) for args in inputs]
    for a, b, reference in zip(run_program(ours.buffer, inputs),
                               run_program(theirs.buffer, inputs), eager):
        assert torch.equal(a[0], b[0])
        assert torch.allclose(a[0], reference, atol=1e-5)


@needs_executorch
def test_executorch_overlapping_plan_is_refused_before_the_runtime():
    from optplan.runtimes.executorch import lower, planner

    module, example = _small_network()
    with pytest.raises(PlanRefusedError, match="runtimes_test_overlap's plan is refused"):
        lower(module, example, planner("runtimes_test_overlap"))


@needs_executorch
def test_executorch_command_json(monkeypatch, tmp_path, capsys):
    from optplan.torch import models

    def inference(seed=0):
        return _small_network()

    spec = models.ModelSpec("small", "8", inference, inference, "test network")
    monkeypatch.setitem(models.MODELS, "small", spec)
    out = tmp_path / "program.pte"
    assert main(["executorch", "small", "--method", "search", "--time-limit", "5",
                 "--workers", "1", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert list(summary) == ["network", "runtime", "runtime_planner_bytes", "optplan_bytes",
                             "lower_bound", "status", "outputs_equal", "max_abs_diff"]
    assert summary["network"] == "small" and summary["runtime"] == "executorch"
    assert summary["lower_bound"] <= summary["optplan_bytes"] <= summary["runtime_planner_bytes"]
    assert summary["outputs_equal"] is True and summary["max_abs_diff"] == 0.0
    assert out.stat().st_size > 0


def test_executorch_command_bad_input_exit_2(tmp_path, capsys):
    assert main(["executorch", "no_such_network", "--out", str(tmp_path / "p.pte")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["executorch", "gpt2", "--out", str(tmp_path / "missing" / "p.pte")]) == 2
    assert "--out: no such directory" in capsys.readouterr().err


# --- the runtimes table from committed results ------------------------------------------------

RESULTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "paper/results/runtimes"


def _rows():
    return [
        {"runtime": "tflm", "network": "small_a", "runtime_planner_bytes": 4 << 20,
         "optplan_bytes": 3 << 20, "lower_bound": 3 << 20, "status": "OPTIMAL",
         "outputs_equal": True, "max_abs_diff": 0.0, "inputs": 3},
        {"runtime": "executorch", "network": "resnet50", "runtime_planner_bytes": 2 << 20,
         "optplan_bytes": 2 << 20, "lower_bound": 1 << 20, "status": "FEASIBLE",
         "outputs_equal": False, "max_abs_diff": 0.5, "inputs": 5},
        {"runtime": "tflm", "network": "sparse", "error": "x.tflite: operators: TFLite Micro "
                                                          "cannot run op DENSIFY (operator 4)"},
    ]


def test_runtimes_table_renders_rows_savings_and_failures(tmp_path):
    from optplan.analysis import runtimes

    (tmp_path / "runtimes.jsonl").write_text("\n".join(map(json.dumps, _rows())) + "\n")
    macros = runtimes.write(tmp_path, tmp_path / "out")
    markdown = (tmp_path / "out" / "tables" / "runtimes.md").read_text()
    assert markdown.index("ResNet-50") < markdown.index("small a")      # ExecuTorch first
    assert "| 4.00 | 3.00 | 3.00 | 25.0 % | OPTIMAL | bit-identical |" in markdown
    assert "max |diff| 0.5" in markdown and "sparse (TFLite Micro: op DENSIFY)" in markdown
    latex = (tmp_path / "out" / "tables" / "runtimes.tex").read_text()
    assert r"2.00$^\dagger$" in latex and r"25.0\%" in latex and r"small\_a" not in latex
    assert macros["RuntimesTflmBestSaved"] == "25.0" and macros["RuntimesTflmFailedOps"] == \
        "DENSIFY"
    assert macros["RuntimesExecutorchIdentical"] == "0" and macros["RuntimesInputs"] == "3"
    assert r"\newcommand{\RuntimesTflmReduced}{1}" in \
        (tmp_path / "out" / "runtimes_macros.tex").read_text()


def test_runtimes_latex_drops_the_outputs_column_when_all_are_identical():
    import pandas as pd

    from optplan.analysis.runtimes import render_latex

    rows = [r for r in _rows() if r.get("outputs_equal")]
    latex = render_latex(pd.DataFrame(rows).assign(error=None))
    assert r"\begin{tabular}{lrrrr}" in latex and "outputs" not in latex.split(r"\toprule")[1]
    assert "bit-identical to the runtime's on every network" in latex and r"\small" in latex
    mixed = render_latex(pd.DataFrame(_rows()))
    assert r"\begin{tabular}{lrrrrl}" in mixed and "max |diff| 0.5" in mixed


def test_committed_runtime_results_meet_the_bar():
    """Where a runtime ran a network, optplan's plan is never larger than the runtime's own,
    never below the bound, and the outputs are identical; every failure names an op."""
    from optplan.analysis.runtimes import load_runtime_results, runtimes_table, unsupported

    results = load_runtime_results(RESULTS)
    table = runtimes_table(results)
    assert set(table["runtime"]) == {"executorch", "tflm"}
    assert (table["optplan_bytes"] <= table["runtime_planner_bytes"]).all()
    assert (table["lower_bound"] <= table["optplan_bytes"]).all()
    assert table["outputs_equal"].all()
    assert (unsupported(results)["op"] != "?").all()
    manifest = json.loads((RESULTS / "manifest.json").read_text())
    for session in manifest["sessions"]:
        assert session["runtimes"]["executorch"] and session["provenance"]["git"]["commit"]
    assert {s["settings"]["runtime"] for s in manifest["sessions"]} >= {"executorch", "tflm"}
