"""``optplan runs DIR...``: summarise run directories (counts per status, failures)."""

from __future__ import annotations

import json
from pathlib import Path

from optplan.errors import InputError
from optplan.formats.json_file import read_json_file


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "runs", help="summarise run directories",
        description="For each run directory: jobs finished and pending, counts per status "
                    "and per method, and every timeout, crash, error or invalid solution "
                    "with its reason.")
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="run directory")
    parser.add_argument("--manifest", action="store_true",
                        help="also print manifest.json (provenance)")
    parser.set_defaults(run=run)


def run(args) -> int:
    from optplan.experiments.runner import format_summary

    for index, folder in enumerate(map(Path, args.dirs)):
        if not (folder / "results.jsonl").is_file() and not (folder / "manifest.json").is_file():
            raise InputError("not a run directory (no results.jsonl or manifest.json)",
                             file=str(folder))
        manifest = (read_json_file(folder / "manifest.json")
                    if args.manifest and (folder / "manifest.json").is_file() else None)
        if index:
            print()
        print(format_summary(folder))
        if manifest is not None:
            print(json.dumps(manifest, indent=1))
    return 0
