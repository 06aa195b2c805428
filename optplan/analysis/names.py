"""Human names for tables and figures: networks, methods, problems, suite instances.

Rows keep the instance key (the ``data/networks`` file stem, e.g.
``mobilenet_v2_fused_tflite_224``) and the registered method name; only what is rendered
uses these names (``MobileNet v2 (TFLite)``, ``greedy by size``). A name outside the
catalogue comes back readable (underscores as spaces), never as a raw identifier.
"""

from __future__ import annotations

import re
import textwrap

from optplan.problems import canonical_name

__all__ = ["FAMILY_NAMES", "PAPER_FAMILIES", "METHOD_NAMES", "PROBLEM_NAMES",
           "network_label", "is_paper_network", "instance_title", "method_label",
           "problem_label", "latex_escape"]

FAMILY_NAMES = {"mobilenet_v1": "MobileNet v1", "mobilenet_v2": "MobileNet v2",
                "deeplab_v3": "DeepLab v3", "inception_v3": "Inception v3", "posenet": "PoseNet",
                "blazeface": "BlazeFace", "resnet50": "ResNet-50", "resnet152": "ResNet-152",
                "vgg19": "VGG-19", "densenet121": "DenseNet-121", "bert_base": "BERT-base",
                "gpt2": "GPT-2", "inception_v1": "Inception v1", "inception_v2": "Inception v2",
                "squeezenet": "SqueezeNet", "shufflenet": "ShuffleNet", "alexnet": "AlexNet",
                "zfnet512": "ZFNet-512",
                "blazeface_full_range_sparse": "BlazeFace full range",
                "blazepose_detection": "BlazePose detector",
                "blazepose_landmark_full": "BlazePose landmarks",
                "face_landmark": "Face landmarks", "hand_landmark_full": "Hand landmarks",
                "iris_landmark": "Iris landmarks", "palm_detection_full": "Palm detector",
                "selfie_segmentation": "Selfie segmentation",
                # MediaPipe's model files by their own names (the runtimes' rows)
                "face_detection_short_range": "BlazeFace",
                "face_detection_full_range_sparse": "BlazeFace full range",
                "pose_detection": "BlazePose detector",
                "pose_landmark_full": "BlazePose landmarks",
                "face_landmark_with_attention": "Face landmarks (attention)",
                "hand_landmark_lite": "Hand landmarks (lite)", "hand_recrop": "Hand re-crop",
                "palm_detection_full": "Palm detector",
                "palm_detection_lite": "Palm detector (lite)",
                "selfie_segmentation_landscape": "Selfie segmentation (landscape)"}
"""Display names of the network families in ``data/networks`` and of the MediaPipe models
they come from."""

SOURCE_NAMES = {"tflite": "TFLite", "torch": "PyTorch", "onnx": "ONNX", "keras": "Keras"}
"""Display names of the importers a network came through."""

PAPER_FAMILIES = ("mobilenet_v1", "mobilenet_v2", "deeplab_v3", "inception_v3", "posenet",
                  "blazeface")
"""The six networks of Pisarchyk & Lee 2020 (Tables 1 and 2)."""

METHOD_NAMES = {
    "naive": "naive", "equality": "equality", "greedy_in_order": "greedy in order",
    "greedy_by_breadth": "greedy by breadth", "greedy_by_size": "greedy by size",
    "greedy_best": "greedy best", "min_cost_flow": "min-cost flow",
    "strip_packing_best_fit": "strip-packing best fit", "tflite_arena": "TFLite arena",
    "xla_best_fit": "XLA best fit", "usmp_greedy_by_size": "USMP greedy by size",
    "usmp_greedy_by_conflicts": "USMP greedy by conflicts",
    "usmp_hill_climb": "USMP hill climb", "nntrainer_basic": "NNTrainer basic",
    "nntrainer_v1": "NNTrainer v1", "nntrainer_v3": "NNTrainer v3", "first_fit": "first fit",
    "best_fit": "best fit", "mxnet": "MXNet",
    "coloring_largest_first": "colouring: largest first",
    "coloring_smallest_last": "colouring: smallest last",
    "coloring_saturation_largest_first": "colouring: DSATUR",
    "coloring_independent_set": "colouring: independent set",
    "coloring_connected_sequential_bfs": "colouring: connected BFS",
    "coloring_connected_sequential_dfs": "colouring: connected DFS",
    "coloring_random_sequential": "colouring: random",
    "coloring_size_weighted": "colouring: size weighted",
    "lower_bound": "lower bound", "cpsat": "CP-SAT", "milp_highs": "HiGHS MILP",
    "milp_cbc": "CBC MILP", "search": "offsets search", "brute_force": "brute force",
    "flexnn": "FlexNN", "flexnn_sliced": "FlexNN with slicing", "no_preload": "no preload",
    "minimalloc": "MiniMalloc", "omnimalloc_supermalloc": "SuperMalloc",
    "omnimalloc_telamalloc": "OmniMalloc TelaMalloc",
    "omnimalloc_simulated_annealing": "OmniMalloc simulated annealing",
    "omnimalloc_tabu_search": "OmniMalloc tabu search",
    "omnimalloc_hill_climb": "OmniMalloc hill climbing",
    "omnimalloc_genetic": "OmniMalloc genetic", "omnimalloc_random": "OmniMalloc random",
    "omnimalloc_omni": "OmniMalloc greedy portfolio", "omnimalloc_greedy_by_all": "OmniMalloc greedy by all",
    "omnimalloc_greedy_by_size": "OmniMalloc greedy by size",
    "omnimalloc_greedy_by_area": "OmniMalloc greedy by area",
    "omnimalloc_greedy_by_conflict_size": "OmniMalloc greedy by conflict size",
    "omnimalloc_greedy_by_conflict": "OmniMalloc greedy by conflict",
    "omnimalloc_greedy_by_duration": "OmniMalloc greedy by duration",
    "omnimalloc_greedy_by_start": "OmniMalloc greedy by start",
    "omnimalloc_greedy": "OmniMalloc greedy", "omnimalloc_best_fit": "OmniMalloc best fit",
    "omnimalloc_naive": "OmniMalloc naive"}
