"""``optplan methods``: every registered method and the problems it solves."""

from __future__ import annotations

import json

from optplan.registry import methods


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("methods", help="list every method and its problems")
    parser.add_argument("--json", action="store_true",
                        help="a JSON list of {name, problems, kind, input, reference, "
                             "parameters}")
    parser.set_defaults(run=run)


def run(args) -> int:
    rows = [{"name": info.name, "problems": [p.value for p in info.problems], "kind": info.kind,
             "input": info.input, "reference": info.reference,
             "parameters": info.parameters()}
            for info in methods().values()]
    if args.json:
        print(json.dumps(rows))
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        problems = ",".join(p.replace("_", "-") for p in row["problems"])
        print(f"{row['name']:<{width}}  {row['kind']:<9}  {row['input']:<7}  {problems:<22}  "
              f"{row['reference']}")
    return 0
