"""``optplan import``: (re)generate a real-network instance from its model source.

Every committed instance records the exact command that regenerates it in
``provenance.command``, e.g.::

    optplan import onnx package:onnx/backend/test/data/light/light_resnet50.onnx \\
        --network resnet50 --variant fused
    optplan import torch gpt2 --variant train --seed 0

``torch`` builds a network of the zoo (:mod:`optplan.torch.models`) instead of reading a file:
its SOURCE is the network's name.
"""

from __future__ import annotations

from pathlib import Path

from optplan.commands._common import positive_int, seed_value
from optplan.errors import InputError
from optplan.formats.paths import check_output_file
from optplan.graph.lifetimes import VIEW_SETTINGS
from optplan.importers import IMPORTERS
from optplan.importers.build import VARIANTS
from optplan.torch.models import VARIANTS as TORCH_VARIANTS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "import", help="import a network (TFLite, ONNX, Keras, torch) as an instance",
        description="Import a model as an optplan instance (graph + usage records + "
                    "provenance). SOURCE is a file, package:PKG/path/in/package, "
                    "wheel:NAME==VERSION/path/in/wheel, for keras a network name, and for "
                    "torch a network of optplan's torch zoo (random weights; needs torch).")
    parser.add_argument("importer", choices=(*IMPORTERS, "torch"),
                        help="which importer reads SOURCE")
    parser.add_argument("source", help="model source (see description)")
    parser.add_argument("--network", help="catalogue network name, e.g. resnet50, blazeface "
                                          "(required except for torch: SOURCE is the name)")
    parser.add_argument("--variant", choices=dict.fromkeys(VARIANTS + TORCH_VARIANTS),
                        default="fused", help="fused (TFLite-like) or raw (one op per layer); "
                                              "torch also train (forward + backward of one "
                                              "step); default fused")
    parser.add_argument("--views", choices=VIEW_SETTINGS,
                        help="reshape-like ops: their own tensor (copy, default) or an alias "
                             "(torch: alias for raw/train, copy for fused)")
    parser.add_argument("--size", type=positive_int, help="input size (keras only)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="seed of the random weights and inputs (torch only); default 0")
    parser.add_argument("--out", type=Path, help="output file (default: "
                        "data/networks/<name>.json under the current directory)")
    parser.set_defaults(run=run)


def _instance(args):
    if args.importer == "torch":
        from optplan.torch.models import torch_instance

        if args.network not in (None, args.source) or args.views or args.size:
            raise InputError("torch takes the network as SOURCE and no --network, --views "
                             "or --size", field="importer")
        return torch_instance(args.source, args.variant, seed=args.seed)[0]
    from optplan.importers.build import network_instance

    if args.network is None:
        raise InputError(f"the {args.importer} importer needs --network", field="--network")
    if args.variant not in VARIANTS:
        raise InputError(f"variant {args.variant!r} is torch only; valid: "
                         f"{', '.join(VARIANTS)}", field="--variant")
    return network_instance(args.importer, args.source, network=args.network,
                            variant=args.variant, views=args.views or "copy", size=args.size)


def run(args) -> int:
    from optplan.instances import summary, write_instance

    if args.out is not None:
        check_output_file(args.out, "--out", create_folders=True)
    instance = _instance(args)
    out = args.out or Path("data") / "networks" / f"{instance.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_instance(instance, out)
    row = summary(instance)
    print(f"{out}: {row['ops']} ops, {row['tensors']} tensors, naive {row['naive_bytes']} B, "
          f"offsets LB {row['offsets_lower_bound']} B, shared-objects LB "
          f"{row['shared_objects_lower_bound']} B")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m optplan.commands.import_cmd ...``: this subcommand alone, for environments
    that hold an importer's heavy extra (tensorflow) but not every optplan dependency."""
    import argparse
    import sys

    from optplan.errors import OptplanError

    parser = argparse.ArgumentParser(prog="optplan")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["import", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.run(args)
    except OptplanError as error:
        print(f"optplan: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
