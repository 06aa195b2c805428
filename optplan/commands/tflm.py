"""``optplan tflm MODEL.tflite``: TensorFlow Lite Micro's memory planner against optplan's
offline plan, measured in TFLM (:mod:`optplan.runtimes.tflite_micro`)."""

from __future__ import annotations

from optplan.commands._runtimes import add_runtime_flags, report, solver_params


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "tflm", help="write an offline memory plan into a .tflite model and run it in TFLM",
        description="Plan the tensors TensorFlow Lite Micro would plan (its lifetimes, "
                    "16-byte sizes) with optplan's METHOD, validate the plan and write it as "
                    "OfflineMemoryAllocation metadata (constant fp16 DEQUANTIZE ops folded to "
                    "fp32 first). The model runs in TFLM as is and with the plan on the same "
                    "random inputs. Prints TFLM's own head bytes, the planned head, the lower "
                    "bound, the solver status and whether the outputs are equal (exit status "
                    "1 when they are not). Needs the tflm extra.")
    parser.add_argument("model", metavar="MODEL.tflite",
                        help="a .tflite file (or package:/wheel: source, see optplan import)")
    add_runtime_flags(parser, "where the planned model (.tflite) is written")
    parser.set_defaults(run=run)


def run(args) -> int:
    from optplan.importers.sources import resolve_source
    from optplan.runtimes.tflite_micro import compare

    comparison = compare(resolve_source(args.model), method=args.method,
                         time_limit=args.time_limit, out=args.out, inputs=args.inputs,
                         **solver_params(args))
    return report(comparison, args)
