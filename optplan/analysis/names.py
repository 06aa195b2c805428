"""Names for tables and figures: short labels of the catalogue networks and of suite instances.

Catalogue names follow ``<family>_<fused|raw|train>_<source>_<size>`` (``data/networks``, e.g.
``mobilenet_v2_fused_tflite_224``); a table row shows ``MobileNet v2 (tflite)`` and the full
name stays in the paper's appendix.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["FAMILY_NAMES", "PAPER_FAMILIES", "network_label", "is_paper_network",
           "instance_title"]

FAMILY_NAMES = {"mobilenet_v1": "MobileNet v1", "mobilenet_v2": "MobileNet v2",
                "deeplab_v3": "DeepLab v3", "inception_v3": "Inception v3", "posenet": "PoseNet",
                "blazeface": "BlazeFace", "resnet50": "ResNet-50", "resnet152": "ResNet-152",
                "vgg19": "VGG-19", "densenet121": "DenseNet-121", "bert_base": "BERT-base",
                "gpt2": "GPT-2", "inception_v1": "Inception v1", "inception_v2": "Inception v2",
                "squeezenet": "SqueezeNet", "shufflenet": "ShuffleNet", "alexnet": "AlexNet",
                "zfnet512": "ZFNet-512"}
"""Display names of the network families in ``data/networks``."""

PAPER_FAMILIES = ("mobilenet_v1", "mobilenet_v2", "deeplab_v3", "inception_v3", "posenet",
                  "blazeface")
"""The six networks of Pisarchyk & Lee 2020 (Tables 1 and 2)."""

_NETWORK_NAME = re.compile(r"^(?P<family>.+?)_(?P<variant>fused|raw|train)_(?P<source>[a-z]+)_"
                           r"(?P<size>[a-z0-9]+)$")


def network_label(name: str) -> str:
    """``MobileNet v2 (tflite)``, ``ResNet-50 (raw, onnx)``, ``GPT-2 training (torch)``; a
    name outside the catalogue pattern comes back unchanged."""
    match = _NETWORK_NAME.match(str(name))
    if not match:
        return str(name)
    family = FAMILY_NAMES.get(match.group("family"), match.group("family"))
    variant, source = match.group("variant"), match.group("source")
    if variant == "train":
        return f"{family} training ({source})"
    return f"{family} ({'raw, ' if variant == 'raw' else ''}{source})"


def is_paper_network(name: str) -> bool:
    """One of Pisarchyk & Lee's six networks as they ran it: an inference graph with fused
    operators (a training graph or a raw import of the same family is not)."""
    match = _NETWORK_NAME.match(str(name))
    return bool(match) and match.group("family") in PAPER_FAMILIES \
        and match.group("variant") == "fused"


def instance_title(name: str, suite: str, width: int = 24) -> str:
    """A panel title: ``MiniMalloc D`` for MiniMalloc's one-letter instances, the
    :func:`network_label` of a network, else the name with spaces for underscores, wrapped at
    ``width`` characters."""
    if suite == "minimalloc":
        return f"MiniMalloc {name}"
    if suite == "networks":
        return network_label(name)
    return "\n".join(textwrap.wrap(str(name).replace("_", " "), width)) or str(name)
