"""``optplan slice PATH``: FlexNN's kernel selection and layer slicing on a preload instance.

Without ``--slice``/``--kernel`` it lists what every sliceable layer admits (the menu
1, 2, 4, 8, 16 for each kernel) with the peak each option reaches; with them it writes the
sliced instance, an ordinary preload instance for ``optplan solve --problem preload``.
"""

from __future__ import annotations

import json

from optplan.errors import InputError

EXAMPLE = "e.g. --slice 22:weight:4 --slice 1:input:16 --kernel 1:im2col"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "slice", help="slice layers of a preload instance (FlexNN's layer slicing)",
        description="Kernel selection and layer slicing (FlexNN, MobiCom'24) on a preload "
                    "instance whose layers carry their operator facts (made with kernels, see "
                    "bench/slicing.py --make-instances). Without --slice/--kernel: list the "
                    "options of every sliceable layer. " + EXAMPLE + ".")
    parser.add_argument("path", metavar="PATH", help="preload instance .json")
    parser.add_argument("--slice", action="append", default=[], metavar="LAYER:KIND:SLICES",
                        help="run layer LAYER (its index) as SLICES sub-layers of KIND "
                             "(weight or input); repeatable")
    parser.add_argument("--kernel", action="append", default=[], metavar="LAYER:NAME",
                        help="run layer LAYER with kernel NAME; repeatable")
    parser.add_argument("--output", metavar="OUT",
                        help="write the sliced instance here (default: print its JSON)")
    parser.add_argument("--json", action="store_true",
                        help="the options as one JSON object (without --slice/--kernel)")
    parser.set_defaults(run=run)


def _parts(text: str, flag: str, count: int) -> list[str]:
    parts = text.split(":")
    if len(parts) != count or not parts[0].isdigit():
        shape = "LAYER:KIND:SLICES" if flag == "--slice" else "LAYER:NAME"
        raise InputError(f"expected {shape}, got {text!r} ({EXAMPLE})", field=flag)
    return parts


def decisions(slices: list[str], kernels: list[str]) -> list:
    """The :class:`LayerSlicing` decisions of the ``--slice`` and ``--kernel`` flags."""
    from optplan.preload.model import LayerSlicing

    by_layer: dict[int, dict] = {}
    for text in slices:
        layer, kind, count = _parts(text, "--slice", 3)
        if not count.isdigit():
            raise InputError(f"SLICES must be a positive integer, got {count!r}",
                             field="--slice")
        entry = by_layer.setdefault(int(layer), {})
        if "kind" in entry:
            raise InputError(f"layer {layer} is sliced twice", field="--slice")
        entry |= {"kind": kind if int(count) != 1 else None, "slices": int(count)}
    for text in kernels:
        layer, name = _parts(text, "--kernel", 2)
        entry = by_layer.setdefault(int(layer), {})
        if "kernel" in entry:
            raise InputError(f"layer {layer} has two kernels", field="--kernel")
        entry["kernel"] = name
    return [LayerSlicing(layer, **entry) for layer, entry in sorted(by_layer.items())]


def run(args) -> int:
    from optplan.preload import instance_to_dict, read_preload_instance, write_preload_instance
    from optplan.preload.slicing import apply_slicing

    instance = read_preload_instance(args.path)
    if not args.slice and not args.kernel:
        return _list_options(instance, args.json)
    try:
        sliced = apply_slicing(instance, decisions(args.slice, args.kernel))
    except InputError as error:
        raise error.located(args.path) from None
    if args.output:
        write_preload_instance(sliced, args.output)
        print(f"wrote {args.output}: {sliced.num_layers} layers, {len(sliced)} tensors")
    else:
        print(json.dumps(instance_to_dict(sliced)))
    return 0


def _list_options(instance, as_json: bool) -> int:
    from optplan.preload.slicing import layer_peak, resident_activations, slicing_options

    activations = resident_activations(instance)
    layers = []
    for index, layer in enumerate(instance.layers):
        options = slicing_options(instance, index)
        if len(options) < 2:
            continue
        layers.append({"layer": index, "name": layer.name, "type": layer.op.type,
                       "kernel": layer.op.kernel,
                       "options": [{"kernel": o.kernel or layer.op.kernel, "kind": o.kind,
                                    "slices": o.slices,
                                    "peak": layer_peak(instance, o, activations)}
                                   for o in options]})
    if as_json:
        print(json.dumps({"instance": instance.name, "layers": layers}))
        return 0
    if not layers:
        print(f"{instance.name}: no sliceable layer (layers need operator facts: make the "
              "instance with kernels)")
    for entry in layers:
        print(f"layer {entry['layer']} {entry['name']} ({entry['type']}, {entry['kernel']})")
        for option in entry["options"]:
            how = "whole" if option["kind"] is None else f"{option['kind']} x{option['slices']}"
            print(f"  {option['kernel']:<9} {how:<12} peak {option['peak']:,} bytes")
    return 0
