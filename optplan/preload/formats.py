"""Preload instance JSON and plan JSON (issue 8, binding key names).

Instance::

    {"name": "...", "layers": [{"name": "conv1", "compute_us": 120}, ...],
     "tensors": [{"id": "x", "kind": "activation" | "scratch" | "weight", "size": 4096,
                  "first_op": 0, "last_op": 2, "load_us": 40}, ...],
     "window": 4, "budget": 1048576}

``load_us`` is required for weights and absent (or 0) otherwise; ``window`` absent means no
limit; ``budget`` absent means unlimited. An optional ``"provenance"`` object is kept.

For kernel selection and layer slicing (:mod:`optplan.preload.slicing`) a layer may carry its
operator and the instance the platform's slicing parameters (both optional)::

    {"name": "n38", "compute_us": 4111,
     "op": {"type": "FULLY_CONNECTED", "kernel": "gemm", "rows": 4096, "output": "r39"}}
    {"name": "n2", "compute_us": 37026,
     "op": {"type": "CONV_2D", "kernel": "winograd", "rows": 64, "channels": 576,
            "output": "r3", "merge_us": 65,
            "kernels": [{"name": "im2col", "compute_us": 74052, "weight_bytes": 147712,
                         "load_us": 148, "scratch_bytes": 115605504}]}}
    "slice_costs": {"overhead_us": 20, "max_input_slices": 16}

``op`` keys other than ``type`` and ``kernel`` may be absent (``rows``, ``channels``, ``output``:
none; ``merge_us``: 0; ``kernels``: none; a kernel's ``scratch_bytes``: 0).

Plan::

    {"latency_us": 1234, "peak": 65536,
     "tensors": [{"id": "x", "offset": 0}, {"id": "w", "offset": 4096, "preload_op": 1},
                 {"id": "v", "offset": 8192, "pinned": true}]}

one entry per tensor; a weight without ``preload_op`` that is not pinned loads at its own layer.
A plan that slices layers lists its decisions (layer indices of the instance; ``kind`` only
with more than one slice, ``kernel`` only when it is not the layer's own) and its entries name
the tensors of the sliced instance::

    "slicing": [{"layer": 23, "kind": "weight", "slices": 4},
                {"layer": 2, "kind": "input", "slices": 16, "kernel": "im2col"}]
"""

from __future__ import annotations

import json
from pathlib import Path

from optplan.errors import InputError
from optplan.formats.json_file import read_json_file
from optplan.preload.model import (KernelCost, Layer, LayerOp, LayerSlicing, PlanEntry,
                                   PreloadInstance, PreloadPlan, PreloadTensor, SliceCosts)

__all__ = ["instance_from_dict", "instance_to_dict", "read_preload_instance",
           "write_preload_instance", "plan_to_dict", "plan_from_dict", "write_plan", "read_plan"]


