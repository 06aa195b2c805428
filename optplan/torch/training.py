"""Training graphs: the forward + backward joint graph of one training step, from AOTAutograd.

MXNet's memory-planning notes ("Optimizing the Memory Consumption in Deep Learning") and
NNTrainer's planners treat a training step as one graph: the forward ops, then the backward ops
that read the **saved activations** of the forward pass and produce **derivatives** (gradients
of activations, short-lived) and **gradients** of the weights (graph outputs, read by the
optimizer). Saved activations live from their forward op into the backward pass — the long
lifetimes that make these instances hard.

``torch._functorch.aot_autograd.aot_export_module(module, args, trace_joint=True,
output_loss_index=0)`` traces exactly that graph in ATen ops: parameters and buffers are
placeholders, the outputs are (mutated buffers — batch-norm running statistics —, the loss,
the parameter gradients). Two pitfalls handled here:

* the loss is identified by its *position* among the outputs (``output_loss_index``), not by
  ``backward_signature.loss_output``, which can name a buffer-mutation output;
* parameters are taken from ``module.named_parameters()`` (duplicates removed), so GPT-2's tied
  head/embedding is one parameter with one gradient.

:func:`saved_activation_bytes` counts what eager autograd saves for backward (via
``torch.autograd.graph.saved_tensors_hooks``), the reference the joint graph is checked against.
"""

from __future__ import annotations

import contextlib

from optplan.torch.export import TorchProgram, graph_from_fx, torch_module

__all__ = ["export_training_program", "saved_activation_bytes", "saved_activations",
           "saved_activations_in_graph"]


@contextlib.contextmanager
def _without_packed_sequence_check():
    """transformers' packed-sequence detection (``masking_utils.find_packed_sequence_indices``)
    reads ``position_ids`` values, which AOTAutograd cannot trace; our inputs are one unpacked
    sequence, so it answers "not packed" (``None``) while tracing."""
    try:
        from transformers import masking_utils
    except ImportError:
        masking_utils = None
    original = getattr(masking_utils, "find_packed_sequence_indices", None)
    if original is None:
        yield
        return
    masking_utils.find_packed_sequence_indices = lambda *args, **kwargs: None
    try:
        yield
    finally:
        masking_utils.find_packed_sequence_indices = original


def export_training_program(module, args: tuple, *, name: str,
                            provenance: dict | None = None) -> TorchProgram:
    """The joint forward + backward graph of one step of ``module`` (which returns the loss).

    Parameters
    ----------
    module : torch.nn.Module
        In training mode; ``module(*args)`` returns a scalar loss.
    args : tuple
        Example inputs (their values are kept for replay).
    name : str
        The graph's name.

    Returns
    -------
    TorchProgram
        Graph outputs: running-statistics updates, the loss, every parameter gradient. Graph
        provenance records ``loss`` (its tensor name) and ``gradients`` (how many).
    """
    torch = torch_module()
    from torch._functorch.aot_autograd import aot_export_module

    module = module.train()
    wrapper = _loss_tuple(module)
    with _without_packed_sequence_check():
        graph_module, signature = aot_export_module(wrapper, tuple(args), trace_joint=True,
                                                    output_loss_index=0)
    constants, weight_names = {}, {}
    for placeholder, target in signature.inputs_to_parameters.items():
        constants[placeholder] = wrapper.get_parameter(target).detach()
        weight_names[placeholder] = target.removeprefix("model.")
    for placeholder, target in signature.inputs_to_buffers.items():
        constants[placeholder] = wrapper.get_buffer(target).detach().clone()
        weight_names[placeholder] = target.removeprefix("model.")
    inputs = dict(zip(signature.user_inputs, args))
    output_nodes = list(graph_module.graph.output_node().args[0])
    loss_position = len(signature.buffers_to_mutate)
    loss = output_nodes[loss_position].name
    gradients = {node: target.removeprefix("model.")
                 for node, target in signature.backward_signature.gradients_to_parameters.items()}
    provenance = dict(provenance or {})
    provenance.update(torch_version=torch.__version__, loss=loss, gradients=len(gradients),
                      capture="torch._functorch.aot_autograd.aot_export_module(trace_joint=True,"
                              " output_loss_index=0)")
    graph = graph_from_fx(graph_module, constants, name=name, weight_names=weight_names,
                          provenance=provenance)
    return TorchProgram(graph, graph_module, constants, inputs, weight_names)


def _loss_tuple(module):
    """``module`` wrapped so its forward returns a one-tuple (AOTAutograd's joint tracing wants
    the loss at a known output position)."""
    nn = torch_module().nn

    class LossTuple(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = module

        def forward(self, *inputs):
            return (self.model(*inputs),)

    return LossTuple()


def saved_activations(module, args: tuple) -> list:
    """Tensors eager autograd saves for backward during ``module(*args)`` (forward only),
    deduplicated by storage and excluding parameters and buffers."""
    torch = torch_module()
    constant_storages = {t.untyped_storage().data_ptr()
                         for t in list(module.parameters()) + list(module.buffers())}
    saved: dict[int, object] = {}

    def pack(tensor):
        pointer = tensor.untyped_storage().data_ptr()
        if pointer not in constant_storages and tensor.numel():
            saved.setdefault(pointer, tensor)
        return tensor

    module = module.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with _without_packed_sequence_check():
            module(*args)
    return list(saved.values())


def saved_activation_bytes(module, args: tuple) -> int:
    """Bytes of the distinct storages autograd saves in an eager forward pass of ``module``."""
    return sum(t.untyped_storage().nbytes() for t in saved_activations(module, args))


def saved_activations_in_graph(graph) -> dict[str, int]:
    """Tensors of a joint graph that the forward pass saves for the backward pass: produced
    (as a base, not a view) at or before the loss op and read after it. Name → bytes.

    Views count as their base (``lifetimes(views="alias")`` semantics); graph outputs that no
    backward op reads (the loss, running statistics) are not saved activations.
    """
    from optplan.graph.lifetimes import view_bases

    loss = graph.provenance["loss"]
    producer = graph.producer_index()
    loss_op = producer[loss]
    base = view_bases(graph)
    saved: dict[str, int] = {}
    for index, op in enumerate(graph.ops[loss_op + 1:], start=loss_op + 1):
        for name in op.inputs:
            root = base[name]
            if producer.get(root, -1) <= loss_op and root not in saved:
                saved[root] = graph.tensors[root].bytes
    return saved
