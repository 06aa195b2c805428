"""Importers: ONNX (the onnx wheel's zoo graphs) and TFLite (a flatbuffer built here; the
MediaPipe models when the wheel cache holds them). Each test carries its extra's marker and
skips cleanly without it; the missing-extra error itself is a core test."""

import math

import pytest

from optplan.errors import InputError
from optplan.formats.instance_json import read_json_instance
from optplan.graph import fuse, lifetimes
from optplan.importers import MissingExtraError, require

# --- core: the error a missing extra gives ------------------------------------------------------


def test_missing_extra_names_the_package_to_install():
    with pytest.raises(MissingExtraError, match=r"pip install 'optplan\[tflite\]'"):
        require("optplan_no_such_module", "tflite")
    assert issubclass(MissingExtraError, ImportError)


# --- ONNX ---------------------------------------------------------------------------------------

LIGHT = "package:onnx/backend/test/data/light/light_{}.onnx"


@pytest.fixture
def onnx_resnet50():
    pytest.importorskip("onnx")
    from optplan.importers.onnx import import_onnx
    from optplan.importers.sources import resolve_source
    return import_onnx(resolve_source(LIGHT.format("resnet50")))


@pytest.mark.onnx
def test_onnx_resnet50_raw_and_fused(onnx_resnet50):
    graph = onnx_resnet50
    counts = graph.op_type_counts()
    assert counts["CONV_2D"] == 53 and counts["BATCH_NORM"] == 53 and counts["ADD"] == 16
    assert graph.num_ops == 176          # ConstantOfShape weight builders are folded away
    assert graph.tensors[graph.inputs[0]].shape == (1, 3, 224, 224)
    conv = graph.ops[0]
    assert conv.attributes["kernel"] == [7, 7] and conv.attributes["stride"] == [2, 2]
    assert conv.weights[0].shape == (64, 3, 7, 7) and conv.weights[0].bytes == 64 * 147 * 4
    fused = fuse(graph)
    assert fused.num_ops == 74
    assert fused.op_type_counts() == {"CONV_2D": 53, "ADD": 16, "MAX_POOL_2D": 1,
                                      "AVERAGE_POOL_2D": 1, "RESHAPE": 1,
                                      "FULLY_CONNECTED": 1, "SOFTMAX": 1}
    sizes = {r.id: r.size for r in lifetimes(fused).records}
    assert sizes[graph.inputs[0]] == 3 * 224 * 224 * 4
    assert sizes[graph.outputs[0]] == 1000 * 4


@pytest.mark.onnx
def test_onnx_malformed_file_is_an_input_error(tmp_path):
    pytest.importorskip("onnx")
    from optplan.importers.onnx import import_onnx
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not a protobuf model")
    with pytest.raises(InputError, match="bad.onnx"):
        import_onnx(bad)


@pytest.mark.onnx
@pytest.mark.parametrize("name", ["resnet50_fused_onnx_224", "alexnet_raw_onnx_224"])
def test_committed_onnx_instances_regenerate_identically(name):
    pytest.importorskip("onnx")
    import shlex

    from optplan import instances
    from optplan.importers.build import network_instance
    committed = instances.load(name)
    words = shlex.split(committed.provenance["command"])
    options = dict(zip(words[4::2], words[5::2]))
    again = network_instance(words[2], words[3], network=options["--network"],
                             variant=options["--variant"])
    assert again.provenance["content_sha256"] == committed.provenance["content_sha256"]


# --- TFLite: a flatbuffer built by hand ---------------------------------------------------------

