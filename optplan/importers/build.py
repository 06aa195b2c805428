"""From a model source to a named, provenance-stamped instance (what ``optplan import`` runs).

Naming scheme (data/README.md): ``{network}_{variant}_{format}_{input size}``, lowercase snake
case, e.g. ``mobilenet_v2_fused_tflite_224``, ``resnet50_raw_onnx_224``:

* ``network`` — the network's name as the issue writes it (``mobilenet_v1``, ``blazeface``...);
* ``variant`` — ``fused`` (TFLite-like: batch-norm, activations and bias adds folded into their
  producer) or ``raw`` (one op per framework layer/node);
* ``format`` — the graph the records come from: ``tflite`` (a TFLite flatbuffer, also for the
  Keras → TFLite path), ``onnx``, or ``keras`` (the raw Keras layer graph);
* ``input size`` — the input's spatial size (height).

TFLite graphs are fused by their converter and taken as stored (``raw`` is not available for
them); ONNX graphs are ``raw`` as imported and ``fused`` after :func:`optplan.graph.fuse`;
Keras networks are ``fused`` through the TFLite converter and ``raw`` as their layer graph.
"""

from __future__ import annotations

import shlex

from optplan.errors import InputError
from optplan.graph import fuse, lifetimes
from optplan.graph.model import Graph
from optplan.importers import IMPORTERS, file_sha256
from optplan.importers.sources import resolve_source, source_description
from optplan.model import Instance

__all__ = ["VARIANTS", "import_graph", "network_instance", "instance_name", "input_size"]

VARIANTS = ("fused", "raw")


def import_graph(importer: str, source: str, *, size: int | None = None,
                 raw: bool = False) -> tuple[Graph, str]:
    """The graph of ``source`` read by ``importer``, and the graph format (tflite, onnx, or
    keras for the raw Keras layer graph)."""
    if importer == "onnx":
        from optplan.importers.onnx import import_onnx
        path = resolve_source(source)
        graph = import_onnx(path)
        graph.provenance["source"] = dict(source_description(source), file=path.name,
                                          sha256=file_sha256(path))
        return graph, "onnx"
    if importer == "tflite":
        from optplan.importers.tflite import import_tflite
        path = resolve_source(source)
        graph = import_tflite(path)
        graph.provenance["source"] = dict(source_description(source),
                                          **graph.provenance["source"])
        return graph, "tflite"
    if importer == "keras":
        from optplan.importers.keras import import_keras
        graph, _ = import_keras(source, size, raw=raw)
        return graph, "keras" if raw else "tflite"
    raise InputError(f"unknown importer {importer!r}; valid: {', '.join(IMPORTERS)}",
                     field="importer")


def input_size(graph: Graph) -> int:
    """The spatial size of the first graph input (its height in NHWC or NCHW), else its
    largest dimension."""
    shape = graph.tensors[graph.inputs[0]].shape if graph.inputs else ()
    if len(shape) == 4:
        return int(shape[1] if shape[3] in (1, 3, 4) else shape[2])
    return int(max(shape, default=0))


def instance_name(network: str, variant: str, graph_format: str, size: int) -> str:
    return f"{network}_{variant}_{graph_format}_{size}"


def _command(importer: str, source: str, network: str, variant: str, views: str,
             size: int | None) -> str:
    parts = ["optplan", "import", importer, source, "--network", network, "--variant", variant]
    if views != "copy":
        parts += ["--views", views]
    if size is not None:
        parts += ["--size", str(size)]
    return shlex.join(parts)


def network_instance(importer: str, source: str, *, network: str, variant: str = "fused",
                     views: str = "copy", size: int | None = None) -> Instance:
    """Import, fuse if asked, analyse lifetimes, name and stamp provenance.

    Parameters
    ----------
    importer : {"onnx", "tflite", "keras"}
    source : str
        A source string (:mod:`optplan.importers.sources`) or, for ``keras``, a network name.
    network : str
        The network's catalogue name (``resnet50``...).
    variant : {"fused", "raw"}
    views : {"copy", "alias"}
        The lifetime analysis setting for reshape-like ops.
    size : int, optional
        Input size for ``keras`` (its default otherwise).
    """
    from optplan.instances import content_hash

    if variant not in VARIANTS:
        raise InputError(f"unknown variant {variant!r}; valid: {', '.join(VARIANTS)}",
                         field="variant")
    graph, graph_format = import_graph(importer, source, size=size, raw=variant == "raw")
    if graph_format == "tflite" and variant == "raw":
        raise InputError("TFLite graphs are fused by their converter; use --variant fused",
                         field="variant")
    if variant == "fused" and graph_format == "onnx":
        graph = fuse(graph)
    name = instance_name(network, variant, graph_format, input_size(graph))
    graph = Graph(name, graph.ops, graph.tensors, graph.inputs, graph.outputs,
                  graph.provenance)
    instance = lifetimes(graph, views=views, name=name)
    provenance = {key: value for key, value in instance.provenance.items()
                  if key not in ("graph", "fused")}
    importer_version = provenance.pop(f"{graph_format}_version", None)
    provenance.update(network=network, variant=variant, format=graph_format,
                      importer={"name": importer, "version": importer_version},
                      command=_command(importer, source, network, variant, views, size))
    instance = Instance(instance.records, name, instance.alignment, instance.inplace_pairs,
                        dict(provenance, graph=instance.provenance["graph"]))
    provenance["content_sha256"] = content_hash(instance)
    return Instance(instance.records, name, instance.alignment, instance.inplace_pairs,
                    dict(provenance, graph=instance.provenance["graph"]))
