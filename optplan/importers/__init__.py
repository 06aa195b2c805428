"""Importers: model files → :class:`~optplan.graph.model.Graph`.

Each importer is an optional extra imported lazily (``pip install optplan[tflite]``,
``optplan[onnx]``; the Keras regeneration path needs ``tensorflow-cpu``). A missing extra is a
:class:`MissingExtraError` naming the package to install, never a bare ``ImportError`` from
deep inside.
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

from optplan.errors import OptplanError
from optplan.graph.model import VIEW_OP_TYPES, Tensor

__all__ = ["MissingExtraError", "require", "file_sha256", "declared_inplace", "INPLACE_TYPES",
           "IMPORTERS"]

IMPORTERS = ("tflite", "onnx", "keras")

ELEMENTWISE_UNARY_TYPES = frozenset({
    "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "PRELU", "LOGISTIC", "TANH", "HARD_SWISH",
    "ELU", "GELU", "BATCH_NORM", "DROPOUT", "ABS", "NEG", "EXP", "SQRT", "RSQRT", "SQUARE",
    "CAST", "QUANTIZE", "DEQUANTIZE", "SOFTMAX", "LOG_SOFTMAX"})
ELEMENTWISE_BINARY_TYPES = frozenset({"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM",
                                      "SQUARED_DIFFERENCE"})
INPLACE_TYPES = ELEMENTWISE_UNARY_TYPES | ELEMENTWISE_BINARY_TYPES | VIEW_OP_TYPES
"""Op types that may write their output over an input of the same size (MXNet's
``FInplaceOption``/``FInplaceIdentity``: activations, batch-norm, elementwise arithmetic,
reshape-like views)."""


class MissingExtraError(OptplanError, ImportError):
    """An optional dependency is not installed."""


def require(module: str, extra: str):
    """Import ``module`` or raise :class:`MissingExtraError` saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(f"the {extra} importer needs the '{module}' package ({error}); "
                                f"install it with: pip install 'optplan[{extra}]'") from None


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def declared_inplace(op_type: str, inputs, outputs, tensors: dict[str, Tensor]):
    """The (input, output) pairs an op of ``op_type`` may compute in place: its first output
    over the first input of the same size (lifetime analysis later keeps only valid pairs)."""
    if op_type not in INPLACE_TYPES or not inputs or not outputs:
        return ()
    output = outputs[0]
    for name in inputs:
        if tensors[name].bytes == tensors[output].bytes:
            return ((name, output),)
    return ()
