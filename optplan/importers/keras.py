"""Keras applications → TFLite → :class:`~optplan.graph.model.Graph` (regeneration path).

Needs ``tensorflow-cpu`` (a 1.6 GB install; keep it in its own virtual environment, never a
test dependency). Every model is built with ``weights=None`` (random initialisation: memory
planning needs shapes, not trained values), converted with ``tf.lite.TFLiteConverter`` (which
freezes variables to constants and fuses batch-norm and activations) and parsed by
:mod:`optplan.importers.tflite`.

Networks (:data:`NETWORKS`): the Keras applications ``mobilenet_v1`` (``MobileNet``),
``mobilenet_v2``, ``inception_v3``, ``resnet50``, ``resnet152``, ``vgg19``, ``densenet121``, and
two networks rebuilt here from their published architectures:

``deeplab_v3``
    DeepLab v3 with a MobileNetV2 backbone at output stride 8 (Chen et al. 2017, "Rethinking
    Atrous Convolution"; Sandler et al. 2018 §6.3): the MobileNetV2 blocks from stride 16 on use
    dilation 2 and 4 instead of striding; the mobile ASPP head of the paper's MobileNetV2
    experiment (a 1×1 convolution branch and an image-pooling branch, 256 channels each,
    concatenated, projected to 256), a 1×1 classifier to 21 PASCAL classes and a bilinear
    resize back to the input, as in TFLite's ``deeplabv3_257_mv_gpu`` model (257×257 input).
``posenet``
    PoseNet (Papandreou et al. 2018, PersonLab; the TF.js/TFLite MobileNet v1 release): a
    MobileNet v1 (depth multiplier 1.0) backbone at 257×257, output stride 32, and four 1×1
    convolution heads: 17 keypoint heatmaps (sigmoid), 34 offsets, 32 forward and 32 backward
    displacements.
"""

from __future__ import annotations

from optplan.errors import InputError
from optplan.importers import require

__all__ = ["NETWORKS", "build_keras_model", "convert_to_tflite", "import_keras",
           "keras_raw_graph", "LAYER_TYPES"]

LAYER_TYPES = {
    "Conv2D": "CONV_2D", "DepthwiseConv2D": "DEPTHWISE_CONV_2D", "Dense": "FULLY_CONNECTED",
    "Conv2DTranspose": "TRANSPOSE_CONV", "BatchNormalization": "BATCH_NORM",
    "Add": "ADD", "Subtract": "SUB", "Multiply": "MUL", "Concatenate": "CONCATENATION",
    "ZeroPadding2D": "PAD", "MaxPooling2D": "MAX_POOL_2D", "AveragePooling2D": "AVERAGE_POOL_2D",
    "GlobalAveragePooling2D": "MEAN", "GlobalMaxPooling2D": "REDUCE_MAX",
    "Flatten": "RESHAPE", "Reshape": "RESHAPE", "Dropout": "DROPOUT",
    "Resizing": "RESIZE_BILINEAR", "UpSampling2D": "RESIZE_NEAREST_NEIGHBOR",
    "Softmax": "SOFTMAX", "Identity": "IDENTITY",
}
"""Keras layer class → op type (TFLite builtin names) for the raw graph."""

ACTIVATION_TYPES = {"relu": "RELU", "relu6": "RELU6", "sigmoid": "LOGISTIC",
                    "softmax": "SOFTMAX", "tanh": "TANH", "hard_swish": "HARD_SWISH",
                    "hard_silu": "HARD_SWISH", "silu": "SILU", "swish": "SILU", "gelu": "GELU",
                    "elu": "ELU", "leaky_relu": "LEAKY_RELU"}

NETWORKS = {
    # name: (default input size, Keras applications class or builder name)
    "mobilenet_v1": (224, "MobileNet"),
    "mobilenet_v2": (224, "MobileNetV2"),
    "inception_v3": (299, "InceptionV3"),
    "resnet50": (224, "ResNet50"),
    "resnet152": (224, "ResNet152"),
    "vgg19": (224, "VGG19"),
    "densenet121": (224, "DenseNet121"),
    "deeplab_v3": (257, "deeplab_v3"),
    "posenet": (257, "posenet"),
}


def _tensorflow():
    return require("tensorflow", "keras")


def _conv_bn_relu6(layers, x, filters, kernel, *, stride=1, dilation=1, name):
    x = layers.Conv2D(filters, kernel, strides=stride, dilation_rate=dilation, padding="same",
                      use_bias=False, name=f"{name}_conv")(x)
    x = layers.BatchNormalization(name=f"{name}_bn")(x)
    return layers.ReLU(6.0, name=f"{name}_relu")(x)


