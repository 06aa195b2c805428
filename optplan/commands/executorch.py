"""``optplan executorch NETWORK``: ExecuTorch's memory planner against optplan's, measured in
the ExecuTorch runtime (:mod:`optplan.runtimes.executorch`)."""

from __future__ import annotations

from optplan.commands._runtimes import add_runtime_flags, report, solver_params


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "executorch", help="plan a torch network's memory for ExecuTorch and run it there",
        description="Export one of optplan's torch networks (random weights) to ExecuTorch "
                    "twice: with ExecuTorch's own memory planner (greedy) and with optplan's "
                    "METHOD as the planning algorithm (validated; ExecuTorch's plan is kept "
                    "where optplan's is not smaller). Both programs run in the ExecuTorch "
                    "runtime on the same random inputs. Prints both planned sizes "
                    "(non_const_buffer_sizes), the lower bound, the solver status and whether "
                    "the outputs are equal (exit status 1 when they are not). Needs the "
                    "executorch extra.")
    parser.add_argument("network", metavar="NETWORK",
                        help="a network of optplan's torch zoo: mobilenet_v1, mobilenet_v2, "
                             "resnet50, deeplab_v3, gpt2, bert_base")
    add_runtime_flags(parser, "where optplan's program (.pte) is written")
    parser.set_defaults(run=run)


def run(args) -> int:
    from optplan.runtimes.executorch import compare

    comparison = compare(args.network, method=args.method, time_limit=args.time_limit,
                         out=args.out, inputs=args.inputs, **solver_params(args))
    return report(comparison, args)
