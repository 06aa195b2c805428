"""Model builders for the torch importer: networks built from code, random weights, no downloads.

Convolutional networks are written here as plain ``torch.nn`` modules that follow torchvision's
reference architectures layer for layer (``torchvision.models.mobilenet_v2``, ``mobilenet_v1``
as in Howard et al. 2017, ``resnet50``'s bottleneck v1.5): torchvision has no CPU build here,
and the layer structure, not the weights, is what memory planning needs. DeepLab v3
(MobileNetV2, 257×257) follows the committed TFLite DeepLab instead (see
:func:`_deeplab_v3_module`). Transformers come from
``transformers`` configs (``GPT2Config()``, ``BertConfig()``: GPT-2 small and BERT-base) with
randomly initialised weights; nothing touches a model hub.

:data:`MODELS` maps a model name to a :class:`ModelSpec`: a builder of the inference module,
its example inputs, and a builder of the training module (which returns the loss).
Every builder seeds ``torch.manual_seed(seed)`` first, so a name always gives the same weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from optplan.errors import InputError
from optplan.importers import require
from optplan.torch.export import torch_module

__all__ = ["ModelSpec", "MODELS", "VARIANTS", "build", "model_names", "capture", "instance_name",
           "program_instance", "torch_instance", "timm_model"]


@dataclass(frozen=True)
class ModelSpec:
    """How to build one network: ``inference()`` and ``training()`` return (module, args)."""

    network: str
    input_label: str                      # the instance name's input part: 224, seq128
    inference: Callable
    training: Callable
    source: str                           # what the architecture follows


# --- convolutional networks (torchvision layouts) --------------------------------------------

def _nn():
    return torch_module().nn


def _conv_bn_act(cin: int, cout: int, kernel: int, stride: int, groups: int = 1,
                 activation: str | None = "relu6"):
    nn = _nn()
    layers = [nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(cout)]
    if activation == "relu6":
        layers.append(nn.ReLU6(inplace=False))
    elif activation == "relu":
        layers.append(nn.ReLU(inplace=False))
    return nn.Sequential(*layers)


def _mobilenet_v2_module(num_classes: int = 1000):
    """torchvision's MobileNetV2 (Sandler et al. 2018, width 1.0)."""
    nn = _nn()

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            self.use_residual = stride == 1 and cin == cout
            layers = [] if expand == 1 else [_conv_bn_act(cin, hidden, 1, 1)]
            layers += [_conv_bn_act(hidden, hidden, 3, stride, groups=hidden),
                       _conv_bn_act(hidden, cout, 1, 1, activation=None)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_residual else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
            cin = 32
            layers = [_conv_bn_act(3, cin, 3, 2)]
            for expand, channels, repeats, stride in settings:
                for index in range(repeats):
                    layers.append(InvertedResidual(cin, channels, stride if index == 0 else 1,
                                                   expand))
                    cin = channels
            layers.append(_conv_bn_act(cin, 1280, 1, 1))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
            return self.classifier(torch_module().flatten(x, 1))

    return MobileNetV2()


def _mobilenet_v1_module(num_classes: int = 1000):
    """MobileNet v1 (Howard et al. 2017, width 1.0): depthwise-separable blocks."""
    nn = _nn()
    plan = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
            (256, 512, 2)] + [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]

    class MobileNetV1(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [_conv_bn_act(3, 32, 3, 2, activation="relu")]
            for cin, cout, stride in plan:
                layers += [_conv_bn_act(cin, cin, 3, stride, groups=cin, activation="relu"),
                           _conv_bn_act(cin, cout, 1, 1, activation="relu")]
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(1024, num_classes)

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
            return self.classifier(torch_module().flatten(x, 1))

    return MobileNetV1()


def _resnet50_module(num_classes: int = 1000):
    """torchvision's ResNet-50 (He et al. 2016; stride on the 3x3 convolution, "v1.5")."""
    nn = _nn()

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.body = nn.Sequential(_conv_bn_act(cin, width, 1, 1, activation="relu"),
                                      _conv_bn_act(width, width, 3, stride, activation="relu"),
                                      _conv_bn_act(width, cout, 1, 1, activation=None))
            self.downsample = (_conv_bn_act(cin, cout, 1, stride, activation=None)
                               if stride != 1 or cin != cout else None)
            self.relu = nn.ReLU(inplace=False)

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(self.body(x) + identity)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(inplace=False), nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                for index in range(blocks):
                    layers.append(Bottleneck(cin, width, stride if index == 0 else 1))
                    cin = width * 4
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(2048, num_classes)

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), (1, 1))
            return self.fc(torch_module().flatten(x, 1))

    return ResNet50()


