"""Offline memory plans for TensorFlow Lite Micro (the ``tflm`` extra: ``tflite-micro``).

TFLM plans the non-persistent "head" of its arena when it allocates a model
(``micro_allocator.cc``, ``micro_allocation_info.cc``, ``greedy_memory_planner.cc``):

* **which tensors**: those with no constant data (an empty buffer), not variables, of non-zero
  size; each is planned at its byte size rounded up to 16 (``MicroArenaBufferAlignment``);
* **lifetimes** (``AllocationInfoBuilder::MarkAllocationLifetimes``, one subgraph, no control
  flow): the subgraph's inputs and outputs are created at step 0; operator ``k`` is step
  ``k + 1``: it creates its outputs there and extends the last use of its inputs and outputs to
  it; at the end the subgraph's outputs are extended to the last step. Intervals are closed.
  :func:`tflm_records` computes exactly this;
* **the planner** (``GreedyMemoryPlanner``): offline-planned buffers first at their given
  offsets, then the others by decreasing size (a stable sort of the buffers taken in reverse
  order of addition, so equal sizes go last-added first), each into the first gap between
  simultaneously live placed buffers, walked in offset order. :func:`tflm_greedy` reproduces it;
  the head TFLM reports after planning a model must equal its arena, which checks the
  lifetimes (:func:`compare` does on every model it plans).

An offline plan is model metadata named ``OfflineMemoryAllocation``: an int32 buffer
``[0 (version), 0 (subgraph), number of tensors, offset of tensor 0, ...]`` with ``-1`` for a
tensor TFLM should plan itself; the count must equal the number of tensors.
:func:`write_offline_plan` writes an offset for every tensor TFLM would plan and ``-1`` for the
rest. TFLM does not check the offsets for overlaps: the plan is validated before it is written.

Models with fp16 weights store them as constant ``DEQUANTIZE`` inputs, which TFLM's
``DEQUANTIZE`` kernel rejects; :func:`fold_constant_dequantize` folds them into fp32 constants
first (as TFLite's interpreter does at load time). ``DENSIFY`` and custom ops do not run in
TFLM: such a model fails with one line naming the op.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optplan.errors import InputError
from optplan.importers import require
from optplan.model import Instance, UsageRecord, round_up
from optplan.runtimes.plan import PlannedOffsets, RuntimeComparison, checked_plan, plan_offsets

__all__ = ["ALIGNMENT", "METADATA_NAME", "TflmModel", "load_model", "fold_constant_dequantize",
           "tflm_records", "tflm_greedy", "with_offline_plan", "write_offline_plan",
           "run_model", "compare", "TflmRun"]

ALIGNMENT = 16
"""TFLM rounds every planned buffer up to this many bytes (``MicroArenaBufferAlignment()``)."""

METADATA_NAME = "OfflineMemoryAllocation"

_ELEMENT_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8,
                  15: 4, 16: 2, 18: 2}
"""``TensorType`` code → bytes per element (``TfLiteTypeSizeOf``); packed and opaque types
(string, resource, variant, int4/int2/uint4, float8) are not planned here."""

_DEQUANTIZE, _CUSTOM, _DENSIFY = 6, 32, 124
_CONTROL_FLOW = {118: "IF", 119: "WHILE", 129: "CALL_ONCE"}
_FLOAT32, _FLOAT16 = 0, 1


def _schema():
    return require("tflite_micro.tensorflow.lite.micro.python.schema_py_generated", "tflm")


@dataclass
class TflmModel:
    """A parsed ``.tflite`` model (the flatbuffers object API of TFLM's schema) and its name."""

    model: object           # schema ModelT
    name: str
    file: str

    def to_bytes(self) -> bytes:
        flatbuffers = require("flatbuffers", "tflm")
        builder = flatbuffers.Builder(1 << 20)
        builder.Finish(self.model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())

    @property
    def subgraph(self):
        return self.model.subgraphs[0]

    def op_name(self, op) -> str:
        """``CONV_2D``, ``CUSTOM:Convolution2DTransposeBias``..."""
        schema = _schema()
        code = self.model.operatorCodes[op.opcodeIndex]
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        names = {value: key for key, value in vars(schema.BuiltinOperator).items()
                 if not key.startswith("_")}
        name = names.get(builtin, str(builtin))
        if builtin == _CUSTOM:
            custom = code.customCode
            name += ":" + (custom.decode() if isinstance(custom, bytes) else str(custom))
        return name


def load_model(path: str | Path) -> TflmModel:
    """Parse a ``.tflite`` file; a file that is not one is an :class:`InputError`."""
    schema = _schema()
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(error.strerror or str(error), file=str(path), field="model") from None
    try:
        model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    except Exception:  # flatbuffers raises anything on garbage
        raise InputError("not a TFLite flatbuffer", file=str(path), field="model") from None
    if not model.subgraphs:
        raise InputError("the model has no subgraph", file=str(path), field="subgraphs")
    return TflmModel(model, path.stem, str(path))


def _constant_data(model: TflmModel, tensor):
    buffer = model.model.buffers[tensor.buffer] if tensor.buffer < len(model.model.buffers) \
        else None
    data = None if buffer is None else buffer.data
    return data if data is not None and len(data) else None


def fold_constant_dequantize(model: TflmModel) -> int:
    """Replace every ``DEQUANTIZE`` of a constant fp16 tensor by an fp32 constant (the values
    TFLite's interpreter computes at load time); returns how many ops were folded. The tensor
    list is unchanged (the fp16 tensors stay, unread), so tensor indices keep their meaning."""
    schema = _schema()
    subgraph = model.subgraph
    kept, folded = [], 0
    for op in subgraph.operators or []:
        code = model.model.operatorCodes[op.opcodeIndex]
        source = subgraph.tensors[op.inputs[0]] if op.inputs is not None and len(op.inputs) \
            else None
        data = None if source is None else _constant_data(model, source)
        if max(code.builtinCode, code.deprecatedBuiltinCode) == _DEQUANTIZE \
                and data is not None and source.type == _FLOAT16:
            target = subgraph.tensors[op.outputs[0]]
            values = np.frombuffer(np.asarray(data, dtype=np.uint8).tobytes(), dtype="<f2")
            buffer = schema.BufferT()
            buffer.data = np.frombuffer(values.astype("<f4").tobytes(), dtype=np.uint8)
            model.model.buffers.append(buffer)
            target.buffer = len(model.model.buffers) - 1
            target.type = _FLOAT32
            folded += 1
            continue
        kept.append(op)
    subgraph.operators = kept
    return folded


def _check_runnable(model: TflmModel) -> None:
    """One-line errors for what TFLM cannot plan or run, before it is asked to."""
    if len(model.model.subgraphs) != 1:
        raise InputError(f"{len(model.model.subgraphs)} subgraphs; only single-subgraph models "
                         "are planned here", file=model.file, field="subgraphs")
    for index, op in enumerate(model.subgraph.operators or []):
        name = model.op_name(op)
        code = model.model.operatorCodes[op.opcodeIndex]
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        if builtin == _CUSTOM or builtin == _DENSIFY or builtin in _CONTROL_FLOW:
            raise InputError(f"TFLite Micro cannot run op {name} (operator {index})",
                             file=model.file, field="operators")


def _tensor_bytes(model: TflmModel, index: int) -> int:
    tensor = model.subgraph.tensors[index]
    if tensor.type not in _ELEMENT_BYTES:
        raise InputError(f"tensor {index} has a type (code {tensor.type}) TFLM's planner "
                         "sizes differently", file=model.file, field="tensors")
    shape = [] if tensor.shape is None else [int(d) for d in tensor.shape]
    return int(np.prod(shape, dtype=np.int64)) * _ELEMENT_BYTES[tensor.type]


def tflm_records(model: TflmModel) -> tuple[Instance, tuple[int, ...]]:
    """The tensors TFLM plans, with TFLM's lifetimes and 16-byte sizes (module docstring), as
    an instance, and the tensor index of each record."""
    _check_runnable(model)
    subgraph = model.subgraph
    count = len(subgraph.tensors)
    first, last = [-1] * count, [-1] * count

    def created(tensor: int, step: int) -> None:
        first[tensor] = last[tensor] = step

    inputs = [] if subgraph.inputs is None else list(subgraph.inputs)
    outputs = [] if subgraph.outputs is None else list(subgraph.outputs)
    for tensor in inputs + outputs:
        created(tensor, 0)
    step = 0
    for step, op in enumerate(subgraph.operators or [], start=1):
        op_outputs = [] if op.outputs is None else list(op.outputs)
        for tensor in op_outputs:
            created(tensor, step)
        for tensor in ([] if op.inputs is None else list(op.inputs)) + op_outputs:
            if tensor >= 0:
                last[tensor] = step
    for tensor in outputs:
        last[tensor] = step
    records, indices = [], []
    for index, tensor in enumerate(subgraph.tensors):
        if _constant_data(model, tensor) is not None or tensor.isVariable or first[index] < 0:
            continue
        size = _tensor_bytes(model, index)
        if size == 0:
            continue
        records.append(UsageRecord(f"t{index}", first[index], last[index],
                                   round_up(size, ALIGNMENT)))
        indices.append(index)
    return Instance(tuple(records), model.name, ALIGNMENT), tuple(indices)


def tflm_greedy(instance: Instance) -> tuple[int, ...]:
    """The offsets TFLM's ``GreedyMemoryPlanner`` gives ``instance``'s records (added in record
    order, none planned offline); see the module docstring for its rules."""
    records = instance.records
    # Added in record order, laid out from the tail, then a stable sort by decreasing size.
    order = sorted(reversed(range(len(records))), key=lambda i: -records[i].size)
    offsets = [0] * len(records)
    placed: list[int] = []          # record indices by increasing offset
    for index in order:
        record = records[index]
        live = [j for j in placed if records[j].conflicts_with(record)]
        candidate = 0
        for j in live:
            if offsets[j] - candidate >= record.size:
                break
            candidate = max(candidate, offsets[j] + records[j].size)
        offsets[index] = candidate
        position = len(placed)
        for k, j in enumerate(placed):
            if offsets[j] > candidate:
                position = k
                break
        placed.insert(position, index)
    return tuple(offsets)


def with_offline_plan(model: TflmModel, instance: Instance, indices, offsets) -> None:
    """Set (or replace) the model's ``OfflineMemoryAllocation`` metadata: ``offsets[i]`` for
    tensor ``indices[i]``, ``-1`` for every other tensor. The plan is validated first."""
    checked_plan(instance, offsets, planner="offline plan")
    schema = _schema()
    table = np.full(len(model.subgraph.tensors), -1, dtype="<i4")
    table[list(indices)] = offsets
    values = np.concatenate([np.array([0, 0, len(table)], dtype="<i4"), table])
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(values.tobytes(), dtype=np.uint8)
    model.model.buffers.append(buffer)
    metadata = [m for m in (model.model.metadata or [])
                if _text(m.name) != METADATA_NAME]
    entry = schema.MetadataT()
    entry.name = METADATA_NAME
    entry.buffer = len(model.model.buffers) - 1
    model.model.metadata = metadata + [entry]


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def write_offline_plan(model_path: str | Path, out_path: str | Path, *, method: str = "search",
                       time_limit: float | None = None, **params) -> PlannedOffsets:
    """Plan ``model_path`` with optplan's ``method`` and write it with an offline plan.

    Constant fp16 ``DEQUANTIZE`` ops are folded first (:func:`fold_constant_dequantize`); the
    tensors TFLM would plan get TFLM's lifetimes (:func:`tflm_records`); the plan is solved,
    validated and compared with TFLM's greedy planner on the same records
    (:func:`optplan.runtimes.plan.plan_offsets`: TFLM's plan is kept where optplan's is not
    smaller); ``out_path`` receives the model with ``OfflineMemoryAllocation`` metadata.
    ``**params`` go to :func:`optplan.solve` (``workers``, ``seed``...).
    """
    model = load_model(model_path)
    fold_constant_dequantize(model)
    instance, indices = tflm_records(model)
    planned = plan_offsets(instance, tflm_greedy(instance), method=method,
                           runtime="tflm.greedy", time_limit=time_limit, **params)
    with_offline_plan(model, instance, indices, planned.solution.offsets)
    Path(out_path).write_bytes(model.to_bytes())
    return planned


# --- running models in TFLM ----------------------------------------------------------------

@contextlib.contextmanager
def _captured_stderr():
    """What native code writes to file descriptor 2 meanwhile (TFLM's ``MicroPrintf``),
    available as ``box[0]`` after the block."""
    box = [""]
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield box
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            box[0] = sink.read().decode(errors="replace")


_MISSING_OP = re.compile(r"Didn't find op for builtin opcode '(\w+)'|"
                         r"Node (\w+) \(number (\d+)\) failed to prepare")


@dataclass(frozen=True)
class TflmRun:
    """Outputs of a model over several inputs, and the head TFLM planned."""

    outputs: list
    head_bytes: int


def run_model(data: bytes, inputs: list[list[np.ndarray]], *, arena_size: int,
              name: str = "model") -> TflmRun:
    """Run the ``.tflite`` bytes ``data`` in TFLM on each input list; a model TFLM cannot
    allocate is an :class:`InputError` naming the op it reports."""
    runtime = require("tflite_micro.python.tflite_micro.runtime", "tflm")
    with _captured_stderr() as log:
        try:
            interpreter = runtime.Interpreter.from_bytes(data, arena_size=arena_size)
        except RuntimeError:
            interpreter = None
    if interpreter is None:
        found = _MISSING_OP.search(log[0])
        what = f"op {found.group(1) or found.group(2)}" if found else "the model"
        raise InputError(f"TFLite Micro cannot allocate {what}: "
                         f"{log[0].strip().splitlines()[0] if log[0].strip() else 'no reason'}",
                         file=name, field="operators")
    schema = _schema()
    output_count = schema.Model.GetRootAsModel(data, 0).Subgraphs(0).OutputsLength()
    outputs = []
    for values in inputs:
        for index, value in enumerate(values):
            interpreter.set_input(value, index)
        interpreter.invoke()
        outputs.append([np.array(interpreter.get_output(i)) for i in range(output_count)])
    with _captured_stderr() as report:
        interpreter.print_allocations()
    head = re.search(r"Arena allocation head (\d+) bytes", report[0])
    if head is None:
        raise RuntimeError(f"{name}: TFLM reported no head size")
    return TflmRun(outputs, int(head.group(1)))


def _random_inputs(model: TflmModel, count: int, seed: int) -> list[list[np.ndarray]]:
    """``count`` random input lists: standard normal floats, uniform integers of the dtype."""
    generator = np.random.default_rng(seed)
    dtypes = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 7: np.int16,
              9: np.int8}
    drawn = []
    for _ in range(count):
        values = []
        for index in model.subgraph.inputs:
            tensor = model.subgraph.tensors[index]
            dtype = dtypes.get(tensor.type)
            if dtype is None:
                raise InputError(f"input tensor {index} has a type (code {tensor.type}) this "
                                 "comparison cannot draw", file=model.file, field="inputs")
            shape = [int(d) for d in tensor.shape]
            if np.issubdtype(dtype, np.floating):
                values.append(generator.standard_normal(shape).astype(dtype))
            else:
                info = np.iinfo(dtype)
                values.append(generator.integers(info.min, info.max, shape, dtype=dtype,
                                                 endpoint=True))
        drawn.append(values)
    return drawn