def _tiny_tflite_model() -> bytes:
    """input[1,8,8,3] -CONV_2D(w, b fp32)-> c[1,8,8,4] -ADD(bias fp16 via DEQUANTIZE)-> a
    -RELU-> r -RESHAPE-> out[1,256]. Field slots follow tensorflow/lite/schema/schema.fbs."""
    import flatbuffers
    import numpy as np

    builder = flatbuffers.Builder(1024)

    def int_vector(values):
        builder.StartVector(4, len(values), 4)
        for value in reversed(values):
            builder.PrependInt32(value)
        return builder.EndVector()

    def table(fields):
        builder.StartObject(8)
        for slot, kind, value in fields:
            getattr(builder, f"Prepend{kind}Slot")(slot, value, 0)
        return builder.EndObject()

    weight = np.ones((4, 1, 1, 3), np.float32).tobytes()
    bias16 = np.ones(4, np.float16).tobytes()
    buffers = []
    for data in (b"", weight, bias16, np.array([1, 256], np.int32).tobytes(),
                 np.zeros(4, np.float32).tobytes()):
        vector = builder.CreateByteVector(data) if data else None
        buffers.append(table([(0, "UOffsetTRelative", vector)] if data else []))
    # tensors: (name, shape, type, buffer)
    specs = [("input", [1, 8, 8, 3], 0, 0), ("w", [4, 1, 1, 3], 0, 1), ("c", [1, 8, 8, 4], 0, 0),
             ("bias16", [4], 1, 2), ("bias", [4], 0, 0), ("a", [1, 8, 8, 4], 0, 0),
             ("r", [1, 8, 8, 4], 0, 0), ("shape", [2], 2, 3), ("out", [1, 256], 0, 0),
             ("b", [4], 0, 4)]
    tensors = []
    for name, shape, kind, buffer in specs:
        name_offset = builder.CreateString(name)
        shape_offset = int_vector(shape)
        tensors.append(table([(0, "UOffsetTRelative", shape_offset), (1, "Int8", kind),
                              (2, "Uint32", buffer), (3, "UOffsetTRelative", name_offset)]))
    codes = [table([(0, "Int8", code), (2, "Int32", 1), (3, "Int32", code)])
             for code in (3, 6, 0, 19, 22)]        # CONV_2D, DEQUANTIZE, ADD, RELU, RESHAPE
    # operators: (opcode index, inputs, outputs), deliberately DEQUANTIZE second
    # Conv2DOptions: padding SAME (0), stride 1x1, no fused activation, dilation 1x1
    conv_options = table([(1, "Int32", 1), (2, "Int32", 1), (4, "Int32", 1), (5, "Int32", 1)])
    operators = []
    for code, inputs, outputs in [(0, [0, 1, 9], [2]), (1, [3], [4]), (2, [2, 4], [5]),
                                  (3, [5], [6]), (4, [6, 7], [8])]:
        inputs_offset, outputs_offset = int_vector(inputs), int_vector(outputs)
        options = [(3, "Uint8", 1), (4, "UOffsetTRelative", conv_options)] if code == 0 else []
        operators.append(table([(0, "Uint32", code), (1, "UOffsetTRelative", inputs_offset),
                                (2, "UOffsetTRelative", outputs_offset)] + options))

    def offsets(items):
        builder.StartVector(4, len(items), 4)
        for item in reversed(items):
            builder.PrependUOffsetTRelative(item)
        return builder.EndVector()

    subgraph = table([(0, "UOffsetTRelative", offsets(tensors)),
                      (1, "UOffsetTRelative", int_vector([0])),
                      (2, "UOffsetTRelative", int_vector([8])),
                      (3, "UOffsetTRelative", offsets(operators))])
    model = table([(0, "Uint32", 3), (1, "UOffsetTRelative", offsets(codes)),
                   (2, "UOffsetTRelative", offsets([subgraph])),
                   (4, "UOffsetTRelative", offsets(buffers))])
    builder.Finish(model, file_identifier=b"TFL3")
    return bytes(builder.Output())


@pytest.fixture
def tiny_graph():
    pytest.importorskip("tflite")
    from optplan.importers.tflite import import_tflite_bytes
    return import_tflite_bytes(_tiny_tflite_model(), name="tiny")


@pytest.mark.tflite
def test_tflite_op_order_weights_and_load_time_dequantize(tiny_graph):
    graph = tiny_graph
    assert [op.type for op in graph.ops] == ["CONV_2D", "ADD", "RELU", "RESHAPE"]
    conv, add, relu, reshape = graph.ops
    assert [w.name for w in conv.weights] == ["w", "b"] and conv.weights[0].bytes == 48
    assert conv.attributes == {"stride": [1, 1], "padding": "SAME", "kernel": [1, 1]}
    # the fp16 bias is expanded by DEQUANTIZE once, at load time: a float32 weight of ADD
    assert add.inputs == ("c",) and [(w.name, w.dtype, w.bytes) for w in add.weights] == \
        [("bias", "float32", 16)]
    assert reshape.inputs == ("r",) and reshape.weights[0].dtype == "int32"
    assert graph.inputs == ("input",) and graph.outputs == ("out",)


