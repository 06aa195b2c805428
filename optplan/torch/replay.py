"""Arena replay: run a captured PyTorch program with every intermediate tensor at its planned
offset in one preallocated arena, and check that it computes what normal execution computes.

An offsets plan is only a claim until a program runs on it. :func:`replay` executes the FX
graph of a :class:`~optplan.torch.export.TorchProgram` op by op (the order of the
graph, which is the instance's time axis):

* one ``uint8`` arena of ``arena_size`` bytes is allocated; every tensor that has a usage record
  is a view of it (``as_strided`` on the arena viewed as the tensor's dtype, at the planned
  offset, with the tensor's shape and strides);
* an op with an ``out=`` overload in ATen (``add.out``, ``addmm.out``, ``mean.out``,
  ``full.out``...: the same arguments, less the allocation options ``dtype``/``device``/...
  that the out tensor carries, plus out tensors) is called with its arena views as ``out``.
  A materialised view (``expand``, kept as ``BROADCAST_TO``) uses its ``*_copy.out`` twin;
  ops whose own out= is a generated wrapper or missing use a CPU twin (:data:`_NATIVE_TWINS`:
  batch-norm, relu, embedding; ``copy_``/``fill_`` for clone, expand, full). Convolutions
  keep ATen's generated ``convolution.out``: the only CPU convolution with a real out= kernel,
  ``_slow_conv2d_forward`` (im2col), rounds differently, and batch-norm over a batch of one
  in a training graph amplifies that to 1 % of a gradient. Results nobody reads (batch-norm statistics at
  inference, max-pool indices) get scratch tensors outside the arena, since the plan has no
  record for them;
* honesty about what "in place" means: out= overloads with a CPU kernel of their own write
  straight into the arena (:attr:`ReplayReport.written_in_place`); many others
  (``convolution.out``, ``native_layer_norm.out``, ``convolution_backward.out``...) are
  wrappers that ATen *generates* from the functional op — they compute a fresh tensor and copy
  it into ``out`` inside ATen (:attr:`ReplayReport.written_by_generated_out`,
  :func:`has_native_out_kernel`). Ops with no ``out=`` overload at all are computed into a
  temporary and ``copy_``-ed into their arena view by us (:attr:`ReplayReport.copied`). Either
  way each result's final home is its planned slot, so the plan is what is being tested;
* views (``lifetimes(views="alias")``) are taken of their base's arena view, and are checked to
  share the arena's storage; graph inputs are copied into their arena slot before op 0;
  weights stay outside the arena (they are not part of the instance).

Two checks. **Reads**: after each op, a copy of what it wrote to each of its records is kept
until the record's last reader; before each op, every activation it reads must still equal,
bit for bit, what its producer wrote — so a plan that lets a live tensor be overwritten (a bad
offset, a too-short lifetime) fails at the first op that reads clobbered memory, with names.
**Outputs**: the graph outputs are compared with a normal execution of the same graph (every
op allocating its own results) by ``torch.allclose`` scaled to each tensor's magnitude
(:func:`_close`): the arena run may use other kernels (batch-norm's mutating twin), which
could round differently (on MobileNet v2 and GPT-2 they do not: the outputs are bit-equal). Both runs see the same random generator state, so
dropout draws the same masks.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from optplan.errors import InputError
from optplan.graph.lifetimes import view_bases
from optplan.torch.export import TorchProgram, torch_module
from optplan.model import Instance, OffsetsSolution

__all__ = ["ReplayReport", "replay", "out_overload", "copy_overload", "has_native_out_kernel",
           "overlap_live_tensors",
           "ARENA_FILL", "TENSOR_OPTIONS"]

ARENA_FILL = 0xFF
"""Byte every arena starts filled with (NaN for floats): reading memory that no op wrote shows."""

RTOL, ATOL = 1e-4, 1e-5


@dataclass
class ReplayReport:
    """What :func:`replay` found. ``passed`` is True only when every checked read found what
    its producer wrote and every output matched normal execution; ``max_abs_diff`` is the
    largest output difference from normal execution."""

    passed: bool
    max_abs_diff: float
    ops: int = 0
    written_in_place: int = 0       # out= overloads with a CPU kernel: direct writes
    written_by_generated_out: int = 0   # ATen-generated out= wrappers (compute, copy inside)
    copied: int = 0                 # no out= overload: computed elsewhere, then copy_
    views: int = 0                  # view ops aliasing their base inside the arena
    scratch_outputs: int = 0        # unread extra results written outside the arena
    arena_size: int = 0
    failure: str | None = None
    copied_ops: dict = field(default_factory=dict)   # ATen op → count
    generated_out_ops: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"passed": self.passed, "max_abs_diff": self.max_abs_diff, "ops": self.ops,
                "written_in_place": self.written_in_place,
                "written_by_generated_out": self.written_by_generated_out,
                "copied": self.copied,
                "views": self.views, "scratch_outputs": self.scratch_outputs,
                "arena_size": self.arena_size, "failure": self.failure,
                "copied_ops": self.copied_ops, "generated_out_ops": self.generated_out_ops}


_OUT_CACHE: dict = {}

TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory", "memory_format"})
"""Keyword arguments that only say what kind of tensor to allocate: an ``out=`` overload takes
them from the out tensor instead (``full.out``, ``arange.start_out``, ``ones_like.out``)."""


def out_overload(op):
    """The ``out=`` overload of ATen op ``op``: (overload, out argument names, accepted
    argument names), or None.

    A candidate has the same arguments (names and types, in order) as ``op`` apart from the
    allocation options (:data:`TENSOR_OPTIONS`), plus one out argument per result of ``op`` in
    the order of the results (``Tensor(a!) out0, Tensor(b!) out1``: ATen's
    ``native_functions.yaml`` convention). A view op has none; see :func:`copy_overload`.
    """
    if op in _OUT_CACHE:
        return _OUT_CACHE[op]
    found = None
    packet = getattr(op, "overloadpacket", None)
    schema = getattr(op, "_schema", None)
    if packet is not None and schema is not None:
        wanted = [(a.name, str(a.type)) for a in schema.arguments if a.name not in TENSOR_OPTIONS]
        for overload in packet.overloads():
            candidate = getattr(packet, overload)
            arguments = candidate._schema.arguments
            outs = [argument.name for argument in arguments if argument.is_out]
            if not outs or len(outs) != len(schema.returns):
                continue
            if [(a.name, str(a.type)) for a in arguments
                    if not a.is_out and a.name not in TENSOR_OPTIONS] == wanted:
                accepted = frozenset(a.name for a in arguments if not a.is_out)
                found = (candidate, outs, accepted)
                break
    _OUT_CACHE[op] = found
    return found


def copy_overload(op):
    """For a view op (``expand``, ``permute``...), the ``out=`` overload of its materialising
    twin (``expand_copy.out``), or None."""
    name = getattr(getattr(op, "overloadpacket", None), "__name__", "")
    packet = getattr(torch_module().ops.aten, f"{name}_copy", None) if name else None
    twin = getattr(packet, op._overloadname, None) if packet is not None else None
    return out_overload(twin) if twin is not None else None


def _is_tensor(value) -> bool:
    return isinstance(value, torch_module().Tensor)


def _close(actual, expected) -> tuple[bool, float]:
    """(equal up to rounding, max abs difference). Integers and booleans must be equal; floats
    follow ``torch.allclose(actual, expected, rtol=RTOL, atol=ATOL · scale)`` with ``scale``
    the tensor's largest magnitude (at least 1): kernels that reduce in another order (a
    batch-norm's batch statistics, an im2col convolution) differ by a few ulps of the
    tensor's scale, while a clobbered tensor differs by the scale itself."""
    torch = torch_module()
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False, float("inf")
    if actual.numel() == 0:
        return True, 0.0
    if not (actual.is_floating_point() or actual.is_complex()):
        equal = torch.equal(actual, expected)
        return equal, 0.0 if equal else float("inf")
    if bool((torch.isnan(actual) != torch.isnan(expected)).any()):
        return False, float("inf")
    finite = torch.isfinite(expected)
    if not bool(finite.any()):
        return torch.equal(actual, expected), 0.0
    difference = float((actual.double() - expected.double()).abs()[finite].max())
    scale = max(1.0, float(expected.double().abs()[finite].max()))
    ok = torch.allclose(actual, expected, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
    return ok, difference


def _dense_strides(like) -> tuple[int, ...]:
    """``like``'s strides when they are non-overlapping and dense (the layout the op would
    produce), else contiguous ones: a materialised ``expand`` has stride-0 dimensions that
    would make its slot overlap itself."""
    from torch._prims_common import (is_non_overlapping_and_dense_or_false,
                                     make_contiguous_strides_for)

    if is_non_overlapping_and_dense_or_false(like):
        return tuple(like.stride())
    return tuple(make_contiguous_strides_for(tuple(like.shape)))


class _Arena:
    """One uint8 buffer and typed, strided views of it at planned offsets."""

    def __init__(self, size: int):
        torch = torch_module()
        self.size = size
        padded = -(-max(size, 1) // 16) * 16
        self.buffer = torch.full((padded,), ARENA_FILL, dtype=torch.uint8)
        self.pointer = self.buffer.untyped_storage().data_ptr()
        self._typed: dict = {}

    def view(self, offset: int, like, name: str):
        dtype = like.dtype
        itemsize = like.element_size()
        if offset % itemsize:
            raise InputError(f"offset {offset} of tensor {name!r} is not a multiple of its "
                             f"element size {itemsize} ({dtype}); solve with an alignment",
                             field="offset")
        if dtype not in self._typed:
            self._typed[dtype] = self.buffer.view(dtype)
        return self._typed[dtype].as_strided(tuple(like.shape), _dense_strides(like),
                                              offset // itemsize)

    def holds(self, tensor) -> bool:
        return tensor.untyped_storage().data_ptr() == self.pointer


def _records_by_tensor(program: TorchProgram, instance: Instance, solution: OffsetsSolution):
    graph = program.graph
    base = view_bases(graph)
    offsets = {record.id: offset for record, offset in zip(instance.records, solution.offsets)}
    for name in offsets:
        if name not in graph.tensors:
            raise InputError(f"plan tensor {name!r} is not in the program's graph", field="id")
        if base[name] != name:
            raise InputError(f"plan tensor {name!r} is a view; plans must come from "
                             "lifetimes(views='alias')", field="id")
    for name, tensor in graph.tensors.items():
        if base[name] == name and tensor.bytes > 0 and name not in offsets:
            raise InputError(f"the plan has no record for tensor {name!r}", field="id")
        if name in offsets and instance.records[instance.index_of[name]].size < tensor.bytes:
            raise InputError(f"record {name!r} is smaller than the tensor ({tensor.bytes} bytes)",
                             field="size")
    return offsets, base


def replay(program: TorchProgram, instance: Instance, solution: OffsetsSolution, *,
           check_reads: bool = True) -> ReplayReport:
    """Run ``program`` with its activations placed by ``solution`` (see the module docstring).

    Parameters
    ----------
    program : TorchProgram
        From :func:`~optplan.torch.export.export_program` or
        :func:`~optplan.torch.training.export_training_program`.
    instance : Instance
        ``lifetimes(program.graph, views="alias")`` (record ids are tensor names).
    solution : OffsetsSolution
        Offsets for ``instance``'s records; each must be a multiple of its tensor's element size.
    check_reads : bool
        Check before every op that each activation it reads still holds, bit for bit, what its
        producer wrote (else only the outputs are compared).

    Returns
    -------
    ReplayReport
    """
    torch = torch_module()
    offsets, base = _records_by_tensor(program, instance, solution)
    nodes = list(program.module.graph.nodes)
    last_use = _last_uses(nodes, base)
    rng_state = torch.random.get_rng_state()
    expected = _normal_run(program, nodes, last_use)
    torch.random.set_rng_state(rng_state)       # the same dropout masks in both runs

    graph_ops = {op.name: op for op in program.graph.ops}
    arena = _Arena(solution.arena_size)
    report = ReplayReport(passed=True, max_abs_diff=0.0, arena_size=solution.arena_size)
    placeholders = program.placeholder_values()
    placed: dict = {}
    written: dict = {}              # record → a copy of what its producer wrote

    def slot(name: str, value):
        return arena.view(offsets[name], value, name)

    def fail(message: str) -> ReplayReport:
        report.passed = False
        report.failure = report.failure or message
        return report

    with torch.no_grad():
        for position, node in enumerate(nodes):
            if node.op == "placeholder":
                value = placeholders[node.name]
                placed[node.name] = slot(node.name, value).copy_(value) \
                    if node.name in offsets else value
                if check_reads and node.name in offsets:
                    written[node.name] = value.clone()
                continue
            if node.op == "output":
                _compare_outputs(node, placed, expected, report)
                break
            if node.target is operator.getitem:
                continue
            if node.op != "call_function":
                raise InputError(f"unsupported FX node {node.op} {node.name}", field="graph")
            op = graph_ops.get(node.name)
            if check_reads and op is not None:
                for name in op.inputs:
                    root = base[name]
                    if root in written and not torch.equal(placed[root], written[root]):
                        difference = _close(placed[root], written[root])[1]
                        return fail(f"FX node {position} ({node.name}) reads tensor {name!r}, "
                                    f"whose memory was overwritten while live (max abs diff "
                                    f"{difference:g} from what its producer wrote)")
            arena_args = torch.fx.node.map_arg((node.args, node.kwargs),
                                               lambda n: placed[n.name])
            if op is None:                  # a view of a weight, or an unread view
                _store(node, node.target(*arena_args[0], **arena_args[1]), placed)
            else:
                report.ops += 1
                try:
                    error = _run_in_arena(node, op, arena_args, arena, slot, base, placed,
                                          report)
                except RuntimeError as exception:     # e.g. out= overlapping an input
                    first_line = str(exception).strip().splitlines()[0]
                    error = f"FX node {position} ({node.name}) failed in the arena: " \
                        f"{first_line}"
                if error:
                    return fail(error)
                if check_reads:
                    for name in op.outputs:
                        if name in offsets:
                            written[name] = placed[name].clone()
            for used in node.all_input_nodes:
                root = base.get(used.name, used.name)
                if last_use.get(root) == position:
                    written.pop(root, None)
    return report


def _last_uses(nodes, base: dict) -> dict:
    """FX node position of the last read of every value; a view's reads count for its base."""
    last_use: dict = {}
    for position, node in enumerate(nodes):
        for used in node.all_input_nodes:
            last_use[used.name] = position
            root = base.get(used.name, used.name)
            last_use[root] = max(last_use.get(root, position), position)
    return last_use


def _normal_run(program: TorchProgram, nodes, last_use: dict) -> dict:
    """Normal execution of the graph (every op allocates its results); the graph outputs."""
    torch = torch_module()
    values = program.placeholder_values()
    environment = dict(values)
    outputs: dict = {}
    with torch.no_grad():
        for position, node in enumerate(nodes):
            if node.op == "output":
                found = []
                torch.fx.node.map_arg(node.args, found.append)
                outputs = {n.name: environment[n.name] for n in found}
                break
            if node.op != "call_function" or node.target is operator.getitem:
                continue
            args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs),
                                                 lambda n: environment[n.name])
            _store(node, node.target(*args, **kwargs), environment)
            for used in node.all_input_nodes:
                if last_use.get(used.name) == position and used.name not in values:
                    environment.pop(used.name, None)
    return outputs


def _store(node, value, environment: dict) -> None:
    environment[node.name] = value
    if isinstance(value, (tuple, list)):
        for user in node.users:
            if user.target is operator.getitem:
                environment[user.name] = value[user.args[1]]


def _run_in_arena(node, op, arguments, arena: _Arena, slot, base, placed, report) -> str | None:
    """Compute ``node`` into its arena slots; an error message or None."""
    torch = torch_module()
    args, kwargs = arguments
    if op.outputs and all(base[name] != name for name in op.outputs):   # an aliasing view
        result = node.target(*args, **kwargs)
        if result.numel() and not arena.holds(result):
            return f"view {node.name} does not alias its base in the arena"
        report.views += 1
        _store(node, result, placed)
        return None
    value = node.meta["val"]
    results = list(value) if isinstance(value, (tuple, list)) else [value]
    names = _result_names(node, len(results))
    outs = []
    for name, meta in zip(names, results):
        if not _is_tensor(meta):    # a result the op was told not to compute (output_mask)
            outs.append(None)
        elif name is not None and meta.numel() > 0:
            outs.append(slot(name, meta))
        else:                       # unread or empty: scratch outside the arena
            outs.append(torch.empty_strided(tuple(meta.shape), tuple(meta.stride()),
                                            dtype=meta.dtype))
            report.scratch_outputs += int(name is None)
    variant = out_overload(node.target) or copy_overload(node.target)
    native_twin = _NATIVE_TWINS.get(str(node.target))
    if None in outs:
        args, outs = _unmasked(node, args, outs, report)
    if None in outs:                # out= cannot leave a result out: fall back to a copy
        variant = native_twin = None
    if native_twin is not None and native_twin(args, kwargs, outs):
        report.written_in_place += 1
    elif variant is not None:
        overload, out_names, accepted = variant
        kwargs = {key: value for key, value in kwargs.items() if key in accepted}
        returned = overload(*args, **kwargs, **dict(zip(out_names, outs)))
        returned = list(returned) if isinstance(returned, (tuple, list)) else [returned]
        for out, got in zip(outs, returned):
            if out.numel() and got.data_ptr() != out.data_ptr():
                return f"op {node.name}: out= reallocated its result outside the arena"
        if has_native_out_kernel(overload):
            report.written_in_place += 1
        else:
            report.written_by_generated_out += 1
            _count(report.generated_out_ops, str(node.target))
    else:
        computed = node.target(*args, **kwargs)
        computed = list(computed) if isinstance(computed, (tuple, list)) else [computed]
        for out, got in zip(outs, computed):
            if out is not None and _is_tensor(got) and got.numel():
                out.copy_(got)
        report.copied += 1
        _count(report.copied_ops, str(node.target))
    single = not isinstance(value, (tuple, list))
    _store(node, outs[0] if single else tuple(outs), placed)
    return None


def _batch_norm_functional_into(args, kwargs, outs) -> bool:
    """Training batch-norm, ``_native_batch_norm_legit_functional`` (no ``out=`` overload),
    through its mutating twin ``_native_batch_norm_legit.out``: the running statistics are
    copied into their output slots (C floats each), which the op then updates in place while
    writing the normalised output and the saved statistics."""
    if kwargs or len(args) != 8:
        return False
    inputs, weight, bias, running_mean, running_var, training, momentum, epsilon = args
    output, save_mean, save_invstd, new_mean, new_var = outs
    new_mean.copy_(running_mean)
    new_var.copy_(running_var)
    torch_module().ops.aten._native_batch_norm_legit.out(
        inputs, weight, bias, new_mean, new_var, training, momentum, epsilon, out=output,
        save_mean=save_mean, save_invstd=save_invstd)
    return True


def _batch_norm_inference_into(args, kwargs, outs) -> bool:
    """Inference batch-norm (``_native_batch_norm_legit_no_training``, whose out= is a
    generated wrapper) through ``native_batch_norm.out(training=False)``, a CPU kernel."""
    if kwargs or len(args) != 7:
        return False
    inputs, weight, bias, running_mean, running_var, momentum, epsilon = args
    torch_module().ops.aten.native_batch_norm.out(
        inputs, weight, bias, running_mean, running_var, False, momentum, epsilon,
        out=outs[0], save_mean=outs[1], save_invstd=outs[2])
    return True


def _relu_into(args, kwargs, outs) -> bool:
    """``relu`` (generated out=) as ``clamp_min.out(x, 0)``, a CPU kernel."""
    if kwargs or len(args) != 1:
        return False
    torch_module().ops.aten.clamp_min.out(args[0], 0, out=outs[0])
    return True


def _copy_into(args, kwargs, outs) -> bool:
    """``clone`` is a copy: ``out.copy_(x)`` (``copy_`` is its kernel)."""
    outs[0].copy_(args[0])
    return True


def _expand_into(args, kwargs, outs) -> bool:
    """A materialised ``expand`` (``BROADCAST_TO``): ``out.copy_(x.expand(size))`` — the
    broadcast is a view, the copy is the materialisation itself."""
    if kwargs.get("implicit", False) or len(args) != 2:
        return False
    outs[0].copy_(args[0].expand(args[1]))
    return True


def _fill_into(args, kwargs, outs) -> bool:
    """``full(size, value)`` / ``scalar_tensor(value)``: ``out.fill_(value)``."""
    outs[0].fill_(args[-1] if len(args) == 2 else args[0])
    return True


def _embedding_into(args, kwargs, outs) -> bool:
    """``embedding(weight, ids)`` as ``index_select.out(weight, 0, ids)`` (a CPU kernel) into
    the output slot seen as (tokens, width)."""
    if kwargs or len(args) != 2 or not outs[0].is_contiguous():
        return False
    weight, ids = args
    torch_module().ops.aten.index_select.out(weight, 0, ids.reshape(-1),
                                             out=outs[0].view(-1, weight.shape[1]))
    return True


_NATIVE_TWINS = {
    "aten.clone.default": _copy_into,
    "aten.expand.default": _expand_into,
    "aten.full.default": _fill_into,
    "aten.scalar_tensor.default": _fill_into,
    "aten.embedding.default": _embedding_into,
    "aten._native_batch_norm_legit_functional.default": _batch_norm_functional_into,
    "aten._native_batch_norm_legit_no_training.default": _batch_norm_inference_into,
    "aten.relu.default": _relu_into,
}
"""Ops whose own ``out=`` is missing or generated, and a CPU kernel with an ``out=`` that
computes the same thing straight into the arena. Each returns False when the call does not
fit (the caller then uses the op's own ``out=`` or a copy)."""


_OUTPUT_MASKS = {
    # op: (position of output_mask, shapes of the three results from the arguments)
    "aten.convolution_backward.default":
        (10, lambda args: [args[1].shape, args[2].shape, tuple(args[3] or ())]),
    "aten.native_batch_norm_backward.default":
        (9, lambda args: [args[1].shape, (args[1].shape[1],), (args[1].shape[1],)]),
}
"""Backward ops told not to compute some results (``output_mask``: no input gradient for the
first layer, no bias gradient for a bias-free convolution)."""


def _unmasked(node, args, outs, report):
    """An ``output_mask`` op with every result switched on: masked results are computed into
    scratch tensors outside the arena (small: bias gradients, or the first layer's input
    gradient), because ``out=`` overloads cannot leave a result out."""
    entry = _OUTPUT_MASKS.get(str(node.target))
    if entry is None or len(args) <= entry[0]:
        return args, outs
    torch = torch_module()
    position, shapes = entry
    like = args[0]
    outs = [out if out is not None else torch.empty(tuple(shape), dtype=like.dtype)
            for out, shape in zip(outs, shapes(args))]
    report.scratch_outputs += sum(1 for mask in args[position] if not mask)
    args = tuple(args[:position]) + ([True] * len(args[position]),) + tuple(args[position + 1:])
    return args, outs


def _count(counter: dict, key: str) -> None:
    counter[key] = counter.get(key, 0) + 1


def has_native_out_kernel(overload) -> bool:
    """True when ``overload`` (an ``out=`` overload) has a CPU kernel of its own, which writes
    into the out tensor; False for the out= wrappers ATen generates from the functional op
    (``autogen`` in ``native_functions.yaml``, registered as CompositeExplicitAutograd), which
    compute a fresh result and copy it into ``out`` inside ATen."""
    return torch_module()._C._dispatch_has_kernel_for_dispatch_key(overload.name(), "CPU")


def _result_names(node, count: int) -> list:
    """Tensor name of each result of ``node`` (None for results nobody reads)."""
    if count == 1 and not isinstance(node.meta["val"], (tuple, list)):
        return [node.name]
    names: list = [None] * count
    for user in node.users:
        if user.target is operator.getitem and user.users:
            names[user.args[1]] = user.name
    return names


def _compare_outputs(node, placed, expected: dict, report) -> None:
    """Graph outputs of the arena run against normal execution (:func:`_close`)."""
    found = []
    torch_module().fx.node.map_arg(node.args, found.append)
    for output in found:
        reference = expected.get(output.name)
        if not _is_tensor(reference):
            continue
        ok, difference = _close(placed[output.name], reference)
        report.max_abs_diff = max(report.max_abs_diff, difference)
        if not ok:
            report.passed = False
            report.failure = report.failure or f"output {output.name!r} differs from normal " \
                                               f"execution (max abs diff {difference:g})"


def overlap_live_tensors(instance: Instance, solution: OffsetsSolution
                         ) -> tuple[OffsetsSolution, tuple[str, str]]:
    """A deliberately corrupted copy of ``solution``: record ``b`` moved onto record ``a``,
    where ``b`` is produced strictly inside ``a``'s lifetime and ``a`` is read after that, so a
    correct replay must notice ``a`` being overwritten. Picks the largest such ``a``.

    Raises :class:`InputError` when no two records overlap that way.
    """
    records = instance.records
    best = None
    for i, a in enumerate(records):
        for j, b in enumerate(records):
            if a.first_op < b.first_op < a.last_op and (best is None or
                                                        a.size > records[best[0]].size):
                best = (i, j)
                break
    if best is None:
        raise InputError("no record is produced inside another's lifetime", field="records")
    offsets = list(solution.offsets)
    offsets[best[1]] = offsets[best[0]]
    corrupted = OffsetsSolution.from_offsets(instance, offsets)
    return corrupted, (records[best[0]].id, records[best[1]].id)