def compare(model_path: str | Path, *, method: str = "search", time_limit: float | None = None,
            out: str | Path | None = None, inputs: int = 3, input_seed: int = 0,
            **params) -> RuntimeComparison:
    """TFLM's planner against optplan's offline plan on one model, measured in TFLM.

    The model (fp16 constants folded) runs as is — TFLM plans it — and with optplan's offline
    plan, on the same ``inputs`` random input lists; the head each run reports is its planned
    bytes, and the outputs are compared bit for bit (same kernels). TFLM's head must equal
    :func:`tflm_greedy` on :func:`tflm_records` (else ``RuntimeError``: the lifetimes would not
    be TFLM's). ``out`` receives the planned model.
    """
    model = load_model(model_path)
    fold_constant_dequantize(model)
    instance, indices = tflm_records(model)
    plain = model.to_bytes()
    start = time.perf_counter()
    planned = plan_offsets(instance, tflm_greedy(instance), method=method,
                           runtime="tflm.greedy", time_limit=time_limit, **params)
    wall = time.perf_counter() - start
    with_offline_plan(model, instance, indices, planned.solution.offsets)
    data = model.to_bytes()
    if out is not None:
        Path(out).write_bytes(data)
    arena = int(instance.sizes.sum()) + len(plain) + (4 << 20)
    drawn = _random_inputs(model, inputs, input_seed)
    theirs = run_model(plain, drawn, arena_size=arena, name=str(model_path))
    if theirs.head_bytes != planned.runtime_solution.arena_size:
        raise RuntimeError(f"{model.name}: TFLM planned {theirs.head_bytes} bytes, its greedy "
                           f"planner on optplan's TFLM lifetimes "
                           f"{planned.runtime_solution.arena_size}")
    ours = run_model(data, drawn, arena_size=arena, name=str(model_path))
    equal, worst = True, 0.0
    for run_a, run_b in zip(ours.outputs, theirs.outputs, strict=True):
        for a, b in zip(run_a, run_b, strict=True):
            equal = equal and a.shape == b.shape and bool(np.array_equal(a, b))
            if a.shape == b.shape and a.size:
                worst = max(worst, float(np.max(np.abs(a.astype(np.float64)
                                                       - b.astype(np.float64)))))
    return RuntimeComparison(
        network=model.name, runtime="tflm", runtime_planner_bytes=theirs.head_bytes,
        optplan_bytes=ours.head_bytes, lower_bound=planned.result.lower_bound,
        status=planned.result.status.value, outputs_equal=equal, max_abs_diff=worst,
        source=planned.source, method=method, time_limit=time_limit, wall_time_s=wall,
        inputs=inputs)