def _deeplab_v3_module(num_classes: int = 21, output_stride: int = 8):
    """DeepLab v3 on a MobileNetV2 backbone, the mobile configuration of TFLite's
    ``deeplabv3_257_mv_gpu`` (as rebuilt in :mod:`optplan.importers.keras`).

    Chen et al. 2017 ("Rethinking Atrous Convolution") with Sandler et al. 2018 §6.3:

    * backbone: MobileNetV2 (width 1.0) without its last 1×1 convolution to 1280 channels;
      once the stride reaches ``output_stride`` (8 or 16) later strides become dilation, as in
      DeepLab's ``mobilenet.py``: the block that stops striding keeps the previous rate, the
      following blocks multiply it by the dropped stride (rates 2 then 4 at output stride 8).
    * head: the paper's MobileNetV2 head, which drops the three 3×3 atrous ASPP branches
      (rates 6/12/18 at stride 16): a 1×1 convolution branch and an image-pooling branch
      (global mean, 1×1 convolution, bilinear resize back), 256 channels each, concatenated in
      TFLite's order and projected to 256; no dropout (inference graph).
    * a 1×1 classifier (with bias) to ``num_classes`` PASCAL VOC classes and a bilinear resize
      to the input size (``align_corners=False``; the choice changes no tensor size).

    Convolutions pad by ``dilation * (kernel - 1) // 2``, so an odd input keeps TFLite's SAME
    sizes (257 → 129 → 65 → 33). Activations are ReLU6 throughout, as in the TFLite graph.
    """
    nn = _nn()
    functional = nn.functional

    class DilatedInvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand, dilation):
            super().__init__()
            hidden = cin * expand
            self.use_residual = stride == 1 and cin == cout
            layers = [] if expand == 1 else [_conv_bn_act(cin, hidden, 1, 1)]
            layers += [nn.Sequential(nn.Conv2d(hidden, hidden, 3, stride, dilation, dilation,
                                               groups=hidden, bias=False),
                                     nn.BatchNorm2d(hidden), nn.ReLU6(inplace=False)),
                       _conv_bn_act(hidden, cout, 1, 1, activation=None)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_residual else self.conv(x)

    class DeepLabV3(nn.Module):
        def __init__(self):
            super().__init__()
            # (expansion, channels, repeats, stride) of MobileNetV2 (Sandler et al., Table 2)
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
            cin, current_stride, rate = 32, 2, 1
            layers = [_conv_bn_act(3, cin, 3, 2)]
            for expand, channels, repeats, stride in settings:
                for index in range(repeats):
                    step, block_rate = (stride if index == 0 else 1), rate
                    if step > 1 and current_stride >= output_stride:
                        step, rate = 1, rate * stride
                    else:
                        current_stride *= step
                    layers.append(DilatedInvertedResidual(cin, channels, step, expand,
                                                          block_rate))
                    cin = channels
            self.backbone = nn.Sequential(*layers)
            self.aspp_branch = _conv_bn_act(cin, 256, 1, 1)
            self.image_pooling = _conv_bn_act(cin, 256, 1, 1)
            self.projection = _conv_bn_act(512, 256, 1, 1)
            self.classifier = nn.Conv2d(256, num_classes, 1)

        def forward(self, images):
            features = self.backbone(images)
            branch = self.aspp_branch(features)
            pooled = self.image_pooling(functional.adaptive_avg_pool2d(features, (1, 1)))
            pooled = functional.interpolate(pooled, size=features.shape[-2:], mode="bilinear",
                                            align_corners=False)
            logits = self.classifier(self.projection(torch_module().cat([branch, pooled], 1)))
            return functional.interpolate(logits, size=images.shape[-2:], mode="bilinear",
                                          align_corners=False)

    return DeepLabV3()


def _with_cross_entropy(classifier):
    """``classifier`` wrapped so that ``forward(images, labels)`` returns the loss."""
    nn = _nn()

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = classifier

        def forward(self, images, labels):
            return nn.functional.cross_entropy(self.model(images), labels)

    return WithLoss()


def _image_spec(network: str, factory, size: int = 224, num_classes: int = 1000) -> ModelSpec:
    def inference(seed: int = 0):
        torch = torch_module()
        torch.manual_seed(seed)
        module = factory(num_classes).eval()
        return module, (torch.randn(1, 3, size, size),)

    def training(seed: int = 0):
        torch = torch_module()
        torch.manual_seed(seed)
        module = _with_cross_entropy(factory(num_classes)).train()
        return module, (torch.randn(1, 3, size, size), torch.randint(0, num_classes, (1,)))

    return ModelSpec(network, str(size), inference, training,
                     f"hand-written torch.nn module following torchvision.models.{network}")


def _segmentation_spec(network: str, factory, size: int, num_classes: int, source: str
                       ) -> ModelSpec:
    """Like :func:`_image_spec` for a dense classifier: training labels are one class per
    pixel (``cross_entropy`` over the ``(batch, classes, size, size)`` logits). The training
    step takes a batch of 2 images: batch-norm after global pooling (DeepLab's image-pooling
    branch) sees one value per channel at batch 1, which training-mode batch-norm rejects."""
    def inference(seed: int = 0):
        torch = torch_module()
        torch.manual_seed(seed)
        return factory(num_classes).eval(), (torch.randn(1, 3, size, size),)

    def training(seed: int = 0):
        torch = torch_module()
        torch.manual_seed(seed)
        module = _with_cross_entropy(factory(num_classes)).train()
        return module, (torch.randn(2, 3, size, size),
                        torch.randint(0, num_classes, (2, size, size)))

    return ModelSpec(network, str(size), inference, training, source)


# --- transformers ------------------------------------------------------------------------------

def _transformers():
    return require("transformers", "torch")


def _gpt2_modules(seed: int, sequence: int, training: bool):
    torch = torch_module()
    transformers = _transformers()
    torch.manual_seed(seed)
    config = transformers.GPT2Config()          # GPT-2 small: 12 layers, 768 wide, 12 heads
    config._attn_implementation = "eager"
    model = transformers.GPT2LMHeadModel(config)
    nn = _nn()

    class TiedHead(nn.Module):
        """The LM head reading the token embedding's weight, which it does not own: the tie
        is one parameter read twice, so autograd sums both gradients inside the graph
        (AOTAutograd would otherwise lift ``lm_head.weight`` as a second parameter)."""

        def __init__(self, embedding):
            super().__init__()
            self.embedding = [embedding]        # a list: not registered as a submodule

        def forward(self, hidden):
            return nn.functional.linear(hidden, self.embedding[0].weight)

    model.lm_head = TiedHead(model.transformer.wte)

    class Logits(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, use_cache=False).logits

    class LanguageModelLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, labels=input_ids, use_cache=False).loss

    ids = torch.randint(0, config.vocab_size, (1, sequence))
    module = LanguageModelLoss().train() if training else Logits().eval()
    return module, (ids,)