@pytest.mark.tflite
def test_tflite_lifetimes_of_the_tiny_model(tiny_graph):
    instance = lifetimes(tiny_graph)
    assert {r.id: (r.first_op, r.last_op, r.size) for r in instance.records} == {
        "input": (0, 0, 8 * 8 * 3 * 4), "c": (0, 1, 256 * 4), "a": (1, 2, 256 * 4),
        "r": (2, 3, 256 * 4), "out": (3, 3, 256 * 4)}
    ids = [r.id for r in instance.records]
    assert [(ids[a], ids[b]) for a, b in instance.inplace_pairs] == [("c", "a"), ("a", "r"),
                                                                     ("r", "out")]


@pytest.mark.tflite
def test_tflite_garbage_is_an_input_error():
    pytest.importorskip("tflite")
    from optplan.importers.tflite import import_tflite_bytes
    with pytest.raises(InputError, match="garbage"):
        import_tflite_bytes(b"\x00" * 3, name="garbage")


# --- TFLite: the real MediaPipe models, when the wheel is cached --------------------------------

BLAZEFACE = "mediapipe/modules/face_detection/face_detection_short_range.tflite"


@pytest.fixture
def blazeface_path(mediapipe_file):
    pytest.importorskip("tflite")
    return mediapipe_file(BLAZEFACE)


@pytest.mark.tflite
def test_blazeface_matches_its_committed_instance(blazeface_path):
    from optplan import instances
    from optplan.importers.tflite import import_tflite
    graph = import_tflite(blazeface_path)
    committed = instances.load("blazeface_fused_tflite_128")
    assert graph.num_ops == 90      # 164 stored operators minus 74 fp16 DEQUANTIZEs
    assert lifetimes(graph).records == committed.records


def _assert_agrees_with_interpreter(graph, **model):
    """Op order and output sizes as TFLite's own interpreter (ai-edge-litert, no default
    delegate) reports them, constant-input DEQUANTIZEs aside."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    interpreter = litert.Interpreter(
        **model,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    details = {d["index"]: d for d in interpreter.get_tensor_details()}
    executed = [op for op in interpreter._get_ops_details() if op["op_name"] != "DEQUANTIZE"]
    assert [op["op_name"] for op in executed] == [op.type for op in graph.ops]
    for op, reference in zip(graph.ops, executed):
        sizes = [math.prod(details[i]["shape"]) * details[i]["dtype"]().itemsize
                 for i in reference["outputs"]]
        assert sizes == [graph.tensors[name].bytes for name in op.outputs]


@pytest.mark.tflite
def test_tiny_model_agrees_with_the_tflite_interpreter(tiny_graph):
    _assert_agrees_with_interpreter(tiny_graph, model_content=_tiny_tflite_model())


@pytest.mark.tflite
def test_blazeface_agrees_with_the_tflite_interpreter(blazeface_path):
    from optplan.importers.tflite import import_tflite
    _assert_agrees_with_interpreter(import_tflite(blazeface_path),
                                    model_path=str(blazeface_path))


@pytest.mark.onnx
def test_import_command_writes_the_committed_file(tmp_path, capsys):
    pytest.importorskip("onnx")
    from optplan import instances
    from optplan.cli import main
    out = tmp_path / "alexnet.json"
    assert main(["import", "onnx", LIGHT.format("bvlc_alexnet"), "--network", "alexnet",
                 "--variant", "raw", "--out", str(out)]) == 0
    assert "24 ops, 25 tensors" in capsys.readouterr().out
    written = read_json_instance(out)
    assert written == instances.load("alexnet_raw_onnx_224")
    assert main(["import", "tflite", LIGHT.format("bvlc_alexnet"), "--network", "x"]) == 2
    assert "cannot parse TFLite flatbuffer" in capsys.readouterr().err