def _inverted_residual(layers, x, expansion, filters, stride, dilation, name):
    """MobileNetV2's bottleneck (Sandler et al. 2018, Table 1), dilated for DeepLab."""
    channels = x.shape[-1]
    y = x
    if expansion != 1:
        y = _conv_bn_relu6(layers, y, channels * expansion, 1, name=f"{name}_expand")
    y = layers.DepthwiseConv2D(3, strides=stride, dilation_rate=dilation, padding="same",
                               use_bias=False, name=f"{name}_depthwise")(y)
    y = layers.BatchNormalization(name=f"{name}_depthwise_bn")(y)
    y = layers.ReLU(6.0, name=f"{name}_depthwise_relu")(y)
    y = layers.Conv2D(filters, 1, use_bias=False, name=f"{name}_project")(y)
    y = layers.BatchNormalization(name=f"{name}_project_bn")(y)
    if stride == 1 and channels == filters:
        y = layers.Add(name=f"{name}_add")([x, y])
    return y


def _deeplab_v3(keras, size: int):
    layers = keras.layers
    inputs = keras.Input((size, size, 3), name="input")
    x = _conv_bn_relu6(layers, inputs, 32, 3, stride=2, name="stem")
    # (expansion t, channels c, repeats n, stride s) of MobileNetV2; output stride 8 turns the
    # strides of the last two strided stages into dilation (2, then 4).
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    output_stride, current_stride, rate, block = 8, 2, 1, 0
    for expansion, channels, repeats, stride in settings:
        for repeat in range(repeats):
            step = stride if repeat == 0 else 1
            block_rate = rate              # the block that stops striding keeps the old rate
            if step > 1 and current_stride >= output_stride:
                step, rate = 1, rate * stride
            else:
                current_stride *= step
            x = _inverted_residual(layers, x, expansion, channels, step, block_rate,
                                   f"block{block}")
            block += 1
    features = x
    branch = _conv_bn_relu6(layers, features, 256, 1, name="aspp0")
    pooled = layers.GlobalAveragePooling2D(keepdims=True, name="image_pooling")(features)
    pooled = _conv_bn_relu6(layers, pooled, 256, 1, name="image_pooling_proj")
    pooled = layers.Resizing(features.shape[1], features.shape[2], interpolation="bilinear",
                             name="image_pooling_resize")(pooled)
    x = layers.Concatenate(name="aspp_concat")([pooled, branch])
    x = _conv_bn_relu6(layers, x, 256, 1, name="concat_projection")
    x = layers.Conv2D(21, 1, name="logits")(x)
    x = layers.Resizing(size, size, interpolation="bilinear", name="upsample")(x)
    return keras.Model(inputs, x, name="deeplab_v3")


def _posenet(keras, size: int):
    layers = keras.layers
    inputs = keras.Input((size, size, 3), name="input")
    backbone = keras.applications.MobileNet(input_tensor=inputs, include_top=False,
                                            weights=None, alpha=1.0)
    features = backbone.output
    heatmaps = layers.Conv2D(17, 1, activation="sigmoid", name="heatmap")(features)
    offsets = layers.Conv2D(34, 1, name="offset")(features)
    forward = layers.Conv2D(32, 1, name="displacement_fwd")(features)
    backward = layers.Conv2D(32, 1, name="displacement_bwd")(features)
    return keras.Model(inputs, [heatmaps, offsets, forward, backward], name="posenet")


def _layer_type(layer) -> str | None:
    kind = type(layer).__name__
    if kind == "InputLayer":
        return None
    if kind == "ReLU":
        return "RELU6" if getattr(layer, "max_value", None) == 6.0 else "RELU"
    if kind == "Activation":
        return ACTIVATION_TYPES.get(layer.activation.__name__, layer.activation.__name__.upper())
    if kind in LAYER_TYPES:
        return LAYER_TYPES[kind]
    import re
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", kind).upper()


def _layer_attributes(layer) -> dict:
    attributes = {}
    for key, attribute in (("kernel", "kernel_size"), ("stride", "strides"),
                           ("dilation", "dilation_rate"), ("kernel", "pool_size")):
        value = getattr(layer, attribute, None)
        if value is not None and not (key == "dilation" and tuple(value) == (1, 1)):
            attributes[key] = [int(v) for v in value]
    if hasattr(layer, "padding") and isinstance(layer.padding, str):
        attributes["padding"] = layer.padding.upper()
    if type(layer).__name__ == "Conv2D":
        attributes["groups"] = int(getattr(layer, "groups", 1))
    if hasattr(layer, "axis") and type(layer).__name__ == "Concatenate":
        attributes["axis"] = int(layer.axis)
    return attributes