def _bert_modules(seed: int, sequence: int, training: bool):
    torch = torch_module()
    transformers = _transformers()
    torch.manual_seed(seed)
    config = transformers.BertConfig()          # BERT-base: 12 layers, 768 wide, 12 heads
    config._attn_implementation = "eager"
    nn = _nn()
    if training:
        model = transformers.BertForMaskedLM(config)

        class MaskedLanguageModelLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, input_ids):
                return self.model(input_ids=input_ids, labels=input_ids).loss

        module = MaskedLanguageModelLoss().train()
    else:
        model = transformers.BertModel(config, add_pooling_layer=True)

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, input_ids):
                return self.model(input_ids=input_ids).last_hidden_state

        module = Encoder().eval()
    return module, (torch.randint(0, config.vocab_size, (1, sequence)),)


def _transformer_spec(network: str, factory, sequence: int, config: str) -> ModelSpec:
    return ModelSpec(network, f"seq{sequence}",
                     lambda seed=0: factory(seed, sequence, False),
                     lambda seed=0: factory(seed, sequence, True),
                     f"transformers.{config}() with random weights")


MODELS = {
    "mobilenet_v1": _image_spec("mobilenet_v1", _mobilenet_v1_module),
    "mobilenet_v2": _image_spec("mobilenet_v2", _mobilenet_v2_module),
    "resnet50": _image_spec("resnet50", _resnet50_module),
    "deeplab_v3": _segmentation_spec(
        "deeplab_v3", _deeplab_v3_module, 257, 21,
        "hand-written torch.nn module: DeepLab v3 (Chen et al. 2017) on MobileNetV2, output "
        "stride 8, the mobile head (1x1 + image pooling) of TFLite's deeplabv3_257_mv_gpu"),
    "gpt2": _transformer_spec("gpt2", _gpt2_modules, 128, "GPT2Config"),
    "bert_base": _transformer_spec("bert_base", _bert_modules, 128, "BertConfig"),
}
"""Model name → :class:`ModelSpec`."""


def model_names() -> list[str]:
    return sorted(MODELS)


def build(name: str, *, training: bool = False, seed: int = 0):
    """(module, example args) of model ``name``; an unknown name lists the valid ones."""
    if name not in MODELS:
        raise InputError(f"unknown torch model {name!r}; valid: {', '.join(model_names())}",
                         field="model")
    spec = MODELS[name]
    return spec.training(seed) if training else spec.inference(seed)


# --- timm ------------------------------------------------------------------------------------