def _field(data: dict, key: str, where: str, kinds=(int,), *, required: bool = True,
           default=None):
    if key not in data:
        if required:
            raise InputError("missing", field=f"{where}.{key}" if where else key)
        return default
    value = data[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise InputError(f"must be {names}, got {value!r}",
                         field=f"{where}.{key}" if where else key)
    return value


def _list(data: dict, key: str) -> list:
    value = _field(data, key, "", (list,))
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            raise InputError("must be an object", field=f"{key}[{position}]")
    return value


def instance_from_dict(data: dict, *, name: str | None = None) -> PreloadInstance:
    """Parse the instance JSON object; errors name the field (``tensors[3].size``)."""
    if not isinstance(data, dict):
        raise InputError("must be a JSON object", field="instance")
    layers = []
    for position, raw in enumerate(_list(data, "layers")):
        where = f"layers[{position}]"
        op = _op_from_dict(raw["op"], f"{where}.op") if "op" in raw else None
        layers.append(_build(Layer, where, str(_field(raw, "name", where, (str,))),
                             _field(raw, "compute_us", where), op))
    tensors = []
    for position, raw in enumerate(_list(data, "tensors")):
        where = f"tensors[{position}]"
        kind = _field(raw, "kind", where, (str,))
        load = _field(raw, "load_us", where, required=kind == "weight", default=0)
        tensors.append(_build(PreloadTensor, where, _field(raw, "id", where, (str,)), kind,
                              _field(raw, "size", where), _field(raw, "first_op", where),
                              _field(raw, "last_op", where), load))
    window = _field(data, "window", "", (int, type(None)), required=False)
    budget = _field(data, "budget", "", (int, type(None)), required=False)
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        raise InputError("must be an object", field="provenance")
    costs = None
    if "slice_costs" in data:
        raw = _field(data, "slice_costs", "", (dict,))
        costs = _build(SliceCosts, "slice_costs", _field(raw, "overhead_us", "slice_costs"),
                       _field(raw, "max_input_slices", "slice_costs"))
    return _build(PreloadInstance, "", tuple(layers), tuple(tensors),
                  str(name or _field(data, "name", "", (str,), required=False,
                                     default="preload")),
                  window, budget, provenance, costs)


def _op_from_dict(raw, where: str) -> LayerOp:
    if not isinstance(raw, dict):
        raise InputError("must be an object", field=where)
    kernels = []
    for position, entry in enumerate(_field(raw, "kernels", where, (list,), required=False,
                                            default=[])):
        at = f"{where}.kernels[{position}]"
        if not isinstance(entry, dict):
            raise InputError("must be an object", field=at)
        kernels.append(_build(KernelCost, at, _field(entry, "name", at, (str,)),
                              *(_field(entry, key, at) for key in
                                ("compute_us", "weight_bytes", "load_us")),
                              _field(entry, "scratch_bytes", at, required=False, default=0)))
    optional_int = (int, type(None))
    return _build(LayerOp, where, _field(raw, "type", where, (str,)),
                  _field(raw, "kernel", where, (str,)),
                  _field(raw, "rows", where, optional_int, required=False),
                  _field(raw, "channels", where, optional_int, required=False),
                  _field(raw, "output", where, (str, type(None)), required=False),
                  _field(raw, "merge_us", where, required=False, default=0), tuple(kernels))


def _build(cls, where: str, *args):
    try:
        return cls(*args)
    except InputError as error:
        field = error.field or ""
        if where and field:
            field = f"{where}.{field.rsplit('.', 1)[-1]}"
        raise InputError(error.message, field=field or where or None) from None


def instance_to_dict(instance: PreloadInstance) -> dict:
    """The instance as the JSON object of the module docstring."""
    tensors = []
    for tensor in instance.tensors:
        entry = {"id": tensor.id, "kind": tensor.kind, "size": tensor.size,
                 "first_op": tensor.first_op, "last_op": tensor.last_op}
        if tensor.is_weight:
            entry["load_us"] = tensor.load_us
        tensors.append(entry)
    data = {"name": instance.name, "layers": [_layer_to_dict(layer) for layer in instance.layers],
            "tensors": tensors}
    if instance.window is not None:
        data["window"] = instance.window
    if instance.budget is not None:
        data["budget"] = instance.budget
    if instance.slice_costs is not None:
        data["slice_costs"] = {"overhead_us": instance.slice_costs.overhead_us,
                               "max_input_slices": instance.slice_costs.max_input_slices}
    if instance.provenance:
        data["provenance"] = instance.provenance
    return data


def _layer_to_dict(layer: Layer) -> dict:
    data = {"name": layer.name, "compute_us": layer.compute_us}
    op = layer.op
    if op is not None:
        data["op"] = {"type": op.type, "kernel": op.kernel}
        for key in ("rows", "channels", "output", "merge_us"):
            if getattr(op, key):
                data["op"][key] = getattr(op, key)
        if op.kernels:
            data["op"]["kernels"] = [
                {"name": k.name, "compute_us": k.compute_us, "weight_bytes": k.weight_bytes,
                 "load_us": k.load_us, "scratch_bytes": k.scratch_bytes} for k in op.kernels]
    return data



def read_preload_instance(path) -> PreloadInstance:
    """Read an instance JSON file; an :class:`InputError` names the file and the field."""
    data = read_json_file(path)
    try:
        return instance_from_dict(data, name=None)
    except InputError as error:
        raise error.located(str(path)) from None


def _dumps(data: dict) -> str:
    """JSON with one list item (a layer, a tensor, a plan entry) per line."""
    lines = ["{"]
    for position, (key, value) in enumerate(data.items()):
        comma = "," if position < len(data) - 1 else ""
        if isinstance(value, list) and value:
            items = ",\n".join("  " + json.dumps(item, ensure_ascii=False) for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "\n".join(lines + ["}"]) + "\n"


def write_preload_instance(instance: PreloadInstance, path) -> None:
    """Write the instance JSON of the module docstring to ``path``."""
    Path(path).write_text(_dumps(instance_to_dict(instance)), encoding="utf-8")


def plan_to_dict(instance: PreloadInstance, plan: PreloadPlan) -> dict:
    """The plan JSON object (entries in the instance's tensor order)."""
    tensors = []
    for entry in plan.entries:
        item = {"id": entry.id, "offset": entry.offset}
        if entry.pinned:
            item["pinned"] = True
        elif entry.preload_op is not None:
            item["preload_op"] = entry.preload_op
        tensors.append(item)
    data = {"latency_us": plan.latency_us, "peak": plan.peak}
    if plan.slicing:
        data["slicing"] = [_slicing_to_dict(choice) for choice in plan.slicing]
    data["tensors"] = tensors
    return data


def _slicing_to_dict(choice: LayerSlicing) -> dict:
    data = {"layer": choice.layer}
    if choice.kind is not None:
        data |= {"kind": choice.kind, "slices": choice.slices}
    if choice.kernel is not None:
        data["kernel"] = choice.kernel
    return data


def plan_from_dict(data: dict) -> PreloadPlan:
    if not isinstance(data, dict):
        raise InputError("must be a JSON object", field="plan")
    entries = []
    for position, raw in enumerate(_list(data, "tensors")):
        where = f"tensors[{position}]"
        pinned = _field(raw, "pinned", where, (bool,), required=False, default=False)
        preload = _field(raw, "preload_op", where, (int, type(None)), required=False)
        entries.append(PlanEntry(_field(raw, "id", where, (str,)), _field(raw, "offset", where),
                                 preload, pinned))
    slicing = []
    for position, raw in enumerate(_list(data, "slicing") if "slicing" in data else []):
        where = f"slicing[{position}]"
        slicing.append(_build(LayerSlicing, where, _field(raw, "layer", where),
                              _field(raw, "kind", where, (str, type(None)), required=False),
                              _field(raw, "slices", where, required=False, default=1),
                              _field(raw, "kernel", where, (str, type(None)), required=False)))
    return PreloadPlan(tuple(entries), _field(data, "latency_us", ""), _field(data, "peak", ""),
                       tuple(slicing))


def write_plan(instance: PreloadInstance, plan: PreloadPlan, path) -> None:
    """Write the plan JSON of the issue to ``path``."""
    Path(path).write_text(_dumps(plan_to_dict(instance, plan)), encoding="utf-8")


def read_plan(path) -> PreloadPlan:
    data = read_json_file(path)
    try:
        return plan_from_dict(data)
    except InputError as error:
        raise error.located(str(path)) from None
