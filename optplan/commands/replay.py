"""``optplan replay MODEL PLAN.csv``: execute a torch instance with its activations placed by an
offsets plan, and check the outputs against normal execution (:mod:`optplan.torch.replay`)."""

from __future__ import annotations

import json
from pathlib import Path

from optplan.errors import InputError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "replay", help="run a torch network op by op inside one arena laid out by a plan",
        description="Rebuild the PyTorch program of a torch instance (random weights from its "
                    "recorded seed), place every activation at the plan's offset in one arena, "
                    "run it op by op with out= writes, and compare with normal execution. "
                    "Exit status 0 when the replay matches, 1 when it does not. Needs torch.")
    parser.add_argument("model", metavar="MODEL",
                        help="a raw or train torch instance: catalogue name "
                             "(gpt2_raw_torch_seq128) or path to its JSON")
    parser.add_argument("plan", metavar="PLAN.csv",
                        help="offsets solution CSV (optplan solve --problem offsets --output); "
                             "offsets must be multiples of each tensor's element size")
    parser.add_argument("--corrupt", action="store_true",
                        help="first move a tensor onto another live one (the replay must fail)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def _load(model: str):
    from optplan import instances
    from optplan.formats import load_instance

    if model.endswith(".json") or Path(model).is_file():
        return load_instance(model)
    return instances.load(model)


def run(args) -> int:
    from optplan.formats import read_solution_csv
    from optplan.problems import Problem
    from optplan.torch.models import capture, program_instance
    from optplan.torch.replay import overlap_live_tensors, replay

    instance = _load(args.model)
    provenance = instance.provenance
    source = provenance.get("source") if isinstance(provenance.get("source"), dict) else {}
    network, variant = source.get("builder"), provenance.get("variant")
    if provenance.get("format") != "torch" or network is None:
        raise InputError("not a torch instance (provenance.format must be 'torch')",
                         file=args.model, field="provenance")
    if variant not in ("raw", "train"):
        raise InputError(f"variant {variant!r} cannot run: replay the raw or train instance "
                         "(a fused graph has no PyTorch program)", file=args.model,
                         field="variant")
    seed = int(source.get("seed", 0))
    program = capture(network, variant, seed=seed)
    rebuilt = program_instance(program, network, variant, seed=seed)
    if rebuilt.records != instance.records:
        raise InputError("the rebuilt program's records differ from the instance (another "
                         "torch/transformers version?); regenerate it with: "
                         f"{provenance.get('command')}", file=args.model, field="records")
    solution = read_solution_csv(instance, Problem.OFFSETS, args.plan)
    moved = None
    if args.corrupt:
        solution, moved = overlap_live_tensors(instance, solution)
    report = replay(program, instance, solution)
    summary = dict(report.summary(), model=instance.name, plan=str(args.plan))
    if moved:
        summary["corrupted"] = f"{moved[1]} moved onto {moved[0]}"
    if args.json:
        print(json.dumps(summary))
    else:
        width = max(map(len, summary))
        for key, value in summary.items():
            print(f"{key:<{width}}  {value}")
    return 0 if report.passed else 1
