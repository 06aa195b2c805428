"""The committed catalogue (data/networks): files load, agree with their graphs and hashes,
and the figures `optplan instances` prints are the ones the definitions give."""

import json
import shlex

import pytest

from optplan import instances
from optplan.bounds import lower_bound
from optplan.solve import solve
from optplan.cli import main
from optplan.errors import InputError
from optplan.formats.instance_json import read_json_instance
from optplan.graph import graph_of_instance, lifetimes
from optplan.model import Instance

NAMES = instances.names()
REQUIRED = ["mobilenet_v1_fused_tflite_224", "mobilenet_v2_fused_tflite_224",
            "deeplab_v3_fused_tflite_257", "inception_v3_fused_tflite_299",
            "posenet_fused_tflite_257", "blazeface_fused_tflite_128",
            "resnet50_fused_tflite_224", "resnet50_fused_onnx_224", "resnet50_raw_onnx_224",
            "resnet152_fused_tflite_224", "resnet152_raw_keras_224",
            "vgg19_fused_tflite_224", "vgg19_fused_onnx_224", "vgg19_raw_onnx_224",
            "densenet121_fused_tflite_224", "densenet121_fused_onnx_224",
            "densenet121_raw_onnx_224", "mobilenet_v1_raw_keras_224",
            "mobilenet_v2_raw_keras_224", "deeplab_v3_raw_keras_257",
            "inception_v3_raw_keras_299", "posenet_raw_keras_257"]


@pytest.fixture(scope="module")
def loaded():
    return {name: instances.load(name) for name in NAMES}


def test_required_networks_are_committed():
    missing = [name for name in REQUIRED if name not in NAMES]
    assert not missing


@pytest.mark.parametrize("name", NAMES)
def test_file_matches_its_graph_and_hash(name, loaded):
    instance = loaded[name]
    assert instance.name == name
    provenance = instance.provenance
    assert provenance["content_sha256"] == instances.content_hash(instance)
    command = shlex.split(provenance["command"])
    assert command[:2] == ["optplan", "import"] or (
        command[:2] == ["python", "-m"] and command[2].startswith("optplan."))
    assert name.startswith(provenance["network"] + "_" + provenance["variant"])
    assert provenance["source"] and provenance["importer"]["name"]
    again = lifetimes(graph_of_instance(instance), views=provenance["views"],
                      keep_graph=False)
    assert again.records == instance.records
    assert again.inplace_pairs == instance.inplace_pairs


def test_mobilenet_v2_is_the_standard_fused_architecture(loaded):
    instance = loaded["mobilenet_v2_fused_tflite_224"]
    graph = graph_of_instance(instance)
    assert graph.num_ops == 65
    assert graph.op_type_counts()["DEPTHWISE_CONV_2D"] == 17
    assert graph.tensors[graph.inputs[0]].shape == (1, 224, 224, 3)


def _fused_counterparts():
    """(raw, fused) name pairs of one network at one input size (the formats may differ:
    a raw Keras graph pairs with its TFLite conversion)."""
    pairs = []
    for raw in (n for n in NAMES if "_raw_" in n):
        network, _, rest = raw.partition("_raw_")
        size = rest.rsplit("_", 1)[1]
        pairs += [(raw, n) for n in NAMES if n.startswith(f"{network}_fused_")
                  and n.endswith(f"_{size}")]
    return pairs


def test_fused_is_smaller_than_raw(loaded):
    pairs = _fused_counterparts()
    assert len(pairs) >= 8
    for raw, fused in pairs:
        assert instances.summary(loaded[fused])["ops"] < instances.summary(loaded[raw])["ops"]
        assert loaded[fused].sizes.sum() < loaded[raw].sizes.sum()


@pytest.mark.parametrize("network", ["resnet50", "densenet121", "vgg19"])
def test_network_agrees_across_tflite_and_onnx(network, loaded):
    """Keras → TFLite and the ONNX zoo are independent routes to one architecture."""
    if f"{network}_fused_tflite_224" not in loaded:
        pytest.fail(f"{network}_fused_tflite_224 is not committed")
    tflite = instances.summary(loaded[f"{network}_fused_tflite_224"])
    onnx = instances.summary(loaded[f"{network}_fused_onnx_224"])
    assert abs(tflite["ops"] - onnx["ops"]) <= 0.03 * onnx["ops"]
    assert abs(tflite["naive_bytes"] - onnx["naive_bytes"]) <= 0.03 * onnx["naive_bytes"]


@pytest.mark.parametrize("name", NAMES)
def test_summary_figures_follow_their_definitions(name, loaded):
    instance = loaded[name]
    row = instances.summary(instance)
    assert row["naive_bytes"] == sum(r.size for r in instance.records)
    # The catalogue's bounds are the ones `optplan solve` reports (no --inplace) ...
    for problem in ("offsets", "shared_objects"):
        assert row[f"{problem}_lower_bound"] == solve(instance, "lower_bound", problem).lower_bound
        # ... and the in-place bounds never exceed them.
        assert row[f"{problem}_lower_bound_inplace"] == lower_bound(instance, problem)
        assert row[f"{problem}_lower_bound_inplace"] <= row[f"{problem}_lower_bound"]
    assert row["offsets_lower_bound"] <= row["shared_objects_lower_bound"] <= row["naive_bytes"]
    assert 1 <= row["mean_live_count"] <= row["peak_live_count"] <= row["tensors"]
    assert 0 < row["overlap_density"] <= 1 and 0 < row["largest_tensor_share"] <= 1


def test_features_of_a_hand_drawn_instance():
    # ops 0..3; a=[0,3] 10B, b=[0,1] 30B, c=[2,3] 20B, d=[3,3] 5B
    instance = Instance.from_tuples([(0, 3, 10), (0, 1, 30), (2, 3, 20), (3, 3, 5)])
    assert instances.live_counts(instance).tolist() == [2, 2, 2, 3]
    assert instances.features(instance) == {
        "peak_live_count": 3, "mean_live_count": 2.25,
        "overlap_density": round(4 / 6, 4),          # a-b, a-c, a-d, c-d
        "largest_tensor_share": round(30 / 40, 4)}   # breadth max is 40 at ops 0-1


def test_unknown_name_lists_the_catalogue():
    with pytest.raises(InputError, match="valid: .*mobilenet_v2_fused_tflite_224"):
        instances.load("mobilenet_v3")


def test_write_instance_round_trips(tmp_path, loaded):
    instance = loaded["blazeface_fused_tflite_128"]
    path = tmp_path / "copy.json"
    instances.write_instance(instance, path)
    again = read_json_instance(path)
    assert again == instance and instances.content_hash(again) == instances.content_hash(
        instance)


def test_cli_lists_every_instance_as_json(capsys):
    assert main(["instances", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == NAMES
    assert set(rows[0]) >= {"name", "ops", "tensors", "naive_bytes", "offsets_lower_bound",
                            "shared_objects_lower_bound", "source", "peak_live_count",
                            "mean_live_count", "overlap_density", "largest_tensor_share"}
    assert main(["instances"]) == 0
    assert "mobilenet_v2_fused_tflite_224" in capsys.readouterr().out