def keras_raw_graph(model, *, name: str):
    """The *raw* graph of a functional Keras model: one op per layer in the model's
    (topological) operation order, plus a separate activation op where a convolution or dense
    layer carries an ``activation`` (TFLite would fuse it; the raw graph does not).
    ``BatchNormalization`` is an op of its own."""
    import math

    from optplan.graph.model import Graph, Op, Tensor, Weight, dtype_bytes
    from optplan.importers import declared_inplace

    tensors: dict = {}
    names: dict[str, str] = {}

    def tensor(keras_tensor, label: str) -> str:
        shape = tuple(1 if d is None else int(d) for d in keras_tensor.shape)
        dtype = str(keras_tensor.dtype)
        tensors[label] = Tensor(label, shape, dtype, math.prod(shape) * dtype_bytes(dtype))
        names[keras_tensor.name] = label
        return label

    inputs = tuple(tensor(t, t.name if len(model.inputs) > 1 else "input")
                   for t in model.inputs)
    ops = []
    for layer in model.operations:
        op_type = _layer_type(layer)
        if op_type is None:
            continue
        node = layer._inbound_nodes[0]
        layer_inputs = tuple(names[t.name] for t in node.input_tensors)
        outputs = [tensor(t, layer.name if len(node.output_tensors) == 1 else
                          f"{layer.name}:{i}") for i, t in enumerate(node.output_tensors)]
        weights = tuple(Weight(w.path, tuple(int(d) for d in w.shape), str(w.dtype),
                               math.prod(w.shape) * dtype_bytes(str(w.dtype)))
                        for w in layer.weights)
        activation = getattr(layer, "activation", None)
        activation_name = getattr(activation, "__name__", "linear")
        separate = type(layer).__name__ != "Activation" and activation_name != "linear"
        if separate:
            pre = f"{layer.name}/preactivation"
            tensors[pre] = Tensor(pre, tensors[outputs[0]].shape, tensors[outputs[0]].dtype,
                                  tensors[outputs[0]].bytes)
            ops.append(Op(layer.name, op_type, layer_inputs, (pre,), weights,
                          _layer_attributes(layer)))
            act_type = ACTIVATION_TYPES.get(activation_name, activation_name.upper())
            ops.append(Op(f"{layer.name}/activation", act_type, (pre,), tuple(outputs), (),
                          {}, declared_inplace(act_type, (pre,), tuple(outputs), tensors)))
        else:
            ops.append(Op(layer.name, op_type, layer_inputs, tuple(outputs), weights,
                          _layer_attributes(layer),
                          declared_inplace(op_type, layer_inputs, tuple(outputs), tensors)))
    outputs = tuple(names[t.name] for t in model.outputs)
    return Graph(name, tuple(ops), tensors, inputs, outputs)


def _randomize_batch_norms(model, seed: int = 0) -> None:
    """Give every batch-norm random statistics. Keras initialises ``beta`` and the moving
    mean to 0, so the converter would fold a standalone batch-norm's offset ``ADD`` away as
    adding zeros, which no trained network allows."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for layer in model.operations:
        if type(layer).__name__ == "BatchNormalization":
            layer.set_weights([rng.uniform(0.5, 1.5, size=w.shape).astype("float32")
                               for w in layer.get_weights()])


def build_keras_model(network: str, size: int | None = None):
    """The Keras model of ``network`` at ``size``×``size`` input: ``weights=None`` (random
    initialisation), batch-norm statistics randomised (:func:`_randomize_batch_norms`)."""
    if network not in NETWORKS:
        raise InputError(f"unknown Keras network {network!r}; valid: {', '.join(NETWORKS)}",
                         field="network")
    tf = _tensorflow()
    keras = tf.keras
    default_size, builder = NETWORKS[network]
    size = size or default_size
    if builder == "deeplab_v3":
        model = _deeplab_v3(keras, size)
    elif builder == "posenet":
        model = _posenet(keras, size)
    else:
        application = getattr(keras.applications, builder)
        model = application(weights=None, input_shape=(size, size, 3), include_top=True)
    _randomize_batch_norms(model)
    return model


def convert_to_tflite(model) -> bytes:
    """TFLite flatbuffer of a Keras model: variables frozen to constants, fp32, no
    quantization (the converter still folds batch-norm and fuses activations)."""
    tf = _tensorflow()
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    spec = [tf.TensorSpec((1,) + tuple(x.shape[1:]), x.dtype) for x in model.inputs]
    function = tf.function(lambda *args: model(list(args) if len(args) > 1 else args[0],
                                               training=False))
    frozen = convert_variables_to_constants_v2(function.get_concrete_function(*spec))
    converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
    return converter.convert()


def import_keras(network: str, size: int | None = None, *, name: str | None = None,
                 raw: bool = False):
    """Build ``network``; returns ``(graph, tflite_bytes)``.

    Fused (default): converted to TFLite and parsed. ``raw=True``: the Keras layer graph
    (:func:`keras_raw_graph`), no conversion (``tflite_bytes`` is ``None``). Provenance records
    the tensorflow and Keras versions and the builder.
    """
    import hashlib

    from optplan.importers.tflite import import_tflite_bytes

    tf = _tensorflow()
    size = size or NETWORKS.get(network, (None,))[0]
    model = build_keras_model(network, size)
    source = {"package": "tensorflow-cpu", "version": tf.__version__,
              "keras_version": getattr(tf.keras, "__version__", None),
              "builder": NETWORKS[network][1], "input_size": size, "weights": None}
    if raw:
        graph = keras_raw_graph(model, name=name or network)
        graph.provenance.update(source=source, importer="keras",
                                keras_version=source["keras_version"])
        return graph, None
    data = convert_to_tflite(model)
    source["tflite_sha256"] = hashlib.sha256(data).hexdigest()
    graph = import_tflite_bytes(data, name=name or network, source=source)
    return graph, data