def timm_model(architecture: str, *, training: bool = False, seed: int = 0, size: int = 224,
               num_classes: int = 1000):
    """(module, args) of a timm architecture (``mobilenetv2_100``, ``resnet50``...) with random
    weights (``pretrained=False``; nothing is downloaded). timm is imported with the
    torchvision stand-in (:func:`~optplan.torch.export.timm_module`). In-place
    activations are switched off: under export they become functional ops plus clones, which
    would add copies a planner need not see."""
    from optplan.torch.export import timm_module

    torch = torch_module()
    timm = timm_module()
    torch.manual_seed(seed)
    classifier = timm.create_model(architecture, pretrained=False, num_classes=num_classes)
    for layer in classifier.modules():
        if getattr(layer, "inplace", False) is True:
            layer.inplace = False
    images = torch.randn(1, 3, size, size)
    if training:
        return _with_cross_entropy(classifier).train(), (images,
                                                         torch.randint(0, num_classes, (1,)))
    return classifier.eval(), (images,)


# --- instances ---------------------------------------------------------------------------------

VARIANTS = ("raw", "fused", "train")
"""``raw``: the inference graph of ATen ops, views aliasing their base; ``fused``: the same after
:func:`optplan.graph.fuse` (TFLite-like, views as copies like TFLite's arena); ``train``: the
joint forward + backward graph of one training step, views aliasing."""

REGENERATE = "optplan import torch"


def capture(network: str, variant: str, *, seed: int = 0):
    """The :class:`~optplan.torch.export.TorchProgram` of ``network`` (raw/fused:
    inference capture, train: joint training graph)."""
    from optplan.torch.export import export_program
    from optplan.torch.training import export_training_program

    if variant not in VARIANTS:
        raise InputError(f"unknown variant {variant!r}; valid: {', '.join(VARIANTS)}",
                         field="variant")
    module, args = build(network, training=variant == "train", seed=seed)
    name = instance_name(network, variant)
    if variant == "train":
        return export_training_program(module, args, name=name)
    return export_program(module, args, name=name)


def instance_name(network: str, variant: str) -> str:
    """``{network}_{variant}_torch_{input}``, e.g. ``gpt2_train_torch_seq128``."""
    if network not in MODELS:
        raise InputError(f"unknown torch model {network!r}; valid: {', '.join(model_names())}",
                         field="model")
    return f"{network}_{variant}_torch_{MODELS[network].input_label}"


def program_instance(program, network: str, variant: str, *, seed: int = 0):
    """The instance of a captured program: lifetimes, name and provenance (source, importer,
    versions, regeneration command, content hash)."""
    from importlib.metadata import PackageNotFoundError, version

    from optplan.graph import fuse, lifetimes
    from optplan.instances import content_hash
    from optplan.model import Instance

    torch = torch_module()
    name = instance_name(network, variant)
    graph = fuse(program.graph) if variant == "fused" else program.graph
    views = "copy" if variant == "fused" else "alias"
    instance = lifetimes(graph, views=views, name=name)
    source = {"builder": network, "seed": seed, "architecture": MODELS[network].source,
              "package": "torch", "version": torch.__version__}
    try:
        source["transformers_version"] = version("transformers") \
            if network in ("gpt2", "bert_base") else None
    except PackageNotFoundError:
        pass
    source = {key: value for key, value in source.items() if value is not None}
    provenance = {key: value for key, value in instance.provenance.items()
                  if key not in ("graph", "fused")}
    importer = "torch_training" if variant == "train" else "torch_export"
    provenance.update(source=source, importer={"name": importer, "version": torch.__version__},
                      network=network, variant=variant, format="torch", views=views,
                      command=f"{REGENERATE} {network} --variant {variant} --seed {seed}")
    if variant == "train":
        from optplan.torch.training import saved_activations_in_graph

        saved = saved_activations_in_graph(program.graph)
        provenance["saved_activations"] = {"tensors": len(saved), "bytes": sum(saved.values())}
    graph_data = instance.provenance["graph"]
    instance = Instance(instance.records, name, instance.alignment, instance.inplace_pairs,
                        dict(provenance, graph=graph_data))
    provenance["content_sha256"] = content_hash(instance)
    return Instance(instance.records, name, instance.alignment, instance.inplace_pairs,
                    dict(provenance, graph=graph_data))


def torch_instance(network: str, variant: str = "raw", *, seed: int = 0):
    """(instance, program) of ``network`` captured as ``variant``."""
    program = capture(network, variant, seed=seed)
    instance = program_instance(program, network, variant, seed=seed)
    if variant == "train":      # the eager reference for the saved activations
        from optplan.torch.training import saved_activation_bytes

        module, args = build(network, training=True, seed=seed)
        instance.provenance["saved_activations"]["eager_bytes"] = \
            saved_activation_bytes(module, args)
    return instance, program