"""Display names of the registered methods (the peers' too: MiniMalloc, OmniMalloc's)."""

PROBLEM_NAMES = {"shared-objects": "shared objects", "offsets": "offsets",
                 "preload": "preload"}
"""Display names of the problems, keyed by their CLI spelling."""


def problem_label(name: str) -> str:
    """``shared objects``, ``offsets``, ``preload`` (any spelling the problem table reads)."""
    key = canonical_name(str(name))
    return PROBLEM_NAMES.get(key, key.replace("_", " ").replace("-", " "))


def method_label(name: str) -> str:
    """``greedy by size``, ``XLA best fit``, ``CP-SAT``; an unknown name with spaces."""
    return METHOD_NAMES.get(str(name), str(name).replace("_", " "))


_NETWORK_NAME = re.compile(r"^(?P<family>.+?)_(?P<variant>fused|raw|train)_(?P<source>[a-z]+)_"
                           r"(?P<size>[a-z0-9]+)$")


def network_label(name: str, *, source: bool = True) -> str:
    """``MobileNet v2 (TFLite)``, ``ResNet-50 (raw, ONNX)``, ``GPT-2 training (PyTorch)``;
    ``source=False`` drops the importer; a name outside the pattern comes back readable."""
    match = _NETWORK_NAME.match(str(name))
    if not match:
        return str(name).replace("_", " ")
    family = FAMILY_NAMES.get(match.group("family"), match.group("family").replace("_", " "))
    variant = match.group("variant")
    origin = SOURCE_NAMES.get(match.group("source"), match.group("source"))
    if variant == "train":
        return f"{family} training" + (f" ({origin})" if source else "")
    details = (["raw"] if variant == "raw" else []) + ([origin] if source else [])
    return family + (f" ({', '.join(details)})" if details else "")


def is_paper_network(name: str) -> bool:
    """One of Pisarchyk & Lee's six networks as they ran it: an inference graph with fused
    operators (a training graph or a raw import of the same family is not)."""
    match = _NETWORK_NAME.match(str(name))
    return bool(match) and match.group("family") in PAPER_FAMILIES \
        and match.group("variant") == "fused"


def instance_title(name: str, suite: str, width: int = 24) -> str:
    """A panel title: ``MiniMalloc D`` for MiniMalloc's benchmarks (``D.1048576`` too), the
    :func:`network_label` of a network, ``random DAG, 200 tensors, seed 1`` for a generated
    instance, else the name with spaces for underscores, wrapped at ``width`` characters."""
    if suite == "minimalloc":
        return f"MiniMalloc {str(name).split('.')[0]}"
    if suite == "networks":
        return network_label(name)
    generated = re.match(r"^(?P<kind>[a-z_]+?)[_-](?P<n>\d+)[_-]s(?:eed)?(?P<seed>\d+)$",
                         str(name))
    text = (f"{generated.group('kind').replace('_', ' ')}, {generated.group('n')} tensors, "
            f"seed {generated.group('seed')}" if generated else str(name).replace("_", " "))
    return "\n".join(textwrap.wrap(text, width)) or str(name)


def latex_escape(text: str) -> str:
    """Text for LaTeX: escapes, and the Unicode signs the tables use."""
    return (str(text).replace("\\", r"\textbackslash{}").replace("_", r"\_")
            .replace("%", r"\%").replace("&", r"\&").replace("#", r"\#")
            .replace("≥", r"$\geq$").replace("–", "--").replace("…", r"\dots")
            .replace("†", r"$^\dagger$").replace("×", r"$\times$"))
