"""``optplan merge OUT DIR...``: combine run directories into one."""

from __future__ import annotations


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "merge", help="combine run directories",
        description="Write a new run directory OUT with the rows (one per job id, first "
                    "source first), solution files and compacted table of every DIR.")
    parser.add_argument("out", metavar="OUT", help="new run directory")
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="run directories to combine")
    parser.set_defaults(run=run)


def run(args) -> int:
    from optplan.experiments.runner import format_summary
    from optplan.experiments.store import merge_runs

    merge_runs(args.out, args.dirs)
    print(format_summary(args.out))
    return 0
